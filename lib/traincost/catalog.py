"""Catalogs: with :mod:`traincost.tables`, the only module that reads files.

* accelerators and model presets from ``data/*.csv`` (shipped as package data
  ``traincost.data`` and read through :mod:`importlib.resources`, so an editable
  install and a built wheel find the same files);
* PUE by operator from ``data/pue.csv``;
* grid carbon intensity from the data CodeCarbon ships (offline): countries (Ember/OWID
  via CodeCarbon), US states (EPA eGRID), Canadian provinces, Google Cloud regions; plus
  ``data/cloud_regions.csv`` mapping AWS and Azure regions to those locations.

Lookups (:func:`accelerator`, :func:`model`, :func:`site`, ...) read rows as dicts
(:func:`records`, the csv module; CodeCarbon's files by their paths, :data:`CODECARBON_FILES`),
so an estimate imports neither pandas nor CodeCarbon; the tables (:func:`accelerators`,
:func:`regions`, ...) are pandas DataFrames, built when asked for.
"""

from __future__ import annotations

import csv
import functools
import importlib.util
import json
import math
from pathlib import Path

from . import calibration
from .assumptions import DEFAULT
from .inputs import Accelerator, Job, Site, Workload
from .tables import by_id, check_table, data_files, read_raw_table, read_table, records, schema
from .units import GRAMS_PER_KG, LBS_PER_KG, TERA

_NUMERIC_ACCELERATOR = (
    "peak_fp32_flop_per_s", "peak_tf32_flop_per_s", "peak_bf16_flop_per_s",
    "peak_fp16_flop_per_s", "peak_fp8_flop_per_s", "mamf_bf16_flop_per_s", "hbm_bytes",
    "hbm_bytes_per_s", "tdp_w", "idle_w", "scaleup_domain_devices", "scaleup_bytes_per_s",
    "scaleout_bytes_per_s", "price_usd_per_h", "capex_usd", "embodied_kgco2e",
    "attention_bf16_flop_per_s", "mamf_fp8_flop_per_s", "attention_cudnn_bf16_flop_per_s",
    "attention_kv_tokens", "allreduce_busbw_fraction", "host_link_bytes_per_s",
    "host_memory_bytes")

#: the operator whose PUE a cloud provider's regions use
PROVIDER_OPERATOR = {"gcp": "google", "aws": "aws", "azure": "microsoft"}

WORLD = "world"


@functools.cache
def accelerators():
    """The accelerator catalog, indexed by id (SI units, see data/README.md; a pandas
    DataFrame)."""
    return read_table("accelerators").set_index("id")


@functools.cache
def measured_mamf_span() -> tuple[float, float]:
    """(lowest, highest) measured bf16 (or fp16) MAMF over dense peak in the catalog, as
    :meth:`Accelerator.mamf_fraction` reads it (NaN default: unmeasured devices drop out). [-]"""
    frac = [accelerator(i).mamf_fraction(math.nan) for i in by_id("accelerators")]
    frac = [f for f in frac if not math.isnan(f)]
    return min(frac), max(frac)


def measured_attention_fractions() -> list[float]:
    """Fused-attention rate over the matmul ceiling (MAMF, bf16) of each catalog device
    with both measured, at its faster measured kernel (``"auto"``) and its benchmark's own
    size; devices without both measurements drop out. [-]"""
    frac = []
    for i in by_id("accelerators"):
        acc = accelerator(i)
        rate = acc.attention_flop_per_s("auto")
        if not math.isnan(rate) and not math.isnan(acc.mamf_bf16_flop_per_s):
            frac.append(rate / acc.mamf_bf16_flop_per_s)
    return frac


def measured_attention_span() -> tuple[float, float]:
    """(lowest, highest) of :func:`measured_attention_fractions`. [-]"""
    frac = measured_attention_fractions()
    return min(frac), max(frac)


def _unknown(kind: str, value, allowed) -> ValueError:
    allowed = list(allowed)
    return ValueError(f"{kind}: unknown {value!r}; allowed: {', '.join(map(str, allowed))}")


