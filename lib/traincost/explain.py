"""Why the other layouts of a layout search lose to its best (notebook 04; no widgets).

:func:`why_others_lose` re-estimates the search's best layout with every knob pinned,
beside the runner-up of the ranking and a few one-knob variants of the best that lose
by memory, pipeline bubble or exposed communication. :mod:`traincost.explore`
re-exports every name here; :mod:`traincost.widgets` adds the words.

>>> from traincost import explore
>>> explore.layout_label({"tp": 4, "pp": 4, "dp": 16, "vpp": 4, "micro_batch": 1, "zero": 1,
...                       "recompute": "selective"})
'tp4 pp4 dp16 vpp4 mb1 ZeRO-1 selective'
"""

from __future__ import annotations

import pandas as pd

from .assumptions import DEFAULT, Assumptions
from .estimate import estimate
from .layout import SEARCH_SPACE
from .search import OBJECTIVES
from .units import GIB
from .workload import CODE_TO_RECOMPUTE

#: the layout knobs of a search row, as :func:`traincost.estimate` keywords
SEARCH_ROW_KNOBS = ("tp", "pp", "cp", "ep", "vpp", "zero", "micro_batch", "recompute")

#: the step-time parts that are communication the step waits for
EXPOSED_COMM_PARTS = ("tp_comm", "cp_comm", "ep_comm", "pp_comm", "dp_comm", "cross_site_comm")

#: what each objective of :func:`traincost.search` minimises, in words
OBJECTIVE_WORDS = {"time": "time", "cost": "dollars", "energy": "energy", "carbon": "carbon"}

#: differences of a step part below this are float noise, not a loss [s]
STEP_NOISE_S = 1e-9


def fixed_layout(est) -> dict:
    """The layout an estimate used, as keywords that pin it in another estimate."""
    p = est.parallel
    return {"tp": p.tp, "pp": p.pp, "cp": p.cp, "ep": p.ep, "vpp": p.vpp, "zero": p.zero,
            "micro_batch": p.micro_batch, "recompute": p.recompute}


def layout_of(row) -> dict:
    """The layout knobs of a search row, as :func:`traincost.estimate` keywords.

    >>> layout_of({"tp": 4.0, "pp": 2, "cp": 1, "ep": 1, "vpp": 1, "zero": 1, "micro_batch": 2,
    ...            "recompute": "full", "dp": 8})["tp"]
    4
    """
    return {k: (str(row[k]) if k == "recompute" else int(row[k])) for k in SEARCH_ROW_KNOBS}


def layout_label(row) -> str:
    """A layout in one short line, e.g. ``'tp4 pp4 dp16 vpp4 mb1 ZeRO-1 selective'``.

    ``cp`` and ``ep`` are shown only when above 1. [-]
    """
    text = f"tp{int(row['tp'])} pp{int(row['pp'])} dp{int(row['dp'])}"
    for k in ("cp", "ep"):
        if int(row.get(k, 1)) > 1:
            text += f" {k}{int(row[k])}"
    return (text + f" vpp{int(row['vpp'])} mb{int(row['micro_batch'])} ZeRO-{int(row['zero'])} "
            f"{row['recompute']}")


def pinned_estimate(params: dict, accelerator: str, devices: int, layout: dict):
    """:func:`traincost.estimate` with every knob pinned, or None when the layout is invalid.

    Parameters
    ----------
    params : dict
        ``model``, ``global_batch`` [sequences], optional ``tokens`` [tokens], ``region``.
    accelerator : str
        Accelerator id. [-]
    devices : int
        Devices. [-]
    layout : dict
        Every knob of :data:`SEARCH_ROW_KNOBS`. [-]
    """
    try:
        return estimate(accelerator=accelerator, devices=int(devices), model=params["model"],
                        global_batch=params["global_batch"], tokens=params.get("tokens"),
                        region=params.get("region"), **layout)
    except ValueError:
        return None


