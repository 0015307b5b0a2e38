"""Intervals: how far an estimate may be from the run it describes, from measured misses.

An estimate's main uncertainty is the model's own error, and the honest measure of it is how
far the model lands from published runs it was not fitted on. :mod:`traincost.calibrate`
stores those held-out errors (``data/calibration.json`` ``error_pools``: ``eps`` =
log(predicted / measured) throughput, each run predicted by the calibration refitted without
its source document) in five classes (:func:`error_class`): four by how the estimate's
framework factor came about, and one for long context:

* ``reference``: the Megatron-Core/NeMo framework the shared constants are fitted on;
* ``fitted``: a framework with a factor fitted on its own published runs;
* ``borrowed``: a framework with too few published runs, predicted with the reference's
  factor (its pool: such runs, and whole fitted frameworks held out);
* ``unspecified``: no framework given, which could be any: the reference and borrowed
  pools together;
* ``long-context``: whatever the framework, a run with at least
  :attr:`~traincost.Assumptions.long_context_rank_tokens` tokens of a sequence on a
  context-parallel rank, where the model runs published steps too fast (issue 21): the
  errors of the measured runs at that length, most of them model gaps no fit uses.

:func:`intervals` draws from the class's pool (a bootstrap: the measured misses, not a
fitted shape), its spread about the median widened by :func:`new_document_factor` for the
number of documents the pool holds (a new source's errors spread wider than a few
documents' own do), turns each draw into the factor the step time would change by,
``exp(eps)``, and runs the estimate's layout through the same vectorised
:func:`traincost.model.evaluate` once for all draws (``model_error_factor``), so time,
energy, carbon and cost move together as the model computes them. The p10, p50 and p90 of
each output are its interval. ``python -m traincost.calibrate`` reports how often a held-out
run's measured throughput falls inside its own 80% interval (``interval_*_coverage_pct``).

Beside the model's error, the inputs nobody knows exactly are drawn too, each from its
sourced range in ``data/input_ranges.csv`` (rows with ``use`` other than ``no``): the site's
PUE around an operator's fleet figure or a survey mean, the grid intensity of the run's
year and season around the annual figure (neither when the user gave the value), the
devices' power while computing and waiting, the host's share, and the goodput. Each input
is one column of a uniform [0, 1) design mapped through its quantile function (scipy.stats;
the model's error through the empirical quantiles of its pool), so the same design serves
the Monte Carlo of :func:`intervals` and the variance-based sensitivity of
:func:`sensitivity` (Sobol' indices, SALib): which inputs a range comes from. Prices,
embodied carbon and lifetimes are recorded there but not drawn (their notes say why).

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

import math
from dataclasses import dataclass, replace

import numpy as np

from . import calibration, catalog, layout
from .assemble import columns
from .model import evaluate, report_units

#: the interval classes (:func:`error_class`), each with its pool of held-out errors
ERROR_CLASSES = ("reference", "fitted", "borrowed", "unspecified", "long-context")
#: the outputs an interval is given for (report keys)
INTERVAL_KEYS = ("tokens_per_s", "step_time_s", "mfu", "train_time_days", "device_hours",
                 "avg_power_w_per_device", "facility_energy_mwh", "co2e_t", "cost_usd",
                 "water_m3")
#: the interval's quantiles: p10, p50, p90 (an 80% interval)
QUANTILES = (0.1, 0.5, 0.9)
#: the grid range for the run's season, not drawn for a run with a start date (its months
#: are modelled: traincost.footprint.window_mean_factor)
SEASON_RANGE = "grid-run-period"
#: Monte Carlo draws when none are asked for
DEFAULT_DRAWS = 10_000
#: draws per row where many rows are banded at once (compare, a search's top table): the
#: p10 and p90 of 2,000 draws sit within about 0.7 percentile points of the true ones
#: (binomial standard error sqrt(0.1 x 0.9 / 2000)), a fifth of the time of 10,000
BAND_DRAWS = 2000


def error_class(framework: str, accelerator, long_context: bool = False) -> str:
    """Which held-out errors stand for an estimate's own (see the module notes). [-]

    ``long_context``: a rank holds at least ``long_context_rank_tokens`` tokens of a
    sequence (:func:`is_long_context`), which decides the class whatever the framework.

    >>> error_class("megatron", "h100-sxm5-80gb"), error_class("torchtitan", "a100-sxm4-80gb")
    ('reference', 'fitted')
    >>> error_class("unspecified", "h100-sxm5-80gb"), error_class("deepspeed", "gaudi2")
    ('unspecified', 'borrowed')
    >>> error_class("megatron", "h100-sxm5-80gb", long_context=True)
    'long-context'
    """
    if long_context:
        return "long-context"
    status = catalog.framework_factor(framework, accelerator)[1]
    if framework == "unspecified" and status == "reference":
        return "unspecified"
    return status


def is_long_context(seq_len, cp, assumptions) -> bool:
    """Whether a rank holds at least ``assumptions.long_context_rank_tokens`` tokens of a
    sequence, ``seq_len / cp`` (the long-context caveat and interval class). [-]

    >>> from traincost.assumptions import DEFAULT
    >>> is_long_context(65536, 4, DEFAULT), is_long_context(65536, 8, DEFAULT)
    (True, False)
    """
    return seq_len / cp >= assumptions.long_context_rank_tokens


def long_context_ids(runs, assumptions):
    """The measured runs of ``runs`` (a published-runs table) with at least
    ``long_context_rank_tokens`` tokens of a sequence on a context-parallel rank (seq_len /
    cp, cp 1 where not stated): the long-context class's runs. [-]"""
    runs = runs[runs["status"] == "measured"]
    rank = runs["seq_len"] / runs["cp"].fillna(1)
    return rank.index[rank >= assumptions.long_context_rank_tokens]


