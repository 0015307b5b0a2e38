"""Predicted vs published: how far each estimate lands from real training runs.

Every case in ``data/published_runs.csv`` is re-estimated *from its configuration alone*
(model, accelerator, device count, the layout knobs the source states; the others are
searched like any user's), and each figure the source reports is compared with the
prediction. Nothing reported about throughput, time or power is fed back in; only the
site facts of the run (its PUE and grid intensity, when given) are used as inputs.

Metric families and what they test:

* ``throughput``: hardware TFLOP/s per device (Megatron's convention, recompute counted),
  model TFLOP/s per device or MFU - the time model.
* ``device_hours`` and ``train_days``: the time model plus goodput (left out where the
  source derives its time as FLOP / throughput, ``time_basis == "compute_only"``).
* ``power``: average power per device, only where the source *measured* it.
* ``memory``: the peak device memory of the predicted layout against a measured peak
  (torchtitan's benchmark tables); no fit uses it.
* ``energy`` and ``emissions``: the power model and the bookkeeping. Rows whose energy
  is device-hours x an assumed power x PUE (``energy_basis`` in :data:`BY_CONSTRUCTION`
  and a power that was not measured) check arithmetic and the time model, not the power
  model; they are summarised apart.

Examples
--------
>>> from traincost.validate import compare_published, summary
>>> table = compare_published()                                   # doctest: +SKIP
>>> summary(table).loc["throughput", "mape_pct"]                  # doctest: +SKIP
"""

from __future__ import annotations

import difflib
import math
import sys
from dataclasses import replace

import numpy as np
import pandas as pd

from . import catalog, options
from .assemble import STACK_INPUTS, build_stack
from .assumptions import DEFAULT, Assumptions
from .choices import FAMILIES, METRICS, TIME_KEYS
from .estimate import estimate
from .explore import fixed_layout, model_flop_per_token

_LAYOUT = ("tp", "pp", "cp", "ep", "vpp", "micro_batch", "zero")


def _given(value) -> bool:
    return value is not None and not (isinstance(value, float) and math.isnan(value)) \
        and not (isinstance(value, str) and not value.strip())


#: energy bases whose figure is device-hours x an assumed power (x PUE): bookkeeping
BY_CONSTRUCTION = ("device_hours_x_power_x_pue", "dynamic_only")


