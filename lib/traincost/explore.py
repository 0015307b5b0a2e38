"""Questions the notebooks ask, answered with the public estimate (no widgets, no plots).

Each function here is a few calls of :func:`traincost.estimate` /
:func:`traincost.compare` or of the formula modules, arranged to answer one question
of the notebook suite: where the FLOP go, what fits where and on how few devices, why a
layout cannot run, how power follows utilisation, what the same run emits in other
regions, whether to rent or own, how sensitive the cost is to prices, which accelerator
is cheapest for a deadline, and why the other layouts of a search lose to its best
(:mod:`traincost.explain`, whose names are re-exported here). :mod:`traincost.widgets`
builds its controls on them and :mod:`traincost.exercises` checks answers with them;
both stay thin.

Inputs that can be wrong (ids, sizes, layouts) are passed straight to the estimate, so
errors are its one-line ``ValueError`` messages, raised; :mod:`traincost.widgets` catches
them and shows the message in place.

Examples
--------
>>> from traincost import explore
>>> parts = explore.flop_per_token_parts("gpt2-small", recompute="full")
>>> sorted(parts)
['attention_core', 'layer_matmuls', 'output_layer', 'recompute']
>>> scan = explore.device_scan({"accelerator": "a100-sxm4-80gb", "model": "llama2-13b",
...                             "global_batch": 1024}, (1, 2, 4, 8))
>>> explore.smallest_fitting_devices(scan) in (2, 4, 8)
True
"""

from __future__ import annotations

import math
import re
from dataclasses import replace

import numpy as np
import pandas as pd

from . import catalog, power, workload
from .assumptions import DEFAULT, Assumptions
from .estimate import COMPARE_DRAWS, Estimate, compare, estimate
from .explain import (EXPOSED_COMM_PARTS, OBJECTIVE_WORDS, SEARCH_ROW_KNOBS,  # noqa: F401
                      STEP_NOISE_S, fixed_layout, layout_label, layout_of, one_knob_variants,
                      pinned_estimate, typical_losers, why_others_lose)
from .inputs import Workload
from .layout import FLAGS, LayoutError
# notebook 05's start-date what-ifs live in their own module; named here as before
from .start_dates import (MAX_START_WINDOW_DAYS, MONTH_NAMES,  # noqa: F401
                          carbon_by_start_month, cleanest_start, extreme_starts)
from .uncertainty import intervals
from .units import GIB, HOURS_PER_YEAR
from .workload import RECOMPUTE_CODES

#: device counts a "smallest that fits" scan tries by default
DEVICE_COUNTS = (1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096)

#: layout knobs a notebook can set (None: searched by the estimate)
LAYOUT_KNOBS = ("tp", "pp", "vpp", "zero", "recompute", "micro_batch")

#: one plain-words reason per layout rule, keyed by the flag the estimate's message names
LAYOUT_WHY = {
    "tp": "each device of a tensor-parallel group holds whole attention heads",
    "pp": "each pipeline stage holds at least one whole layer",
    "vpp": "interleaving splits each pipeline stage's layers into vpp chunks of at least one "
           "layer, so it needs pp > 1",
    "devices": "the devices are split into groups of tp x pp, and dp such groups",
    "global-batch": "every data-parallel replica takes whole micro-batches in each step",
    "cp": "context parallelism splits each sequence into equal pieces",
    "ep": "expert parallelism splits the experts evenly over the data-parallel replicas",
    "micro-batch": "a micro-batch holds a whole number (at least 1) of sequences",
    "zero": "ZeRO has stages 0 (off) to 3",
    "recompute": "activation recomputation is none, selective or full",
}


# --------------------------------------------------------------------------------------
# 02: where the FLOP go; what fits where
# --------------------------------------------------------------------------------------
def _workload(model, seq_len=None) -> tuple[Workload, int]:
    """A preset id or a Workload, and the sequence length (the preset's when None; a
    Workload, which has none of its own, needs it given)."""
    if isinstance(model, Workload):
        if seq_len is None:
            raise ValueError("seq-len: required with a Workload (an architecture has no "
                             "sequence length of its own)")
        return model, seq_len
    return catalog.model(model), catalog.job(model, seq_len=seq_len).seq_len


