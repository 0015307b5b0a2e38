"""Fit the efficiency constants once, for all cases, against published throughput.

One set of constants for every case: no per-case, per-model or per-accelerator terms.
The fit minimises the log error of predicted vs published throughput (hardware or model
TFLOP/s per device, MFU, step time) over the ``measured`` throughput rows of
``data/published_runs.csv`` with :func:`scipy.optimize.least_squares`, then reports the
error on cases left out of the fit next to the in-sample error: leave-one-out
(:func:`leave_one_out`, deterministic; over all cases and over issue 3's target rows,
:data:`TARGET_SCOPE`) and k-fold cross-validation repeated over several
random splits (:func:`kfold`), whose worst case depends on which cases share a fold.

The fp8 runs are fitted in a second stage: with the FREE constants fixed at their fit on
the bf16/fp16 runs, only :data:`FP8_FREE` (the share of the in-model matmul efficiency fp8
GEMMs keep) is fitted on them, with its own leave-one-out (:func:`fp8_errors`). Adding fp8
benchmarks thus adds one constant and leaves the rest of the calibration as it was.

A second, harder out-of-sample test holds out one *source* at a time (all the runs of one
paper or benchmark suite, :func:`by_source`): the constants are fitted on the other
sources and predict a publication they have never seen, as a user's own cluster would be.

Run ``python -m traincost.calibrate`` to print the fit and its cross-validated error;
``python -m traincost.calibrate --write`` also regenerates
``data/calibration.json`` (constants, fit date, data version, errors), which
:mod:`traincost.assumptions` applies on top of its sourced priors.

Each case's candidate layouts (the knobs its source does not state are searched, as for
any user) are enumerated once; every evaluation of the objective re-runs the one
vectorised :func:`traincost.model.evaluate` on them and keeps the fastest layout that fits.
"""

from __future__ import annotations

import argparse
import re
from dataclasses import dataclass, field, replace

import numpy as np
import pandas as pd
from scipy.optimize import least_squares

from . import catalog, layout
from .assumptions import PRIOR, Assumptions
from .assemble import Inputs, columns, fixed_knobs, framework_knobs, system
from .calibration_record import (by_group, calibration_record, data_version,  # noqa: F401
                                 write_calibration)
from .catalog import precision_group
from .choices import TIME_KEYS
from .model import evaluate, report_units
from .uncertainty import ERROR_CLASSES, interval_coverage, long_context_ids
from .validate import METRICS, case_inputs

#: the free constants and their bounds (each is a field of Assumptions)
FREE = {
    "in_model_matmul_fraction": (0.3, 1.0),
    "scaleup_comm_efficiency": (0.2, 1.0),
    "scaleout_comm_efficiency": (0.2, 1.0),
    "elementwise_traffic_factor": (0.5, 8.0),
}
#: fitted in a second stage on the fp8 runs alone, with FREE held at their fit on the
#: bf16/fp16 runs: the fp8 runs then add one constant and leave the others as they were
FP8_FREE = {
    "fp8_matmul_fraction": (0.3, 1.0),
}
#: a framework gets its own efficiency factor (:func:`fit_frameworks`) from at least this
#: many published runs in at least this many documents (a publication at one date: one
#: measurement campaign); with fewer it borrows the reference framework's (issue 21)
FRAMEWORK_MIN_RUNS = 3
FRAMEWORK_MIN_DOCUMENTS = 2
#: bounds of a fitted framework factor: from a third of the reference efficiency to the
#: factor at which the in-model matmul share reaches the measured ceiling (1 / 0.3)
FRAMEWORK_BOUNDS = (0.3, 1 / 0.3)
#: the factor of the reference framework, whose runs fit the shared constants
REFERENCE_FACTOR = 1.0
#: bounds of a framework's fitted fixed time per layer per micro-batch (data/frameworks.csv
#: layer_overhead; catalog.framework_layer_overhead): none, up to 0.1 s, five times the
#: largest fitted (Megatron-DeepSpeed on NVIDIA, 0.018 s, 2026-12-04) [s]
LAYER_OVERHEAD_BOUNDS = (0.0, 0.1)
#: the fit's unit for it, so that the factor and it move on comparable scales, and where
#: the fit starts: one unit, inside the bounds, since at 0 a one-sided bound starts it [s]
_OVERHEAD_UNIT = 1e-3
_OVERHEAD_START = 1.0
#: the case-id prefixes of issue 3's throughput target ("out-of-sample MAPE <= 5% over the
#: Megatron SC21 and MegaScale rows, worst case <= 10%"); the fit uses every case
TARGET_SCOPE = ("sc21-", "megascale-")
#: metric families the fit uses (time model only; power has too few measured points)
FIT_FAMILIES = ("throughput",)


@dataclass
class Case:
    """One published case, its candidate layouts prepared once."""

    case: str
    cols: dict
    targets: list            # (predicted key, reported value)
    source: str = ""         # the publication, see source_key
    framework: str = "unspecified"   # data/frameworks.csv id (blank in the table: unspecified)
    document: str = ""       # the publication and its date: one measurement campaign
    stack: str = ""          # its factor's name, catalog.factor_key: framework on a family
    #                          (or on its device: device_stacks)
    device: str = ""         # catalog.device_factor_key: '' where the ceiling was measured
    fallback: str = ""       # the family's name, where ``stack`` names the device's factor