def _class_of(system, spec, parallel, assumptions) -> str:
    """:func:`error_class` of a layout of ``spec`` on ``system``."""
    return error_class(spec.stack.framework, system.accelerator,
                       is_long_context(spec.job.seq_len, parallel.cp, assumptions))


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
    _check_draws(draws)
    return _error_ppf(cls)(np.random.default_rng(seed).random(int(draws)))


def check_seed(seed) -> None:
    """ValueError (naming ``seed``) unless ``seed`` is a whole number of at least 0."""
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise ValueError(f"seed: {seed!r} must be a whole number of at least 0")


def _check_draws(draws) -> None:
    if isinstance(draws, bool) or int(draws) != draws or draws < 1:
        raise ValueError(f"draws: {draws!r} must be a whole number of at least 1")


def new_document_factor(documents: int, level: float = QUANTILES[-1]) -> float:
    """How much wider the errors of a new source document spread than a pool of
    ``documents`` documents' own errors do: the prediction-interval factor for one new draw
    from a spread estimated on ``n`` groups, ``t_{n-1}(level) / z(level) x sqrt(1 + 1/n)``
    (Student's t against the normal quantile, times the new group's own share of the
    variance), taken at the interval's upper quantile. 1 in the limit of many documents;
    infinite for fewer than two. [-]

    >>> round(new_document_factor(10), 3)     # t_9(0.9) = 1.383, z(0.9) = 1.2816
    1.132
    >>> new_document_factor(1)
    inf
    """
    if documents < 2:
        return float("inf")
    from scipy import stats             # scipy.stats takes about 1 s to import: when drawn

    return float(stats.t.ppf(level, documents - 1) / stats.norm.ppf(level)
                 * np.sqrt(1.0 + 1.0 / documents))


def pool_quantiles(pool, u, documents: int, method: str = "inverted_cdf"):
    """Quantiles ``u`` of a pool of held-out log errors, their spread about the pool's
    median widened by :func:`new_document_factor` of the ``documents`` the pool holds
    (``documents`` 0: not known, not widened). [-]

    >>> [float(x) for x in pool_quantiles(np.array([-1.0, 0.0, 1.0]), [0.0, 1.0], 0)]
    [-1.0, 1.0]
    """
    pool = np.asarray(pool, dtype=float)
    med = np.median(pool)
    k = new_document_factor(documents) if documents else 1.0
    return med + k * (np.quantile(pool, u, method=method) - med)


