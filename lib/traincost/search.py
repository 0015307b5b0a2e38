"""Search every valid parallel layout for the best one per objective, under constraints.

:func:`search` walks the candidate layouts of one or more accelerators and device counts a
chunk at a time (:func:`traincost.layout.candidate_chunk`), keeps the valid ones
(:func:`traincost.layout.valid`), evaluates them with the one orchestrator
(:func:`traincost.model.evaluate`) and carries from chunk to chunk only a running top-K per
objective, running Pareto fronts and the layout needing the least memory. However many
layouts are searched, memory stays bounded by one chunk of outputs.

Objectives (all minimised, see :data:`OBJECTIVES`): ``time`` (the step time; for one
workload the training time is the step time times a constant), ``energy`` (facility energy),
``cost`` (layouts on an accelerator without a price are left out) and ``carbon``
(operational, location-based emissions).

Constraints: the layout fits in memory with headroom (peak memory at most
``(1 - memory_headroom)`` of HBM, by default ``assumptions.memory_headroom_fraction``),
and optionally a deadline (``max_days``), a budget (``max_cost_usd``; unknown costs fail it)
and a carbon cap (``max_co2e_t``).

Examples
--------
>>> import traincost
>>> res = traincost.search("h100-sxm5-80gb", 64, model="llama2-7b", global_batch=512,
...                        tokens=1e11, top=3)
>>> res.layouts_evaluated > 100, len(res.top)
(True, 3)
>>> bool(res.best["time"]["fits_in_memory"])
True
"""

from __future__ import annotations

import functools
import math
import time
from dataclasses import dataclass, field, fields, replace
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:                       # pandas is imported where a table is built
    import pandas as pd

from . import catalog, layout, options
from .assumptions import DEFAULT, Assumptions
from .assemble import (Inputs, as_accelerator, check_fp8_activations, check_offload, columns,
                       fixed_knobs, framework_knobs, job_inputs, site_knobs, system)
from .inputs import (Accelerator, Job, ParallelConfig, Site, Stack, System, Workload,
                     _check_number)
from .model import evaluate, report_units
from .uncertainty import BAND_DRAWS, check_seed, layout_intervals
from .units import GIB

#: objective -> the report column it minimises
OBJECTIVES = {"time": "step_time_s", "energy": "facility_energy_mwh", "cost": "cost_usd",
              "carbon": "co2e_t"}
#: Pareto fronts kept: name -> (x, y) report columns, both minimised
PARETO = {"time_cost": ("step_time_s", "cost_usd"),
          "time_energy": ("step_time_s", "facility_energy_mwh"),
          "time_carbon": ("step_time_s", "co2e_t")}
#: candidate layouts per chunk: at most ~35 MiB of evaluate() outputs and temporaries
DEFAULT_CHUNK_SIZE = 1 << 16
#: candidate rows a search's stash may hold beyond twice those its selections keep before it
#: is compacted (:class:`_Scan`); a bound on memory, not on results
STASH_SLACK_ROWS = 4096
#: layout columns of every result row, in order
LAYOUT_COLUMNS = ("tp", "pp", "dp", "cp", "ep", "vpp", "zero", "micro_batch", "recompute",
                  "cross_site", "num_microbatches")
_KNOBS = tuple(f.name for f in fields(ParallelConfig))
#: prefix of the SI outputs a search keeps for :attr:`SearchResult.best_values`
_SI = "si:"


@dataclass(frozen=True)
class _Group:
    """One system (an accelerator at one device count), with the layouts it enumerates."""

    system: System
    precision: str
    space: dict
    size: int
    offset: int