def _prepare(row: pd.Series, prior: Assumptions) -> Case | None:
    kwargs, _ = case_inputs(row, prior)
    targets = [(key, float(row[col])) for col, key, fam in METRICS
               if fam in FIT_FAMILIES and col in row and not pd.isna(row[col])]
    if any(key == "tokens_per_s_per_device" for key, _ in targets):
        # the same measurement in a FLOP convention is not a second figure
        targets = [(k, v) for k, v in targets if k == "tokens_per_s_per_device"]
    if not targets:
        return None
    acc = catalog.accelerator(kwargs["accelerator"])
    devices = kwargs["devices"]
    sys_ = system(acc, devices, kwargs.get("power_cap"),
                  scale_out_gbps=kwargs.get("scale_out_gbps"), sites=kwargs.get("sites"),
                  site_link_gbps=kwargs.get("site_link_gbps"))
    spec = Inputs(kwargs["workload"], kwargs["job"], kwargs["stack"],
                  catalog.site(None, pue_value=1.0, grid_intensity_g=0.0))
    precision = kwargs.get("precision") or acc.default_precision
    fixed = framework_knobs(fixed_knobs(**{k: kwargs.get(k) for k in (
        "tp", "pp", "cp", "ep", "vpp", "zero", "micro_batch", "recompute", "cross_site")}),
        spec.stack)
    wl, job = spec.workload, spec.job
    lay = layout.candidates(fixed, heads=wl.heads, layers=wl.layers, experts=wl.experts,
                            devices=devices, domain=sys_.domain_devices,
                            global_batch=job.global_batch, seq_len=job.seq_len)
    arch = layout.arch_columns(spec, devices)
    mask = layout.valid({**arch, **lay})
    if not mask.any():
        return None
    lay = {k: v[mask] for k, v in lay.items()}
    src = source_key(row.get("source", ""))
    framework = spec.stack.framework
    return Case(case=row.name, cols=columns(sys_, spec, precision, lay, prior),
                targets=targets, source=src, framework=framework,
                stack=catalog.factor_key(framework, acc),
                device=catalog.device_factor_key(framework, acc),
                document=document_key(src, row.get("source_date", ""),
                                      row.get("source_locator", "")))


def _chosen(case: Case, a: Assumptions) -> dict:
    """The fastest fitting layout's report under assumptions ``a``."""
    with np.errstate(divide="ignore", invalid="ignore"):
        rep = report_units(evaluate(case.cols, a))
    n = len(case.cols["tp"]) if np.ndim(case.cols["tp"]) else 1
    step = np.broadcast_to(rep["step_time_s"], (n,))
    fits = np.broadcast_to(rep["fits_in_memory"], (n,)) & np.isfinite(step)
    mem = np.broadcast_to(rep["memory_gib_per_device"], (n,))
    pool = np.flatnonzero(fits) if fits.any() else np.arange(n)
    i = pool[np.lexsort((mem[pool], step[pool]))[0]]
    return {k: float(np.broadcast_to(v, (n,))[i]) for k, v in rep.items()}


class Batch:
    """Many cases' candidate layouts stacked into one set of columns, so that one call of
    the vectorised :func:`traincost.model.evaluate` scores every case (the fit's objective
    runs hundreds of times; one call per case spent its time in Python, not in numpy).

    Each case's scalar columns (its accelerator, model, stack) are repeated over its
    layouts; ``start`` holds the first row of each case. The fastest fitting layout of
    each case is then picked as :func:`_chosen` picks it.
    """

    def __init__(self, cases: list[Case]):
        self.cases = list(cases)
        sizes = [len(c.cols["tp"]) if np.ndim(c.cols["tp"]) else 1 for c in self.cases]
        self.start = np.concatenate([[0], np.cumsum(sizes)[:-1]]).astype(int)
        self.segment = np.repeat(np.arange(len(sizes)), sizes)
        keys = self.cases[0].cols.keys() if self.cases else ()
        self.cols = {k: np.concatenate([np.broadcast_to(c.cols[k], (n,))
                                        for c, n in zip(self.cases, sizes)])
                     for k in keys}
        # one (row of the case in the target list, predicted key, log reported) per target
        self.target_case = np.array([i for i, c in enumerate(self.cases) for _ in c.targets],
                                    dtype=int)
        self.target_key = [key for c in self.cases for key, _ in c.targets]
        self.log_reported = np.log([value for c in self.cases for _, value in c.targets])

    def chosen_rows(self, rep: dict) -> np.ndarray:
        """Row of each case's fastest layout that fits (the least memory breaking ties);
        of its fastest layout when none fits."""
        n = len(self.segment)
        step = np.broadcast_to(rep["step_time_s"], (n,))
        fits = np.broadcast_to(rep["fits_in_memory"], (n,)) & np.isfinite(step)
        mem = np.broadcast_to(rep["memory_gib_per_device"], (n,))
        case_fits = np.zeros(len(self.cases), bool)
        np.logical_or.at(case_fits, self.segment, fits)
        eligible = fits | ~case_fits[self.segment]
        order = np.lexsort((mem, step, ~eligible, self.segment))
        first = np.searchsorted(self.segment[order], np.arange(len(self.cases)))
        return order[first]

    def residuals(self, a: Assumptions, factor=None, overhead=None) -> np.ndarray:
        """log(predicted / reported) for every target of every case. [-]

        ``factor``: the framework efficiency factor to evaluate every case with (a fit's
        trial value), or a dict factor name (:attr:`Case.stack`) -> factor (absent: the
        reference's 1; a device's factor absent: its family's, :attr:`Case.fallback`),
        instead of the one each case's columns carry (data/calibration.json's).
        ``overhead``: the same for the framework's fixed time per layer per micro-batch
        [s] (a dict's absent names: 0, the reference's; None with a dict ``factor``: 0
        everywhere, as for a framework fitted without one)."""
        if not self.cases:
            return np.zeros(0)
        if isinstance(factor, dict):
            factor = np.array([factor.get(c.stack, factor.get(c.fallback, REFERENCE_FACTOR))
                               for c in self.cases])[self.segment]
            overhead = {} if overhead is None else overhead
        if isinstance(overhead, dict):
            overhead = np.array([overhead.get(c.stack, overhead.get(c.fallback, 0.0))
                                 for c in self.cases])[self.segment]
        n = (len(self.segment),)
        cols = self.cols if factor is None else {**self.cols, "framework_matmul_factor":
                                                 np.broadcast_to(np.asarray(factor, float), n)}
        if overhead is not None:
            cols = {**cols, "framework_layer_overhead_s":
                    np.broadcast_to(np.asarray(overhead, float), n)}
        with np.errstate(divide="ignore", invalid="ignore"):
            rep = report_units(evaluate(cols, a))
        rows = self.chosen_rows(rep)[self.target_case]
        n = len(self.segment)
        predicted = np.array([float(np.broadcast_to(rep[key], (n,))[r])
                              for key, r in zip(self.target_key, rows)])
        return np.log(predicted) - self.log_reported