def one_knob_variants(layout: dict) -> list[tuple[str, dict]]:
    """The layout with one knob changed: (what changed, new layout), a dozen or so.

    Variants may be invalid for the job (tp must divide the heads, pp x vpp the layers,
    ...); :func:`why_others_lose` drops those. A variant equal to ``layout``, or with a
    size below 1, is left out.
    """
    out = []

    def add(what, **change):
        new = {**layout, **change}
        if new != layout and all(new[k] >= 1 for k in ("tp", "pp", "vpp", "micro_batch")):
            out.append((what, new))

    tp, pp, mb = layout["tp"], layout["pp"], layout["micro_batch"]
    add("tp × 2", tp=tp * 2)
    add("tp × 4", tp=tp * 4)
    add("tp ÷ 2", tp=tp // 2)
    add("pp × 2", pp=pp * 2)
    add("pp × 4, no interleaving", pp=pp * 4, vpp=1)
    add("pp ÷ 2", pp=pp // 2)
    add("no interleaving", vpp=1)
    add("micro-batch × 2", micro_batch=mb * 2)
    add("micro-batch × 4", micro_batch=mb * 4)
    add("micro-batch ÷ 2", micro_batch=mb // 2)
    for z in range(4):
        add(f"ZeRO-{z}", zero=z)
    for code in SEARCH_SPACE["recompute"]:           # the modes a search weighs
        add(f"{CODE_TO_RECOMPUTE[code]} recompute", recompute=CODE_TO_RECOMPUTE[code])
    return out


def _why_row(role: str, what: str, est, limit_fraction: float, objective: str) -> dict:
    """One row of :func:`why_others_lose`: an estimate's times [s], memory [GiB], objective."""
    r = est.report
    hbm = est.accelerator.hbm_bytes / GIB
    row = {"role": role, "change": what, "accelerator": est.accelerator.id,
           "devices": est.devices, "layout": "", "step_time_s": r["step_time_s"],
           "train_time_days": r["train_time_days"], "cost_usd": r["cost_usd"],
           "facility_energy_mwh": r["facility_energy_mwh"], "co2e_t": r["co2e_t"],
           "objective_value": r[OBJECTIVES[objective]],
           "bubble_s": r["step_bubble_s"],
           "exposed_comm_s": sum(r[f"step_{k}_s"] for k in EXPOSED_COMM_PARTS),
           "memory_gib_per_device": r["memory_gib_per_device"], "hbm_gib_per_device": hbm,
           "memory_limit_gib": limit_fraction * hbm,
           "within_limit": bool(r["memory_gib_per_device"] <= limit_fraction * hbm)}
    p = est.parallel
    row["layout"] = layout_label({"tp": p.tp, "pp": p.pp, "dp": r["dp"], "cp": p.cp,
                                  "ep": p.ep, "vpp": p.vpp, "micro_batch": p.micro_batch,
                                  "zero": p.zero, "recompute": p.recompute})
    row.update({f"step_{k}_s": v for k, v in est.step_breakdown_s().items()})
    row.update({f"memory_{k}_gib": v for k, v in est.memory_breakdown_gib().items()})
    return row


def typical_losers(best: dict, variants: list[dict],
                   excess_fraction: float | None = None) -> list[dict]:
    """Of the one-knob variants of the best layout, the ones that show why they lose.

    Parameters
    ----------
    best : dict
        The best layout's row: ``bubble_s`` and ``exposed_comm_s`` [s per step].
    variants : list of dict
        Rows with ``change``, ``step_time_s``, ``bubble_s``, ``exposed_comm_s`` [s] and
        ``within_limit`` [bool].
    excess_fraction : float, optional
        How much more than the best's a part must be to count as the loss; the
        assumption ``why_lose_excess_fraction`` by default. [-]

    Returns
    -------
    list of dict
        Copies of at most three variants with their ``role``: ``over memory`` (the
        fastest that does not fit), ``bubble`` and ``communication`` (of those that fit,
        the one whose part exceeds the best's the most, when it exceeds it by more than
        ``excess_fraction`` of it plus :data:`STEP_NOISE_S`); no variant is chosen twice.
    """
    f = DEFAULT.why_lose_excess_fraction if excess_fraction is None else excess_fraction
    over = [v for v in variants if not v["within_limit"]]
    fits = [v for v in variants if v["within_limit"]]
    chosen = []
    if over:
        chosen.append({**min(over, key=lambda v: v["step_time_s"]), "role": "over memory"})
    for role, col in (("bubble", "bubble_s"), ("communication", "exposed_comm_s")):
        worse = [v for v in fits if v[col] > best[col] * (1 + f) + STEP_NOISE_S
                 and v["change"] not in {c["change"] for c in chosen}]
        if worse:
            chosen.append({**max(worse, key=lambda v: v[col] - best[col]), "role": role})
    return chosen


def _runner_up(result, params: dict, best, objective: str, limit: float) -> list[dict]:
    """The next layout of the ranking on the best's hardware that differs in more than ZeRO."""
    if result.objective != objective:
        return []
    acc, n = str(best["accelerator"]), int(best["devices"])
    key = [k for k in SEARCH_ROW_KNOBS if k != "zero"]
    ranking = result.top
    same = ranking[(ranking["accelerator"] == acc) & (ranking["devices"] == n)]
    for _, r in same.iterrows():
        if any(layout_of(r)[k] != layout_of(best)[k] for k in key):
            est = pinned_estimate(params, acc, n, layout_of(r))
            if est is not None:
                return [_why_row("runner-up", "next in the ranking", est, limit, objective)]
            return []
    return []


def why_others_lose(result, params: dict, objective: str | None = None,
                    assumptions: Assumptions = DEFAULT) -> pd.DataFrame:
    """The best layout beside the runner-up and a few typical losers, each re-estimated.

    The rows are :func:`traincost.estimate` with every knob pinned, on the best layout's
    accelerator and device count:

    * ``best``: the search's best layout for ``objective``;
    * ``runner-up``: the next layout of the ranking on the same accelerator and device
      count that differs in more than the ZeRO stage (those tie on time);
    * ``over memory``, ``bubble`` and ``communication``: of the best layout with one knob
      changed (:func:`one_knob_variants`), as :func:`typical_losers` picks them.

    Parameters
    ----------
    result : traincost.SearchResult
        With at least one feasible layout.
    params : dict
        ``model``, ``global_batch`` [sequences], ``tokens`` [tokens], ``region``: the job
        the search was run for.
    objective : str, optional
        Ranking to explain; the search's own by default.
    assumptions : Assumptions
        ``why_lose_excess_fraction``. [-]

    Returns
    -------
    pandas.DataFrame
        Indexed by a label ``"<role>: <change>"`` (``best`` and ``runner-up`` alone);
        columns ``role``, ``change``, ``layout``, ``step_time_s`` [s],
        ``train_time_days`` [days], ``objective_value`` (the objective's column),
        ``bubble_s`` and ``exposed_comm_s`` [s per step], ``memory_gib_per_device``,
        ``memory_limit_gib`` [GiB], ``within_limit``, each ``step_<part>_s`` [s] and
        ``memory_<part>_gib`` [GiB].

    Raises
    ------
    ValueError
        ``objective: ...`` when nothing is feasible for it, ``params: ...`` when the best
        layout cannot be re-estimated for the job given.
    """
    objective = objective or result.objective
    best = result.best.get(objective)
    if best is None:
        raise ValueError(f"objective: no feasible layout for {objective!r}; nothing to explain")
    limit = 1.0 - result.memory_headroom
    acc, n = str(best["accelerator"]), int(best["devices"])
    best_est = pinned_estimate(params, acc, n, layout_of(best))
    if best_est is None:
        raise ValueError("params: the best layout cannot be re-estimated for this job "
                         "(give the model, batch, tokens and region the search used)")
    rows = [_why_row("best", f"best for {OBJECTIVE_WORDS[objective]}", best_est, limit,
                     objective)]
    rows += _runner_up(result, params, best, objective, limit)
    variants = []
    for what, lay in one_knob_variants(layout_of(best)):
        est = pinned_estimate(params, acc, n, lay)
        if est is not None:
            variants.append(_why_row("", what, est, limit, objective))
    rows += typical_losers(rows[0], variants, assumptions.why_lose_excess_fraction)
    df = pd.DataFrame(rows)
    df.index = [f"{r['role']}: {r['change']}" if r["role"] not in ("best", "runner-up")
                else r["role"] for r in rows]
    return df
