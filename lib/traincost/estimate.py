"""One configuration in, a full estimate out; and the same over many accelerators.

:func:`estimate` is the one-row case of :func:`traincost.model.evaluate`: it turns the
input dataclasses into columns (:func:`columns`), searches the layout knobs left open
(the same formulas, evaluated over all candidate layouts at once) and wraps the chosen
row in an :class:`Estimate` that can show its breakdown and its assumptions.

Examples
--------
>>> import traincost
>>> est = traincost.estimate(accelerator="a100-sxm4-80gb", devices=64, model="llama2-7b",
...                          global_batch=1024, tokens=2e12, tp=1, pp=1, zero=1,
...                          micro_batch=1, recompute="selective")
>>> 0.2 < est.mfu < 0.7
True
"""

from __future__ import annotations

import datetime
import math
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:                       # pandas is imported where a table is built
    import pandas as pd

from . import calibration, catalog, caveats, footprint, layout, options
from .assemble import (STACK_INPUTS, Inputs, columns, eager_elementwise, fixed_knobs,
                       framework_knobs, grid_months, job_inputs, site_knobs, site_link, system)
from .catalog import precision_group
from .assumptions import DEFAULT, Assumptions, describe
from .inputs import (OVERLAP_KINDS, Accelerator, Job, ParallelConfig, Site, Stack, System,
                     Workload)
from .model import MEMORY_PARTS, OUTPUTS, STEP_PARTS, evaluate, report_units
from .search import fastest_fitting
from .uncertainty import BAND_DRAWS, check_seed
from .units import (BITS_PER_BYTE, GIB, GIGA, GRAMS_PER_TONNE, JOULES_PER_MWH, MILLI,
                    SECONDS_PER_MONTH, SECONDS_PER_YEAR)

#: the bases embodied carbon is reported on (JSON ``embodied_co2e_t_by_basis``): the die
#: alone (LLMCarbon), the accelerator package, the whole server per accelerator
EMBODIED_BASES = ("die", "chip", "server")



def _loso() -> str:
    """The headline accuracy in words: leave-one-source-out over every fitted run."""
    m = calibration.METRICS
    return (f"{m['loso_mape_pct']:.1f}% over every fitted run with its source document held "
            f"out ({m['loso_sources']} documents)")