def residuals(cases: list[Case] | Batch, a: Assumptions, factors=None,
              overheads=None) -> np.ndarray:
    """log(predicted / reported) for every target of every case. [-]

    ``factors``, ``overheads``: framework efficiency factors and fixed times per layer per
    micro-batch as :meth:`Batch.residuals` takes them (None: each case's own columns, i.e.
    data/calibration.json's)."""
    batch = cases if isinstance(cases, Batch) else Batch(cases)
    return batch.residuals(a, factors, overheads)


def _with(prior: Assumptions, x, free: dict = FREE) -> Assumptions:
    return replace(prior, **dict(zip(free, map(float, x))))


def fit(cases: list[Case], prior: Assumptions = PRIOR, free: dict = FREE) -> Assumptions:
    """Least-squares fit of the ``free`` constants (default FREE) on ``cases``."""
    x0 = [getattr(prior, k) for k in free]
    lo, hi = zip(*free.values())
    batch = Batch(cases)
    res = least_squares(lambda x: batch.residuals(_with(prior, x, free), REFERENCE_FACTOR), x0,
                        bounds=(lo, hi), x_scale="jac", diff_step=1e-3, max_nfev=200)
    return _with(prior, res.x, free)


def is_fp8(case: Case) -> bool:
    """Whether a case ran its GEMMs in fp8."""
    return bool(np.any(case.cols["fp8"]))


def fit_fp8(cases: list[Case], base: Assumptions) -> Assumptions:
    """The second stage: FP8_FREE fitted on the fp8 ``cases``, everything else as in ``base``.

    Returns ``base`` unchanged when there is no fp8 case.
    """
    return fit(cases, base, FP8_FREE) if cases else base


def fp8_leave_one_out_errors(cases: list[Case], base: Assumptions) -> pd.DataFrame:
    """:func:`leave_one_out_errors` of the fp8 stage: only FP8_FREE is refitted without the
    held-out fp8 case; ``base`` carries the first stage's constants, which never see an fp8
    case."""
    return leave_one_out_errors(cases, start=base, free=FP8_FREE)


def fp8_errors(cases: list[Case], base: Assumptions,
               loo: pd.DataFrame | None = None) -> tuple[float, float, float, float]:
    """(in-sample MAPE, worst, leave-one-out MAPE, worst) of the fp8 stage. [%]

    ``loo``: :func:`fp8_leave_one_out_errors` of these cases, if already computed.
    """
    inside, inside_worst = mape(cases, fit_fp8(cases, base))
    loo = fp8_leave_one_out_errors(cases, base) if loo is None else loo
    outside, outside_worst, _ = loo_summary(loo)
    return inside, inside_worst, outside, outside_worst


def by_accelerator(errors: pd.DataFrame, runs: pd.DataFrame | None = None) -> pd.DataFrame:
    """Out-of-sample error per accelerator and precision group.

    Parameters
    ----------
    errors : DataFrame
        Leave-one-out figures (``case``, signed ``error_pct``) of both stages, as
        :func:`leave_one_out_errors` and :func:`fp8_leave_one_out_errors` return them.
    runs : DataFrame, optional
        The published runs (default ``data/published_runs.csv``), indexed by id: each case's
        ``accelerator`` and ``precision``.

    Returns
    -------
    DataFrame indexed by (``accelerator``, ``group``) with ``cases``, ``figures``,
    ``loo_mape_pct`` (mean absolute error) and ``loo_worst_pct`` (largest). [%]
    """
    runs = catalog.read_table("published_runs").set_index("id") if runs is None else runs
    cases = errors["case"]
    table = errors.assign(
        accelerator=cases.map(runs["accelerator"]),
        group=cases.map(runs["precision"]).fillna("bf16").map(precision_group),
        abs_pct=errors["error_pct"].abs())
    return table.groupby(["accelerator", "group"]).agg(
        cases=("case", "nunique"), figures=("case", "size"),
        loo_mape_pct=("abs_pct", "mean"), loo_worst_pct=("abs_pct", "max"))


