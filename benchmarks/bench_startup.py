"""How long a student or a CLI user waits before anything happens.

Run:  python benchmarks/bench_startup.py [--json] [--repeat N] [--cli]

Issue 26's targets: the CLI starts in under 0.5 s of CPU, and each main notebook executes in
10 s or less on a quiet machine, kernel start and imports included. Two measurements:

- ``cli``: CPU time (user + system, of the child process) of ``traincost estimate`` for one
  small run (a few candidate layouts, evaluated directly), for one whose layout is searched
  (64 H100s, Llama 3.1 70B: thousands of candidates), and of ``python -c "import
  traincost.cli"`` alone (imports only), the median of N repeats (default 3), after one
  warm-up run that writes the bytecode cache (the children run without
  ``PYTHONDONTWRITEBYTECODE``: a user's Python compiles traincost once, not every time);
- ``notebooks``: the wall clock of executing each main notebook top to bottom with nbclient
  (the engine nbval and Voila use), from kernel start to the last cell (left out with
  ``--cli``).

A measurement to read, not an assertion (nothing here is a timed test).
"""

import json
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted((ROOT / "notebooks").glob("0*.ipynb"))
ESTIMATE = [sys.executable, "-m", "traincost.cli", "estimate", "--accelerator",
            "h100-sxm5-80gb", "--devices", "8", "--model", "llama2-7b", "--global-batch", "64"]
SEARCHED = [sys.executable, "-m", "traincost.cli", "estimate", "--accelerator",
            "h100-sxm5-80gb", "--devices", "64", "--model", "llama3.1-70b", "--global-batch",
            "256"]
IMPORT = [sys.executable, "-c", "import traincost.cli"]
CHILD_ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def child_cpu_s(cmd: list) -> float:
    """CPU seconds (user + system) the command's process used. [s]"""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                   env=CHILD_ENV)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def notebook_s(path: Path) -> float:
    """Wall clock of executing one notebook with nbclient, kernel start included. [s]"""
    import nbformat
    from nbclient import NotebookClient

    nb = nbformat.read(path, as_version=4)
    t0 = time.perf_counter()
    NotebookClient(nb, timeout=600, kernel_name="python3",
                   resources={"metadata": {"path": str(path.parent)}}).execute()
    return time.perf_counter() - t0


def main() -> int:
    repeat = int(sys.argv[sys.argv.index("--repeat") + 1]) if "--repeat" in sys.argv else 3
    os.environ.setdefault("MPLBACKEND", "Agg")
    child_cpu_s(IMPORT)                                   # warm-up: the bytecode cache
    out = {"cli": {name: statistics.median(child_cpu_s(cmd) for _ in range(repeat))
                   for name, cmd in (("estimate_cpu_s", ESTIMATE),
                                     ("estimate_searched_cpu_s", SEARCHED),
                                     ("import_cpu_s", IMPORT))},
           "notebooks": {} if "--cli" in sys.argv else {p.name: notebook_s(p)
                                                         for p in NOTEBOOKS}}
    if "--json" in sys.argv:
        print(json.dumps(out, indent=1))
        return 0
    cli = out["cli"]
    print(f"CLI: traincost estimate {cli['estimate_cpu_s']:.2f} s CPU, searched layout "
          f"{cli['estimate_searched_cpu_s']:.2f} s CPU, import traincost.cli "
          f"{cli['import_cpu_s']:.2f} s CPU (target 0.5 s)")
    for name, seconds in out["notebooks"].items():
        flag = "" if seconds <= 10.0 else "  over target"
        print(f"{name:36s}{seconds:6.1f} s{flag}")
    if out["notebooks"]:
        print("target (issue 26): each main notebook <= 10 s, kernel start and imports "
              "included")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