def parameter_counts(wl: Workload, seq_len: int) -> dict:
    """:func:`traincost.workload.parameter_counts` of a workload (as the estimate calls it)
    at sequence length ``seq_len`` [tokens] (which sizes a learned position table)."""
    mla = wl.attention == "mla"
    return workload.parameter_counts(
        wl.layers, wl.hidden, wl.heads, wl.kv_heads_effective, wl.head_dim_effective,
        wl.ffn_hidden_effective, wl.gated_mlp, wl.vocab, seq_len, wl.tied_embeddings,
        wl.learned_positions, wl.experts, wl.top_k, wl.shared_experts,
        wl.moe_ffn_hidden or wl.ffn_hidden_effective, wl.dense_layers, mla, wl.q_lora_rank,
        wl.kv_lora_rank, wl.qk_rope_head_dim, wl.v_head_dim)


def flop_per_token_parts(model, recompute: str = "none", seq_len: int | None = None) -> dict:
    """Training FLOP per token, split by where they are spent.

    Parameters
    ----------
    model : str or Workload
        Model preset id or a workload (then ``seq_len`` is required).
    recompute : str
        ``none``, ``selective`` or ``full``. [-]
    seq_len : int, optional
        Sequence length instead of the preset's. [tokens]

    Returns
    -------
    dict of float [FLOP per token]
        ``layer_matmuls`` (6 x the matrix weights a token touches), ``attention_core``
        (3 x the attention scores and weighted sum), ``output_layer`` (6 x V x h) and
        ``recompute`` (what recomputation repeats). The first three sum to the model
        FLOP, all four to the hardware FLOP of :func:`traincost.estimate`.

    Notes
    -----
    The same :func:`traincost.workload.flop_per_token` the estimate uses: forward
    F = 2*W + A + 2*V*h, training 3F (a backward costs two forwards); full recompute
    repeats 2*W + A, selective only A (Korthikanti et al. 2022).
    """
    if recompute not in RECOMPUTE_CODES:
        raise ValueError(f"recompute: {recompute!r} is not one of {', '.join(RECOMPUTE_CODES)}")
    wl, seq_len = _workload(model, seq_len)
    mla = wl.attention == "mla"
    counts = parameter_counts(wl, seq_len)
    attention = workload.attention_core_flop_per_token(
        wl.layers, seq_len, wl.heads, wl.head_dim_effective, mla=mla,
        qk_rope_head_dim=wl.qk_rope_head_dim, v_head_dim=wl.v_head_dim)
    model_fpt, hardware_fpt = workload.flop_per_token(
        counts["layer_matmul_active"], wl.vocab, wl.hidden, attention, RECOMPUTE_CODES[recompute])
    return {
        "layer_matmuls": float(3 * 2 * counts["layer_matmul_active"]),   # fwd 2W, bwd 4W
        "attention_core": float(3 * attention),
        "output_layer": float(3 * 2 * wl.vocab * wl.hidden),              # logits, fwd + bwd
        "recompute": float(hardware_fpt - model_fpt),
    }


def model_flop_per_token(model, seq_len: int | None = None) -> float:
    """Model training FLOP per token, recomputation left out: the sum of the first three
    parts of :func:`flop_per_token_parts` (the estimate's ``model_flop_per_token``).
    [FLOP per token]"""
    parts = flop_per_token_parts(model, "none", seq_len)
    return parts["layer_matmuls"] + parts["attention_core"] + parts["output_layer"]


def plain_reason(error) -> str:
    """An error in plain words, with why the rule exists: a layout rule's message names its
    fields in words (``tp``, ``global batch``) instead of CLI flags
    (:meth:`traincost.layout.LayoutError.in_words`), and the same in a message kept as text;
    any other message is kept as it is.

    >>> from traincost.layout import LayoutError
    >>> plain_reason(LayoutError("tp", "{F_tp} {tp} must divide the number of attention "
    ...                          "heads {heads}", {"tp": 3, "heads": 32}))
    'tp 3 must divide the number of attention heads 32 (each device of a tensor-parallel group holds whole attention heads).'

    The same rule's message kept as text (a comparison table's note) reads the same way:

    >>> plain_reason("--tp 3 must divide the number of attention heads 32")
    'tp 3 must divide the number of attention heads 32 (each device of a tensor-parallel group holds whole attention heads).'
    """
    if isinstance(error, LayoutError):
        text, field = error.in_words({}).strip(), error.field
    else:
        text = str(error).strip()
        field = text.split(":", 1)[0].strip() if ":" in text else ""
        for key, flag in FLAGS.items():          # a layout rule's message kept as text
            if flag in text:
                field = field or key
                text = re.sub(re.escape(flag) + r"(?![\w-])", key.replace("_", " "), text)
        field = field.removeprefix("--")
    why = LAYOUT_WHY.get(field.replace("_", "-"))
    if why and why not in text:
        text = f"{text.rstrip('.')} ({why})."
    return text


