"""Intervals: how far an estimate may be from the run it describes, from measured misses.

An estimate's main uncertainty is the model's own error, and the honest measure of it is how
far the model lands from published runs it was not fitted on. :mod:`traincost.calibrate`
stores those held-out errors (``data/calibration.json`` ``error_pools``: ``eps`` =
log(predicted / measured) throughput, each run predicted by the calibration refitted without
its source document) in four classes, by how the estimate's framework factor came about
(:func:`error_class`):

* ``reference``: the Megatron-Core/NeMo framework the shared constants are fitted on;
* ``fitted``: a framework with a factor fitted on its own published runs;
* ``borrowed``: a framework with too few published runs, predicted with the reference's
  factor (its pool: such runs, and whole fitted frameworks held out);
* ``unspecified``: no framework given, which could be any: the reference and borrowed
  pools together.

:func:`intervals` draws from the class's pool (a bootstrap: the measured misses, not a
fitted shape), turns each draw into the factor the step time would change by,
``exp(eps)``, and runs the estimate's layout through the same vectorised
:func:`traincost.model.evaluate` once for all draws (``model_error_factor``), so time,
energy, carbon and cost move together as the model computes them. The p10, p50 and p90 of
each output are its interval. ``python -m traincost.calibrate`` reports how often a held-out
run's measured throughput falls inside its own 80% interval (``interval_*_coverage_pct``).

Not yet in the spread: the inputs nobody knows exactly (PUE, grid intensity, device power,
goodput, prices); the intervals are the model's error alone.

Examples
--------
>>> import traincost
>>> est = traincost.estimate("h100-sxm5-80gb", 64, model="llama3.1-8b", global_batch=512,
...                          tokens=1e11)
>>> box = intervals(est, draws=2000, seed=1)
>>> box["tokens_per_s"][0] < est.tokens_per_s < box["tokens_per_s"][2]
True
"""

from __future__ import annotations

import numpy as np

from . import calibration, catalog
from .assemble import columns
from .model import evaluate, report_units
from .workload import RECOMPUTE_CODES

#: the interval classes (:func:`error_class`), each with its pool of held-out errors
ERROR_CLASSES = ("reference", "fitted", "borrowed", "unspecified")
#: the outputs an interval is given for (report keys)
INTERVAL_KEYS = ("tokens_per_s", "step_time_s", "mfu", "train_time_days", "device_hours",
                 "facility_energy_mwh", "co2e_t", "cost_usd")
#: the interval's quantiles: p10, p50, p90 (an 80% interval)
QUANTILES = (0.1, 0.5, 0.9)
#: Monte Carlo draws when none are asked for
DEFAULT_DRAWS = 10_000


def error_class(framework: str, accelerator) -> str:
    """Which held-out errors stand for an estimate's own (see the module notes). [-]

    >>> error_class("megatron", "h100-sxm5-80gb"), error_class("torchtitan", "a100-sxm4-80gb")
    ('reference', 'fitted')
    >>> error_class("unspecified", "h100-sxm5-80gb"), error_class("deepspeed", "gaudi2")
    ('unspecified', 'borrowed')
    """
    status = catalog.framework_factor(framework, accelerator)[1]
    if framework == "unspecified" and status == "reference":
        return "unspecified"
    return status


def error_pool(cls: str) -> np.ndarray:
    """The stored held-out log errors of class ``cls``, log(predicted / measured). [-]"""
    pool = calibration.ERROR_POOLS.get(cls)
    if not pool:
        raise ValueError(f"error class: {cls!r} has no stored held-out errors (one of "
                         f"{', '.join(calibration.ERROR_POOLS)}); run "
                         "`python -m traincost.calibrate --write`")
    return np.asarray(pool, dtype=float)


def draw_error_factors(cls: str, draws: int, seed: int) -> np.ndarray:
    """``draws`` factors by which the measured step time may differ from the predicted one:
    ``exp(eps)``, eps drawn with replacement from the class's held-out errors. [-]

    Seeded (numpy's default generator): the same seed gives the same draws."""
    if int(draws) != draws or draws < 1:
        raise ValueError(f"draws: {draws!r} must be a whole number of at least 1")
    rng = np.random.default_rng(seed)
    return np.exp(rng.choice(error_pool(cls), size=int(draws), replace=True))


def intervals(est, draws: int = DEFAULT_DRAWS, seed: int = 0) -> dict:
    """p10, p50 and p90 of an estimate's outputs under the model's measured error.

    Parameters
    ----------
    est : Estimate
        A point estimate (its layout, workload, site and assumptions are kept). [-]
    draws : int
        Monte Carlo draws. [-]
    seed : int
        Seed of the draws. [-]

    Returns
    -------
    dict: report key (:data:`INTERVAL_KEYS`) -> [p10, p50, p90] in the report's units, plus
    ``class`` (the error class drawn from) and ``draws``.
    """
    p = est.parallel
    lay = {k: np.asarray([RECOMPUTE_CODES[p.recompute] if k == "recompute" else
                          int(getattr(p, k))])
           for k in ("tp", "pp", "cp", "ep", "vpp", "zero", "micro_batch", "recompute")}
    cols = columns(est.system, est.inputs, est.precision, lay, est.assumptions)
    cls = error_class(est.stack.framework, est.accelerator)
    cols["model_error_factor"] = draw_error_factors(cls, draws, seed)
    with np.errstate(divide="ignore", invalid="ignore"):
        rep = report_units(evaluate(cols, est.assumptions))
    out = {}
    for key in INTERVAL_KEYS:
        values = np.broadcast_to(np.asarray(rep[key], dtype=float), (int(draws),))
        out[key] = [float(q) for q in np.quantile(values, QUANTILES)]
    return {**out, "class": cls, "draws": int(draws)}