def mape(cases: list[Case], a: Assumptions) -> tuple[float, float]:
    """(mean absolute % error, worst absolute % error) of throughput on ``cases``."""
    r = np.abs(np.expm1(residuals(cases, a))) * 100.0
    return float(r.mean()), float(r.max())


def kfold(cases: list[Case], k: int = 5, prior: Assumptions = PRIOR, seed: int = 0,
          start: Assumptions | None = None):
    """Out-of-sample errors: fit on k-1 folds, predict the held-out fold. [%]

    ``start`` (e.g. the fit on every case) only warm-starts each fold's least squares;
    the minimum it finds is the same, in fewer iterations.
    """
    idx = np.random.default_rng(seed).permutation(len(cases))
    errors = []
    for fold in np.array_split(idx, k):
        train = [cases[i] for i in idx if i not in set(fold)]
        test = [cases[i] for i in fold]
        a = fit(train, prior if start is None else start)
        errors.extend(np.abs(np.expm1(residuals(test, a))) * 100.0)
    errors = np.asarray(errors)
    return float(errors.mean()), float(errors.max())


def leave_one_out_errors(cases: list[Case], prior: Assumptions = PRIOR,
                         start: Assumptions | None = None,
                         free: dict = FREE) -> pd.DataFrame:
    """Each case's figures predicted by the ``free`` constants fitted on all the others.

    Deterministic, unlike a k-fold split, whose worst case depends on which cases share a
    fold: when two of the few runs that pin a constant are held out together, nothing pins
    it (SC21's DeepSpeed ZeRO-3 runs and the scale-out efficiency). ``start`` warm-starts
    each fit as in :func:`kfold`; the fp8 stage passes ``free=FP8_FREE`` with the first
    stage's fit as ``start`` (:func:`fp8_errors`).

    Returns
    -------
    One row per figure: ``case`` and its signed ``error_pct``, 100 (predicted/reported - 1).
    """
    start = fit(cases, prior, free) if start is None else start
    rows = []
    for i, case in enumerate(cases):
        a = fit(cases[:i] + cases[i + 1:], start, free)
        rows.extend((case.case, float(e)) for e in np.expm1(residuals([case], a)) * 100.0)
    return pd.DataFrame(rows, columns=["case", "error_pct"])


def loo_summary(errors: pd.DataFrame) -> tuple[float, float, str]:
    """(mean absolute % error, worst absolute % error, its case) of
    :func:`leave_one_out_errors`' table. [%]"""
    a = errors["error_pct"].abs()
    return float(a.mean()), float(a.max()), str(errors["case"].iloc[int(a.to_numpy().argmax())])


def leave_one_out(cases: list[Case], prior: Assumptions = PRIOR,
                  start: Assumptions | None = None,
                  free: dict = FREE) -> tuple[float, float, str]:
    """(mean absolute % error, worst absolute % error, the case with the worst error) of
    :func:`leave_one_out_errors`. [%]"""
    return loo_summary(leave_one_out_errors(cases, prior, start, free))


def in_target_scope(case_id: str) -> bool:
    """Whether a case is one of issue 3's throughput-target rows: Megatron-LM SC21
    (Narayanan et al., Tables 1-2) and MegaScale (Jiang et al. 2024). [-]"""
    return str(case_id).startswith(TARGET_SCOPE)


def source_key(source: str) -> str:
    """The publication a ``source`` cell names: its text up to the first comma or bracket.

    >>> source_key("Korthikanti et al. 2022, Reducing Activation Recomputation, arXiv:2205.05198")
    'Korthikanti et al. 2022'
    >>> source_key("NVIDIA DGX Cloud Benchmarking recipes (github.com/NVIDIA/dgxc-benchmarking)")
    'NVIDIA DGX Cloud Benchmarking recipes'
    """
    return re.split(r",| \(", str(source), maxsplit=1)[0].strip()


def own_frameworks(cases: list[Case]) -> set:
    """The factor names (:func:`traincost.catalog.factor_key`: a framework on an
    accelerator family) among ``cases`` that get their own efficiency factor: not the
    reference framework's on the reference family (whose runs fit the shared constants:
    :func:`traincost.catalog.reference_key`) nor ``unspecified``, with
    at least FRAMEWORK_MIN_RUNS runs in at least FRAMEWORK_MIN_DOCUMENTS documents (a
    family's counting those of its devices with a factor of their own). [-]"""
    runs, docs = {}, {}
    for c in cases:
        if c.stack == catalog.reference_key() or c.framework == "unspecified":
            continue
        for key in {c.stack, c.fallback} - {""}:
            runs[key] = runs.get(key, 0) + 1
            docs.setdefault(key, set()).add(c.document)
    return {k for k in runs if runs[k] >= FRAMEWORK_MIN_RUNS
            and len(docs[k]) >= FRAMEWORK_MIN_DOCUMENTS}