@functools.lru_cache(maxsize=256)
def accelerator(accelerator_id: str) -> Accelerator:
    """The :class:`Accelerator` with catalog id ``accelerator_id``."""
    rows = by_id("accelerators")
    key = str(accelerator_id).strip().lower()
    if key not in rows:
        raise _unknown("accelerator", accelerator_id, rows)
    row = rows[key]
    kwargs = {col: float(row[col]) for col in _NUMERIC_ACCELERATOR}
    kwargs["scaleup_domain_devices"] = int(kwargs["scaleup_domain_devices"])
    return Accelerator(id=key, name=str(row["name"]), vendor=str(row["vendor"]),
                       scaleup_topology=str(row["scaleup_topology"]), **kwargs)


@functools.cache
def models():
    """The model preset catalog, indexed by id (a pandas DataFrame)."""
    return read_table("models").set_index("id")


_WORKLOAD_INTS = ("layers", "hidden", "heads", "kv_heads", "ffn_hidden", "vocab", "experts",
                  "top_k", "shared_experts", "moe_ffn_hidden", "dense_layers", "q_lora_rank",
                  "kv_lora_rank", "qk_rope_head_dim", "head_dim", "v_head_dim", "route_nodes",
                  "mtp_depth", "attention_window", "window_layers")


def _model_row(model_id: str) -> dict:
    rows = by_id("models")
    key = str(model_id).strip().lower()
    if key not in rows:
        raise _unknown("model", model_id, rows)
    return rows[key]


@functools.lru_cache(maxsize=1024)
def model(model_id: str) -> Workload:
    """A preset's architecture as a :class:`Workload` (its job: :func:`job`).

    Parameters
    ----------
    model_id : str
        Preset id (``traincost catalog models``).
    """
    row = _model_row(model_id)
    kw = {}
    for col in _WORKLOAD_INTS:
        val = row[col]
        kw[col] = 0 if math.isnan(val) else int(val)
    for col in ("gated_mlp", "tied_embeddings", "learned_positions"):
        kw[col] = bool(int(row[col]))
    kw["attention"] = str(row["attention"])
    return Workload(name=str(row["name"]), **kw)


@functools.lru_cache(maxsize=1024)
def _job_defaults(model_id: str) -> tuple:
    """A preset's sequence length and reported training tokens (None where not reported);
    read once: every estimate of a preset asks for them."""
    row = _model_row(model_id)
    tokens = row.get("tokens_reported")
    return int(row["seq_len"]), (None if math.isnan(tokens) else float(tokens))


def job(model_id: str | None = None, *, seq_len: int | None = None, global_batch: int = 1024,
        tokens: float | None = None, start: str | None = None) -> Job:
    """A :class:`Job`; ``seq_len`` and ``tokens`` default to preset ``model_id``'s.

    Parameters
    ----------
    model_id : str, optional
        Preset id whose sequence length and reported training tokens are the defaults;
        without one ``seq_len`` is required and ``tokens`` defaults to :class:`Job`'s.
    seq_len : int, optional
        Sequence length; the preset's when omitted. [tokens]
    global_batch : int
        Sequences per step. [-]
    tokens : float, optional
        Training tokens; the preset's reported figure when omitted. [tokens]
    start : str, optional
        Start date ``YYYY-MM-DD`` (None: the grid's annual average). [-]

    >>> job("llama2-7b").seq_len
    4096
    """
    kw = {}
    if model_id is not None:
        preset_seq, preset_tokens = _job_defaults(str(model_id))
        seq_len = preset_seq if seq_len is None else seq_len
        tokens = preset_tokens if tokens is None else tokens
    if seq_len is None:
        raise ValueError("seq-len: required unless --model is given")
    if tokens is not None:
        kw["tokens"] = tokens                    # else the Job's default
    return Job(seq_len=seq_len, global_batch=global_batch, start=start, **kw)