@dataclass
class SearchResult:
    """What :func:`search` found.

    Attributes
    ----------
    objective : str
        The objective of :attr:`top`.
    layouts_enumerated : int
        Candidate layouts walked (valid or not). [-]
    layouts_evaluated : int
        Valid layouts evaluated by the model. [-]
    layouts_fit : int
        Of those, layouts within memory (with headroom). [-]
    layouts_feasible : int
        Of those, layouts that also meet the deadline, budget and carbon cap. [-]
    elapsed_s : float
        Wall-clock time of the search. [s]
    best : dict
        Objective -> the best feasible layout (a row, pandas.Series) or None.
    pareto : dict
        Front name (``time_cost``, ``time_energy``, ``time_carbon``) -> DataFrame of the
        feasible layouts no other feasible layout beats on both axes, by time.
    top : pandas.DataFrame
        The ``top`` best feasible layouts for :attr:`objective`.
    least_memory : pandas.Series or None
        The valid layout needing the least memory (whether it fits or not).
    memory_headroom : float
        Headroom the memory constraint used. [fraction]
    constraints : dict
        The deadline [days], budget [USD] and carbon cap [tCO2e] applied (None: none).
    warnings : list of str
        Layouts reported here that use more than (1 - assumptions.memory_headroom_fraction)
        of HBM.
    notes : list of str
        Accelerators left out and why, rows left out of an objective.
    best_values : dict or None
        With ``keep_values``: every output of :func:`traincost.model.evaluate` (SI, Python
        scalars) for the fastest layout that fits, else the one needing the least memory,
        so that :func:`traincost.estimate` need not evaluate it again; None otherwise.
    """

    objective: str
    layouts_enumerated: int
    layouts_evaluated: int
    layouts_fit: int
    layouts_feasible: int
    elapsed_s: float
    best: dict
    pareto: dict
    top: pd.DataFrame
    least_memory: pd.Series | None
    memory_headroom: float
    constraints: dict
    warnings: list = field(default_factory=list)
    notes: list = field(default_factory=list)
    best_values: dict | None = None

    def mfu_note(self, objective: str | None = None) -> str:
        """The best layout's MFU (and HFU) against the published band of its generation."""
        row = self.best.get(objective or self.objective)
        return "no feasible layout" if row is None else mfu_band_note(row)

    def to_dict(self) -> dict:
        """Everything as dicts and lists of rows (numpy scalars and NaN inside; the CLI's
        ``--json`` maps them to JSON numbers and null)."""
        rows = lambda df: df.to_dict(orient="records")                     # noqa: E731
        return {
            "objective": self.objective,
            "layouts_enumerated": self.layouts_enumerated,
            "layouts_evaluated": self.layouts_evaluated,
            "layouts_fit": self.layouts_fit,
            "layouts_feasible": self.layouts_feasible,
            "elapsed_s": self.elapsed_s,
            "memory_headroom": self.memory_headroom,
            "constraints": dict(self.constraints),
            "best": {k: (None if v is None else v.to_dict()) for k, v in self.best.items()},
            "top": rows(self.top),
            "pareto": {k: rows(v) for k, v in self.pareto.items()},
            "pareto_sizes": {k: len(v) for k, v in self.pareto.items()},
            "mfu_band": self.mfu_note(),
            "warnings": list(self.warnings),
            "notes": list(self.notes),
        }


# ---- published MFU bands ------------------------------------------------------------------
@functools.cache
def mfu_bands() -> pd.DataFrame:
    """data/mfu_bands.csv: published utilisation of large runs, one row per source figure."""
    return catalog.read_table("mfu_bands").set_index("id")


def published_band(accelerator_id: str) -> dict:
    """The published utilisation band of an accelerator's generation.

    Returns
    -------
    dict: metric (``mfu`` or ``hfu``) -> (low, high, generation, [row ids]); empty when
    no published figure covers the accelerator. [fraction]
    """
    df = mfu_bands()
    hit = df[df["accelerators"].str.split("|").apply(lambda ids: accelerator_id in ids)]
    out = {}
    for metric, rows in hit.groupby("metric"):
        out[metric] = (float(rows["low_fraction"].min()), float(rows["high_fraction"].max()),
                       ", ".join(sorted(set(rows["generation"]))), list(rows.index))
    return out


def mfu_band_note(row) -> str:
    """One line: the row's MFU/HFU against its generation's published band."""
    bands = published_band(row["accelerator"])
    if not bands:
        return f"MFU {row['mfu']:.2f}: no published band for {row['accelerator']}"
    parts = []
    for metric in ("mfu", "hfu"):
        if metric not in bands:
            continue
        low, high, gen, ids = bands[metric]
        x = float(row[metric])
        where = ("within" if low <= x <= high else
                 "ABOVE: treat as optimistic" if x > high else "below")
        span = f"{low:.0%}" if low == high else f"{low:.0%}-{high:.0%}"
        parts.append(f"{metric.upper()} {x:.0%} vs published {span} on {gen} "
                     f"({', '.join(ids)}): {where}")
    return "; ".join(parts)


# ---- running selections ---------------------------------------------------------------------
def _take(rec: dict, idx) -> dict:
    return {k: np.asarray(v)[idx] for k, v in rec.items()}


def _concat(a: dict | None, b: dict) -> dict:
    return b if a is None else {k: np.concatenate([a[k], b[k]]) for k in b}


def _first(keys: list, k: int) -> np.ndarray:
    """Positions of the k rows that come first in the lexicographic order of ``keys``."""
    primary = keys[0]
    cand = np.arange(len(primary))
    if len(primary) > k:                        # cut to the k smallest, keeping every tie
        cand = np.flatnonzero(primary <= np.partition(primary, k - 1)[k - 1])
    order = np.lexsort([key[cand] for key in reversed(keys)])
    return cand[order[:k]]