def fit_frameworks(cases: list[Case], base: Assumptions, own: set) -> tuple[dict, dict]:
    """The efficiency factor of each name in ``own`` (a framework on an accelerator
    family, or on one device), and its fixed time per layer per micro-batch where its
    framework has one (data/frameworks.csv ``layer_overhead``), fitted on its own ``cases``
    alone with the shared constants of ``base`` held: (name -> factor [-], name -> time
    [s]; 0 where the framework has none).

    One bounded least-squares fit per name (FRAMEWORK_BOUNDS, LAYER_OVERHEAD_BOUNDS), on
    all its runs, 16-bit and fp8: adding a framework's runs leaves the shared constants and
    every other framework as they were. A family's runs include those of its devices that
    have a factor of their own (:func:`device_stacks`): the family's factor is the fallback
    for a device with too few runs, and the best guess for one never seen is the pool of
    every device the framework ran on, not of those that happened to have few runs."""
    factors, overheads = {}, {}
    for key in sorted(own):
        batch = Batch([replace(c, stack=key) for c in cases if key in (c.stack, c.fallback)])
        if catalog.fits_layer_overhead(batch.cases[0].framework):
            lo, hi = FRAMEWORK_BOUNDS
            o_lo, o_hi = (b / _OVERHEAD_UNIT for b in LAYER_OVERHEAD_BOUNDS)
            res = least_squares(
                lambda x: batch.residuals(base, float(x[0]), float(x[1]) * _OVERHEAD_UNIT),
                [REFERENCE_FACTOR, _OVERHEAD_START], bounds=([lo, o_lo], [hi, o_hi]),
                diff_step=1e-3, max_nfev=200)
            factors[key], overheads[key] = float(res.x[0]), float(res.x[1]) * _OVERHEAD_UNIT
        else:
            res = least_squares(lambda x: batch.residuals(base, float(x[0]), 0.0),
                                [REFERENCE_FACTOR], bounds=FRAMEWORK_BOUNDS, diff_step=1e-3,
                                max_nfev=100)
            factors[key], overheads[key] = float(res.x[0]), 0.0
    return factors, overheads


@dataclass
class Fit:
    """The whole calibration: shared constants, framework factors, and which frameworks
    got their own."""

    assumptions: Assumptions
    factors: dict            # factor name -> fitted factor (the others: REFERENCE_FACTOR)
    own: set                 # the factor names fitted
    overheads: dict = field(default_factory=dict)   # factor name -> fixed time per layer
    #                          per micro-batch [s] (the others: 0, the reference's)


def fitted_stage(case: Case, own: set) -> str:
    """Which fit a case joins: ``shared`` (the reference framework's runs on the reference
    family, :func:`traincost.catalog.reference_key`: the shared constants, bf16/fp16 then
    fp8; the same framework on AMD's or Intel's stack is a framework like the others),
    ``framework`` (its framework's own factor) or ``none``
    (framework not stated, or one with too few runs to fit its factor, which borrows the
    reference's: validated, never fitted, so that no framework's runs move the constants
    another framework is predicted with). [-]"""
    if case.stack == catalog.reference_key():
        return "shared"
    return "framework" if case.stack in own else "none"


def fit_all(cases: list[Case], prior: Assumptions = PRIOR) -> Fit:
    """The three stages on ``cases``: the shared constants (FREE) on the shared cases'
    bf16/fp16 runs, FP8_FREE on their fp8 runs, then each own framework's factor."""
    own = own_frameworks(cases)
    shared = [c for c in cases if fitted_stage(c, own) == "shared"]
    a = fit([c for c in shared if not is_fp8(c)], prior)
    a = fit_fp8([c for c in shared if is_fp8(c)], a)
    mine = [c for c in cases if fitted_stage(c, own) == "framework" or c.fallback in own]
    factors, overheads = fit_frameworks(mine, a, own)
    return Fit(a, factors, own, overheads)


def errors_under(cases: list[Case], f: Fit) -> pd.DataFrame:
    """Signed error of every figure of ``cases`` under the fit ``f``: ``case``,
    ``error_pct`` = 100 (predicted / reported - 1). [%]"""
    r = np.expm1(residuals(cases, f.assumptions, f.factors, f.overheads)) * 100.0
    return pd.DataFrame({"case": [c.case for c in cases for _ in c.targets], "error_pct": r})


def held_out(cases: list[Case], group, prior: Assumptions = PRIOR,
             skip: tuple = ()) -> pd.DataFrame:
    """Every fitted case predicted by the whole calibration (:func:`fit_all`) refitted
    without its group: ``group(case)`` names it (a document, a publication, a framework).

    A framework whose runs all sit in the held-out group, or that falls below the rule
    without them, borrows the reference factor, as a framework never seen would. Groups in
    ``skip`` are not held out (the reference framework, whose runs define the constants).

    Returns
    -------
    DataFrame with ``case``, ``group`` and the signed ``error_pct`` of each figure. [%]
    """
    own = own_frameworks(cases)
    fitted = [c for c in cases if fitted_stage(c, own) != "none"]
    out = []
    for g in sorted({group(c) for c in fitted} - set(skip)):
        test = [c for c in fitted if group(c) == g]
        f = fit_all([c for c in cases if group(c) != g], prior)
        out.append(errors_under(test, f).assign(group=g))
    return pd.concat(out, ignore_index=True)[["case", "group", "error_pct"]]