#: the framework whose runs fix traincost's shared efficiency constants (factor 1)
REFERENCE_FRAMEWORK = "megatron"
#: the accelerator family whose reference-framework runs fit the shared constants: the same
#: framework on another vendor's kernels and collectives (ROCm and RCCL, SynapseAI and HCCL)
#: is that family's own stack, with its own factor (``megatron on AMD``), fitted or borrowed
REFERENCE_FAMILY = "NVIDIA"


@functools.cache
def frameworks():
    """Training frameworks (``data/frameworks.csv``), indexed by id: the defaults each one
    implies (attention kernel, overlaps, sharding) and its notes and sources (a pandas
    DataFrame)."""
    return read_table("frameworks").set_index("id")


def framework(framework_id: str) -> dict:
    """One framework's row (column -> value; NaN where blank); ValueError naming
    ``framework`` and the known ids otherwise."""
    rows = by_id("frameworks")
    if framework_id not in rows:
        raise ValueError(f"framework: {framework_id!r} is not one of {', '.join(rows)}")
    return rows[framework_id]


def accelerator_family(accelerator) -> str:
    """The accelerator's family: its vendor's first word (NVIDIA, AMD, Google, Intel, AWS),
    ``unknown`` for a user's own :class:`~traincost.Accelerator` that names no vendor.

    ``accelerator``: a catalog id or an Accelerator (its own ``vendor``, so a device built
    by hand under a new id has a family too).

    >>> accelerator_family("gaudi2"), accelerator_family("tpu-v5p")
    ('Intel', 'Google')
    >>> from dataclasses import replace
    >>> accelerator_family(replace(accelerator("h100-sxm5-80gb"), id="mine", vendor=""))
    'unknown'
    """
    vendor = accelerator.vendor if isinstance(accelerator, Accelerator) else \
        str(by_id("accelerators")[accelerator]["vendor"])
    return vendor.split()[0] if vendor.strip() else "unknown"


def reference_key() -> str:
    """The factor name of the runs that fit the shared constants: the reference framework
    on the reference family, ``megatron on NVIDIA``."""
    return f"{REFERENCE_FRAMEWORK} on {REFERENCE_FAMILY}"


def factor_key(framework_id: str, accelerator) -> str:
    """The name a framework's efficiency factor is fitted and stored under: the framework
    on one accelerator family (XLA on TPUs and XLA on GPUs are different compilers, and on
    TPUs, where MaxText is the only published stack, the factor also carries the matmul
    ceiling no public measurement states).

    >>> factor_key("maxtext", "tpu-v5p")
    'maxtext on Google'
    """
    return f"{framework_id} on {accelerator_family(accelerator)}"


def device_factor_key(framework_id: str, device) -> str:
    """The name of a framework's factor fitted on one device (``maxtext on tpu-v6e``): a
    device with no measured matmul ceiling whose runs under the framework are enough to fit
    one (``calibrate.FRAMEWORK_MIN_RUNS`` runs from ``calibrate.FRAMEWORK_MIN_DOCUMENTS``
    documents) gets a factor of its own, which then carries that device's ceiling (issue
    21: ceilings for non-NVIDIA devices, fitted from published runs and marked so); ``''``
    for a device whose matmul ceiling was measured (its factor is its family's).

    >>> device_factor_key("maxtext", "tpu-v6e"), device_factor_key("megatron", "mi300x")
    ('maxtext on tpu-v6e', '')
    """
    acc = device if isinstance(device, Accelerator) else accelerator(device)
    if not math.isnan(acc.mamf_bf16_flop_per_s):
        return ""
    return f"{framework_id} on {acc.id}"