def _error_ppf(cls: str):
    """Quantile function of the class's error factor: the empirical distribution of its
    held-out errors (a draw at u is the pool's inverted-CDF quantile, as a bootstrap),
    widened for a new document (:func:`pool_quantiles`)."""
    pool = error_pool(cls)
    documents = calibration.ERROR_POOL_DOCUMENTS.get(cls, 0)
    return lambda u: np.exp(pool_quantiles(pool, u, documents))


def range_ppf(row) -> callable:
    """Quantile function of one ``data/input_ranges.csv`` row (scipy.stats): triangular
    (low, mode, high as min, mode, max), uniform (low, high), lognormal (low, high as its
    p10, p90). [the row's unit]

    >>> import pandas as pd
    >>> f = range_ppf(pd.Series({"distribution": "lognormal", "low": 1.0, "high": 4.0}))
    >>> [round(float(x), 6) for x in f(np.array([0.1, 0.5, 0.9]))]
    [1.0, 2.0, 4.0]
    """
    from scipy import stats

    lo, hi = float(row["low"]), float(row["high"])
    kind = row["distribution"]
    if kind == "triangular":
        dist = stats.triang((float(row["mode"]) - lo) / (hi - lo), loc=lo, scale=hi - lo)
    elif kind == "uniform":
        dist = stats.uniform(loc=lo, scale=hi - lo)
    elif kind == "lognormal":
        z90 = stats.norm.ppf(0.9)
        mu, sigma = (np.log(lo) + np.log(hi)) / 2, (np.log(hi) - np.log(lo)) / (2 * z90)
        dist = stats.lognorm(s=sigma, scale=np.exp(mu))
    else:
        raise ValueError(f"distribution: {kind!r} is not triangular, uniform or lognormal")
    return dist.ppf


@dataclass(frozen=True)
class Uncertain:
    """One input an interval draws: ``id`` (a ``data/input_ranges.csv`` row, or ``model``
    for the model's own error), the input it sets, how (``use``), words for it, and its
    quantile function ``ppf`` (u in [0, 1) -> value)."""

    id: str
    input: str
    use: str
    label: str
    ppf: callable


#: the site link's drawn assumptions -> the System field that, given, replaces each (NaN:
#: not given); drawn only for a run over more than one site
SITE_LINK_GIVEN = {"site_link_comm_efficiency": None,
                   "site_link_latency_s": "site_link_latency_s",
                   "site_link_oversubscription": "site_link_bytes_per_s"}

#: ``data/input_ranges.csv`` ``use`` -> the ``data/pue.csv`` scopes of the PUE figures it
#: spreads (a site of an operator whose fleet figure is known; a survey or analyst mean)
PUE_SCOPES = {"pue_fleet": ("fleet_ttm", "fleet_annual", "new_design"),
              "pue_survey": ("survey_average", "analyst_estimate", "modelling_default")}


def uncertain_inputs(est) -> list:
    """The inputs an interval of ``est`` draws: the model's error first, then each range
    that applies (a PUE range matching the site's PUE scope, the grid ranges unless the
    grid intensity was given, the WUE range unless the WUE was given, every assumption
    range). [-]"""
    return _uncertain(est.system, est.inputs, _class_of(est.system, est.inputs, est.parallel,
                                                        est.assumptions))


def _uncertain(system, spec, cls: str) -> list:
    out = [Uncertain("model", "model_error_factor", "model", "throughput model",
                     _error_ppf(cls))]
    for inp in _drawn_ranges(catalog.input_ranges()):
        if inp.use in PUE_SCOPES and spec.site.pue_scope not in PUE_SCOPES[inp.use]:
            continue
        if inp.use == "grid" and spec.site.grid_source == "given":
            continue
        if inp.id == SEASON_RANGE and spec.job.start is not None:
            continue                  # the run's own months stand for its season
        if inp.use == "wue" and spec.site.wue_source == "given":
            continue
        given = SITE_LINK_GIVEN.get(inp.input, "")
        if inp.input in SITE_LINK_GIVEN and (
                system.sites <= 1 or (given and not math.isnan(getattr(system, given)))):
            continue                  # one site crosses nothing; a link given is not drawn
        out.append(inp)
    return out