def layout_estimate(params: dict) -> Estimate:
    """:func:`traincost.estimate` for one layout; raises why it cannot run (plain words).

    Parameters
    ----------
    params : dict
        ``accelerator``, ``model``, ``devices`` [-], ``global_batch`` [sequences],
        optional ``tokens`` [tokens], ``region``, ``price_per_hour`` [USD/h], and the
        layout knobs ``tp``, ``pp``, ``vpp``, ``zero``, ``recompute``, ``micro_batch``
        (absent or None: searched), and optionally the software stack
        ``attention_kernel``, ``parallel_block``, ``overlap``, ``balanced_pipeline``,
        ``optimizer_state``, ``framework``, ``elementwise`` (absent: the defaults).
        Context and expert parallelism are fixed at 1.

    Returns
    -------
    Estimate
        The estimate (which may not fit in memory: that is a result).

    Raises
    ------
    ValueError
        When the layout is impossible: one line in plain words (:func:`plain_reason`).
    """
    knobs = {k: params.get(k) for k in LAYOUT_KNOBS}
    try:
        return estimate(accelerator=params["accelerator"], devices=params["devices"],
                        model=params["model"], global_batch=params["global_batch"],
                        tokens=params.get("tokens"), region=params.get("region"),
                        price_per_hour=params.get("price_per_hour"), cp=1, ep=1,
                        attention_kernel=params.get("attention_kernel"),
                        parallel_block=params.get("parallel_block"),
                        overlap=params.get("overlap"),
                        balanced_pipeline=params.get("balanced_pipeline"),
                        optimizer_state=params.get("optimizer_state"),
                        framework=params.get("framework"),
                        elementwise=params.get("elementwise"), **knobs)
    except ValueError as exc:
        raise ValueError(plain_reason(exc)) from None


def device_scan(params: dict, device_counts=DEVICE_COUNTS) -> pd.DataFrame:
    """Memory per device of one job at several device counts (the same estimate each time).

    Parameters
    ----------
    params : dict
        As for :func:`layout_estimate` without ``devices``; knobs left out (typically
        tp and pp) are searched at each count, so a row fits if *any* layout does.
    device_counts : sequence of int
        Counts to try, ascending. [-]

    Returns
    -------
    pandas.DataFrame
        Indexed by ``devices``: ``fits_in_memory`` (True/False, NA when no layout is
        valid), ``memory_gib_per_device`` [GiB], ``hbm_gib`` [GiB], ``tp``, ``pp``,
        ``dp``, ``note``.
    """
    counts = [int(n) for n in device_counts]
    if not counts:
        raise ValueError("devices: give at least one device count to scan")
    rows = []
    for n in counts:
        try:
            est = layout_estimate({**params, "devices": n})
        except ValueError as exc:
            rows.append({"devices": n, "fits_in_memory": pd.NA, "note": str(exc)})
            continue
        d = est.to_dict()
        rows.append({"devices": n, "fits_in_memory": d["fits_in_memory"],
                     "memory_gib_per_device": d["memory_gib_per_device"],
                     "hbm_gib": d["hbm_gib_per_device"], "tp": d["parallel"]["tp"],
                     "pp": d["parallel"]["pp"], "dp": d["parallel"]["dp"],
                     "note": "" if d["fits_in_memory"] else "does not fit in memory"})
    df = pd.DataFrame(rows, columns=["devices", "fits_in_memory", "memory_gib_per_device",
                                     "hbm_gib", "tp", "pp", "dp", "note"])
    df["fits_in_memory"] = df["fits_in_memory"].astype("boolean")
    for col in ("tp", "pp", "dp"):
        df[col] = df[col].astype("Int64")
    return df.set_index("devices")


def smallest_fitting_devices(scan: pd.DataFrame) -> int | None:
    """The smallest device count of a :func:`device_scan` that fits, or None. [-]"""
    fits = scan["fits_in_memory"].fillna(False).astype(bool)
    return int(scan.index[fits.to_numpy()].min()) if fits.any() else None