def framework_factor(framework_id: str, accelerator) -> tuple[float, str]:
    """(factor, status) of a framework's in-model matmul efficiency on an accelerator's
    family, relative to the reference framework's (:data:`REFERENCE_FRAMEWORK`). [-]

    ``status`` is ``reference`` (factor 1 by definition: the shared constants are fitted on
    its runs, and a run that states no framework, ``unspecified``, gets them too, on a
    family the reference framework has runs on; on another family, e.g. TPUs, it gets the
    factor of the one framework fitted there),
    ``fitted`` (fitted on the framework's own published runs on the device, where the
    device has no measured matmul ceiling and enough runs of its own
    (:func:`device_factor_key`), else on its family's; at least
    ``calibrate.FRAMEWORK_MIN_RUNS`` runs from ``calibrate.FRAMEWORK_MIN_DOCUMENTS``
    documents: data/calibration.json) or ``borrowed`` (too few runs: the reference value,
    flagged in the estimate's caveats).

    The reference framework is the reference only on :data:`REFERENCE_FAMILY`'s devices;
    on another family it is a stack like any other (``megatron on AMD``).

    >>> framework_factor("megatron", "h100-sxm5-80gb")
    (1.0, 'reference')
    """
    name = factor_name(framework_id, accelerator)
    if name:
        return float(calibration.FRAMEWORKS[name]["factor"]), "fitted"
    family = accelerator_family(accelerator)
    if (framework_id == "unspecified" and family in calibration.REFERENCE_FAMILIES) or \
            (framework_id == REFERENCE_FRAMEWORK and family == REFERENCE_FAMILY):
        return 1.0, "reference"
    return 1.0, "borrowed"


def framework_layer_overhead(framework_id: str, accelerator) -> float:
    """Fixed time a framework spends per layer per micro-batch on an accelerator beyond the
    reference stack's, fitted with its factor (:func:`framework_factor`). [s]

    Fitted only for a framework whose host issues every layer's work for every micro-batch
    (data/frameworks.csv ``layer_overhead``: PyTorch eager or per-block compiled modules,
    FSDP's and DeepSpeed's per-module hooks, DeepSpeed's pipeline engine); 0 for the
    reference stack, whose own cost is part of the shared constants, for a stack that
    compiles the whole step into one program (XLA), and wherever the factor is borrowed.

    >>> framework_layer_overhead("megatron", "h100-sxm5-80gb")
    0.0
    >>> framework_layer_overhead("maxtext", "tpu-v5e")
    0.0
    """
    name = factor_name(framework_id, accelerator)
    return float(calibration.FRAMEWORKS[name].get("layer_overhead_s", 0.0)) if name else 0.0


def fits_layer_overhead(framework_id: str) -> bool:
    """Whether a framework's fixed time per layer per micro-batch is fitted with its factor
    (data/frameworks.csv ``layer_overhead`` = 1; see :func:`framework_layer_overhead`). [-]

    >>> fits_layer_overhead("megatron-deepspeed"), fits_layer_overhead("maxtext")
    (True, False)
    """
    return framework(framework_id)["layer_overhead"] == 1


def factor_name(framework_id: str, accelerator) -> str:
    """The name, in data/calibration.json's frameworks, of the fitted factor a framework
    runs with on an accelerator (:func:`framework_factor`): the device's own
    (:func:`device_factor_key`), else its family's (:func:`factor_key`); for an unstated
    framework on a family the reference framework has no run on (TPUs), the one framework
    fitted on the device, else on the family, if there is exactly one. ``''`` where the
    reference's factor applies (the reference itself, or borrowed).

    >>> factor_name("maxtext", "tpu-v5e"), factor_name("megatron", "h100-sxm5-80gb")
    ('maxtext on Google', '')
    """
    framework(framework_id)
    family = accelerator_family(accelerator)
    if framework_id == "unspecified":
        if family in calibration.REFERENCE_FAMILIES:
            return ""
        acc_id = accelerator.id if isinstance(accelerator, Accelerator) else str(accelerator)
        own = [k for k in calibration.FRAMEWORKS if k.endswith(f" on {acc_id}")] or \
            [k for k in calibration.FRAMEWORKS if k.endswith(f" on {family}")]
        return own[0] if len(own) == 1 else ""
    device = device_factor_key(framework_id, accelerator)
    if device in calibration.FRAMEWORKS:
        return device
    if framework_id == REFERENCE_FRAMEWORK and family == REFERENCE_FAMILY:
        return ""
    key = factor_key(framework_id, accelerator)
    return key if key in calibration.FRAMEWORKS else ""