@dataclass(frozen=True)
class Estimate:
    """A full estimate for one configuration: inputs, outputs (SI) and breakdowns."""

    system: System
    workload: Workload
    job: Job
    stack: Stack
    parallel: ParallelConfig
    site: Site
    precision: str
    values: dict
    assumptions: Assumptions = DEFAULT
    chosen_by_search: tuple = field(default=())
    layouts_evaluated: int = 1
    #: p10/p50/p90 of the outputs under the model's measured error, when asked for
    #: (:func:`traincost.uncertainty.intervals`); None otherwise
    intervals: dict | None = None
    #: each drawn input's share of the intervals' variance, when asked for
    #: (:func:`traincost.uncertainty.sensitivity`); None otherwise
    sensitivity: dict | None = None
    #: each site's own Site in a run over several regions (``site_regions``); empty: every
    #: site is :attr:`site`
    site_regions: tuple = ()

    @property
    def accelerator(self) -> Accelerator:
        """The device (:attr:`system`'s)."""
        return self.system.accelerator

    @property
    def devices(self) -> int:
        """Number of devices (:attr:`system`'s). [-]"""
        return self.system.devices

    @property
    def inputs(self) -> Inputs:
        """The model, job, stack and site, as :func:`traincost.assemble.columns` takes them."""
        return Inputs(self.workload, self.job, self.stack, self.site, self.site_regions)

    def site_parts(self) -> list:
        """Each site's share of the run (one entry on one site): its region, devices, PUE,
        annual grid intensity and the intensity over the run's months (``grid_run_``, the
        annual figure for an undated run) [gCO2e/kWh], IT and facility energy [MWh],
        operational emissions [tCO2e], cost [USD] and water [m3]
        (:func:`traincost.footprint.site_parts`); the shares sum to the totals."""
        sites = self.inputs.site_list(self.system.sites)
        v = self.values
        months = v["train_time_s"] / SECONDS_PER_MONTH
        run_grid = [x.grid_gco2e_per_kwh * (1.0 if f is None else float(
            footprint.window_mean_factor(f[0], self.job.start_month, months)))
            for x, f in ((x, grid_months(self.job, x)) for x in sites)]
        parts = footprint.site_parts(v["it_energy_j"], [x.pue for x in sites], run_grid,
                                     v["cost_usd"], v["electricity_usd"],
                                     [x.wue_l_per_kwh for x in sites],
                                     [x.grid_water_l_per_kwh for x in sites])
        n = self.system.devices // self.system.sites
        return [{"region": x.region, "devices": n, "pue": x.pue,
                 "grid_gco2e_per_kwh": x.grid_gco2e_per_kwh, "grid_run_gco2e_per_kwh": g,
                 "it_energy_mwh": it / JOULES_PER_MWH, "facility_energy_mwh": fac / JOULES_PER_MWH,
                 "co2e_t": co2 / GRAMS_PER_TONNE, "cost_usd": _finite_or_none(cost),
                 "water_m3": _finite_or_none(on + off)}
                for x, g, (it, fac, co2, cost, on, off) in zip(sites, run_grid, parts)]

    # --- presentation at the edges (units converted in model.report_units only) --------
    @property
    def report(self) -> dict:
        """Scalar contract columns in edge units (days, MWh, tCO2e, GiB, TFLOP/s)."""
        return report_units(self.values)

    @property
    def train_time_days(self) -> float:
        return self.report["train_time_days"]

    def step_breakdown_s(self) -> dict:
        """Step-time parts [s]: compute, exposed communication per kind, the expected wait for
        stragglers, bubble, optimizer."""
        return {k: self.values[f"step_{k}_s"] for k in STEP_PARTS}

    def memory_breakdown_gib(self) -> dict:
        """Memory parts per device [GiB]."""
        r = self.report
        return {k: r[f"memory_{k}_gib"] for k in MEMORY_PARTS}

    @property
    def caveats(self) -> list:
        """Where this estimate leans on the least-tested parts of the model (plain text):
        the rules of :data:`traincost.caveats.RULES` that apply, each with its source."""
        return caveats.caveats(self)

    @property
    def validation(self) -> dict:
        """How far the model lands from published runs like this one, out of sample.

        The calibration's leave-one-out errors (each published run predicted by constants
        fitted without it; ``python -m traincost.calibrate``) over the runs on this
        accelerator in this precision group (:func:`precision_group`), beside the same over
        every run of the group. A device with no published run in the calibration has
        ``accelerator_runs = 0`` and no error of its own.

        Returns
        -------
        dict: ``group``, ``accelerator_runs``, ``accelerator_loo_mape_pct``,
        ``accelerator_loo_worst_pct`` (None without runs), ``runs``, ``loo_mape_pct``,
        ``loo_worst_pct``. [%]
        """
        group = precision_group(self.precision)
        m = calibration.METRICS
        every = (m["fp8_cases"], m["fp8_loo_mape_pct"], m["fp8_loo_worst_pct"]) \
            if group == "fp8" else (m["cases"], m["loo_mape_pct"], m["loo_worst_pct"])
        own = calibration.BY_ACCELERATOR.get((self.accelerator.id, group))
        return {"group": group,
                "accelerator_runs": own[0] if own else 0,
                "accelerator_loo_mape_pct": own[2] if own else None,
                "accelerator_loo_worst_pct": own[3] if own else None,
                "runs": every[0], "loo_mape_pct": every[1], "loo_worst_pct": every[2]}

    def accuracy_note(self) -> str:
        """:attr:`validation` in one sentence (plain text)."""
        v, acc = self.validation, self.accelerator.id
        if v["accelerator_runs"]:
            return (f"out of sample, {v['accelerator_loo_mape_pct']:.1f}% mean and "
                    f"{v['accelerator_loo_worst_pct']:.1f}% worst error on the "
                    f"{v['accelerator_runs']} published {v['group']} runs on {acc} "
                    f"(leave-one-out throughput; {v['loo_mape_pct']:.1f}% over the reference "
                    f"stack's {v['runs']}, {_loso()}; traincost validate)")
        return (f"no published {v['group']} run on {acc} checks this estimate; over the "
                f"reference stack's {v['runs']} runs on other devices the out-of-sample error "
                f"is {v['loo_mape_pct']:.1f}% mean, {v['loo_worst_pct']:.1f}% worst "
                f"(leave-one-out throughput; {_loso()}; traincost validate), and this device's "
                "is unknown")

    def _stack(self) -> dict:
        """The software stack as run: every declared stack input (flags as booleans, the
        overlaps as a list, the element-wise mode ``auto`` resolved to ``eager`` or
        ``fused``) and the attention kernel ``auto`` resolved to."""
        st = self.stack
        stack = {k: (bool(getattr(st, k)) if options.option(k).kind == "bool"
                     else getattr(st, k)) for k in STACK_INPUTS}
        stack["overlap"] = [k for k in OVERLAP_KINDS if k in st.overlaps]
        stack["elementwise"] = "eager" if eager_elementwise(st) else "fused"
        stack["attention_kernel_used"] = self.accelerator.attention_kernel_used(
            st.attention_kernel)
        return stack

    def to_dict(self) -> dict:
        """The public JSON contract (its keys are listed in README.md, "What it answers")."""
        r = self.report
        p = self.parallel
        embodied = self.embodied_by_basis()
        flat = ("params", "active_params", "model_flop_per_token", "hardware_flop_per_token",
                "step_time_s", "tokens_per_s", "mfu", "hfu", "model_tflops_per_device",
                "hardware_tflops_per_device", "memory_gib_per_device")
        after = ("goodput", "train_time_days", "device_hours", "avg_power_w_per_device",
                 "it_energy_mwh", "facility_energy_mwh")
        return {
            "accelerator": self.accelerator.id,
            "devices": self.devices,
            "precision": self.precision,
            "workload": self.workload.name,
            "stack": self._stack(),
            "parallel": {"tp": p.tp, "pp": p.pp, "dp": int(r["dp"]), "cp": p.cp, "ep": p.ep,
                         "vpp": p.vpp, "zero": p.zero, "micro_batch": p.micro_batch,
                         "recompute": p.recompute,
                         "cross_site": p.cross_site if self.system.sites > 1 else None,
                         "num_microbatches": int(r["num_microbatches"]),
                         "chosen_by_search": list(self.chosen_by_search),
                         "layouts_evaluated": self.layouts_evaluated},
            **{k: r[k] for k in flat},
            "hbm_gib_per_device": self.accelerator.hbm_bytes / GIB,
            "fits_in_memory": bool(r["fits_in_memory"]),
            # activation offload (recompute "offload"): what sits in host memory, and the
            # host memory a device has in its reference system (None: unpublished)
            "offloaded_gib_per_device": r["offloaded_gib_per_device"],
            "host_memory_gib_per_device": _finite_or_none(self.accelerator.host_memory_bytes
                                                          / GIB),
            "tokens": self.job.tokens,
            **{k: r[k] for k in after},
            "power_cap_w": _finite_or_none(self.system.power_cap_w),
            "network": {"scale_up_domain": self.system.domain_devices,
                        "scale_up_gbps": _finite_or_none(self.system.scaleup_bw
                                                         * BITS_PER_BYTE / GIGA),
                        "scale_out_gbps": _finite_or_none(self.system.scaleout_bw
                                                          * BITS_PER_BYTE / GIGA),
                        "oversubscription": self.system.scaleout_oversubscription,
                        **self._site_link()},
            "sites": self.site_parts(),
            "pue": self.site.pue,
            "grid_gco2e_per_kwh": self.site.grid_gco2e_per_kwh,
            "region": self.site.region,
            "grid_profile": self.grid_profile(),
            "co2e_t": r["co2e_t"],
            "embodied_co2e_t": _finite_or_none(r["embodied_co2e_t"]),
            "embodied_co2e_t_by_basis": embodied[0],
            "water_m3": _finite_or_none(r["water_m3"]),
            "water_onsite_m3": _finite_or_none(r["water_onsite_m3"]),
            "water_offsite_m3": _finite_or_none(r["water_offsite_m3"]),
            "wue_l_per_kwh": _finite_or_none(self.site.wue_l_per_kwh),
            "grid_water_l_per_kwh": _finite_or_none(self.site.grid_water_l_per_kwh),
            "cost_usd": _finite_or_none(r["cost_usd"]),
            "price_model": self.site.price_model,
            "breakdown": {
                "step_time_s": self.step_breakdown_s(),
                "memory_gib": self.memory_breakdown_gib(),
                "power_w": {"device": r["device_power_w"], "host": r["host_power_w"],
                            "busy_fraction": r["busy_fraction"]},
            },
            "sources": {"pue": self.site.pue_source, "grid": self.site.grid_source,
                        "wue": self.site.wue_source, "grid_water": self.site.water_source,
                        "embodied": embodied[1], "price": self.price_source()},
            "caveats": self.caveats,
            "validation": self.validation,
            "accuracy": self.accuracy_note(),
            **({"intervals": self.intervals} if self.intervals is not None else {}),
            **({"sensitivity": self.sensitivity} if self.sensitivity is not None else {}),
        }

    def price_source(self) -> str:
        """Where the cost's price comes from: the device-hour price (rental) or the purchase
        price (ownership) of the accelerator's catalog row (``data/accelerators.csv``: kind,
        provider, date and source; purchase: date and source), ``given`` when the caller set
        it, ``''`` when there is none (the cost is then None). [-]"""
        acc, site = self.accelerator, self.site
        row = catalog.by_id("accelerators").get(acc.id)
        if site.price_model == "ownership":
            if math.isnan(acc.capex_usd):
                return ""
            if row is not None and row["capex_usd"] == acc.capex_usd:
                return (f"purchase price of {row['capex_date']}: {row['capex_source']}; servers "
                        "and network as assumptions.ownership_system_overhead_fraction, the "
                        "building as facility_capex_usd_per_w")
            return "given"
        if not math.isnan(site.price_usd_per_h):
            return "given"
        if math.isnan(acc.price_usd_per_h):
            return ""
        if row is not None and row["price_usd_per_h"] == acc.price_usd_per_h:
            return (f"{row['price_kind']} price, {row['price_provider']}, {row['price_date']}: "
                    f"{row['price_source']}")
        return "given"

    def embodied_by_basis(self) -> tuple[dict, dict]:
        """The run's share of its devices' embodied carbon on each basis there is a figure
        for (:func:`traincost.catalog.embodied_bases`: ``die``, ``chip``, ``server``;
        None where there is none), amortised as :func:`traincost.footprint.embodied_co2e_g`
        does over ``assumptions.embodied_lifetime_years``, and each basis' source:
        ``({basis: tCO2e or None}, {basis: source})``."""
        a = self.assumptions
        bases = catalog.embodied_bases(self.accelerator.id, a.server_host_embodied_kgco2e)
        life_s = a.embodied_lifetime_years * SECONDS_PER_YEAR
        tonnes = {b: (footprint.embodied_co2e_g(bases[b][0], self.devices,
                                                self.values["train_time_s"], life_s)
                      / GRAMS_PER_TONNE if b in bases else None)
                  for b in EMBODIED_BASES}
        return tonnes, {b: src for b, (_, src) in bases.items()}

    def grid_profile(self) -> dict:
        """The grid intensity the carbon used: ``basis`` ``monthly`` (a start date and the
        region's country in ``data/grid_monthly.csv``; over several regions, at least one
        site's, :func:`traincost.assemble.pooled_grid_months`) or ``annual``, the run's ``start``
        and ``end`` dates (``end`` None past the calendar's last day, 9999-12-31), the
        intensity over its months and the annual figure
        [gCO2e/kWh], and their ``source``."""
        start, g = self.job.start, self.site.grid_gco2e_per_kwh
        found = grid_months(self.job, self.site)
        end = None
        if start is not None:
            try:
                end = (datetime.date.fromisoformat(start) + datetime.timedelta(
                    days=float(self.report["train_time_days"]))).isoformat()
            except (OverflowError, ValueError):   # past 9999-12-31, or no finite duration
                end = None
        source = self.site.grid_source
        if found is not None:
            source = f"{source}; by month, the seasonal shape of {found[1]}"
        elif start is not None:
            source = f"{source}; no monthly figures for this region: the annual figure"
        return {"basis": "monthly" if found is not None else "annual", "start": start,
                "end": end, "gco2e_per_kwh": g * float(self.report["grid_factor"]),
                "annual_gco2e_per_kwh": g, "source": source}

    def _site_link(self) -> dict:
        """The site-pair link used (None on one site): Gb/s each direction, ms one way."""
        if self.system.sites == 1:
            return {"site_link_gbps": None, "site_link_latency_ms": None}
        bw, lat = site_link(self.system, self.assumptions)
        return {"site_link_gbps": _finite_or_none(bw * BITS_PER_BYTE / GIGA),
                "site_link_latency_ms": lat / MILLI}

    def assumptions_table(self) -> pd.DataFrame:
        """The modelling assumptions behind this estimate (value, unit, source, rationale)."""
        return describe(self.assumptions)