def model_state_gib(model, dp: int, zero: int, assumptions: Assumptions = DEFAULT) -> float:
    """Weights + gradients + Adam states per device, no tensor or pipeline parallelism. [GiB]

    Notes
    -----
    (2 + 2 + 12) bytes per parameter (Rajbhandari et al. 2020), with the optimizer
    states, then the gradients, then the weights divided by dp from ZeRO stage 1, 2, 3
    (:func:`traincost.memory.model_state_bytes` with the total parameter count).
    """
    from .memory import model_state_bytes

    if zero not in (0, 1, 2, 3):
        raise ValueError(f"zero: {zero!r} is not one of 0, 1, 2, 3")
    counts = parameter_counts(*_workload(model))
    states = model_state_bytes(float(counts["total"]), dp, zero,
                               assumptions.weight_bytes_per_param,
                               assumptions.grad_bytes_per_param,
                               assumptions.optimizer_bytes_per_param)
    return float(sum(states.values())) / GIB


# --------------------------------------------------------------------------------------
# 05: power, PUE, regions
# --------------------------------------------------------------------------------------
def power_curve(accelerator, busy_fractions=None,
                assumptions: Assumptions = DEFAULT) -> pd.DataFrame:
    """Average power per device as the busy (computing) share of a step goes from 0 to 1.

    Parameters
    ----------
    accelerator : str or Accelerator
        Catalog id or object.
    busy_fractions : array-like, optional
        Busy shares to evaluate; 0 to 1 in steps of 0.05 by default. [-]
    assumptions : Assumptions
        Compute and waiting power fractions, host share. [-]

    Returns
    -------
    pandas.DataFrame
        ``busy_fraction`` [-], ``device_w``, ``host_w``, ``total_w`` [W] (the same
        :func:`traincost.power.device_power_w` and ``host_power_w`` the estimate uses).
    """
    acc = accelerator if not isinstance(accelerator, str) else catalog.accelerator(accelerator)
    u = np.linspace(0.0, 1.0, 21) if busy_fractions is None else np.asarray(busy_fractions,
                                                                            dtype=float)
    if u.size == 0 or np.any(~np.isfinite(u)) or np.any((u < 0) | (u > 1)):
        raise ValueError("busy_fraction: values must lie between 0 and 1")
    device = power.device_power_w(acc.tdp_w, acc.idle_w, u, assumptions.compute_power_fraction,
                                  assumptions.wait_power_fraction)
    host = np.full_like(u, power.host_power_w(acc.tdp_w, assumptions.host_power_fraction_of_tdp))
    return pd.DataFrame({"busy_fraction": u, "device_w": device, "host_w": host,
                         "total_w": device + host})


#: power limits the power-cap trade-off tries, as shares of the device's TDP
POWER_CAP_FRACTIONS = (0.6, 0.7, 0.75, 0.8, 0.875, 1.0)