@functools.cache
def published_runs():
    """Published training runs and throughput benchmarks, indexed by case id (a pandas
    DataFrame)."""
    return read_table("published_runs").set_index("id")


def precision_group(precision: str) -> str:
    """The calibration stage whose constants a run at ``precision`` leans on: ``"fp8"``, or
    ``"16-bit"`` for the rest (bf16 and fp16; tf32 and fp32 meet the same constants). [-]"""
    return "fp8" if precision == "fp8" else "16-bit"


@functools.cache
def published_mfu_record(group: str) -> tuple[float, str]:
    """(MFU, case id) of the highest model-FLOP utilisation any measured published run in
    precision ``group`` reached, model gaps left out. [-]

    MFU = the source's own MFU (``reported_mfu``) or its model TFLOP/s per device over the
    device's dense peak at the run's precision; runs that report only hardware TFLOP/s
    (recompute counted, e.g. Megatron-LM SC21) do not enter. A prediction above it beats
    every measurement traincost checks against, and says so (``Estimate.caveats``).
    """
    best = (math.nan, "")
    for case, row in by_id("published_runs").items():
        if row["status"] != "measured" or isinstance(row["model_gap"], str):
            continue
        precision = row["precision"] if isinstance(row["precision"], str) else \
            accelerator(row["accelerator"]).default_precision
        if precision_group(precision) != group:
            continue
        mfu = row["reported_mfu"]
        if math.isnan(mfu):
            peak = accelerator(row["accelerator"]).peak_flop_per_s(precision)
            mfu = row["reported_model_tflops_per_device"] * TERA / peak
        if not math.isnan(mfu) and (math.isnan(best[0]) or mfu > best[0]):
            best = (float(mfu), str(case))
    return best


@functools.cache
def pue_table():
    """PUE by operator, indexed by id (a pandas DataFrame)."""
    return read_table("pue").set_index("id")


@functools.cache
def embodied_table():
    """Embodied carbon per accelerator on a stated basis (``data/embodied.csv``), indexed
    by id: ``chip`` (the package, with its baseboard share where the source counts it) and
    ``server`` (the whole server per accelerator). A pandas DataFrame."""
    return read_table("embodied").set_index("id")


def embodied_bases(accelerator_id: str, host_kgco2e: float) -> dict:
    """Embodied carbon of one device by basis: ``{basis: (kgCO2e, source)}`` for ``die``
    (``data/accelerators.csv``, LLMCarbon's die area), ``chip`` and ``server``
    (``data/embodied.csv``), each present only where a figure exists. A device with a chip
    figure and no server one is given ``chip + host_kgco2e`` (a server's host share per
    accelerator, ``assumptions.server_host_embodied_kgco2e``), its source saying so."""
    out = {}
    acc = by_id("accelerators").get(accelerator_id)
    if acc is not None and acc["embodied_basis"] == "die" \
            and not math.isnan(acc["embodied_kgco2e"]):
        out["die"] = (float(acc["embodied_kgco2e"]), str(acc["embodied_source"]))
    rows = by_id("embodied")
    for basis in ("chip", "server"):
        key = f"{accelerator_id}-{basis}"
        if key in rows:
            row = rows[key]
            out[basis] = (float(row["kgco2e_per_device"]),
                          f"{row['source']} ({row['source_location']})")
    if "chip" in out and "server" not in out:
        out["server"] = (out["chip"][0] + host_kgco2e,
                         f"chip figure + a server's host share per accelerator "
                         f"({host_kgco2e:g} kgCO2e, assumptions.server_host_embodied_kgco2e)")
    return out


@functools.cache
def water_table():
    """Water consumed per kWh (``data/water.csv``), indexed by id: on-site (an operator's
    WUE, per kWh of IT energy) and off-site (a grid's generation, per kWh of electricity).
    A pandas DataFrame."""
    return read_table("water").set_index("id")