def document_key(source: str, date: str, locator: str = "") -> str:
    """One measurement campaign: a publication (:func:`source_key`) at one date and, where
    the locator names a file of a repository (a README, a benchmark page), that file.

    >>> document_key("Google MaxText", "2023-12-15", "MaxText/configs/v4/README.md @ 76bd53b0f, row 1")
    'Google MaxText (2023-12-15) MaxText/configs/v4/README.md'
    >>> document_key("Narayanan et al. 2021", "2021-04", "Table 1 (row 1.7B); s5.1")
    'Narayanan et al. 2021 (2021-04)'
    """
    found = re.match(r"[\w./-]+\.(?:md|rst|txt|html|py|sh|ya?ml)\b", str(locator or ""))
    return f"{source} ({date})" + (f" {found.group(0)}" if found else "")


def by_source(cases: list[Case], prior: Assumptions = PRIOR,
              group=lambda c: c.document, outside: pd.DataFrame | None = None) -> pd.DataFrame:
    """Leave-one-source-out errors, next to the in-sample ones, per source document. [%]

    For each source (by default a document: a publication at one date), the whole
    calibration is refitted on the other sources' cases (:func:`held_out`) and predicts
    the held-out source's; ``all`` pools every held-out figure. Cases whose framework is
    not stated are never fitted and are left out.

    Returns
    -------
    DataFrame indexed by source with ``cases``, ``figures``, ``in_sample_mape_pct``,
    ``in_sample_worst_pct``, ``held_out_mape_pct``, ``held_out_worst_pct`` (the in-sample
    columns use one fit on all cases). ``outside``: :func:`held_out`'s table for ``group``,
    if already computed.
    """
    own = own_frameworks(cases)
    fitted = [c for c in cases if fitted_stage(c, own) != "none"]
    inside = errors_under(fitted, fit_all(cases, prior)).assign(
        group=[group(c) for c in fitted for _ in c.targets])
    outside = held_out(cases, group, prior) if outside is None else outside
    rows = []
    for g, part in inside.groupby("group", sort=True):
        out = outside.loc[outside["group"] == g, "error_pct"].abs()
        ins = part["error_pct"].abs()
        rows.append((g, part["case"].nunique(), len(part), ins.mean(), ins.max(), out.mean(),
                     out.max()))
    ins, out = inside["error_pct"].abs(), outside["error_pct"].abs()
    rows.append(("all", inside["case"].nunique(), len(inside), ins.mean(), ins.max(),
                 out.mean(), out.max()))
    return pd.DataFrame(rows, columns=["source", "cases", "figures", "in_sample_mape_pct",
                                       "in_sample_worst_pct", "held_out_mape_pct",
                                       "held_out_worst_pct"]).set_index("source")


def framework_loo_errors(cases: list[Case], f: Fit) -> pd.DataFrame:
    """Each case of a fitted framework predicted by its factor refitted without it (the
    shared constants of ``f`` held; borrowed when the rest falls below the rule):
    ``case``, signed ``error_pct``. [%]"""
    rows = []
    for key in sorted(f.own):
        pool = [c for c in cases if key in (c.stack, c.fallback)]
        for case in (c for c in pool if c.stack == key):
            rest = [c for c in pool if c is not case]
            refit, re_over = fit_frameworks(rest, f.assumptions, own_frameworks(rest) & {key})
            # below the rule without it: a device's runs fall back to their family's factor,
            # a family's (or a framework's) to the reference's
            factors = {k: v for k, v in f.factors.items() if k != key} | refit
            overheads = {k: v for k, v in f.overheads.items() if k != key} | re_over
            e = np.expm1(residuals([case], f.assumptions, factors, overheads)) * 100.0
            rows.extend((case.case, float(x)) for x in e)
    return pd.DataFrame(rows, columns=["case", "error_pct"])


def prepare_cases(runs: pd.DataFrame | None = None, prior: Assumptions = PRIOR,
                  gaps: bool = False, among: list[Case] | None = None) -> list[Case]:
    """Cases with measured throughput the model can lay out (``gaps``: model gaps too),
    their devices' own factors named as :func:`device_stacks` finds them ``among`` the
    given cases (default: these)."""
    runs = catalog.published_runs() if runs is None else runs
    runs = runs[(runs["status"] == "measured") & (gaps | runs["model_gap"].isna())]
    out = []
    for _, row in runs.iterrows():
        try:
            case = _prepare(row, prior)
        except ValueError:
            continue
        if case is not None:
            out.append(case)
    return device_stacks(out, among)


def device_stacks(cases: list[Case], among: list[Case] | None = None) -> list[Case]:
    """``cases`` with their factor named for their device where the device has no measured
    matmul ceiling and enough runs of its own under the framework (FRAMEWORK_MIN_RUNS from
    FRAMEWORK_MIN_DOCUMENTS documents): that factor then carries the device's ceiling,
    fitted and marked so (:func:`traincost.catalog.device_factor_key`), and the family's
    factor, fitted on every run of the family theirs included (:func:`fit_frameworks`),
    stays the fallback. Never for the reference framework on the reference family, whose
    runs fit the shared constants. [-]"""
    runs, docs = {}, {}
    for c in (cases if among is None else among):      # a subset (model gaps) asks the fit's
        if c.device and c.framework != "unspecified" and c.stack != catalog.reference_key():
            runs[c.device] = runs.get(c.device, 0) + 1
            docs.setdefault(c.device, set()).add(c.document)
    own = {k for k in runs if runs[k] >= FRAMEWORK_MIN_RUNS
           and len(docs[k]) >= FRAMEWORK_MIN_DOCUMENTS}
    return [replace(c, stack=c.device, fallback=c.stack)
            if c.device in own and c.stack != catalog.reference_key() else c for c in cases]