_RANGES_BUILT: dict = {}


def _drawn_ranges(table) -> list:
    """The table's drawn rows (``use`` other than ``no``) as :class:`Uncertain`, built once
    per table (a frozen scipy distribution takes about a millisecond to build)."""
    key = id(table)
    if key not in _RANGES_BUILT:
        _RANGES_BUILT.clear()
        _RANGES_BUILT[key] = (table, [
            Uncertain(row["id"], row["input"], row["use"], row["label"], range_ppf(row))
            for _, row in table.iterrows() if row["use"] != "no"])
    return _RANGES_BUILT[key][1]


def evaluate_design(est, u: np.ndarray, inputs: list) -> dict:
    """The estimate's layout evaluated at each row of the design ``u`` (draws x inputs,
    values in [0, 1)), each column mapped through its input's quantile function: the
    report columns (:func:`traincost.model.report_units`), one value per row. [-]"""
    return _evaluate_design(est.system, est.inputs, est.precision, est.parallel,
                            est.assumptions, u, inputs)


def _evaluate_design(system, spec, precision, p, assumptions, u, inputs,
                     values=None) -> dict:
    """As :func:`evaluate_design`; ``values`` (one array per input), where given, are the
    design already mapped through the quantile functions (:func:`_seeded_values`)."""
    lay = {k: np.asarray([layout.knob_code(k, v)]) for k, v in p.knobs().items()}
    cols = columns(system, spec, precision, lay, assumptions)
    overrides = {}
    for j, inp in enumerate(inputs):
        v = inp.ppf(u[:, j]) if values is None else values[j]
        if inp.use == "model":
            cols["model_error_factor"] = v
        elif inp.use in PUE_SCOPES:                  # a factor on the PUE's excess over 1
            cols["pue"] = 1.0 + (cols["pue"] - 1.0) * v
        elif inp.use == "grid":                      # a factor on the annual intensity
            cols["grid_gco2e_per_kwh"] = cols["grid_gco2e_per_kwh"] * v
        elif inp.use == "wue":                       # a factor on the site's on-site WUE
            cols["wue_l_per_kwh"] = cols["wue_l_per_kwh"] * v
        else:
            overrides[inp.input] = v
    a = replace(assumptions, **overrides)
    with np.errstate(divide="ignore", invalid="ignore"):
        rep = report_units(evaluate(cols, a))
    n = len(u)
    return {k: np.broadcast_to(np.asarray(v, dtype=float), (n,)) for k, v in rep.items()}


_SEEDED: dict = {}
_SEEDED_MAX = 64


def _seeded_values(inputs: list, draws: int, seed: int, cls: str):
    """The seeded design ``u`` (draws x inputs in [0, 1)) and each input's values at it
    (its quantile function at its column), read-only. The same seed, draws, inputs and
    error pool give the same arrays, so they are kept: a widget bands 25 candidates a change
    with the same draws, and a quantile function costs about 0.15 ms a call (issue 26).
    The kept entry holds the error pool and the ranges' functions it was built from, and is
    used only while they are the same objects (a refit or a new table builds afresh)."""
    pool = calibration.ERROR_POOLS.get(cls)
    key = (seed, draws, cls, calibration.ERROR_POOL_DOCUMENTS.get(cls, 0),
           tuple(inp.id for inp in inputs))
    ranges = [inp.ppf for inp in inputs if inp.use != "model"]
    hit = _SEEDED.get(key)
    if hit is not None and hit[0] is pool and len(hit[1]) == len(ranges) and all(
            a is b for a, b in zip(hit[1], ranges)):
        return hit[2], hit[3]
    u = np.random.default_rng(seed).random((draws, len(inputs)))
    values = []
    for j, inp in enumerate(inputs):
        v = np.asarray(inp.ppf(u[:, j]), dtype=float)
        v.flags.writeable = False
        values.append(v)
    u.flags.writeable = False
    if len(_SEEDED) >= _SEEDED_MAX:
        _SEEDED.clear()
    _SEEDED[key] = (pool, ranges, u, values)
    return u, values