def pareto_front(x: np.ndarray, y: np.ndarray, tiebreak: np.ndarray | None = None) -> np.ndarray:
    """Positions of the points no other point beats on both x and y (both minimised).

    Of points equal in both, the one first in ``tiebreak`` order stands for them. The
    result is sorted by x.

    Examples
    --------
    >>> pareto_front(np.array([1., 2., 3., 2.]), np.array([5., 3., 4., 3.])).tolist()
    [0, 1]
    """
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    if len(x) == 0:
        return np.zeros(0, dtype=np.int64)
    tiebreak = np.arange(len(x)) if tiebreak is None else np.asarray(tiebreak)
    order = np.lexsort((tiebreak, y, x))
    ys = y[order]
    keep = np.ones(len(ys), dtype=bool)
    keep[1:] = ys[1:] < np.minimum.accumulate(ys)[:-1]
    return order[keep]


#: the report column each search constraint caps: max_days, max_cost_usd, max_co2e_t
_CONSTRAINED = {"train_time_days": "max_days", "cost_usd": "max_cost_usd",
                "co2e_t": "max_co2e_t"}


class _Scan:
    """Running top-K per objective, Pareto fronts and least-memory layout over chunks.

    Each running selection holds only its ranking columns and, per row, where the row's
    full record sits in a stash of candidate rows; the stash is appended to once per chunk
    and compacted to the rows still selected when it has grown past twice their number, so
    a large ``top`` costs the rows it keeps, not a copy of every column of them per chunk.
    :meth:`finish` gathers each selection's full records (``tops``, ``fronts``, ``least``).

    The ranked objective keeps ``top`` rows; the others keep their best row only (a
    result shows their best, :attr:`SearchResult.best`, and ranks one table).
    """

    def __init__(self, top: int, pareto: bool, keep_values: bool = False,
                 objective: str = "time"):
        self.k = {o: top if o == objective else 1 for o in OBJECTIVES}
        self.keep_values = keep_values
        self.tops = {o: None for o in OBJECTIVES}
        self.fronts = {name: None for name in PARETO} if pareto else {}
        self.least = None
        self.evaluated = self.known = self.fit = self.feasible = 0
        # the best any layout that fits reaches on each constrained figure, to say how far
        # a deadline, budget or carbon cap that nothing meets is from reach
        self.fit_best = {c: math.inf for c in _CONSTRAINED}
        # selection name -> (ranking columns, rows kept) ; running selections and stash
        self.keys = {("least", ""): ["memory_gib_per_device", "index"],
                     **{("top", o): [c, "memory_gib_per_device", "index"]
                        for o, c in OBJECTIVES.items()},
                     **{("front", n): [*PARETO[n], "index"] for n in self.fronts}}
        self.sel = {name: None for name in self.keys}
        self.pieces, self.rows = [], 0

    def _select(self, name, both: dict, final: bool = False) -> np.ndarray:
        """Positions of ``both`` that selection ``name`` keeps; a top of no more than its
        ``k`` rows keeps them all, unsorted, until the ``final`` call orders it."""
        kind = name[0]
        cols = [both[c] for c in self.keys[name]]
        if kind == "front":
            return pareto_front(*cols)
        k = 1 if kind == "least" else self.k[name[1]]
        if not final and len(cols[0]) <= k:
            return np.arange(len(cols[0]))
        return _first(cols, k)

    def add(self, rec: dict, known, fit, feasible) -> None:
        self.evaluated += len(known)
        self.known += int(known.sum())
        self.fit += int(fit.sum())
        self.feasible += int(feasible.sum())
        for c in _CONSTRAINED:
            vals = rec[c][fit]
            vals = vals[np.isfinite(vals)]
            if len(vals):
                self.fit_best[c] = min(self.fit_best[c], float(vals.min()))
        picks = {}                                  # selection -> chunk positions it may keep
        if known.any():
            picks[("least", "")] = np.flatnonzero(known)
        for obj, col in OBJECTIVES.items():
            picks[("top", obj)] = np.flatnonzero(feasible & np.isfinite(rec[col]))
        for name in self.fronts:
            picks[("front", name)] = np.flatnonzero(feasible & np.isfinite(rec[PARETO[name][1]]))
        picks = {n: pos[self._select(n, {c: rec[c][pos] for c in self.keys[n]})]
                 for n, pos in picks.items() if len(pos)}
        if not picks:
            return
        union = np.unique(np.concatenate(list(picks.values())))
        self.pieces.append(_take(rec, union))
        for name, pos in picks.items():
            new = {c: rec[c][pos] for c in self.keys[name]}
            new["row"] = self.rows + np.searchsorted(union, pos)
            both = _concat(self.sel[name], new)
            self.sel[name] = _take(both, self._select(name, both))
        self.rows += len(union)
        live = sum(len(s["row"]) for s in self.sel.values() if s is not None)
        if self.rows > 2 * live + STASH_SLACK_ROWS:
            self._compact()

    def _compact(self) -> np.ndarray | None:
        """Keep only the stashed rows some selection still holds; returns the stash."""
        if not self.pieces:
            return None
        whole = self.pieces[0] if len(self.pieces) == 1 else {
            k: np.concatenate([p[k] for p in self.pieces]) for k in self.pieces[0]}
        live = np.unique(np.concatenate([s["row"] for s in self.sel.values()
                                         if s is not None]))
        stash = _take(whole, live)
        for s in self.sel.values():
            if s is not None:
                s["row"] = np.searchsorted(live, s["row"])
        self.pieces, self.rows = [stash], len(live)
        return stash

    def finish(self) -> None:
        """The full records of each selection: ``tops``, ``fronts`` and ``least``."""
        stash = self._compact()
        full = {name: None if s is None else _take(stash, s["row"][self._select(name, s, True)])
                for name, s in self.sel.items()}
        self.least = full[("least", "")]
        self.tops = {o: full[("top", o)] for o in self.tops}
        self.fronts = {n: full[("front", n)] for n in self.fronts}