def error_pools(cases: list[Case], f: Fit, by_document: pd.DataFrame,
                by_framework: pd.DataFrame, long_gaps: list[Case] = ()) -> pd.DataFrame:
    """The held-out log errors each interval class draws from, with their documents. [-]

    ``reference``: the reference framework's runs held out by document; ``fitted``: the
    fitted frameworks' runs held out by document; ``borrowed``: runs predicted with a factor
    they were not fitted with (frameworks with too few runs, and whole frameworks held out);
    ``unspecified``: an unstated framework could be any of them, the reference's and the
    borrowed errors together; ``long-context`` (:func:`long_context_ids`), whatever the
    framework: the fitted long-context runs held out by document and the long-context model
    gaps ``long_gaps`` (never fitted) under ``f``. ``eps`` = log(predicted / measured) of
    the throughput: a step time's log error with its sign turned (``choices.TIME_KEYS``).

    Returns
    -------
    DataFrame with ``cls``, ``case``, ``document``, ``eps``.
    """
    doc = {c.case: c.document for c in (*cases, *long_gaps)}
    keys = {c.case: [k for k, _ in c.targets] for c in (*cases, *long_gaps)}
    fw = {c.case: c.stack for c in cases}
    own = f.own

    def frame(errors, cls):                  # a case's figures come in its targets' order
        nth = errors.groupby("case").cumcount().to_numpy()
        sign = [-1.0 if keys[c][i] in TIME_KEYS else 1.0 for c, i in zip(errors["case"], nth)]
        return pd.DataFrame({"cls": cls, "case": errors["case"].to_numpy(),
                             "document": errors["case"].map(doc).to_numpy(),
                             "eps": np.multiply(sign, np.log1p(errors["error_pct"] / 100.0))})
    is_ref = by_document["case"].map(fw) == catalog.reference_key()
    unfitted = errors_under([c for c in cases if fitted_stage(c, own) == "none"], f)
    borrowed = pd.concat([unfitted, by_framework[["case", "error_pct"]]], ignore_index=True)
    parts = {"reference": frame(by_document[is_ref], "reference"),
             "fitted": frame(by_document[~is_ref], "fitted"),
             "borrowed": frame(borrowed, "borrowed")}
    parts["unspecified"] = pd.concat([parts["reference"], parts["borrowed"]]).assign(
        cls="unspecified")
    long = long_context_ids(catalog.published_runs(), f.assumptions)
    parts["long-context"] = frame(pd.concat(
        [by_document[by_document["case"].isin(long)], errors_under(list(long_gaps), f)],
        ignore_index=True), "long-context")
    return pd.concat([parts[c] for c in ERROR_CLASSES], ignore_index=True)


def shared_cases(cases: list[Case]) -> list[Case]:
    """The cases that fit the shared constants (:func:`fitted_stage` ``shared``)."""
    own = own_frameworks(cases)
    return [c for c in cases if fitted_stage(c, own) == "shared"]


