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
import datetime
import hashlib
import json
import re
from dataclasses import dataclass, replace
from importlib import resources
from pathlib import Path

import numpy as np
import pandas as pd
from scipy.optimize import least_squares

from . import calibration, catalog, layout
from .assumptions import PRIOR, Assumptions
from .assemble import columns, fixed_knobs
from .catalog import precision_group
from .model import evaluate, report_units
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


def _prepare(row: pd.Series, prior: Assumptions) -> Case | None:
    kwargs, _ = case_inputs(row, prior)
    targets = [(key, float(row[col])) for col, key, fam in METRICS
               if fam in FIT_FAMILIES and col in row and not pd.isna(row[col])]
    if not targets:
        return None
    acc = catalog.accelerator(kwargs["accelerator"])
    wl = kwargs["workload"]
    precision = kwargs.get("precision") or acc.default_precision
    fixed = fixed_knobs(**{k: kwargs.get(k) for k in ("tp", "pp", "cp", "ep", "vpp", "zero",
                                                       "micro_batch", "recompute")})
    devices = kwargs["devices"]
    lay = layout.candidates(fixed, heads=wl.heads, layers=wl.layers, experts=wl.experts,
                            devices=devices, domain=acc.scaleup_domain_devices,
                            global_batch=wl.global_batch, seq_len=wl.seq_len)
    arch = layout.arch_columns(wl, devices)
    mask = layout.valid({**arch, **lay})
    if not mask.any():
        return None
    lay = {k: v[mask] for k, v in lay.items()}
    site = catalog.site(None, pue_value=1.0, grid_intensity_g=0.0)
    return Case(case=row.name, cols=columns(acc, wl, site, precision, devices, lay, prior),
                targets=targets, source=source_key(row.get("source", "")))


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

    def residuals(self, a: Assumptions) -> np.ndarray:
        """log(predicted / reported) for every target of every case. [-]"""
        if not self.cases:
            return np.zeros(0)
        with np.errstate(divide="ignore", invalid="ignore"):
            rep = report_units(evaluate(self.cols, a))
        rows = self.chosen_rows(rep)[self.target_case]
        n = len(self.segment)
        predicted = np.array([float(np.broadcast_to(rep[key], (n,))[r])
                              for key, r in zip(self.target_key, rows)])
        return np.log(predicted) - self.log_reported


def residuals(cases: list[Case] | Batch, a: Assumptions) -> np.ndarray:
    """log(predicted / reported) for every target of every case. [-]"""
    batch = cases if isinstance(cases, Batch) else Batch(cases)
    return batch.residuals(a)


def _with(prior: Assumptions, x, free: dict = FREE) -> Assumptions:
    return replace(prior, **dict(zip(free, map(float, x))))