# ---- inputs --------------------------------------------------------------------------------
def _accelerator_list(accelerators) -> list:
    if isinstance(accelerators, (str, Accelerator, System)):
        accelerators = [accelerators]
    if len(accelerators) == 1 and isinstance(accelerators[0], str) \
            and accelerators[0].strip().lower() == "all":
        return list(catalog.by_id("accelerators"))
    if not accelerators:
        raise ValueError("accelerators: give at least one accelerator id, or 'all'")
    return list(accelerators)


def _device_list(devices) -> list:
    devices = [devices] if np.ndim(devices) == 0 else list(devices)
    if not devices:
        raise ValueError("devices: give at least one device count")
    counts = [options.check("devices", n) for n in devices]
    if None in counts:
        raise ValueError("devices: required (a device count, or a list of them)")
    return counts


def _check_ranking(objective, top, chunk_size) -> tuple[int, int]:
    if objective not in OBJECTIVES:
        raise ValueError(f"objective: {objective!r} is not one of {', '.join(OBJECTIVES)}")
    _check_number("top", top, minimum=0, integer=True)
    if top > options.MAX_COUNT:
        raise ValueError(f"top: {top} must be at most {options.MAX_COUNT:,}")
    _check_number("chunk-size", chunk_size, minimum=0, integer=True)
    return int(top), int(chunk_size)


def _constraints(max_days, max_cost_usd, max_co2e_t, memory_headroom, assumptions):
    limits = {"max_days": max_days, "max_cost_usd": max_cost_usd, "max_co2e_t": max_co2e_t}
    for k, val in limits.items():
        if val is not None:
            _check_number(k.replace("_", "-"), val, minimum=0)
    if memory_headroom is None:
        memory_headroom = assumptions.memory_headroom_fraction
    _check_number("memory-headroom", memory_headroom, minimum=0, exclusive=False)
    if memory_headroom >= 1:
        raise ValueError(f"memory-headroom: {memory_headroom!r} must be below 1 (a fraction of "
                         "device memory kept free)")
    return limits, float(memory_headroom)