def intervals(est, draws: int = DEFAULT_DRAWS, seed: int = 0, spread: str = "all") -> dict:
    """p10, p50 and p90 of an estimate's outputs under the model's measured error and the
    sourced ranges of the inputs nobody knows exactly.

    Parameters
    ----------
    est : Estimate
        A point estimate (its layout, workload, site and assumptions are kept). [-]
    draws : int
        Monte Carlo draws. [-]
    seed : int
        Seed of the draws. [-]
    spread : str
        ``all`` (the model's error and the inputs, :func:`uncertain_inputs`) or ``model``
        (the model's error alone). [-]

    Returns
    -------
    dict: report key (:data:`INTERVAL_KEYS`) -> [p10, p50, p90] in the report's units, plus
    ``class`` (the error class drawn from), ``draws`` and ``inputs`` (the ids drawn).
    """
    return layout_intervals(est.system, est.inputs, est.precision, est.parallel,
                            est.assumptions, draws, seed, spread)


def layout_intervals(system, spec, precision: str, parallel, assumptions,
                     draws: int = DEFAULT_DRAWS, seed: int = 0, spread: str = "all") -> dict:
    """:func:`intervals` of one fully set layout (``parallel``, a complete
    :class:`~traincost.ParallelConfig`) of ``spec`` (:class:`traincost.assemble.Inputs`)
    on ``system``, without an Estimate (as :func:`traincost.search` bands its rows)."""
    _check_draws(draws)
    if spread not in ("all", "model"):
        raise ValueError(f"spread: {spread!r} is not one of all, model")
    cls = _class_of(system, spec, parallel, assumptions)
    inputs = _uncertain(system, spec, cls)
    if spread == "model":
        inputs = inputs[:1]
    u, values = _seeded_values(inputs, int(draws), seed, cls)
    rep = _evaluate_design(system, spec, precision, parallel, assumptions, u, inputs, values)
    out = {key: [float(q) for q in np.quantile(rep[key], QUANTILES)] for key in INTERVAL_KEYS}
    return {**out, "class": cls,
            "draws": int(draws), "inputs": [i.id for i in inputs]}


#: the outputs whose range :func:`sensitivity` apportions
SENSITIVITY_KEYS = ("train_time_days", "facility_energy_mwh", "co2e_t", "cost_usd")
#: Sobol' base samples: N (D + 2) evaluations for D inputs
SOBOL_BASE_SAMPLES = 512


def sensitivity(est, base_samples: int = SOBOL_BASE_SAMPLES, seed: int = 0) -> dict:
    """What an estimate's ranges come from: each drawn input's share of each output's
    variance (Sobol' total-order indices, normalised to sum to 1).

    Notes
    -----
    The design is Saltelli's (SALib ``sample.sobol``, scrambled Sobol' points, no second
    order) on the same uniform [0, 1) inputs :func:`intervals` maps through their quantile
    functions; the indices are SALib ``analyze.sobol``'s (Saltelli et al. 2010; Jansen
    1999 for the total order). A total-order index counts the input's interactions too,
    so the raw indices can sum above 1; the shares divide by their sum, and an index that
    the estimator puts below 0 (noise) counts as 0.

    Returns
    -------
    dict: output key (:data:`SENSITIVITY_KEYS`) -> {input id: share [0-1]}, plus ``labels``
    (input id -> words); an output with no spread (or no price) is left out.

    References
    ----------
    Herman and Usher 2017, SALib, JOSS 2(9) 97; Saltelli et al. 2010, Comput. Phys.
    Commun. 181, 259-270.
    """
    from SALib.analyze import sobol as analyze
    from SALib.sample import sobol as sample

    inputs = uncertain_inputs(est)
    problem = {"num_vars": len(inputs), "names": [i.id for i in inputs],
               "bounds": [[0.0, 1.0]] * len(inputs)}
    u = sample.sample(problem, int(base_samples), calc_second_order=False, seed=seed)
    u = np.clip(u, 0.0, np.nextafter(1.0, 0.0))
    rep = evaluate_design(est, u, inputs)
    out = {}
    for key in SENSITIVITY_KEYS:
        y = rep[key]
        if not np.all(np.isfinite(y)) or np.ptp(y) <= 1e-12 * abs(float(np.mean(y))):
            continue
        st = np.clip(analyze.analyze(problem, y, calc_second_order=False, seed=seed)["ST"],
                     0.0, None)
        out[key] = {i.id: float(x / st.sum()) for i, x in zip(inputs, st)}
    return {**out, "labels": {i.id: i.label for i in inputs}}