def power_cap_tradeoff(params: dict, fractions=POWER_CAP_FRACTIONS,
                       assumptions: Assumptions = DEFAULT) -> pd.DataFrame:
    """One run at several power limits, on the layout it takes uncapped.

    Parameters
    ----------
    params : dict
        ``accelerator``, ``model``, ``devices``, ``global_batch``, optional ``tokens``,
        ``region`` and ``pue`` [-], as for :func:`traincost.estimate`.
    fractions : sequence of float
        Power limits as shares of the accelerator's TDP, in (idle/TDP, 1]. [-]

    Returns
    -------
    pandas.DataFrame
        Indexed by ``power_cap_w`` [W]: ``fraction_of_tdp`` [-], ``train_time_days``,
        ``device_hours``, ``avg_power_w_per_device`` [W], ``facility_energy_mwh``,
        ``co2e_t``, ``time_change_pct`` and ``energy_change_pct`` (against the rated
        maximum, [%]) and ``extrapolated`` (below ``power_cap_measured_min_fraction``,
        where the clock law was not measured).

    Raises
    ------
    ValueError
        The estimate's one-line message for an input it rejects (e.g. a cap below idle).

    Notes
    -----
    Matmul and fused attention run at (cap/TDP)^``power_cap_clock_exponent`` of their
    rate and the device's power range ends at the cap; memory-bound work, links and the
    host's share do not change (:func:`traincost.power.capped_clock_fraction`). The layout
    is held, so the table shows the cap's effect alone.
    """
    acc = params["accelerator"]
    acc = catalog.accelerator(acc) if isinstance(acc, str) else acc
    common = {"accelerator": acc, "devices": params["devices"], "model": params["model"],
              "global_batch": params["global_batch"], "tokens": params.get("tokens"),
              "region": params.get("region"), "pue": params.get("pue"),
              "assumptions": assumptions}
    base = estimate(**common)
    layout = fixed_layout(base)
    ref = base.to_dict()
    rows = []
    for f in sorted(set(float(x) for x in fractions)):
        cap = f * acc.tdp_w
        d = estimate(**common, **layout, power_cap=cap).to_dict()
        rows.append({"power_cap_w": cap, "fraction_of_tdp": f,
                     "train_time_days": d["train_time_days"],
                     "device_hours": d["device_hours"],
                     "avg_power_w_per_device": d["avg_power_w_per_device"],
                     "facility_energy_mwh": d["facility_energy_mwh"],
                     "co2e_t": d["co2e_t"],
                     "time_change_pct": 100 * (d["train_time_days"]
                                               / ref["train_time_days"] - 1),
                     "energy_change_pct": 100 * (d["facility_energy_mwh"]
                                                 / ref["facility_energy_mwh"] - 1),
                     "extrapolated": f < assumptions.power_cap_measured_min_fraction})
    return pd.DataFrame(rows).set_index("power_cap_w")


def _with_embodied(accelerator, embodied_kgco2e):
    acc = catalog.accelerator(accelerator) if isinstance(accelerator, str) else accelerator
    return acc if embodied_kgco2e is None else replace(acc, embodied_kgco2e=float(embodied_kgco2e))


def carbon_by_region(params: dict, regions) -> pd.DataFrame:
    """The same run (same layout, same energy at the given PUE) in several grid regions.

    Parameters
    ----------
    params : dict
        ``accelerator``, ``model``, ``devices``, ``global_batch``, optional ``tokens``,
        ``pue`` [-] (None: each region's default: the cloud provider's or the industry
        average) and ``embodied_kgco2e`` [kgCO2e per device] (None: the catalog's).
    regions : sequence of str
        Region ids (``traincost.catalog.regions()``).

    Returns
    -------
    pandas.DataFrame
        Indexed by region id: ``name``, ``grid_gco2e_per_kwh``, ``pue``,
        ``it_energy_mwh``, ``facility_energy_mwh``, ``co2e_t``, ``embodied_co2e_t``,
        ``wue_l_per_kwh``, ``grid_water_l_per_kwh``, ``water_m3`` [m3] (on site and at the
        power plants, :func:`traincost.footprint.onsite_water_m3`), and
        ``co2e_t_p10``, ``co2e_t_p90``: the operational emissions' 80% range
        (:func:`traincost.uncertainty.intervals`, the model's error and the input ranges
        that apply: a region's own PUE and grid are drawn, a given PUE is not).

    Raises
    ------
    ValueError
        ``regions: ...`` when none is given, ``embodied: ...`` for a negative figure,
        or the estimate's one-line message.
    """
    regions = list(regions or ())
    if not regions:
        raise ValueError("regions: select at least one region")
    embodied = params.get("embodied_kgco2e")
    if embodied is not None and not (math.isfinite(embodied) and embodied >= 0):
        raise ValueError(f"embodied: {embodied!r} must be a number >= 0 (kgCO2e per device)")
    acc = _with_embodied(params["accelerator"], embodied)
    common = {"accelerator": acc, "devices": params["devices"], "model": params["model"],
              "global_batch": params["global_batch"], "tokens": params.get("tokens"),
              "pue": params.get("pue")}
    first = estimate(**common, region=regions[0])
    layout = fixed_layout(first)
    rows = []
    for region in regions:
        est = first if region == regions[0] else estimate(**common, region=region, **layout)
        d = est.to_dict()
        box = intervals(est, draws=COMPARE_DRAWS)
        rows.append({"region": d["region"],
                     "name": str(catalog.regions().loc[d["region"], "name"]),
                     "grid_gco2e_per_kwh": d["grid_gco2e_per_kwh"], "pue": d["pue"],
                     "it_energy_mwh": d["it_energy_mwh"],
                     "facility_energy_mwh": d["facility_energy_mwh"],
                     "co2e_t": d["co2e_t"],
                     "embodied_co2e_t": (math.nan if d["embodied_co2e_t"] is None
                                         else d["embodied_co2e_t"]),
                     "wue_l_per_kwh": d["wue_l_per_kwh"],
                     "grid_water_l_per_kwh": d["grid_water_l_per_kwh"],
                     "water_m3": d["water_m3"],
                     "co2e_t_p10": box["co2e_t"][0], "co2e_t_p90": box["co2e_t"][2]})
    return pd.DataFrame(rows).set_index("region")