def _groups(accs, devices, spec: Inputs, fixed, precision, space,
            knobs: dict) -> tuple[list, list, list]:
    """The systems (accelerator, devices) to walk; errors of the accelerators left out (a
    precision the device lacks, a power cap outside its idle-to-TDP range). An entry of
    ``accs`` may be a :class:`~traincost.System`: its power limit and network tiers are
    kept, its device count is each of ``devices``."""
    groups, errors, notes = [], [], []
    offset = 0
    for acc in accs:
        clash = [k for k, v in knobs.items() if v is not None]
        if isinstance(acc, System) and clash:
            raise ValueError(f"{clash[0].replace('_', '-')}: given beside a System, which "
                             "already sets it (give the object or the keyword, not both)")
        base = acc if isinstance(acc, System) else None
        acc = base.accelerator if base else as_accelerator(acc)   # an unknown id is an error
        try:
            prec = precision or acc.default_precision
            acc.peak_flop_per_s(prec)                   # raises for a missing precision
            if base is None:
                base = system(acc, devices[0], **knobs)     # raises for a cap it cannot take
            check_fp8_activations(spec.stack, prec)     # the FP8 recipe needs fp8
            check_offload(acc, fixed.get("recompute"))  # offload needs a published host link
        except ValueError as exc:
            errors.append(exc)
            notes.append(f"left out: {exc}")
            continue
        for n in devices:
            sys_ = replace(base, devices=n)
            sp = layout.candidate_space(fixed, heads=spec.workload.heads,
                                        layers=spec.workload.layers,
                                        experts=spec.workload.experts, devices=n,
                                        domain=sys_.domain_devices,
                                        global_batch=spec.job.global_batch,
                                        seq_len=spec.job.seq_len, sites=sys_.sites)
            for k, choices in (space or {}).items():
                if k not in sp:
                    raise ValueError(f"space: unknown knob {k!r}; allowed: {', '.join(sp)}")
                allowed = {"zero": range(4), **{n: codes.values() for n, codes
                                                in layout.KNOB_CODES.items()}}.get(k)
                bad = [c for c in choices if not float(c).is_integer()
                       or (int(c) not in allowed if allowed is not None else int(c) < 1)]
                if bad or not len(choices):
                    raise ValueError(f"space: {k} choices {list(choices)!r} must be whole "
                                     "numbers >= 1 (zero 0-3, recompute codes 0-3, "
                                     "cross_site codes 0-1)")
                if fixed.get(k) is None:
                    sp[k] = sorted({int(c) for c in choices})
            size = layout.space_size(sp)
            groups.append(_Group(sys_, prec, sp, size, offset))
            offset += size
    return groups, errors, notes


@dataclass
class _Walked:
    """What :func:`_walk` leaves: the running selections and what a result reports."""

    scan: _Scan
    groups: list
    spec: Inputs
    total: int                       # candidate layouts enumerated
    headroom: float
    limits: dict
    notes: list


def _walk(accelerators, devices, workload, job, stack, parallel, site, space, caps, scan,
          chunk_size, progress, assumptions, inputs) -> _Walked:
    """Walk every candidate layout of :func:`search`'s arguments (``caps``: its deadline,
    budget, carbon cap and memory headroom) into ``scan``, chunk by chunk. Builds no
    table (no pandas)."""
    given = options.bind("search", inputs)
    accs = _accelerator_list(accelerators)
    devices = _device_list(devices)
    spec = job_inputs(workload, job, stack, site, assumptions=assumptions,
                      **{k: given[k] for k in options.JOB_INPUTS})
    fixed = framework_knobs(fixed_knobs(**{k: given[k] for k in options.LAYOUT_INPUTS},
                                        parallel=parallel), spec.stack)
    sites = {a.sites for a in accs if isinstance(a, System)} or {given["sites"] or 1}
    for n in sites:                                  # one region per site; sync-every
        fixed = site_knobs(fixed, n, spec)
    precision = given["precision"]
    limits, headroom = _constraints(*caps, assumptions)
    groups, errors, notes = _groups(accs, devices, spec, fixed, precision, space,
                                    {k: given[k] for k in options.SYSTEM_INPUTS})
    if not groups:
        raise errors[0]
    total = sum(g.size for g in groups)

    done = 0
    valid_groups = set()
    for gi, g in enumerate(groups):
        arch = layout.arch_columns(spec, g.system.devices, g.system.sites)
        fill = 1.0 - headroom
        for start in range(0, g.size, chunk_size):
            stop = min(start + chunk_size, g.size)
            pos, lay = layout.valid_chunk(g.space, start, stop, arch)
            if len(pos):
                valid_groups.add(gi)
                _scan_chunk(scan, g, gi, spec, lay, g.offset + start + pos, fill, limits,
                            assumptions)
            done += stop - start
            if progress is not None:
                progress(done, total)
    scan.finish()
    if not valid_groups:
        g = groups[0]
        # name the first rule the user's own choices break, else say so in general
        first = {k: int(v[0]) for k, v in layout.candidate_chunk(g.space, 0, 1).items()}
        layout.check({**layout.arch_columns(spec, g.system.devices, g.system.sites), **first})
        counts = ", ".join(str(n) for n in devices)
        raise ValueError(f"devices: no valid layout of {counts} devices for this workload "
                         f"(global batch {spec.job.global_batch}, {spec.workload.layers} "
                         f"layers, {spec.workload.heads} heads)")
    if scan.known == 0:
        g = groups[min(valid_groups)]
        raise ValueError(f"devices: {g.system.devices} x {g.system.accelerator.id} needs "
                         "scale-out bandwidth "
                         f"beyond its {g.system.domain_devices}-device domain, "
                         "which the catalog does not give")
    return _Walked(scan, groups, spec, total, headroom, limits, notes)