def case_inputs(row: pd.Series, assumptions: Assumptions = DEFAULT) -> tuple[dict, list[str]]:
    """Keyword arguments of :func:`traincost.estimate` for a published case, and the list
    of inputs the source did not state (filled from ``assumptions.validation_*``, or the
    token count from the source's total computation, ``total_flop``)."""
    filled = []
    seq_len = int(row["seq_len"]) if _given(row.get("seq_len")) else \
        int(catalog.models().loc[row["model_preset"], "seq_len"])
    if _given(row.get("global_batch")):
        batch = int(row["global_batch"])
    elif _given(row.get("dp")) and _given(row.get("micro_batch")):
        # a local batch and the data-parallel degree are stated: one micro-batch per step
        batch = int(row["dp"]) * int(row["micro_batch"])
        filled.append(f"global batch {batch} (dp x micro-batch, no accumulation)")
    else:
        batch = max(1, int(round(assumptions.validation_default_batch_tokens / seq_len)))
        filled.append(f"global batch {batch}")
    if _given(row.get("devices")):
        devices = int(row["devices"])
    else:
        devices = int(assumptions.validation_default_devices)
        filled.append(f"devices {devices}")
    wl = catalog.model(row["model_preset"])
    job = catalog.job(row["model_preset"], seq_len=seq_len, global_batch=batch,
                      tokens=float(row["tokens"]) if _given(row.get("tokens")) else None)
    # the run's software stack, as stated: the table's stack columns (0/1 for flags), and
    # the defaults the run's framework implies
    kinds = {"bool": lambda v: bool(int(v)), "float": float, "int": int}
    stack = build_stack(**{k: kinds.get(options.option(k).kind, str)(row[k])
                           for k in STACK_INPUTS if _given(row.get(k))})
    if not _given(row.get("tokens")) and _given(row.get("total_flop")):
        # the source states the work, not the tokens (Patterson et al. 2021 Table 4):
        # run as many tokens as make the model FLOP equal to it
        job = replace(job, tokens=float(row["total_flop"])
                      / model_flop_per_token(wl, seq_len=job.seq_len))
        filled.append(f"tokens {job.tokens:.3g} (the stated {float(row['total_flop']):.3g} "
                      "FLOP / the model FLOP per token)")
    kwargs = {k: int(row[k]) for k in _LAYOUT if _given(row.get(k))}
    if "cp" not in kwargs and all(_given(row.get(k)) for k in ("tp", "pp", "dp")) \
            and int(row["tp"]) * int(row["pp"]) * int(row["dp"]) == devices:
        kwargs["cp"] = 1                   # tp x pp x dp fill the devices: no context split
    if _given(row.get("recompute")):
        kwargs["recompute"] = str(row["recompute"])
    if _given(row.get("precision")):
        kwargs["precision"] = str(row["precision"])
    if _given(row.get("reported_pue")):
        kwargs["pue"] = float(row["reported_pue"])
    if _given(row.get("reported_grid_gco2e_per_kwh")):
        kwargs["grid_intensity"] = float(row["reported_grid_gco2e_per_kwh"])
    if _given(row.get("power_cap_w")):
        kwargs["power_cap"] = float(row["power_cap_w"])
    if _given(row.get("scaleout_gbps")):
        # the cluster's own scale-out links where they are not the catalog's (a cloud's
        # machine type: Google Cloud's A3 High VMs carry 1,000 Gb/s for 8 GPUs)
        kwargs["scale_out_gbps"] = float(row["scaleout_gbps"])
    if _given(row.get("sites")) and int(row["sites"]) > 1:
        # one run over several sites (or pods joined by a data-centre network), the
        # dimension that crosses them and the link between two of them, as stated
        kwargs["sites"] = int(row["sites"])
        if _given(row.get("cross_site")):
            kwargs["cross_site"] = str(row["cross_site"])
        if _given(row.get("site_link_gbps")):
            kwargs["site_link_gbps"] = float(row["site_link_gbps"])
    return {"accelerator": row["accelerator"], "devices": devices, "workload": wl,
            "job": job, "stack": stack, **kwargs}, filled