# --------------------------------------------------------------------------------------
# 06: dollars
# --------------------------------------------------------------------------------------
def _site(params: dict, price_model: str, price_scale: float = 1.0,
          electricity_scale: float = 1.0, assumptions: Assumptions = DEFAULT):
    electricity = params.get("electricity_usd_per_kwh")
    electricity = assumptions.electricity_usd_per_kwh if electricity is None else electricity
    price = params.get("price_per_hour")
    return catalog.site(params.get("region"), pue_value=params.get("pue"),
                        price_usd_per_h=math.nan if price is None else price * price_scale,
                        price_model=price_model,
                        electricity_usd_per_kwh=electricity * electricity_scale)


def _with_capex(accelerator, capex_usd, scale: float = 1.0):
    acc = catalog.accelerator(accelerator) if isinstance(accelerator, str) else accelerator
    capex = acc.capex_usd if capex_usd is None else float(capex_usd)
    return replace(acc, capex_usd=capex * scale)


def rent_vs_own(params: dict, assumptions: Assumptions = DEFAULT) -> pd.DataFrame:
    """The same run rented by the device-hour and on devices you own.

    Parameters
    ----------
    params : dict
        ``accelerator``, ``model``, ``devices``, ``global_batch``, optional ``tokens``,
        ``region``, ``pue``, ``price_per_hour`` [USD/h] (None: catalog),
        ``capex_usd`` [USD per device] (None: catalog) and
        ``electricity_usd_per_kwh`` [USD/kWh] (None: the assumption's default).

    Returns
    -------
    pandas.DataFrame
        Indexed ``rent`` and ``own``: ``cost_usd``, its parts ``rent_usd``,
        ``depreciation_usd`` and ``electricity_usd``, ``device_hours`` [h],
        ``facility_energy_mwh``, ``note``; and in ``attrs``:
        ``break_even_price_usd_per_h`` (the rental price at which renting costs what
        owning does) and ``break_even_utilisation`` (the share of their life owned
        devices must be busy for owning to cost what renting does).

    Raises
    ------
    ValueError
        The estimate's one-line message for an input it rejects.

    Notes
    -----
    Ownership (:func:`traincost.footprint.ownership_cost_usd`) charges the run its
    device-hours' share of straight-line depreciation, capex x (1 +
    ``ownership_system_overhead_fraction``, the servers and network around the chips) x
    device-hours / life hours, and of the building's
    (:func:`traincost.footprint.facility_depreciation_usd`), plus its electricity at the
    plug; it assumes the devices and the building are busy all their life. If they are busy only a share u of it, each used hour carries 1/u of the
    depreciation, so owning costs depreciation/u + electricity, which equals the rent at
    u = depreciation / (rent - electricity).
    """
    acc = _with_capex(params["accelerator"], params.get("capex_usd"))
    common = {"accelerator": acc, "devices": params["devices"], "model": params["model"],
              "global_batch": params["global_batch"], "tokens": params.get("tokens"),
              "assumptions": assumptions}
    rent = estimate(**common, site=_site(params, "rental", assumptions=assumptions))
    own = estimate(**common, site=_site(params, "ownership", assumptions=assumptions),
                   **fixed_layout(rent))
    r, o = rent.to_dict(), own.to_dict()
    electricity = own.electricity_usd                # the ownership cost's parts, as evaluated
    own_cost = math.nan if o["cost_usd"] is None else o["cost_usd"]
    rent_cost = math.nan if r["cost_usd"] is None else r["cost_usd"]
    table = pd.DataFrame({
        "cost_usd": [rent_cost, own_cost],
        "rent_usd": [rent_cost, 0.0],
        "depreciation_usd": [0.0, own.depreciation_usd],
        "electricity_usd": [0.0, electricity if math.isfinite(own_cost) else math.nan],
        "device_hours": [r["device_hours"], o["device_hours"]],
        "train_time_days": [r["train_time_days"], o["train_time_days"]],
        "facility_energy_mwh": [r["facility_energy_mwh"], o["facility_energy_mwh"]],
        "note": ["" if math.isfinite(rent_cost) else
                 f"no rental price for {acc.id} in the catalog: give one",
                 "" if math.isfinite(own_cost) else
                 f"no purchase price for {acc.id} in the catalog: give one"],
    }, index=pd.Index(["rent", "own"], name="price model"))
    depreciation = own.depreciation_usd
    table.attrs["break_even_price_usd_per_h"] = own_cost / o["device_hours"]
    table.attrs["break_even_utilisation"] = (depreciation / (rent_cost - electricity)
                                             if rent_cost > electricity else math.nan)
    table.attrs["lifetime_h"] = assumptions.ownership_lifetime_years * HOURS_PER_YEAR
    table.attrs["layout"] = fixed_layout(rent)
    return table