# ---- the search ----------------------------------------------------------------------------
def search(accelerators, devices, *, workload: Workload | None = None,
           job: Job | None = None, stack: Stack | None = None,
           parallel: ParallelConfig | None = None, site: Site | None = None, max_days=None,
           max_cost_usd=None, max_co2e_t=None, memory_headroom=None,
           objective="time", top=10, pareto=True, space=None, chunk_size=DEFAULT_CHUNK_SIZE,
           progress=None, assumptions: Assumptions = DEFAULT, keep_values: bool = False,
           uncertainty: bool = False, seed: int = 0, **inputs) -> SearchResult:
    """Evaluate every valid layout of a workload and keep the best under constraints.

    Workload, job, stack, layout, precision and site keywords (and the ``workload``,
    ``job``, ``stack``, ``parallel`` and ``site`` objects) are those of
    :func:`traincost.estimate` (every ``traincost search`` flag is a keyword here); layout
    knobs given are held fixed, the others are searched over
    :func:`traincost.layout.candidate_space`.

    Parameters
    ----------
    accelerators : str, Accelerator, System or list
        Catalog ids (or ``"all"``) or objects; a :class:`~traincost.System` keeps its
        power limit and network tiers. [-]
    devices : int or list of int
        Device counts to try for each accelerator. [-]
    max_days : float, optional
        Deadline on the training time (goodput included). [days]
    max_cost_usd : float, optional
        Budget; layouts whose cost is unknown (no price) fail it. [USD]
    max_co2e_t : float, optional
        Cap on operational emissions. [tCO2e]
    memory_headroom : float, optional
        Fraction of HBM kept free; default ``assumptions.memory_headroom_fraction``. [-]
    objective : str
        ``time``, ``energy``, ``cost`` or ``carbon``: the objective of the top table. [-]
    top : int
        Rows of the top table (and of the running top kept per objective). [-]
    pareto : bool
        Keep the Pareto fronts (time vs cost, energy and carbon). [-]
    space : dict, optional
        Knob -> choices, replacing the enumerated choices of open knobs. [-]
    chunk_size : int
        Candidate layouts per evaluation; bounds the memory used. [-]
    progress : callable, optional
        Called as ``progress(done, total)`` with candidate layouts walked so far. [-]
    keep_values : bool
        Also keep the full SI outputs of the fastest fitting layout
        (:attr:`SearchResult.best_values`). [-]
    uncertainty : bool
        Band the top table (``<column>_p10``, ``_p50``, ``_p90`` of the objective's figure,
        :func:`traincost.uncertainty.layout_intervals`) and rank it by the median. [-]
    seed : int
        Seed of those draws. [-]

    Returns
    -------
    SearchResult

    Raises
    ------
    ValueError
        Bad input (naming the flag), or no valid layout at all.
    """
    t0 = time.perf_counter()
    top, chunk_size = _check_ranking(objective, top, chunk_size)
    w = _walk(accelerators, devices, workload, job, stack, parallel, site, space,
              (max_days, max_cost_usd, max_co2e_t, memory_headroom),
              _Scan(top, pareto, keep_values, objective), chunk_size, progress, assumptions,
              inputs)
    res = _result(w.scan, w.groups, objective, w.total, w.headroom, w.limits, w.notes,
                  assumptions, time.perf_counter() - t0)
    if uncertainty:
        _band_top(res, w.groups, w.spec, assumptions, seed)
    return res


def fastest_fitting(system: System, *, workload: Workload, job: Job, stack: Stack, site: Site,
                    parallel: ParallelConfig | None, assumptions: Assumptions,
                    **inputs) -> tuple[dict, dict, int]:
    """The layout :func:`traincost.estimate` picks when knobs are open: the fastest that
    fits in memory (headroom 0: the model's own fit test), else the one needing the least
    memory. The walk of :func:`search` without its tables, so an estimate imports no
    pandas.

    Returns
    -------
    (knob -> value as a user writes it, the layout's SI outputs of
    :func:`traincost.model.evaluate`, candidate layouts evaluated)
    """
    w = _walk(system, system.devices, workload, job, stack, parallel, site, None,
              (None, None, None, 0.0), _Scan(1, False, True), DEFAULT_CHUNK_SIZE, None,
              assumptions, inputs)
    rec = w.scan.tops["time"] if w.scan.tops["time"] is not None else w.scan.least
    chosen = {k: layout.knob_value(k, np.asarray(rec[k])[0]) for k in _KNOBS}
    return chosen, _best_values(w.scan), w.scan.evaluated


