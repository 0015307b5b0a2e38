"""Re-execute the notebooks and keep only the outputs nbval checks.

Run after a model change that moves the key numbers:
    .venv/bin/python notebooks/regenerate.py notebooks/*.ipynb

Each notebook is executed top to bottom (nbclient); then every output is stripped except
those of cells tagged ``nbval-check-output``, and widget state is dropped, so the committed
files stay small and nbval compares only the key-number cells.
"""

import sys
from pathlib import Path

import nbformat
from nbclient import NotebookClient


def regenerate(path: Path) -> None:
    nb = nbformat.read(path, as_version=4)
    NotebookClient(nb, timeout=120, kernel_name="python3",
                   resources={"metadata": {"path": str(path.parent)}}).execute()
    nb.metadata.pop("widgets", None)
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        cell.metadata.pop("execution", None)
        if "nbval-check-output" in cell.metadata.get("tags", []):
            continue
        cell.outputs = []
        cell.execution_count = None
    nbformat.validate(nb)
    nbformat.write(nb, path)


if __name__ == "__main__":
    for arg in sys.argv[1:]:
        regenerate(Path(arg))
        print(f"regenerated {arg}")