def _output(name: str, unit: str, meaning: str) -> property:
    def get(self):
        return self.values[name]
    get.__name__ = name
    return property(get, doc=f"{meaning[0].upper()}{meaning[1:]}. [{unit}]")


# the outputs of model.evaluate as read-only attributes, declared once in model.OUTPUTS and
# the breakdown parts (est.mfu, est.step_time_s, est.step_bubble_s, ...)
for _name, _unit, _meaning in (*OUTPUTS, *((f"step_{k}_s", "s", f"step time part: {k}")
                                           for k in STEP_PARTS),
                               *((f"memory_{k}_bytes", "bytes", f"memory part: {k}")
                                 for k in MEMORY_PARTS)):
    if not hasattr(Estimate, _name):
        setattr(Estimate, _name, _output(_name, _unit, _meaning))


def attention_label(stack: dict) -> str:
    """The attention kernel an estimate ran (``to_dict()["stack"]``), marked when ``auto``
    chose it: ``"cudnn (auto)"``, ``"flash"``. [-]"""
    used = stack["attention_kernel_used"]
    return f"{used} (auto)" if stack["attention_kernel"] == "auto" else used


def _finite_or_none(x):
    x = float(x)
    return x if math.isfinite(x) else None


def _scalarise(values: dict, i: int) -> dict:
    """Row i of evaluate()'s outputs (which mix scalars and arrays) as Python scalars."""
    out = {}
    for k, v in values.items():
        arr = np.asarray(v).reshape(-1)
        x = arr[i if arr.size > 1 else 0]
        out[k] = bool(x) if arr.dtype == bool else float(x)
    return out