def _pct(x: float) -> float:
    return round(float(x), 2)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m traincost.calibrate")
    parser.add_argument("--folds", type=int, default=5)
    parser.add_argument("--seeds", type=int, default=10,
                        help="k-fold splits to repeat (one random split per seed)")
    parser.add_argument("--write", action="store_true",
                        help="write the fit to data/calibration.json")
    args = parser.parse_args(argv)
    every = prepare_cases()
    shared = shared_cases(every)
    cases = [c for c in shared if not is_fp8(c)]     # stage 1: bf16/fp16 runs
    fp8_cases = [c for c in shared if is_fp8(c)]     # stage 2: fp8 runs, FP8_FREE only
    prior_mape, prior_worst = mape(cases, PRIOR)
    whole = fit_all(every)
    fitted = fit(cases)
    in_mape, in_worst = mape(cases, fitted)
    loo = leave_one_out_errors(cases, start=fitted)
    loo_mape, loo_worst, loo_case = loo_summary(loo)
    target = loo[loo["case"].map(in_target_scope)]
    t_mape, t_worst, t_case = loo_summary(target)
    spread = np.array([kfold(cases, args.folds, seed=seed, start=fitted)
                       for seed in range(args.seeds)])
    by_document = held_out(every, lambda c: c.document)
    sources = by_source(every, outside=by_document)
    publications = by_source(every, group=lambda c: c.source)
    lofo = held_out(every, lambda c: c.framework, skip=(catalog.REFERENCE_FRAMEWORK,))
    metrics = {"cases": len(cases), "targets": int(sum(len(c.targets) for c in cases)),
               "prior_mape_pct": _pct(prior_mape), "prior_worst_pct": _pct(prior_worst),
               "in_sample_mape_pct": _pct(in_mape), "in_sample_worst_pct": _pct(in_worst),
               "loo_mape_pct": _pct(loo_mape), "loo_worst_pct": _pct(loo_worst),
               "loo_worst_case": loo_case,
               "loo_target_cases": int(target["case"].nunique()),
               "loo_target_mape_pct": _pct(t_mape), "loo_target_worst_pct": _pct(t_worst),
               "loo_target_worst_case": t_case,
               "cv_folds": args.folds, "cv_seeds": args.seeds,
               "cv_mape_pct": _pct(spread[:, 0].mean()),
               "cv_worst_median_pct": _pct(np.median(spread[:, 1])),
               "cv_worst_min_pct": _pct(spread[:, 1].min()),
               "cv_worst_pct": _pct(spread[:, 1].max()),
               "fitted_cases": int(sources.loc["all", "cases"]),
               "loso_sources": len(sources) - 1,
               "loso_mape_pct": _pct(sources.loc["all", "held_out_mape_pct"]),
               "loso_worst_pct": _pct(sources.loc["all", "held_out_worst_pct"]),
               "lopo_publications": len(publications) - 1,
               "lopo_mape_pct": _pct(publications.loc["all", "held_out_mape_pct"]),
               "lopo_worst_pct": _pct(publications.loc["all", "held_out_worst_pct"]),
               "lofo_cases": int(lofo["case"].nunique()),
               "lofo_mape_pct": _pct(lofo["error_pct"].abs().mean()),
               "lofo_worst_pct": _pct(lofo["error_pct"].abs().max())}
    errors = [loo]
    if fp8_cases:
        fp8_loo = fp8_leave_one_out_errors(fp8_cases, fitted)
        errors.append(fp8_loo)
        f_in, f_in_worst, f_loo, f_loo_worst = fp8_errors(fp8_cases, fitted, fp8_loo)
        metrics.update({"fp8_cases": len(fp8_cases),
                        "fp8_prior_mape_pct": _pct(mape(fp8_cases, fitted)[0]),
                        "fp8_in_sample_mape_pct": _pct(f_in),
                        "fp8_in_sample_worst_pct": _pct(f_in_worst),
                        "fp8_loo_mape_pct": _pct(f_loo),
                        "fp8_loo_worst_pct": _pct(f_loo_worst)})
    fw_loo = framework_loo_errors(every, whole)
    unfitted = errors_under([c for c in every if fitted_stage(c, whole.own) == "none"], whole)
    metrics.update({"unfitted_cases": int(unfitted["case"].nunique()),
                    "unfitted_mape_pct": _pct(unfitted["error_pct"].abs().mean())
                    if len(unfitted) else float("nan")})
    frameworks = {}
    runs = catalog.published_runs()
    key_of = {c.case: c.stack for c in every}
    for key in sorted(whole.own):
        mine = [c for c in every if key in (c.stack, c.fallback)]      # the factor's fit
        e = fw_loo[fw_loo["case"].map(key_of) == key]["error_pct"].abs()
        lo = lofo[lofo["case"].map(key_of) == key]["error_pct"].abs()
        frameworks[key] = {"factor": whole.factors[key],
                           "layer_overhead_s": whole.overheads.get(key, 0.0),
                           "runs": len(mine),
                           "documents": len({c.document for c in mine}),
                           # the runs predicted with it (a family's less its own devices')
                           "own_runs": sum(c.stack == key for c in every),
                           "loo_mape_pct": _pct(e.mean()), "loo_worst_pct": _pct(e.max()),
                           "held_out_framework_mape_pct": _pct(lo.mean())}
    pooled = pd.concat([*errors, fw_loo, unfitted], ignore_index=True)
    long = runs.index.isin(long_context_ids(runs, whole.assumptions))   # and their gaps
    long_gaps = prepare_cases(runs[long & runs["model_gap"].notna()], gaps=True, among=every)
    pools = error_pools(every, whole, by_document, lofo, long_gaps)
    coverage = interval_coverage(pools)
    for cls, r in coverage.iterrows():
        metrics[f"interval_{cls}_figures"] = int(r.figures)
        metrics[f"interval_{cls}_coverage_pct"] = _pct(r.coverage_pct)
        metrics[f"interval_{cls}_median_width"] = round(float(r.median_width), 3)
    families = by_group(pooled, runs["accelerator"].map(catalog.accelerator_family))
    print("fitted constants (prior -> fitted):")
    for k in (*FREE, *FP8_FREE):
        print(f"  {k:28s} {getattr(PRIOR, k):8.4g} -> {getattr(whole.assumptions, k):8.4g}")
    print("framework factors (fitted on each framework's own runs):")
    for fw, row in frameworks.items():
        print(f"  {fw:28s} {row}")
    for k, v in metrics.items():
        print(f"  {k:28s} {v}")
    print("leave one source document out (fit on the others, predict this one) [%]:")
    print(sources.round(2).to_string())
    print("80% throughput intervals from held-out errors (run's own document left out) [%]:")
    print(coverage.round(3).to_string())
    print("leave one out (stages 1-3) per accelerator family, unfitted runs included [%]:")
    print(families.round(2).to_string())
    accelerators = by_accelerator(pd.concat([*errors, fw_loo], ignore_index=True))
    print("leave one out, per accelerator and precision group (fitted runs) [%]:")
    print(accelerators.round(2).to_string())
    if args.write:
        ref = sorted({catalog.accelerator_family(str(runs.loc[c.case, "accelerator"]))
                      for c in shared})
        path = write_calibration(calibration_record(whole, metrics, sources, accelerators,
                                                    frameworks, families, ref, pools,
                                                    (*FREE, *FP8_FREE)))
        print("wrote", path)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