#: scenario names of :func:`price_sensitivity`'s columns
SENSITIVITY_SCENARIOS = ("rent: price per device-hour", "own: purchase price",
                         "own: electricity price")


def price_sensitivity(params: dict, percents=(50, 75, 100, 125, 150, 200),
                      assumptions: Assumptions = DEFAULT) -> pd.DataFrame:
    """Cost of one run as one price at a time moves from its catalog value.

    Parameters
    ----------
    params : dict
        As for :func:`rent_vs_own`.
    percents : sequence of float
        Each price as a share of its base value, > 0 (a price of 0 is not a price). [%]

    Returns
    -------
    pandas.DataFrame
        Indexed by percent; one column per scenario of :data:`SENSITIVITY_SCENARIOS`
        that has a base price (a column of NaN otherwise) [USD]. Each value is a full
        estimate at that price (layout fixed), so linearity is a result, not an input.

    Raises
    ------
    ValueError
        ``percents: ...`` for a share <= 0, or the estimate's one-line message.
    """
    percents = [float(p) for p in percents]
    if not percents or min(percents) <= 0:
        raise ValueError("percents: give shares of the catalog price > 0")
    acc = catalog.accelerator(params["accelerator"]) if isinstance(
        params["accelerator"], str) else params["accelerator"]
    common = {"devices": params["devices"], "model": params["model"],
              "global_batch": params["global_batch"], "tokens": params.get("tokens"),
              "assumptions": assumptions}
    base = estimate(accelerator=_with_capex(acc, params.get("capex_usd")), **common,
                    site=_site(params, "rental", assumptions=assumptions))
    layout = fixed_layout(base)
    rental_price = params.get("price_per_hour")
    rental_price = acc.price_usd_per_h if rental_price is None else rental_price
    cols = {name: [] for name in SENSITIVITY_SCENARIOS}
    for pct in percents:
        s = pct / 100.0
        rent = estimate(accelerator=acc, **common, **layout,
                        site=_site({**params, "price_per_hour": rental_price * s},
                                   "rental", assumptions=assumptions))
        own_capex = estimate(accelerator=_with_capex(acc, params.get("capex_usd"), s),
                             **common, **layout,
                             site=_site(params, "ownership", assumptions=assumptions))
        own_power = estimate(accelerator=_with_capex(acc, params.get("capex_usd")),
                             **common, **layout,
                             site=_site(params, "ownership", electricity_scale=s,
                                        assumptions=assumptions))
        for name, est in zip(SENSITIVITY_SCENARIOS, (rent, own_capex, own_power)):
            cost = est.to_dict()["cost_usd"]
            cols[name].append(math.nan if cost is None else cost)
    return pd.DataFrame(cols, index=pd.Index(percents, name="percent of catalog price"))