def drivers_sentence(shares: dict, labels: dict, what: str, top: int = 3) -> str:
    """One output's shares in words: ``"carbon: 58% grid intensity, year, 27% ..."``.

    >>> drivers_sentence({"model": 0.25, "grid-year": 0.6, "host-power": 0.15},
    ...                  {"model": "throughput model", "grid-year": "grid intensity",
    ...                   "host-power": "host power"}, "carbon", top=2)
    "carbon's range: 60% grid intensity, 25% throughput model"
    """
    # shares that round to 0% say nothing
    order = [k for k in sorted(shares, key=shares.get, reverse=True)[:top]
             if shares[k] >= 0.005]
    return f"{what}'s range: " + ", ".join(f"{100 * shares[k]:.0f}% {labels[k]}"
                                            for k in order)


def interval_coverage(pools, low: float = 0.1, high: float = 0.9):
    """How often a held-out run's measured throughput falls inside its 80% interval. [%]

    For each run of a class, the interval is the class's [low, high] quantiles of the
    held-out errors of the *other* documents (the run's own document left out of the pool,
    as a new source would be), widened for a new document as an estimate's interval is
    (:func:`traincost.uncertainty.pool_quantiles`, the other documents' count): inside
    when ``q_low <= eps <= q_high``. Also the median
    width ``exp(q_high - q_low)``, the p90/p10 ratio of the throughput interval.

    Returns
    -------
    DataFrame indexed by class with ``figures``, ``coverage_pct``, ``median_width``, and a
    last row ``all``: every class's figures together, each with its own class's interval.

    Examples
    --------
    ``all`` holds every class's figures, so its coverage is theirs weighted by figures:

    >>> import pandas as pd
    >>> rng = np.random.default_rng(0)
    >>> pools = pd.DataFrame({"cls": np.repeat(["a", "b"], 40),
    ...                       "document": np.tile(np.repeat(list("pqrstuvw"), 5), 2),
    ...                       "eps": rng.normal(0.0, 0.1, 80)})
    >>> t = interval_coverage(pools)
    >>> int(t.loc["all", "figures"]), int(t.loc[["a", "b"], "figures"].sum())
    (80, 80)
    >>> bool(np.isclose(t.loc["all", "coverage_pct"], np.average(
    ...     t.loc[["a", "b"], "coverage_pct"], weights=t.loc[["a", "b"], "figures"])))
    True
    """
    import pandas as pd
    rows, every_inside, every_width = [], [], []
    for cls, pool in pools.groupby("cls", sort=False):
        inside, widths = [], []
        for d, part in pool.groupby("document"):
            others = pool.loc[pool["document"] != d]
            rest = others["eps"].to_numpy()
            if len(rest) < 2 or others["document"].nunique() < 2:
                continue
            q_lo, q_hi = pool_quantiles(rest, [low, high], others["document"].nunique(),
                                        method="linear")
            inside.extend((part["eps"] >= q_lo) & (part["eps"] <= q_hi))
            widths.extend([math.exp(q_hi - q_lo)] * len(part))
        rows.append((cls, len(inside), 100.0 * np.mean(inside) if inside else float("nan"),
                     float(np.median(widths)) if widths else float("nan")))
        every_inside.extend(inside)
        every_width.extend(widths)
    rows.append(("all", len(every_inside),
                 100.0 * np.mean(every_inside) if every_inside else float("nan"),
                 float(np.median(every_width)) if every_width else float("nan")))
    return pd.DataFrame(rows, columns=["cls", "figures", "coverage_pct", "median_width"]
                        ).set_index("cls")