def _band_top(res: SearchResult, groups: list, spec: Inputs, assumptions, seed) -> None:
    """Give the top table the 80% range of its objective's figure and rank it by the
    median (in place)."""
    import pandas as pd
    check_seed(seed)
    col = OBJECTIVES[res.objective]
    systems = {(g.system.accelerator.id, g.system.devices, g.precision): g.system
               for g in groups}
    bands = []
    for _, row in res.top.iterrows():
        sys_ = systems[(row["accelerator"], int(row["devices"]), row["precision"])]
        par = ParallelConfig(**{k: (str(row[k]) if k in layout.KNOB_CODES else int(row[k]))
                                for k in _KNOBS})
        bands.append(layout_intervals(sys_, spec, row["precision"], par, assumptions,
                                      draws=BAND_DRAWS, seed=seed)[col])
    top = res.top.copy()
    for i, q in enumerate(("p10", "p50", "p90")):
        top[f"{col}_{q}"] = [b[i] for b in bands] if bands else pd.Series(dtype=float)
    res.top = top.sort_values([f"{col}_p50", col], kind="stable").reset_index(drop=True)
    res.notes.append(f"top: ranked by the median {col} of {BAND_DRAWS:,} draws per layout "
                     f"(the model's held-out error and the input ranges; {col}_p10, _p50, "
                     "_p90 columns)")


options.declare(search)


def _scan_chunk(scan, g, gi, spec, lay, index, fill, limits, assumptions) -> None:
    """Evaluate one chunk of valid layouts and fold it into the running selections."""
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        out = evaluate(columns(g.system, spec, g.precision, lay, assumptions), assumptions)
        rep = report_units(out)
    n = len(index)
    rec = {"group": np.full(n, gi), "index": index, **lay}
    rec.update({k: np.broadcast_to(np.asarray(v), (n,)) for k, v in rep.items()})
    if scan.keep_values:
        rec.update({_SI + k: np.broadcast_to(np.asarray(v), (n,)) for k, v in out.items()})
    known = np.isfinite(rec["step_time_s"])
    hbm = g.system.accelerator.hbm_bytes
    # within the headroom, and the model's own fit test besides (which also holds what
    # activation offload moves to the host against the host memory)
    fit = known & (np.asarray(out["memory_bytes_per_device"]) <= fill * hbm) \
        & np.asarray(out["fits_in_memory"], dtype=bool)
    feasible = fit
    for col, limit in _CONSTRAINED.items():
        if limits[limit] is not None:
            feasible = feasible & (rec[col] <= limits[limit])     # NaN (no price) fails
    scan.add(rec, known, fit, feasible)


def _frame(rec: dict | None, groups: list, assumptions: Assumptions) -> pd.DataFrame:
    """Result rows: accelerator, devices, precision, layout, then the report columns."""
    import pandas as pd
    if rec is None:
        rec = {}
    gi = np.asarray(rec.get("group", np.zeros(0)), dtype=np.int64)

    def per_group(value, dtype=object):
        return np.array([value(g) for g in groups], dtype=dtype)[gi]

    hbm = per_group(lambda g: g.system.accelerator.hbm_bytes / GIB, float)
    cols = {"accelerator": per_group(lambda g: g.system.accelerator.id),
            "devices": per_group(lambda g: g.system.devices, np.int64),
            "precision": per_group(lambda g: g.precision)}
    for k in LAYOUT_COLUMNS:
        vals = np.asarray(rec.get(k, np.zeros(0)))
        cols[k] = (layout.knob_values(k, vals) if k in layout.KNOB_CODES
                   else vals.astype(np.int64))
    skip = set(LAYOUT_COLUMNS) | {"group", "index"} | set(_KNOBS)
    for k, v in rec.items():
        if k not in skip and not k.startswith(_SI):
            cols[k] = v
    df = pd.DataFrame(cols)
    df["hbm_gib_per_device"] = hbm
    frac = (df["memory_gib_per_device"] / hbm) if len(df) else pd.Series(dtype=float)
    df["memory_fraction_of_hbm"] = frac
    df["memory_warning"] = frac > 1 - assumptions.memory_headroom_fraction
    return df