def _estimate_near(kwargs: dict, assumptions: Assumptions, filled: list):
    """Estimate at the stated device count or, when no layout of the stated batch exists
    there (GPT-3's 10,000 V100s are the source's own round figure), at the nearest smaller
    count that has one. Per-device throughput, power and device-hours barely depend on
    the count; train days are rescaled to the stated count by the caller."""
    try:
        return estimate(assumptions=assumptions, **kwargs), None
    except ValueError as first:
        n = kwargs["devices"]
        step = 8
        for candidate in range(n - n % step, max(step, n // 2), -step):
            try:
                est = estimate(assumptions=assumptions, **{**kwargs, "devices": candidate})
            except ValueError:
                continue
            filled.append(f"evaluated on {candidate} devices (no layout of the batch on {n})")
            return est, n
        raise first


def _as_run(kwargs: dict, assumptions: Assumptions, est, stated, notes: list):
    """A published run did fit. When the memory model finds no layout of it that fits,
    evaluate the fastest layout anyway (as the calibration does) and record the memory
    model's miss in ``notes``, instead of the least-memory layout an estimate falls back to.
    """
    if est.fits_in_memory:
        return est, stated
    acc = catalog.accelerator(kwargs["accelerator"])
    need = est.report["memory_gib_per_device"]
    unbounded = replace(acc, hbm_bytes=sys.float_info.max)   # memory no longer constrains
    fast, _ = _estimate_near({**kwargs, "accelerator": unbounded, "devices": est.devices},
                             assumptions, [])
    # the same layout on the real device: identical times (capacity only decides whether it
    # fits), but its capacity and fits_in_memory are the device's, not the unbounded one's
    fast = estimate(assumptions=assumptions,
                    **{**kwargs, "devices": est.devices, **fixed_layout(fast)})
    notes.append(f"memory model: no layout fits ({fast.report['memory_gib_per_device']:.0f} "
                 f"GiB for the fastest, {need:.0f} GiB at least, of "
                 f"{acc.hbm_bytes / 2**30:.0f} GiB), though the run fit; fastest evaluated")
    return fast, stated


def _case_estimate(row: pd.Series, assumptions: Assumptions):
    """(Estimate, the stated device count when another was evaluated, note) of one case.

    The note says what the source left out and the validation assumed, and where the
    memory model missed a run that fit. Raises ValueError when no layout exists at all.
    """
    kwargs, filled = case_inputs(row, assumptions)
    est, stated = _estimate_near(kwargs, assumptions, filled)
    notes = []
    est, stated = _as_run(kwargs, assumptions, est, stated, notes)
    if filled:
        notes.append(f"not in source, assumed: {', '.join(filled)}")
    return est, stated, "; ".join(notes)


def predict_case(row: pd.Series, assumptions: Assumptions = DEFAULT):
    """Estimate one published case from its configuration. Returns an Estimate."""
    return _case_estimate(row, assumptions)[0]


#: predictions that scale with the wall-clock time (goodput included)
_WALL_CLOCK = ("device_hours", "train_time_days", "energy_mwh", "co2e_t")


def _predicted(est, key: str, row: pd.Series, stated_devices=None) -> float:
    """The estimate's figure for ``key``, counted as the source counted it."""
    d = est.report
    if key == "train_time_days" and stated_devices:      # same device-hours, stated count
        value = float(d["device_hours"] / stated_devices / 24.0)
    elif key != "energy_mwh":
        value = float(d[key])
    elif row.get("energy_basis") == "dynamic_only":        # GPU-only energy, no host, no PUE
        value = float(d["device_power_w"] * d["device_hours"] / 1e6)
    else:
        value = float(d["facility_energy_mwh"])
    # a source that derives its time as FLOP / throughput counts no restarts or checkpoints
    if key in _WALL_CLOCK and row.get("time_basis") == "compute_only":
        value *= float(d["goodput"])
    return value


#: compare_published's table of the catalog's runs, per (runs frame, assumptions) -> (the
#: frame, the table): the catalog reads each file once per process, and a table takes
#: seconds to build
_TABLES: dict = {}


def compare_published(runs: pd.DataFrame | None = None,
                      assumptions: Assumptions = DEFAULT, progress=None) -> pd.DataFrame:
    """One row per (case, metric): predicted, reported, signed error.

    Parameters
    ----------
    runs : DataFrame, optional
        Published runs (default: the catalog's ``published_runs``).
    assumptions : Assumptions
        Modelling constants to validate.
    progress : callable, optional
        Called as ``progress(done, total)`` with the runs estimated so far. [-]

    The catalog's own runs (``runs`` None) are compared once per process and set of
    assumptions; later calls return a copy of that table.

    Returns
    -------
    DataFrame with columns case, family, metric, predicted, reported, error_pct (signed,
    100 * (predicted - reported) / reported), status, basis, by_construction (an energy
    that is device-hours x an assumed power x PUE, or the emissions of one), layout,
    microbatches (micro-batches
    per step and data-parallel replica of the predicted layout), model_gap, note.
    """
    key = None
    if runs is None:                 # the catalog's runs: one table per process and constants
        runs = catalog.published_runs()
        key = (id(runs), assumptions)
        if key in _TABLES and _TABLES[key][0] is runs:   # the same frame, not a reused id
            if progress is not None:
                progress(len(runs), len(runs))
            return _TABLES[key][1].copy()
    rows = []
    for done, (case, row) in enumerate(runs.iterrows(), start=1):
        if progress is not None:
            progress(done, len(runs))
        if not any(_given(row.get(c)) for c, _, _ in METRICS):
            continue
        try:
            est, stated, note = _case_estimate(row, assumptions)
        except ValueError as exc:
            est, stated, note = None, None, f"cannot estimate: {exc}"
        rows += _compared(case, row, est, stated, note)
    table = pd.DataFrame(rows, columns=_COMPARED)
    if key is not None:
        _TABLES[key] = (runs, table.copy())      # the frame kept, so its id is not reused
    return table


#: columns of :func:`compare_published`'s table
_COMPARED = ["case", "family", "metric", "predicted", "reported", "error_pct", "status",
             "basis", "by_construction", "layout", "microbatches", "model_gap", "note"]


def _compared(case: str, row: pd.Series, est, stated, note: str) -> list[dict]:
    """The figures of one case that test the model, predicted (by ``est``, None when the
    case cannot be estimated) against reported: one dict per figure, keys ``_COMPARED``."""
    if est is not None:
        p = est.parallel
        lay = f"tp{p.tp} pp{p.pp} dp{int(est.report['dp'])} v{p.vpp} b{p.micro_batch} " \
              f"{p.recompute} z{p.zero}"
        micro = float(est.report["num_microbatches"])
    else:
        lay, micro = "", math.nan
    rows = []
    for col, key, family in METRICS:
        if not _given(row.get(col)):
            continue
        if key == "avg_power_w_per_device" and row.get("power_basis") != "measured":
            continue                      # an assumed power (TDP, cap) tests nothing
        if family == "energy" and row.get("energy_basis") != "dynamic_only" \
                and not _given(row.get("reported_pue")):
            continue                      # without the run's PUE we would test our default
        if family == "emissions" and not (_given(row.get("reported_pue"))
                                          and _given(row.get("reported_grid_gco2e_per_kwh"))):
            continue                      # ... and without its grid, our region default
        reported = float(row[col])
        predicted = _predicted(est, key, row, stated) if est is not None else math.nan
        basis = row.get("energy_basis") if family == "energy" else row.get("power_basis", "")
        # device-hours x an *assumed* power (TDP, cap) x PUE: arithmetic, not the power
        # model; with a measured power (Patterson's GPT-3, T5) it tests the power model.
        # Emissions are that energy x the grid: bookkeeping too, where the energy is.
        by_construction = family in ("energy", "emissions") \
            and row.get("energy_basis") in BY_CONSTRUCTION \
            and row.get("power_basis") != "measured"
        gap = row.get("model_gap")
        rows.append({"case": case, "family": family, "metric": key,
                     "predicted": predicted, "reported": reported,
                     "error_pct": 100.0 * (predicted - reported) / reported,
                     "status": row.get("status", ""),
                     "basis": basis if isinstance(basis, str) else "",
                     "by_construction": by_construction, "layout": lay,
                     "microbatches": micro,
                     "model_gap": gap if isinstance(gap, str) else "",
                     "note": note})
    return rows


def _plain(value):
    """A CSV cell as a plain Python value: whole numbers below 1e9 as int, else float/str."""
    if isinstance(value, (float, np.floating, np.integer)):
        value = float(value)
        return int(value) if value.is_integer() and abs(value) < 1e9 else value
    return value


#: columns of a published run that say where its figures come from and how far they reach
_PROVENANCE = ("name", "source", "source_locator", "source_date", "status", "model_gap",
               "notes")


def explain_case(case: str, runs: pd.DataFrame | None = None,
                 assumptions: Assumptions = DEFAULT) -> dict:
    """One published case in full: its source, what the validation assumed where the
    source is silent, the estimate (layout, breakdown, caveats) and predicted vs reported.

    Parameters
    ----------
    case : str
        A case id of ``data/published_runs.csv`` (``traincost validate`` lists them).
    runs : DataFrame, optional
        Published runs (default: the catalog's ``published_runs``).
    assumptions : Assumptions
        Modelling constants.

    Returns
    -------
    dict with ``case``, the provenance columns (name, source, source_locator, source_date,
    status, model_gap, notes), ``inputs`` (the configuration columns the source states),
    ``note`` (what was assumed, and any memory-model miss), ``estimate`` (the
    :class:`~traincost.estimate.Estimate`) and ``comparisons`` (this case's rows of
    :func:`compare_published`).

    Raises
    ------
    ValueError
        ``case`` is not a published run id (the message names the closest ids), or no
        layout of the run exists at all.
    """
    runs = catalog.published_runs() if runs is None else runs
    key = str(case).strip()
    if key not in runs.index:
        close = difflib.get_close_matches(key, list(runs.index), n=3, cutoff=0.4)
        hint = f"closest: {', '.join(close)}" if close else "none is close"
        raise ValueError(f"case: unknown {case!r}; {hint} (`traincost validate` lists all "
                         f"{len(runs)} published runs)")
    row = runs.loc[key]
    est, stated, note = _case_estimate(row, assumptions)
    reported = {c for c, _, _ in METRICS}
    inputs = {c: _plain(row[c]) for c in row.index
              if c not in reported and c not in _PROVENANCE and _given(row[c])
              and not c.endswith("_basis")}
    return {"case": key, **{c: (row[c] if _given(row.get(c)) else "") for c in _PROVENANCE},
            "inputs": inputs, "note": note, "estimate": est,
            "comparisons": pd.DataFrame(_compared(key, row, est, stated, note),
                                        columns=_COMPARED)}


def step_time_points(table: pd.DataFrame, cases) -> pd.DataFrame:
    """The published and predicted step times of ``cases`` with their micro-batch counts.

    Rows of :func:`compare_published`'s table whose metric is ``step_time_s`` and that have
    a prediction and a micro-batch count; :func:`step_time_trend` fits them.
    """
    t = table[table["case"].isin(list(cases)) & (table["metric"] == "step_time_s")]
    return t.dropna(subset=["microbatches", "predicted"])


def step_time_trend(table: pd.DataFrame, cases) -> pd.DataFrame:
    """Per-micro-batch and per-step parts of the published and predicted step times. [s]

    Along a strong-scaling series (one model, layout and global batch on more and more
    data-parallel replicas) each replica runs fewer micro-batches ``m`` per step, and the
    step time falls as

        T = a * m + c

    where ``a`` [s] is the time per micro-batch (compute and the communication that comes
    with it) and ``c`` [s] the time each step pays once (the pipeline bubble, the exposed
    data-parallel reduction, the optimizer, and anything else per step). Fitting the line
    to the published step times and to the predicted ones, each by least squares, tells
    which of the two parts the model misses.

    Parameters
    ----------
    table : DataFrame
        :func:`compare_published` output.
    cases : iterable of str
        Case ids of one series; each needs a published ``step_time_s`` figure.

    Returns
    -------
    DataFrame indexed by ``published`` and ``predicted`` with ``per_microbatch_s`` (a),
    ``per_step_s`` (c) and ``points``.

    Raises
    ------
    ValueError
        When fewer than two of ``cases`` have a step time, or their ``m`` are all equal.
    """
    wanted = list(cases)
    t = step_time_points(table, wanted)
    if t["microbatches"].nunique() < 2:
        raise ValueError(f"cases: {wanted!r} give {len(t)} step times over "
                         f"{t['microbatches'].nunique()} distinct micro-batch counts; a "
                         "trend needs at least two")
    m = t["microbatches"].to_numpy(float)
    out = {}
    for name, col in (("published", "reported"), ("predicted", "predicted")):
        a, c = np.polyfit(m, t[col].to_numpy(float), 1)
        out[name] = {"per_microbatch_s": float(a), "per_step_s": float(c), "points": len(t)}
    return pd.DataFrame(out).T.astype({"points": int})


def summary(table: pd.DataFrame) -> pd.DataFrame:
    """Per metric family: cases, MAPE [%], mean signed error [%], worst case and its error.

    In the throughput family, whose sources give rates (tokens/s, TFLOP/s, MFU) or step
    times, the mean signed error is the rate's: + where the model is faster than the run,
    a step time's miss taken as the rate's (100 (1/(1 + e/100) - 1), :data:`TIME_KEYS`).

    ``energy`` and ``emissions`` rows that are ``by_construction`` (energy basis in
    :data:`BY_CONSTRUCTION` with an assumed, not measured, power) are summarised apart as
    ``energy (by construction)`` and ``emissions (by construction)``: matching them checks
    arithmetic, not the power model.
    Cases with a ``model_gap`` (runs the model cannot represent) get their own
    ``... (model gap)`` groups, so they neither hide nor inflate the model's error.
    """
    t = table.dropna(subset=["error_pct"]).copy()
    t["group"] = np.where(t["by_construction"].astype(bool),
                          t["family"] + " (by construction)", t["family"])
    # a model gap (e.g. a throughput derived from an assumed device count) spoils the
    # time-derived figures of a case, not a power the source measured directly
    gap = t["model_gap"].astype(bool) & (t["family"] != "power")
    t["group"] = np.where(gap, t["group"] + " (model gap)", t["group"])
    e = t["error_pct"]
    t["signed"] = e.where(~(t["metric"].isin(TIME_KEYS) & (t["family"] == "throughput")),
                          100.0 * (1.0 / (1.0 + e / 100.0) - 1.0))
    out = []
    for group, g in t.groupby("group", sort=False):
        worst = g.loc[g["error_pct"].abs().idxmax()]
        out.append({"family": group, "cases": len(g),
                    "mape_pct": float(g["error_pct"].abs().mean()),
                    "mean_signed_pct": float(g["signed"].mean()),
                    "worst_case": worst["case"], "worst_pct": float(worst["error_pct"])})
    return pd.DataFrame(out).set_index("family")


def power_interval_coverage(runs: pd.DataFrame | None = None, draws: int | None = None,
                            seed: int = 0) -> pd.DataFrame:
    """How often a run's measured average power per device falls inside the 80% interval
    of its estimate (:func:`traincost.uncertainty.intervals`, ``avg_power_w_per_device``):
    the sourced ranges of the power inputs (the busy and waiting power fractions, the
    host's share) and the model's throughput error, drawn through the same model. [W]

    Every run whose power was measured (``power_basis`` measured) at its stated layout
    and stack, as :func:`compare_published` predicts it; a model gap spoils the time of a
    run, not a power measured directly, so those are kept as :func:`summary` keeps them.

    Returns
    -------
    DataFrame indexed by case with ``reported``, ``p10``, ``p50``, ``p90`` [W] and
    ``inside`` (p10 <= reported <= p90).
    """
    from .uncertainty import BAND_DRAWS, intervals

    runs = catalog.published_runs() if runs is None else runs
    measured = runs[(runs["power_basis"] == "measured")
                    & runs["reported_avg_power_w_per_device"].notna()]
    rows = []
    for case, row in measured.iterrows():
        est = predict_case(row)
        lo, mid, hi = intervals(est, draws=BAND_DRAWS if draws is None else draws, seed=seed)[
            "avg_power_w_per_device"]
        reported = float(row["reported_avg_power_w_per_device"])
        rows.append({"case": case, "reported": reported, "p10": lo, "p50": mid, "p90": hi,
                     "inside": bool(lo <= reported <= hi)})
    return pd.DataFrame(rows, columns=["case", "reported", "p10", "p50", "p90",
                                       "inside"]).set_index("case")

