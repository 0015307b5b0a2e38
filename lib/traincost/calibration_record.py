"""The calibration's record: what ``data/calibration.json`` holds for a fit, written by
``python -m traincost.calibrate --write`` and read by :mod:`traincost.calibration`.

The fit itself (cases, stages, held-out errors) is :mod:`traincost.calibrate`'s; this
module turns its results into the stored JSON and names the data they were fitted to.
"""

from __future__ import annotations

import datetime
import hashlib
import json
from importlib import resources
from pathlib import Path

import pandas as pd

from . import calibration, catalog


def data_version() -> str:
    """First 12 hex digits of the SHA-256 of published_runs.csv."""
    text = catalog.read_table("published_runs").to_csv(index=False)
    return hashlib.sha256(text.encode()).hexdigest()[:12]


def by_group(errors: pd.DataFrame, key: pd.Series) -> pd.DataFrame:
    """Figures, cases, MAPE and worst |error| of ``errors`` (``case``, ``error_pct``) per
    value of ``key`` (case id -> group). [%]"""
    t = errors.assign(group=errors["case"].map(key), abs_pct=errors["error_pct"].abs())
    return t.groupby("group").agg(cases=("case", "nunique"), figures=("case", "size"),
                                  mape_pct=("abs_pct", "mean"), worst_pct=("abs_pct", "max"))


def _rounded(table: pd.DataFrame) -> dict:
    """A :func:`by_group` table as JSON: counts as integers, percentages to 0.01."""
    return {str(k): {c: (int(v) if c in ("cases", "figures") else round(float(v), 2))
                     for c, v in row.items()} for k, row in table.iterrows()}


def calibration_record(fitted, metrics: dict, sources: pd.DataFrame,
                       accelerators: pd.DataFrame, frameworks: dict,
                       families: pd.DataFrame, reference_families: list,
                       pools: pd.DataFrame, constants: tuple) -> dict:
    """What ``data/calibration.json`` holds for a fit (``fitted``, a
    :class:`traincost.calibrate.Fit`; ``constants``, the names of its fitted assumptions;
    see :mod:`traincost.calibration`)."""
    a = fitted.assumptions
    held = ("cases", "figures", "in_sample_mape_pct", "in_sample_worst_pct",
            "held_out_mape_pct", "held_out_worst_pct")
    return {
        "about": "Fitted efficiency constants and their validation metrics. Written by "
                 "`python -m traincost.calibrate --write`; do not edit by hand. See "
                 "traincost.calibrate for the method.",
        "fit_date": datetime.date.today().isoformat(),
        "data_version": data_version(),
        "data_version_of": "sha256[:12] of data/published_runs.csv",
        "constants": {k: float(getattr(a, k)) for k in constants},
        "frameworks": frameworks,
        "reference_families": reference_families,
        "metrics": metrics,
        "by_source_columns": list(held),
        "by_source": {src: [int(r.cases), int(r.figures)]
                      + [round(float(r[c]), 2) for c in held[2:]]
                      for src, r in sources.iterrows()},
        "by_accelerator": [{"accelerator": acc, "precision_group": group,
                            "cases": int(r.cases), "figures": int(r.figures),
                            "loo_mape_pct": round(float(r.loo_mape_pct), 2),
                            "loo_worst_pct": round(float(r.loo_worst_pct), 2)}
                           for (acc, group), r in accelerators.iterrows()],
        "by_family": _rounded(families),
        "error_pools": {cls: [round(float(x), 4) for x in part["eps"]]
                        for cls, part in pools.groupby("cls", sort=False)},
        "error_pool_documents": {cls: int(part["document"].nunique())
                                 for cls, part in pools.groupby("cls", sort=False)},
    }


def write_calibration(record: dict, path: Path | None = None) -> Path:
    """Write a calibration record as JSON, by default to the package's
    ``data/calibration.json`` (the repository's data/ in an editable install)."""
    if path is None:
        path = Path(str(resources.files("traincost.data").joinpath(calibration.FILE)))
    path.write_text(json.dumps(record, indent=1) + "\n", encoding="utf-8")
    return path
