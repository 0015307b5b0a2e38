"""The fitted efficiency constants and their validation metrics, as data.

They live in ``data/calibration.json`` (shipped as ``traincost.data``), which
``python -m traincost.calibrate --write`` writes with the fit's date and the version of
``data/published_runs.csv`` it was fitted to; no source file is generated. See
:mod:`traincost.calibrate` for the method.

This module only reads that one file (with the standard library): :mod:`traincost.catalog`,
which reads every other data file, itself depends on the fitted constants through
:mod:`traincost.assumptions`.

>>> sorted(CONSTANTS)[:2]
['elementwise_traffic_factor', 'fp8_matmul_fraction']
"""

from __future__ import annotations

import json
from importlib import resources

#: the data file, in the ``traincost.data`` package
FILE = "calibration.json"


def load() -> dict:
    """The calibration record as stored (``data/calibration.json``)."""
    with resources.files("traincost.data").joinpath(FILE).open("r", encoding="utf-8") as f:
        return json.load(f)


_RECORD = load()
#: the day of the fit (ISO date)
FIT_DATE: str = _RECORD["fit_date"]
#: sha256[:12] of data/published_runs.csv at the fit (traincost.calibrate.data_version)
DATA_VERSION: str = _RECORD["data_version"]
#: fitted assumptions: name -> value
CONSTANTS: dict = dict(_RECORD["constants"])
#: the fit's validation figures (MAPE and worst errors in %, counts)
METRICS: dict = dict(_RECORD["metrics"])
#: leave-one-source-out: source -> (cases, figures, in-sample MAPE, worst, held-out MAPE,
#: worst) [%]
BY_SOURCE: dict = {k: tuple(v) for k, v in _RECORD["by_source"].items()}
#: leave-one-out per (accelerator, precision group): (cases, figures, MAPE, worst) [%]
BY_ACCELERATOR: dict = {(r["accelerator"], r["precision_group"]):
                        (r["cases"], r["figures"], r["loo_mape_pct"], r["loo_worst_pct"])
                        for r in _RECORD["by_accelerator"]}
#: fitted framework efficiency factors: "<framework> on <family>" -> {"factor", "runs",
#: "documents", ...} (those with too few runs are absent and borrow the reference value,
#: catalog.framework_factor)
FRAMEWORKS: dict = dict(_RECORD.get("frameworks", {}))
#: accelerator families the reference framework's runs cover (an unstated framework on
#: another family takes the factor of the one framework fitted there)
REFERENCE_FAMILIES: tuple = tuple(_RECORD.get("reference_families", ()))
#: leave-one-out of every stage per accelerator family (runs no fit uses included):
#: family -> {"cases", "figures", "mape_pct", "worst_pct"} [%]
BY_FAMILY: dict = dict(_RECORD.get("by_family", {}))
#: held-out log errors, log(predicted / measured) throughput, per interval class
#: (traincost.uncertainty): class -> list
ERROR_POOLS: dict = {k: list(v) for k, v in _RECORD.get("error_pools", {}).items()}
#: source documents each class's pool holds (traincost.uncertainty.new_document_factor):
#: class -> count; empty for a record written before the counts were kept
ERROR_POOL_DOCUMENTS: dict = {k: int(v) for k, v in
                              _RECORD.get("error_pool_documents", {}).items()}