@functools.lru_cache(maxsize=64)
def wue(operator: str) -> tuple[float, str]:
    """(on-site water usage effectiveness [L/kWh of IT energy], source) of a
    ``data/pue.csv`` operator id; an operator without its own figure takes
    ``industry-average``'s, and the source says so."""
    onsite = _water("onsite")
    key = str(operator).strip().lower()
    row = onsite.get(key, onsite["industry-average"])
    note = "" if key in onsite else f"no figure for {key}: industry-average's; "
    return float(row["l_per_kwh"]), f"{note}{row['source']} ({row['source_location']})"


@functools.cache
def _water(kind: str) -> dict:
    """``data/water.csv``'s rows of one kind (``onsite``, ``offsite``) by key."""
    return {r["key"]: r for r in records("water") if r["kind"] == kind}


@functools.lru_cache(maxsize=1024)
def grid_water(region: str) -> tuple[float, str]:
    """(water the grid's generation consumes [L/kWh of electricity], source) of a region
    id: the region's own row, else its US state's or country's (a cloud region's by
    ``data/cloud_regions.csv``), else the world average, the source naming which."""
    offsite = _water("offsite")
    key = _region_key(region)
    for candidate in _water_keys(key):
        if candidate in offsite:
            row = offsite[candidate]
            used = "" if candidate == key else f"{candidate}'s figure for {key}: "
            return float(row["l_per_kwh"]), f"{used}{row['source']} ({row['source_location']})"
    raise ValueError(f"data/water.csv: no offsite row for {WORLD!r}")  # pragma: no cover


@functools.lru_cache(maxsize=256)
def grid_month_factors(region: str) -> tuple | None:
    """(twelve factors, source) of a region's grid intensity by calendar month: each
    month's intensity over its year's mean, averaged over the years of
    ``data/grid_monthly.csv`` (Ember's monthly data, 2023-2024), for the region's country
    (a cloud region's or a US state's by its country, the world as itself); None where
    the country has no monthly figures. [-]

    The factors keep the region's own annual figure (a state's, a cloud region's) and
    give it the country's seasonal shape.

    >>> f, _ = grid_month_factors("world")
    >>> len(f), round(sum(f) / 12, 6)
    (12, 1.0)
    """
    key = _region_key(region)
    country = WORLD if key == WORLD else _region_records()[key]["country_iso3"] or key
    rows = [r for r in records("grid_monthly") if r["region"] == country]
    if not rows:
        return None
    by_year = {}
    for r in rows:
        by_year.setdefault(r["month"][:4], []).append(r["gco2e_per_kwh"])
    year_mean = {y: sum(v) / len(v) for y, v in by_year.items()}
    by_month = {}
    for r in rows:
        by_month.setdefault(int(r["month"][5:7]), []).append(
            r["gco2e_per_kwh"] / year_mean[r["month"][:4]])
    if len(by_month) != 12:
        return None
    f = [sum(v) / len(v) for _, v in sorted(by_month.items())]
    mean = sum(f) / len(f)
    years = sorted(by_year)
    return (tuple(x / mean for x in f),
            f"{country}'s months {years[0]}-{years[-1]}: {rows[0]['source']}")


def _water_keys(key: str) -> list:
    """Region ids to look a region's grid water up by, most specific first."""
    keys = [key]
    if ":" in key and key.split(":")[0].isupper():                  # USA:virginia
        keys.append(key.split(":")[0])
    for rec in records("cloud_regions"):
        if f"{rec['provider']}:{rec['region']}" == key:
            sub = rec["subregion"] if isinstance(rec["subregion"], str) else None
            keys += ([f"{rec['country_iso3']}:{sub}"] if sub else []) + [rec["country_iso3"]]
    country = _region_records()[key]["country_iso3"]
    if country:
        keys.append(country)
    return [*dict.fromkeys(keys), WORLD]