def _frames(recs: dict, groups: list, assumptions: Assumptions) -> dict:
    """:func:`_frame` of each of ``recs`` (name -> rec or None), built as one frame and cut
    into its parts: a search keeps a few small selections (a top per objective, the fronts,
    the least-memory layout), and building a frame costs about the same at one row as at
    ten, so one build replaces a build per selection."""
    parts = {k: r for k, r in recs.items() if r is not None and len(r["group"])}
    if not parts:
        return {k: _frame(None, groups, assumptions) for k in recs}
    keys = next(iter(parts.values())).keys()
    whole = _frame({k: np.concatenate([np.asarray(r[k]) for r in parts.values()])
                    for k in keys}, groups, assumptions)
    out, start = {}, 0
    for name, r in parts.items():
        n = len(r["group"])
        out[name] = whole.iloc[start:start + n].reset_index(drop=True)
        start += n
    empty = whole.iloc[0:0].reset_index(drop=True)
    return {k: out.get(k, empty) for k in recs}


def _best_values(scan) -> dict | None:
    """The SI outputs kept for the fastest fitting layout, else the least-memory one."""
    rec = scan.tops["time"] if scan.tops["time"] is not None else scan.least
    if not scan.keep_values or rec is None:
        return None
    out = {}
    for k, v in rec.items():
        if k.startswith(_SI):
            x = np.asarray(v)[0]
            out[k[len(_SI):]] = bool(x) if x.dtype == bool else float(x)
    return out


def _describe(row) -> str:
    return (f"{row['accelerator']} x {row['devices']} tp={row['tp']} pp={row['pp']} "
            f"dp={row['dp']} cp={row['cp']} ep={row['ep']} vpp={row['vpp']} "
            f"zero={row['zero']} micro-batch={row['micro_batch']} "
            f"recompute={row['recompute']}")


def _result(scan, groups, objective, total, headroom, limits, notes, assumptions, elapsed):
    built = _frames({**{("top", o): r for o, r in scan.tops.items()},
                     **{("front", k): r for k, r in scan.fronts.items()},
                     ("least", ""): scan.least}, groups, assumptions)
    frames = {o: built[("top", o)] for o in scan.tops}
    best = {o: (df.iloc[0] if len(df) else None) for o, df in frames.items()}
    fronts = {k: built[("front", k)] for k in scan.fronts}
    least = built[("least", "")]
    warnings, seen = [], set()
    limit = 1 - assumptions.memory_headroom_fraction
    for df in [frames[objective], *[f.iloc[:1] for f in frames.values()]]:
        if not df["memory_warning"].any():
            continue
        for _, row in df[df["memory_warning"]].iterrows():
            text = (f"{_describe(row)} uses {row['memory_fraction_of_hbm']:.0%} of HBM, more "
                    f"than {limit:.0%} (memory_headroom_fraction "
                    f"{assumptions.memory_headroom_fraction:g})")
            if text not in seen:
                seen.add(text)
                warnings.append(text)
    if scan.feasible and best["cost"] is None:
        notes.append("cost: no feasible layout has a price (give --price-per-hour)")
    elif scan.feasible and len(frames["cost"]) and any(
            math.isnan(g.system.accelerator.price_usd_per_h) for g in groups):
        notes.append("cost: accelerators without a catalog price are left out of cost rankings")
    if not scan.fit:
        notes.append(f"no valid layout fits in {1 - headroom:.0%} of device memory "
                     f"(headroom {headroom:g}); least memory: "
                     f"{least.iloc[0]['memory_gib_per_device']:.3g} GiB" if len(least) else
                     "no valid layout has a known step time")
    elif not scan.feasible:
        cap = {"train_time_days": "deadline {:.3g} days", "cost_usd": "budget {:,.0f} USD",
               "co2e_t": "carbon cap {:.3g} tCO2e"}
        reach = {"train_time_days": "the fastest layout that fits takes {:.3g} days",
                 "cost_usd": "the cheapest that fits costs {:,.0f} USD",
                 "co2e_t": "the lowest-carbon that fits emits {:.3g} tCO2e"}
        missed = [cap[col].format(limits[limit]) + ": "
                  + (reach[col].format(scan.fit_best[col]) if math.isfinite(scan.fit_best[col])
                     else "no layout that fits has a price (give --price-per-hour)")
                  for col, limit in _CONSTRAINED.items() if limits[limit] is not None]
        notes.append("no layout that fits in memory meets the deadline, budget and carbon cap"
                     + (f" ({'; '.join(missed)})" if missed else ""))
    return SearchResult(objective=objective, layouts_enumerated=total,
                        layouts_evaluated=scan.evaluated, layouts_fit=scan.fit,
                        layouts_feasible=scan.feasible, elapsed_s=elapsed, best=best,
                        pareto=fronts, top=frames[objective].reset_index(drop=True),
                        least_memory=least.iloc[0] if len(least) else None,
                        best_values=_best_values(scan),
                        memory_headroom=headroom, constraints=dict(limits),
                        warnings=warnings, notes=notes)