def estimate(accelerator=None, devices=None, *, workload: Workload | None = None,
             job: Job | None = None, stack: Stack | None = None,
             parallel: ParallelConfig | None = None, system: System | None = None,
             site: Site | None = None, assumptions: Assumptions = DEFAULT,
             uncertainty: bool = False, seed: int = 0, **inputs) -> Estimate:
    """Estimate time, energy, carbon and cost of one training run.

    Every ``traincost estimate`` flag is a keyword here (dashes become underscores), each
    declared once in :data:`traincost.options.INPUTS`. Layout knobs left as ``None`` are
    chosen by evaluating every valid candidate layout with the same formulas and keeping
    the fastest that fits in memory (if none fits, the one needing the least memory,
    reported with ``fits_in_memory=False``).

    Parameters
    ----------
    accelerator : str or Accelerator
        Catalog id or object (or give ``system``).
    devices : int
        Number of devices (or give ``system``). [-]
    workload, job, stack, site : Workload, Job, Stack, Site, optional
        Instead of the keywords of each container (the architecture; the sequence, batch
        and tokens; the software stack; the grid, PUE and prices). Giving an object and
        one of its own keywords is refused.
    parallel : ParallelConfig, optional
        The layout knobs fixed (None in it: searched), instead of the layout keywords.
    system : System, optional
        The accelerator, device count, power limit and network tiers, instead of
        ``accelerator``, ``devices`` and the system keywords (``power_cap``,
        ``scale_up_domain``, ``scale_up_gbps``, ``scale_out_gbps``).
    assumptions : Assumptions
        Modelling defaults. [-]
    uncertainty : bool
        Also give the p10/p50/p90 of the outputs under the model's measured error and the
        sourced input ranges (``Estimate.intervals``, :func:`traincost.uncertainty.intervals`),
        and what each range comes from (``Estimate.sensitivity``,
        :func:`traincost.uncertainty.sensitivity`). [-]
    seed : int
        Seed of those Monte Carlo draws: the same seed, the same intervals. [-]

    Returns
    -------
    Estimate
    """
    given = options.bind("estimate", inputs)
    sys_ = _system(accelerator, devices, system,
                   {k: given[k] for k in options.SYSTEM_INPUTS})
    spec = job_inputs(workload, job, stack, site, assumptions=assumptions,
                      **{k: given[k] for k in options.JOB_INPUTS})
    acc, devices = sys_.accelerator, sys_.devices
    precision = given["precision"]
    if precision is None:
        precision = acc.default_precision
    acc.peak_flop_per_s(precision)                      # raises for a missing precision
    layout_given = {k: given[k] for k in options.LAYOUT_INPUTS}
    fixed = site_knobs(framework_knobs(fixed_knobs(**layout_given, parallel=parallel),
                                       spec.stack), sys_.sites, spec)
    open_knobs = tuple(k for k, val in fixed.items() if val is None)
    few = _few_valid_layouts(fixed, spec, sys_) if open_knobs else None
    if not open_knobs or few is not None:
        lay = few or {k: np.asarray([v]) for k, v in fixed.items()}
        evaluated = len(next(iter(lay.values())))
        if few is None:
            layout.check({**layout.arch_columns(spec, devices, sys_.sites),
                          **{k: int(v[0]) for k, v in lay.items()}})
        with np.errstate(divide="ignore", invalid="ignore"):
            out = evaluate(columns(sys_, spec, precision, lay, assumptions), assumptions)
        i = _chosen_row(out, evaluated, devices, acc)   # raises for an unknown link
        values = _scalarise(out, i)
        chosen = {k: layout.knob_value(k, v[i]) for k, v in lay.items()}
    else:
        # the fastest layout that fits (headroom 0: fits_in_memory's own test), else the one
        # needing the least memory, with its outputs as the search evaluated them; search
        # raises for no valid layout or no known bandwidth
        chosen, values, evaluated = fastest_fitting(
            sys_, workload=spec.workload, job=spec.job, stack=spec.stack, site=spec.site,
            precision=precision, assumptions=assumptions, parallel=parallel, **layout_given)
    est = Estimate(system=sys_, workload=spec.workload, job=spec.job, stack=spec.stack,
                   parallel=ParallelConfig(**chosen), site=spec.site, precision=precision,
                   values=values, assumptions=assumptions,
                   chosen_by_search=open_knobs, layouts_evaluated=evaluated,
                   site_regions=spec.sites)
    if uncertainty:
        from .uncertainty import intervals, sensitivity
        check_seed(seed)
        est = replace(est, intervals=intervals(est, seed=int(seed)),
                      sensitivity=sensitivity(est, seed=int(seed)))
    return est