@functools.cache
def input_ranges():
    """Sourced ranges of the inputs nobody knows exactly (``data/input_ranges.csv``): the
    spread :mod:`traincost.uncertainty` draws them from, one row per range (a pandas
    DataFrame)."""
    return read_table("input_ranges")


@functools.lru_cache(maxsize=64)
def pue(operator: str) -> tuple[float, str]:
    """(PUE, source) of an operator id in data/pue.csv."""
    rows = by_id("pue")
    key = str(operator).strip().lower()
    if key not in rows:
        raise _unknown("pue operator", operator, rows)
    row = rows[key]
    return float(row["pue"]), f"{row['operator']} {row['year']}: {row['source']}"


#: the CodeCarbon data files traincost reads, by the paths ``codecarbon.input.DataSource``
#: names them (a test checks they still agree); read directly, so a grid lookup imports
#: neither CodeCarbon (its tracker, psutil, GPU probes) nor pandas
CODECARBON_FILES = {
    "carbon_intensity_per_source": "data/private_infra/carbon_intensity_per_source.json",
    "global_energy_mix": "data/private_infra/global_energy_mix.json",
    "usa_emissions": "data/private_infra/2023/usa_emissions.json",
    "cloud_emissions": "data/cloud/impact.csv",
}


def _codecarbon_file(key: str) -> Path:
    """Where CodeCarbon's data file ``key`` (:data:`CODECARBON_FILES`) is installed, found
    without importing CodeCarbon."""
    spec = importlib.util.find_spec("codecarbon")
    return Path(spec.submodule_search_locations[0]) / CODECARBON_FILES[key]


def _codecarbon_json(key: str) -> dict:
    with _codecarbon_file(key).open(encoding="utf-8") as f:
        return json.load(f)


def _region(kind: str, name: str, country: str, provider: str, g_per_kwh: float, year,
            source: str) -> dict:
    return {"kind": kind, "name": name, "country_iso3": country, "provider": provider,
            "grid_gco2e_per_kwh": g_per_kwh, "year": year, "source": source}


@functools.cache
def _region_records() -> dict:
    """Every region with a grid carbon intensity: region id -> the columns of
    :func:`regions` (``year`` None where the source gives none). The first row of an id
    wins."""
    out = {WORLD: _region(
        "world", "World average", "", "",
        float(_codecarbon_json("carbon_intensity_per_source")["world_average"]), None,
        "CodeCarbon carbon_intensity_per_source.json world_average")}
    for iso, rec in _codecarbon_json("global_energy_mix").items():
        out.setdefault(iso, _region(
            "country", rec["country_name"], iso, "", float(rec["carbon_intensity"]),
            rec.get("year"), "CodeCarbon global_energy_mix.json (Ember / Our World in Data)"))
    usa = _codecarbon_json("usa_emissions")
    src = usa.get("_source", {})
    for state, rec in usa.items():
        if state.startswith("_"):
            continue
        g_per_kwh = float(rec["emissions"]) / LBS_PER_KG * GRAMS_PER_KG / 1000.0  # lbs/MWh
        out.setdefault(f"USA:{state}", _region(
            "subregion", f"{state.title()}, USA", "USA", "", g_per_kwh, src.get("year"),
            f"CodeCarbon: {src.get('name', 'EPA eGRID')}"))
    with _codecarbon_file("cloud_emissions").open(encoding="utf-8-sig", newline="") as f:
        for rec in csv.DictReader(f):
            where = ", ".join(x for x in (rec["city"], rec["country_name"]) if x)
            out.setdefault(f"{rec['provider']}:{rec['region']}", _region(
                "cloud", f"{rec['providerName']} {rec['region']} ({where})", "",
                rec["provider"], float(rec["impact"]), None,
                f"CodeCarbon cloud/impact.csv ({rec['source']})"))
    for rec in records("cloud_regions"):
        sub = rec["subregion"] if isinstance(rec["subregion"], str) else None
        target = f"{rec['country_iso3']}:{sub}" if sub else rec["country_iso3"]
        if target not in out:
            target = rec["country_iso3"]
        if target not in out:
            continue
        base = out[target]
        out.setdefault(f"{rec['provider']}:{rec['region']}", _region(
            "cloud", f"{rec['provider'].upper()} {rec['region']} ({base['name']})",
            rec["country_iso3"], rec["provider"], base["grid_gco2e_per_kwh"], base["year"],
            f"location per {rec['source']}; intensity of {target}: {base['source']}"))
    return out