def deadline_candidates(params: dict, accelerators, device_counts) -> pd.DataFrame:
    """:func:`traincost.compare` at every device count: one row per (accelerator, count).

    Parameters
    ----------
    params : dict
        ``model``, ``global_batch``, optional ``tokens``, ``region``, ``price_per_hour``.
    accelerators : sequence of str
        Accelerator ids.
    device_counts : sequence of int
        Device counts to try for each accelerator. [-]

    Returns
    -------
    pandas.DataFrame
        Indexed ``"<accelerator>@<devices>"`` with ``accelerator``, ``devices``, the
        columns of :data:`traincost.estimate.COMPARE_COLUMNS` and the 80% bands of
        ``compare(uncertainty=True)`` (``train_time_days_p10``, ``cost_usd_p90``, ...).

    Raises
    ------
    ValueError
        ``accelerators: ...`` or ``devices: ...`` when none is given, the estimate's
        message, or every candidate's reason when none can run.
    """
    accelerators = list(accelerators or ())
    counts = [int(n) for n in (device_counts or ())]
    if not accelerators:
        raise ValueError("accelerators: select at least one accelerator")
    if not counts:
        raise ValueError("devices: give at least one device count")
    frames = []
    for n in counts:
        df = compare(accelerators, n, model=params["model"],
                     global_batch=params["global_batch"], tokens=params.get("tokens"),
                     region=params.get("region"),
                     price_per_hour=params.get("price_per_hour"), uncertainty=True)
        frames.append(df.reset_index())
    out = pd.concat(frames, ignore_index=True)
    if out["fits_in_memory"].isna().all():           # nothing can run: say why, once
        raise ValueError("; ".join(dict.fromkeys(out["note"])))
    out.index = [f"{a}@{int(n)}" for a, n in zip(out["accelerator"], out["devices"])]
    return out


def pick_cheapest(candidates: pd.DataFrame, deadline_days: float):
    """Keep the candidates that finish by the deadline; the cheapest wins.

    Parameters
    ----------
    candidates : pandas.DataFrame
        :func:`deadline_candidates`' table.
    deadline_days : float
        Latest acceptable training time. [days]

    Returns
    -------
    (pandas.DataFrame, label or None)
        The table with a ``status`` column (``meets deadline``, ``misses deadline``,
        ``does not fit``, ``cannot run``, ``no price``), and the winner's index label
        (the lowest ``cost_usd`` among those meeting the deadline; ties go to the
        shorter run), or None when nothing meets it.
    """
    if not (isinstance(deadline_days, (int, float)) and math.isfinite(deadline_days)
            and deadline_days > 0):
        raise ValueError(f"deadline: {deadline_days!r} must be a number of days > 0")
    df = candidates.copy()
    days = pd.to_numeric(df["train_time_days"], errors="coerce")
    cost = pd.to_numeric(df["cost_usd"], errors="coerce")
    status = []
    for fits, d, c in zip(df["fits_in_memory"], days, cost):
        if pd.isna(fits):
            status.append("cannot run")
        elif not bool(fits):
            status.append("does not fit")
        elif pd.isna(c):
            status.append("no price")
        elif d > deadline_days:
            status.append("misses deadline")
        else:
            status.append("meets deadline")
    df["status"] = status
    ok = df["status"] == "meets deadline"
    if not ok.any():
        return df, None
    order = pd.DataFrame({"cost": cost[ok], "days": days[ok]}).sort_values(["cost", "days"])
    return df, order.index[0]


#: site-link bandwidths notebook 09 sweeps, each direction: a commodity WAN port to a
#: building mesh [Gb/s]
SITE_LINK_GBPS = (10, 40, 100, 400, 1600, 6400)
#: the placements compared, labelled as the chart and the widget label them
SITE_PLACEMENTS = {"data parallel crosses": "dp", "pipeline crosses": "pp"}


def site_link_sweep(params: dict, gbps=SITE_LINK_GBPS) -> pd.DataFrame:
    """Step time of one run over ``params["sites"]`` sites at each link bandwidth, for each
    placement (its layout searched at each point). [s]

    ``params`` holds :func:`traincost.estimate` keywords (``accelerator``, ``devices``,
    ``model``, ``global_batch``, ``sites``, ``site_link_latency_ms``, ...). Returns a
    DataFrame indexed by the bandwidth [Gb/s], one column per :data:`SITE_PLACEMENTS`
    entry; NaN where a placement has no valid layout (its reason is the estimate's
    error, e.g. no pipeline deep enough to split).
    """
    out = {}
    for label, placement in SITE_PLACEMENTS.items():
        col = []
        for g in gbps:
            try:
                col.append(estimate(**{**params, "site_link_gbps": float(g),
                                       "cross_site": placement}).step_time_s)
            except LayoutError:
                col.append(math.nan)
        out[label] = col
    return pd.DataFrame(out, index=pd.Index([float(g) for g in gbps], name="site_link_gbps"))