def fit(cases: list[Case], prior: Assumptions = PRIOR, free: dict = FREE) -> Assumptions:
    """Least-squares fit of the ``free`` constants (default FREE) on ``cases``."""
    x0 = [getattr(prior, k) for k in free]
    lo, hi = zip(*free.values())
    batch = Batch(cases)
    res = least_squares(lambda x: batch.residuals(_with(prior, x, free)), x0,
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


def by_source(cases: list[Case], prior: Assumptions = PRIOR) -> pd.DataFrame:
    """Leave-one-source-out errors, next to the in-sample ones, per publication. [%]

    For each source, the FREE constants are fitted on the cases of every *other* source
    and predict the held-out source's cases; ``all`` pools every held-out figure.

    Returns
    -------
    DataFrame indexed by source with ``cases``, ``figures``, ``in_sample_mape_pct``,
    ``in_sample_worst_pct``, ``held_out_mape_pct``, ``held_out_worst_pct`` (the in-sample
    columns use one fit on all cases).
    """
    everything = fit(cases, prior)
    rows, pooled_in, pooled_out = [], [], []
    for src in sorted({c.source for c in cases}):
        test = [c for c in cases if c.source == src]
        train = [c for c in cases if c.source != src]
        inside = np.abs(np.expm1(residuals(test, everything))) * 100.0
        outside = np.abs(np.expm1(residuals(test, fit(train, prior)))) * 100.0
        pooled_in.extend(inside)
        pooled_out.extend(outside)
        rows.append((src, len(test), len(inside), inside.mean(), inside.max(), outside.mean(),
                     outside.max()))
    rows.append(("all", len(cases), len(pooled_in), np.mean(pooled_in), np.max(pooled_in),
                 np.mean(pooled_out), np.max(pooled_out)))
    return pd.DataFrame(rows, columns=["source", "cases", "figures", "in_sample_mape_pct",
                                       "in_sample_worst_pct", "held_out_mape_pct",
                                       "held_out_worst_pct"]).set_index("source")


def prepare_cases(runs: pd.DataFrame | None = None, prior: Assumptions = PRIOR) -> list[Case]:
    """Cases with measured throughput that the model can lay out."""
    runs = catalog.published_runs() if runs is None else runs
    runs = runs[(runs["status"] == "measured") & runs["model_gap"].isna()]
    out = []
    for _, row in runs.iterrows():
        try:
            case = _prepare(row, prior)
        except ValueError:
            continue
        if case is not None:
            out.append(case)
    return out


def data_version() -> str:
    """First 12 hex digits of the SHA-256 of published_runs.csv."""
    text = catalog.read_table("published_runs").to_csv(index=False)
    return hashlib.sha256(text.encode()).hexdigest()[:12]


def calibration_record(a: Assumptions, metrics: dict, sources: pd.DataFrame,
                       accelerators: pd.DataFrame) -> dict:
    """What ``data/calibration.json`` holds for a fit (see :mod:`traincost.calibration`)."""
    held = ("cases", "figures", "in_sample_mape_pct", "in_sample_worst_pct",
            "held_out_mape_pct", "held_out_worst_pct")
    return {
        "about": "Fitted efficiency constants and their validation metrics. Written by "
                 "`python -m traincost.calibrate --write`; do not edit by hand. See "
                 "traincost.calibrate for the method.",
        "fit_date": datetime.date.today().isoformat(),
        "data_version": data_version(),
        "data_version_of": "sha256[:12] of data/published_runs.csv",
        "constants": {k: float(getattr(a, k)) for k in (*FREE, *FP8_FREE)},
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
    }


def write_calibration(record: dict, path: Path | None = None) -> Path:
    """Write a calibration record as JSON, by default to the package's
    ``data/calibration.json`` (the repository's data/ in an editable install)."""
    if path is None:
        path = Path(str(resources.files("traincost.data").joinpath(calibration.FILE)))
    path.write_text(json.dumps(record, indent=1) + "\n", encoding="utf-8")
    return path


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m traincost.calibrate")
    parser.add_argument("--folds", type=int, default=5)
    parser.add_argument("--seeds", type=int, default=10,
                        help="k-fold splits to repeat (one random split per seed)")
    parser.add_argument("--write", action="store_true",
                        help="write the fit to data/calibration.json")
    args = parser.parse_args(argv)
    every = prepare_cases()
    cases = [c for c in every if not is_fp8(c)]     # stage 1: bf16/fp16 runs
    fp8_cases = [c for c in every if is_fp8(c)]     # stage 2: fp8 runs, FP8_FREE only
    prior_mape, prior_worst = mape(cases, PRIOR)
    fitted = fit(cases)
    in_mape, in_worst = mape(cases, fitted)
    loo = leave_one_out_errors(cases, start=fitted)
    loo_mape, loo_worst, loo_case = loo_summary(loo)
    target = loo[loo["case"].map(in_target_scope)]
    t_mape, t_worst, t_case = loo_summary(target)
    spread = np.array([kfold(cases, args.folds, seed=seed, start=fitted)
                       for seed in range(args.seeds)])
    sources = by_source(cases)
    metrics = {"cases": len(cases), "targets": int(sum(len(c.targets) for c in cases)),
               "prior_mape_pct": round(prior_mape, 2), "prior_worst_pct": round(prior_worst, 2),
               "in_sample_mape_pct": round(in_mape, 2), "in_sample_worst_pct": round(in_worst, 2),
               "loo_mape_pct": round(loo_mape, 2), "loo_worst_pct": round(loo_worst, 2),
               "loo_worst_case": loo_case,
               "loo_target_cases": int(target["case"].nunique()),
               "loo_target_mape_pct": round(t_mape, 2), "loo_target_worst_pct": round(t_worst, 2),
               "loo_target_worst_case": t_case,
               "cv_folds": args.folds, "cv_seeds": args.seeds,
               "cv_mape_pct": round(float(spread[:, 0].mean()), 2),
               "cv_worst_median_pct": round(float(np.median(spread[:, 1])), 2),
               "cv_worst_min_pct": round(float(spread[:, 1].min()), 2),
               "cv_worst_pct": round(float(spread[:, 1].max()), 2),
               "loso_mape_pct": round(float(sources.loc["all", "held_out_mape_pct"]), 2),
               "loso_worst_pct": round(float(sources.loc["all", "held_out_worst_pct"]), 2)}
    errors = [loo]
    if fp8_cases:
        fp8_loo = fp8_leave_one_out_errors(fp8_cases, fitted)
        errors.append(fp8_loo)
        f_in, f_in_worst, f_loo, f_loo_worst = fp8_errors(fp8_cases, fitted, fp8_loo)
        metrics.update({"fp8_cases": len(fp8_cases),
                        "fp8_prior_mape_pct": round(mape(fp8_cases, fitted)[0], 2),
                        "fp8_in_sample_mape_pct": round(f_in, 2),
                        "fp8_in_sample_worst_pct": round(f_in_worst, 2),
                        "fp8_loo_mape_pct": round(f_loo, 2),
                        "fp8_loo_worst_pct": round(f_loo_worst, 2)})
        fitted = fit_fp8(fp8_cases, fitted)
    print("fitted constants (prior -> fitted):")
    for k in (*FREE, *FP8_FREE):
        print(f"  {k:28s} {getattr(PRIOR, k):8.4g} -> {getattr(fitted, k):8.4g}")
    for k, v in metrics.items():
        print(f"  {k:28s} {v}")
    print("leave one source out (fit on the other sources, predict this one) [%]:")
    print(sources.round(2).to_string())
    accelerators = by_accelerator(pd.concat(errors, ignore_index=True))
    print("leave one out, per accelerator and precision group [%]:")
    print(accelerators.round(2).to_string())
    if args.write:
        path = write_calibration(calibration_record(fitted, metrics, sources, accelerators))
        print("wrote", path)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