@functools.cache
def regions():
    """Every region with a grid carbon intensity, indexed by region id (a pandas
    DataFrame).

    Columns: kind (world | country | subregion | cloud), name, country_iso3, provider,
    grid_gco2e_per_kwh, year, source. Ids: ``world``; ISO-3 country codes (``FRA``);
    ``USA:california`` / ``CAN:quebec`` sub-regions; ``gcp:europe-west1``,
    ``aws:us-east-1``, ``azure:westeurope`` cloud regions.
    """
    import pandas as pd
    rows = [{"id": key, **rec, "year": pd.NA if rec["year"] is None else rec["year"]}
            for key, rec in _region_records().items()]
    return pd.DataFrame(rows).set_index("id")


@functools.cache
def _region_lookup() -> dict:
    return {k.lower(): k for k in _region_records()}


def _region_key(region: str) -> str:
    key = _region_lookup().get(str(region).strip().lower())
    if key is None:
        raise ValueError(f"region: unknown {region!r}; allowed: an ISO-3 country code (FRA), "
                         "USA:<state>, a cloud region (gcp:europe-west1, aws:us-east-1, "
                         "azure:westeurope) or world; see `traincost catalog regions`")
    return key


@functools.lru_cache(maxsize=1024)
def grid_intensity(region: str) -> tuple[float, str]:
    """(grid intensity [gCO2e/kWh], source) of a region id."""
    key = _region_key(region)
    row = _region_records()[key]
    return float(row["grid_gco2e_per_kwh"]), f"{key}: {row['source']}"


def site(region: str | None = None, *, grid_intensity_g: float | None = None,
         pue_value: float | None = None, price_usd_per_h: float = math.nan,
         price_model: str = "rental", electricity_usd_per_kwh: float = math.nan,
         wue_value: float | None = None, assumptions=DEFAULT) -> Site:
    """Build a :class:`Site` from a region id and overrides.

    The PUE defaults to the cloud provider's fleet PUE for a cloud region, otherwise to
    ``assumptions.default_pue_operator``; the on-site WUE likewise to that operator's
    (:func:`wue`); the grid intensity and the grid's water to the region's (world
    average when no region is given, :func:`grid_water`). A grid intensity given names
    no region, so the grid's water is the world average's.
    """
    if grid_intensity_g is not None and region is not None:
        raise ValueError("grid-intensity: give either --region or --grid-intensity, not both")
    key = _region_key(region) if region is not None else WORLD
    if grid_intensity_g is None:
        g, g_src = grid_intensity(key)
    else:
        g, g_src = float(grid_intensity_g), "given"
    provider = _region_records()[key]["provider"]
    operator = PROVIDER_OPERATOR.get(provider, assumptions.default_pue_operator)
    if pue_value is None:
        pue_value, p_src = pue(operator)
        scope = str(by_id("pue")[operator]["scope"])
    else:
        p_src = scope = "given"
    if wue_value is None:
        wue_value, w_src = wue(operator)
    else:
        w_src = "given"
    water, water_src = grid_water(key)
    return Site(pue=float(pue_value), grid_gco2e_per_kwh=g, price_usd_per_h=price_usd_per_h,
                price_model=price_model,
                electricity_usd_per_kwh=(assumptions.electricity_usd_per_kwh
                                         if math.isnan(electricity_usd_per_kwh)
                                         else electricity_usd_per_kwh),
                region=key if grid_intensity_g is None else "custom",
                pue_source=p_src, grid_source=g_src, pue_scope=scope,
                wue_l_per_kwh=float(wue_value), grid_water_l_per_kwh=water,
                wue_source=w_src, water_source=water_src)