#: the most candidate layouts an estimate walks itself (an implementation bound, not a model
#: input): beyond it a search walks them
_DIRECT_LAYOUTS = 64


def _few_valid_layouts(fixed: dict, spec, sys_: System) -> dict | None:
    """The valid layouts, as arrays of knob codes, when the knobs left open span a few
    (tp and pp given: cp, ep and vpp), else None.

    The estimate evaluates them directly and reports the one a search would
    (:func:`_chosen_row`: the fastest that fits, else the least memory), without a
    search's tables (issue 26: a fraction of the time); with more, or none valid, the
    search decides (and names the rule broken when none is valid)."""
    sp = layout.candidate_space(fixed, heads=spec.workload.heads, layers=spec.workload.layers,
                                experts=spec.workload.experts, devices=sys_.devices,
                                domain=sys_.domain_devices, global_batch=spec.job.global_batch,
                                seq_len=spec.job.seq_len, sites=sys_.sites)
    size = layout.space_size(sp)
    if size > _DIRECT_LAYOUTS:
        return None
    lay = layout.candidate_chunk(sp, 0, size)
    ok = layout.valid({**layout.arch_columns(spec, sys_.devices, sys_.sites), **lay})
    if not ok.any():
        return None
    return {k: v[ok] for k, v in lay.items()}


def _system(accelerator, devices, sys_: System | None, knobs: dict) -> System:
    """The System an estimate runs on: ``sys_`` as given, else built from the accelerator,
    device count and the system keywords ``knobs`` (power cap, network tiers; each
    checked); giving both is refused."""
    if sys_ is not None:
        if not isinstance(sys_, System):
            raise ValueError(f"system: {sys_!r} is not a System")
        given = {"accelerator": accelerator, "devices": devices, **knobs}
        for name, val in given.items():
            if val is not None:
                raise ValueError(f"{name.replace('_', '-')}: given beside system=, which "
                                 "already sets it (give the object or the keywords, not both)")
        return sys_
    devices = options.check("devices", devices)
    if devices is None:
        raise ValueError("devices: required (the number of devices)")
    return system(accelerator, devices, **knobs)


options.declare(estimate)


def _chosen_row(out: dict, n: int, devices: int, acc: Accelerator) -> int:
    """The row of ``n`` evaluated layouts to report: the fastest that fits (the least
    memory breaking ties), else the one needing the least memory. ValueError when no row
    has a known step time (a link the catalog gives no figure for)."""
    step = np.broadcast_to(out["step_time_s"], (n,))
    mem = np.broadcast_to(out["memory_bytes_per_device"], (n,))
    known = np.isfinite(step)      # NaN: the layout needs a link the catalog has no figure for
    if not known.any():
        raise ValueError(f"devices: {devices} x {acc.id} needs scale-out bandwidth beyond "
                         f"its {acc.scaleup_domain_devices}-device domain, which the catalog "
                         "does not give")
    fits = np.broadcast_to(out["fits_in_memory"], (n,)) & known
    if fits.any():
        return int(np.flatnonzero(fits)[np.lexsort((mem[fits], step[fits]))[0]])
    return int(np.flatnonzero(known)[np.argmin(mem[known])])


#: columns of :func:`compare`'s table, with their units
COMPARE_COLUMNS = ("accelerator", "devices", "tp", "pp", "dp", "cp", "ep", "vpp", "micro_batch",
                   "recompute", "zero", "attention", "fits_in_memory", "mfu", "train_time_days",
                   "device_hours", "avg_power_w_per_device", "facility_energy_mwh", "co2e_t",
                   "embodied_co2e_t", "cost_usd")


#: the outputs :func:`compare` gives an 80% band for (``<key>_p10``, ``<key>_p90``)
BAND_KEYS = ("train_time_days", "facility_energy_mwh", "co2e_t", "cost_usd")
#: Monte Carlo draws per accelerator of a compared band
COMPARE_DRAWS = BAND_DRAWS


def compare(accelerators, devices, *, uncertainty: bool = False, seed: int = 0,
            **kwargs) -> pd.DataFrame:
    """Estimate one workload on several accelerators; one row each (see COMPARE_COLUMNS).

    ``devices`` is one count for all or a dict {accelerator id: count}. An accelerator
    that cannot run the workload (no layout, missing precision) gets a row with its
    reason in ``note`` instead of numbers. Raises ValueError for a bad input (checked
    against :data:`traincost.options.INPUTS`), for no accelerator, and when no accelerator
    can run the workload at all (then the input, not a device, is at fault).

    With ``uncertainty``, each row also has ``<key>_p10`` and ``<key>_p90`` for the
    outputs of :data:`BAND_KEYS` (:func:`traincost.uncertainty.intervals`, ``seed``,
    :data:`COMPARE_DRAWS` draws): the model's held-out error and the sourced input ranges.
    """
    import pandas as pd
    accelerators = list(accelerators)
    if not accelerators:
        raise ValueError("accelerators: none given (name at least one catalog id)")
    options.bind("compare", {k: v for k, v in kwargs.items()
                             if k not in ("workload", "job", "stack", "parallel", "site",
                                          "assumptions")})
    if uncertainty:
        check_seed(seed)
    rows, errors = [], []
    for acc_id in accelerators:
        n = devices[acc_id] if isinstance(devices, dict) else devices
        try:
            est = estimate(accelerator=acc_id, devices=n, **kwargs)
            d = est.to_dict()
        except ValueError as exc:
            rows.append({"accelerator": acc_id, "devices": n, "note": str(exc)})
            errors.append(exc)
            continue
        row = {k: d.get(k) for k in COMPARE_COLUMNS}
        row.update({k: d["parallel"][k] for k in ("tp", "pp", "dp", "cp", "ep", "vpp",
                                                   "micro_batch", "recompute", "zero")})
        row["attention"] = d["stack"]["attention_kernel_used"]   # auto resolves per device
        row["note"] = "" if d["fits_in_memory"] else "does not fit in memory"
        if uncertainty:
            from .uncertainty import intervals
            box = intervals(est, draws=COMPARE_DRAWS, seed=seed)
            row.update({f"{k}_{q}": box[k][i] for k in BAND_KEYS
                        for i, q in ((0, "p10"), (2, "p90"))})
        rows.append(row)
    if len(errors) == len(accelerators):
        # the same input fails on every accelerator: an input error, not a comparison
        raise errors[0]
    bands = [f"{k}_{q}" for k in BAND_KEYS for q in ("p10", "p90")] if uncertainty else []
    df = pd.DataFrame(rows, columns=[*COMPARE_COLUMNS, "note", *bands]).set_index("accelerator")
    for col in ("devices", "tp", "pp", "dp", "cp", "ep", "vpp", "micro_batch", "zero"):
        df[col] = df[col].astype("Int64")
    return df
