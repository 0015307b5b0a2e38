"""Command-line interface: ``traincost estimate | compare | search | validate | catalog``.

Every flag maps to a keyword of :func:`traincost.estimate`. Bad input exits with status 2
and one line on stderr naming the flag; nothing is printed on stdout then.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import sys
import textwrap
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:                       # pandas is imported where a table is built
    import pandas as pd

from . import __version__, catalog, choices, options
from .estimate import attention_label, compare, estimate
from .formatting import TABLE_WIDTH, sig, text_table, wide_text
from .units import GIB, GIGA, TERA

EXIT_USAGE = 2


class _Parser(argparse.ArgumentParser):
    """argparse that reports errors as one line and exits 2."""

    def error(self, message):
        sys.stderr.write(f"traincost: error: {message}\n")
        sys.exit(EXIT_USAGE)


def _positive_float(text):
    try:
        return float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None


def _add_inputs(p, groups=tuple(options.GROUPS)):
    """The declared inputs (:data:`traincost.options.INPUTS`) as flags, by argument group."""
    for group in groups:
        g = p.add_argument_group(options.GROUPS[group])
        for o in options.INPUTS:
            if o.group != group:
                continue
            kw = {"help": o.help}
            if o.kind == "bool":
                kw.update(action="store_true", default=None)
            elif o.kind == "int":
                kw["type"] = int
            elif o.kind == "float":
                kw["type"] = _positive_float
            if o.choices:
                kw["choices"] = o.choices
            if o.default is not None:
                kw["default"] = o.default
            if o.metavar:
                kw["metavar"] = o.metavar
            if o.required:
                kw["required"] = True
            g.add_argument(o.flag, **kw)
    p.add_argument("--json", action="store_true", help="print one JSON object")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="traincost", description="What will a training run cost? Time, "
                     "energy, carbon and dollars per accelerator and parallel layout.")
    parser.add_argument("--version", action="version", version=f"traincost {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)

    est = sub.add_parser("estimate", help="one accelerator, one workload, full breakdown")
    est.add_argument("--accelerator", required=True, help="accelerator id")
    est.add_argument("--devices", type=int, required=True, help="number of devices")
    _add_inputs(est)
    est.add_argument("--start-window", metavar="FROM:TO",
                     help="the carbon-aware what-if: every start day from FROM to TO "
                          "(YYYY-MM-DD:YYYY-MM-DD) is tried and the run is dated at the one "
                          "of least operational carbon (traincost.explore.cleanest_start; "
                          "JSON start_window); not with --start")
    _add_uncertainty(est, "also print the p10-p90 range of each output under the model's "
                          "error on published runs it was not fitted on and the sourced "
                          "ranges of PUE, grid, power and goodput (JSON intervals), and "
                          "what drives each range (JSON sensitivity)")

    cmp_ = sub.add_parser("compare", help="one workload across several accelerators")
    cmp_.add_argument("--accelerators", required=True,
                      help="comma-separated accelerator ids, or 'all'")
    cmp_.add_argument("--devices", type=int, required=True, help="number of devices each")
    _add_inputs(cmp_)
    _add_uncertainty(cmp_, "also give each accelerator's p10 and p90 of time, energy, carbon "
                           "and cost (columns <output>_p10, <output>_p90)")
    _add_wide(cmp_)

    sea = sub.add_parser("search", help="every valid layout: best per objective, Pareto fronts")
    sea.add_argument("--accelerators", required=True,
                     help="comma-separated accelerator ids, or 'all'")
    sea.add_argument("--devices", type=_device_counts, required=True,
                     help="device count(s), comma-separated")
    _add_inputs(sea)
    g = sea.add_argument_group("constraints and ranking")
    g.add_argument("--max-days", type=_positive_float, help="deadline on the training time")
    g.add_argument("--max-cost-usd", type=_positive_float, help="budget in USD")
    g.add_argument("--max-co2e-t", type=_positive_float, help="cap on operational tCO2e")
    g.add_argument("--memory-headroom", type=_positive_float,
                   help="fraction of HBM kept free (default: assumptions.memory_headroom_fraction)")
    _add_uncertainty(g, "band the top table with the 80%% range of the objective's figure "
                        "(<column>_p10, _p50, _p90) and rank it by the median")
    g.add_argument("--objective", choices=("time", "energy", "cost", "carbon"), default="time",
                   help="what the top table ranks by (default time)")
    g.add_argument("--top", type=int, default=10, help="rows of the top table (default 10)")
    _add_wide(sea)

    val = sub.add_parser("validate", help="predicted vs published training runs")
    val.add_argument("--family", choices=choices.FAMILIES, help="only this metric family")
    val.add_argument("--case", metavar="ID",
                     help="one published run in full: source, assumed inputs, the estimate's "
                          "layout, breakdown and caveats, predicted vs reported")
    val.add_argument("--json", action="store_true", help="print one JSON object")
    _add_wide(val)

    cat = sub.add_parser("catalog", help="list accelerators, models, regions or PUE")
    cat.add_argument("table", choices=("accelerators", "models", "regions", "pue", "frameworks"))
    cat.add_argument("--json", action="store_true", help="print the table as JSON records")
    _add_wide(cat)
    return parser


def _add_wide(p) -> None:
    p.add_argument("--wide", action="store_true",
                   help=f"every column of the table, however wide (default: the main columns, "
                        f"{TABLE_WIDTH} characters at most)")


def _expert_tp_text(d: dict) -> str:
    """The routed experts' tensor-parallel width where it is not tp's."""
    e, t = d["stack"].get("expert_tp", 0), d["parallel"]["tp"]
    return f", expert tensor parallelism {e} (tp {t})" if e and e != t else ""


def _offloaded_text(d: dict) -> str:
    """What activation offload keeps in host memory, beside the device memory line (''
    without offload)."""
    if not d.get("offloaded_gib_per_device"):
        return ""
    host = d.get("host_memory_gib_per_device")
    return (f", {_fmt(d['offloaded_gib_per_device'])} GiB offloaded to host memory"
            + (f" (of {_fmt(host)} GiB per device)" if host else ""))


def _layout_text(r) -> str:
    """A layout in a table cell: tp, pp and dp, then cp, ep and vpp where above 1, then the
    ZeRO stage, micro-batch and recompute (``tp2 pp4 dp8 z1 b2 sel``: selective; ``none``,
    ``full``, ``offl``: activation offload); ``-`` for a row with no layout (an accelerator
    a comparison could not estimate, its reason in the note column)."""
    if any(r.get(k) is None or r.get(k) != r.get(k) for k in ("tp", "pp", "dp")):
        return "-"
    extra = "".join(f" {k}{int(r[k])}" for k in ("cp", "ep", "vpp") if int(r.get(k, 1)) > 1)
    return (f"tp{int(r['tp'])} pp{int(r['pp'])} dp{int(r['dp'])}{extra} z{int(r['zero'])} "
            f"b{int(r['micro_batch'])} {_RECOMPUTE_SHORT.get(str(r['recompute']), r['recompute'])}")


_RECOMPUTE_SHORT = {"none": "none", "selective": "sel", "full": "full", "offload": "offl"}
#: the header of a search's band column, by the objective's column
_BAND_HEADS = {"step_time_s": "p10-p90 s", "facility_energy_mwh": "p10-p90 MWh",
               "co2e_t": "p10-p90 t", "cost_usd": "p10-p90 USD"}


def _range_text(r, col: str) -> str:
    return f"{sig(r[f'{col}_p10'])}-{sig(r[f'{col}_p90'])}"


#: the main columns of each table the CLI prints (name, header, cell kind); --wide: all
_COMPARE_COLUMNS = (("accelerator", "accelerator", "text"), ("devices", "devices", "int"),
                    ("layout", "layout", "text"), ("fits_in_memory", "fits", "bool"),
                    ("mfu", "MFU", "pct"), ("train_time_days", "days", "sig"),
                    ("facility_energy_mwh", "MWh", "sig"), ("co2e_t", "tCO2e", "sig"),
                    ("cost_usd", "USD", "usd"), ("note", "note", "text"))
_SEARCH_COLUMNS = (("accelerator", "accelerator", "text"), ("devices", "devices", "int"),
                   ("layout", "layout", "text"), ("mfu", "MFU", "pct"),
                   ("memory_gib_per_device", "GiB", "sig"), ("train_time_days", "days", "sig"),
                   ("facility_energy_mwh", "MWh", "sig"), ("co2e_t", "tCO2e", "sig"),
                   ("cost_usd", "USD", "usd"))
_VALIDATE_COLUMNS = (("case", "case", "text"), ("metric", "metric", "text"),
                     ("predicted", "predicted", "sig"), ("reported", "reported", "sig"),
                     ("error_pct", "error", "signed"), ("gap", "gap", "text"),
                     ("layout", "layout", "text"))
_CATALOG_COLUMNS = {
    "accelerators": (("id", "id", "text"), ("peak_bf16_tflops", "bf16 TFLOP/s", "sig"),
                     ("hbm_gib", "HBM GiB", "sig"), ("tdp_w", "TDP W", "sig"),
                     ("scaleup_domain_devices", "scale-up", "int"),
                     ("price_usd_per_h", "USD/h", "sig"), ("status", "status", "text"),
                     ("name", "name", "text")),
    "models": (("id", "id", "text"), ("layers", "layers", "int"), ("hidden", "hidden", "int"),
               ("heads", "heads", "int"), ("kv_heads", "kv", "int"), ("vocab", "vocab", "int"),
               ("seq_len", "seq", "int"), ("experts", "experts", "int"),
               ("params_b", "params B", "sig"), ("name", "name", "text")),
    "regions": (("id", "id", "text"), ("kind", "kind", "text"),
                ("grid_gco2e_per_kwh", "gCO2e/kWh", "sig"), ("year", "year", "text"),
                ("name", "name", "text")),
    "pue": (("id", "id", "text"), ("operator", "operator", "text"), ("pue", "PUE", "sig"),
            ("scope", "scope", "text"), ("year", "year", "text"), ("source", "source", "text")),
    "frameworks": (("id", "id", "text"), ("attention_kernel", "attention", "text"),
                   ("overlap", "overlap", "text"), ("zero", "zero", "text"),
                   ("fitted_factors", "fitted factors", "text")),
}
_SUMMARY_COLUMNS = (("family", "family", "text"), ("cases", "cases", "int"),
                    ("mape_pct", "MAPE %", "sig"), ("mean_signed_pct", "mean signed", "signed"),
                    ("worst_pct", "worst", "signed"), ("worst_case", "worst case", "text"))
#: the catalog tables' columns cut to fit, first cut first
_CATALOG_SQUEEZE = {"accelerators": ("name",), "models": ("name",), "regions": ("name",),
                    "pue": ("source", "operator"), "frameworks": ("fitted_factors",)}
_MORE = "(more columns: --wide or --json)"


def _wrap(text: str, indent: str = "  ") -> str:
    """A line of prose folded to the tables' width, its continuation lines indented; a
    number keeps its unit on its line."""
    kept = re.sub(r"(\d) (?=[A-Za-z%])", "\\1\0", text)
    return textwrap.fill(kept, TABLE_WIDTH, subsequent_indent=indent, break_long_words=False,
                         break_on_hyphens=False).replace("\0", " ")


def _catalog_rows(table: str, df: pd.DataFrame) -> list:
    import pandas as pd
    rows = df.reset_index().to_dict(orient="records")
    for r in rows:
        if table == "accelerators":
            r["peak_bf16_tflops"] = r["peak_bf16_flop_per_s"] / TERA
            r["hbm_gib"] = r["hbm_bytes"] / GIB
        elif table == "models":
            r["params_b"] = r["params_reported"] / GIGA
        if "year" in r:
            r["year"] = "" if pd.isna(r["year"]) else str(int(r["year"]))
    return rows


def _kwargs(args) -> dict:
    """The declared inputs' values from parsed flags, as keywords."""
    return {n: getattr(args, n) for n in options.names()}


def _clean(obj):
    """JSON-safe: NaN/inf -> null, numpy scalars and pandas' NA -> Python."""
    pd = sys.modules.get("pandas")           # pandas' NA exists only where pandas was imported
    if isinstance(obj, dict):
        return {k: _clean(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_clean(v) for v in obj]
    if isinstance(obj, (np.bool_,)):
        return bool(obj)
    if isinstance(obj, (np.integer,)):
        return int(obj)
    if isinstance(obj, (float, np.floating)):
        return float(obj) if math.isfinite(obj) else None
    if pd is not None and obj is pd.NA:
        return None
    return obj


def _fmt(x, unit="", digits=3):
    """A number to ``digits`` significant figures with thousands separators (``n/a`` when
    missing), as every figure the CLI prints (:func:`traincost.formatting.sig`)."""
    text = sig(x, digits)
    return text if text == "n/a" else f"{text}{unit}"


def _print_estimate(d: dict) -> None:
    p = d["parallel"]
    chosen = f" (searched: {', '.join(p['chosen_by_search'])} over {p['layouts_evaluated']} " \
        "layouts)" if p["chosen_by_search"] else ""
    lines = [
        f"{d['workload']} on {d['devices']} x {d['accelerator']} ({d['precision']})",
        f"  layout      tp={p['tp']} pp={p['pp']} dp={p['dp']} cp={p['cp']} ep={p['ep']} "
        f"vpp={p['vpp']} zero={p['zero']} micro-batch={p['micro_batch']} "
        f"recompute={p['recompute']}"
        f"{' cross-site=' + p['cross_site'] if p['cross_site'] else ''}{chosen}",
        f"  stack       {attention_label(d['stack'])} attention"
        f"{', parallel block' if d['stack']['parallel_block'] else ''}, overlapped "
        f"communication: {','.join(d['stack']['overlap']) or 'none'}"
        f"{', balanced pipeline split' if d['stack']['balanced_pipeline'] else ''}"
        f"{', FP8 activation cache' if d['stack'].get('fp8_activations') else ''}"
        f"{', bf16 Adam state' if d['stack'].get('optimizer_state') == 'bf16' else ''}"
        f"{', fused loss' if d['stack'].get('fused_loss') else ''}"
        f"{', eager element-wise ops' if d['stack'].get('elementwise') == 'eager' else ''}"
        f"{_expert_tp_text(d)}",
        f"  params      {_fmt(d['params'] / 1e9)} B   model FLOP/token {d['model_flop_per_token']:.3e}",
        f"  memory      {_fmt(d['memory_gib_per_device'])} GiB of {_fmt(d['hbm_gib_per_device'])}"
        f" GiB per device"
        f"{_offloaded_text(d)} -> {'fits' if d['fits_in_memory'] else 'DOES NOT FIT'}",
        f"  step        {_fmt(d['step_time_s'])} s   MFU {d['mfu']:.1%}   HFU {d['hfu']:.1%}   "
        f"{_fmt(d['hardware_tflops_per_device'])} hardware TFLOP/s per device",
        f"  time        {_fmt(d['train_time_days'])} days for {d['tokens']:.3g} tokens   "
        f"{_fmt(d['device_hours'])} device-hours   goodput {100 * d['goodput']:.3g}%",
        f"  power       {_fmt(d['avg_power_w_per_device'])} W per device (incl. host)"
        + (f", devices capped at {d['power_cap_w']:g} W" if d.get("power_cap_w") else ""),
        f"  energy      {_fmt(d['it_energy_mwh'])} MWh IT, {_fmt(d['facility_energy_mwh'])} MWh "
        f"at the plug (PUE {d['pue']:.2f})",
        f"  carbon      {_fmt(d['co2e_t'])} tCO2e operational, location-based "
        f"({_grid_text(d)}); embodied {_embodied_text(d['embodied_co2e_t_by_basis'])}",
        *_window_lines(d.get("start_window")),
        f"  water       {_fmt(d['water_m3'])} m3: {_fmt(d['water_onsite_m3'])} on site "
        f"(WUE {_fmt(d['wue_l_per_kwh'])} L/kWh) + {_fmt(d['water_offsite_m3'])} at the power "
        f"plants ({_fmt(d['grid_water_l_per_kwh'])} L/kWh)",
        f"  cost        {_fmt(d['cost_usd'], digits=4)} USD ({d['price_model']})",
        *_site_lines(d),
        "  step time   " + ", ".join(f"{k} {_fmt(v)} s" for k, v in
                                     d["breakdown"]["step_time_s"].items() if v),
        "  memory      " + ", ".join(f"{k} {_fmt(v)} GiB" for k, v in
                                     d["breakdown"]["memory_gib"].items()),
        f"  accuracy    {d['accuracy']}",
        *_interval_lines(d.get("intervals")),
        *_driver_lines(d.get("sensitivity")),
        *[f"  caveat      {c}" for c in d.get("caveats", [])],
    ]
    print("\n".join(lines))


def _window_lines(w: dict | None) -> list:
    """``--start-window``: where the cleanest start lies and what the window spans."""
    if w is None:
        return []
    return [f"  start       the cleanest of {w['days']:,} start days from {w['earliest']} to "
            f"{w['latest']}: {w['cleanest_start']}, {_fmt(w['cleanest_co2e_t'])} tCO2e (the "
            f"dirtiest, {w['worst_start']}: {_fmt(w['worst_co2e_t'])} t; undated "
            f"{_fmt(w['annual_co2e_t'])} t; {w['basis']} figures)"]


def _embodied_text(by_basis: dict) -> str:
    """The embodied carbon on each basis with a figure, or why there is none."""
    known = [f"{_fmt(t)} t ({basis})" for basis, t in by_basis.items() if t is not None]
    return ", ".join(known) if known else "unknown (no figure for this device)"


def _site_lines(d: dict) -> list:
    """A run over several sites: the link and placement, then one line per site."""
    if len(d["sites"]) == 1:
        return []
    net, p, h = d["network"], d["parallel"], d["stack"]["sync_every"]
    sync = f", exchanging every {h} steps (relaxed)" if h > 1 else ", every step"
    head = (f"  sites       {len(d['sites'])} sites joined by {_fmt(net['site_link_gbps'])} Gb/s "
            f"each way, {net['site_link_latency_ms']:.3g} ms; {p['cross_site']} crosses them"
            f"{sync if p['cross_site'] == 'dp' else ''}")
    return [head] + [f"              {x['region']}: {x['devices']} devices, PUE {x['pue']:.2f}, "
                     f"{_fmt(x['facility_energy_mwh'])} MWh at "
                     f"{x['grid_run_gco2e_per_kwh']:.0f} g/kWh, {_fmt(x['co2e_t'])} tCO2e, "
                     f"{_fmt(x['cost_usd'], digits=4)} USD" for x in d["sites"]]


#: the interval lines' labels and units, in print order
_INTERVAL_LINES = (("tokens_per_s", "tokens/s"), ("train_time_days", "days"),
                   ("device_hours", "device-hours"), ("facility_energy_mwh", "MWh at the plug"),
                   ("co2e_t", "tCO2e"), ("cost_usd", "USD"), ("water_m3", "m3 of water"))


#: the words for each output whose range the sensitivity apportions
_DRIVER_WORDS = {"train_time_days": "time", "facility_energy_mwh": "energy",
                 "co2e_t": "carbon", "cost_usd": "cost"}


def _interval_lines(box) -> list:
    if not box:
        return []
    cls = ("long-context runs" if box["class"] == "long-context"
           else f"{box['class']} framework class")
    head = (f"  range       p10-p90 under the model's error on published runs it was not "
            f"fitted on ({cls}) and the sourced ranges of "
            f"{len(box['inputs']) - 1} inputs (data/input_ranges.csv), "
            f"{box['draws']:,} draws:")
    return [head] + [f"              {_fmt(box[k][0])} - {_fmt(box[k][2])} {unit} "
                     f"(median {_fmt(box[k][1])})" for k, unit in _INTERVAL_LINES]


def _driver_lines(sens) -> list:
    if not sens:
        return []
    from .uncertainty import drivers_sentence
    return [f"  drivers     {drivers_sentence(sens[k], sens['labels'], w)}"
            for k, w in _DRIVER_WORDS.items() if k in sens]


def _add_uncertainty(parser, help_text: str) -> None:
    parser.add_argument("--uncertainty", action="store_true", help=help_text)
    parser.add_argument("--seed", type=_seed, default=0,
                        help="seed of the --uncertainty draws (default 0)")


def _seed(text):
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"{text!r} must be at least 0")
    return value


def _catalog(table: str) -> pd.DataFrame:
    if table == "accelerators":
        cols = ["name", "peak_bf16_flop_per_s", "peak_fp16_flop_per_s", "hbm_bytes", "tdp_w",
                "idle_w", "scaleup_domain_devices", "price_usd_per_h", "price_date", "status"]
        return catalog.accelerators()[cols]
    if table == "models":
        return catalog.models()[["name", "layers", "hidden", "heads", "kv_heads", "ffn_hidden",
                                 "vocab", "seq_len", "experts", "top_k", "params_reported"]]
    if table == "pue":
        return catalog.pue_table()[["operator", "pue", "scope", "year", "source"]]
    if table == "frameworks":
        from .calibration import FRAMEWORKS
        t = catalog.frameworks()[["name", "attention_kernel", "overlap", "zero"]].copy()
        t["fitted_factors"] = [", ".join(f"{k.split(' on ')[1]} {r['factor']:.2f} "
                                         f"({r['runs']} runs)"
                                         for k, r in FRAMEWORKS.items()
                                         if k.startswith(f"{fid} on ")) or
                               ("1 (reference)" if fid in (catalog.REFERENCE_FRAMEWORK,
                                                           "unspecified") else "borrowed")
                               for fid in t.index]
        return t
    return catalog.regions()[["kind", "name", "grid_gco2e_per_kwh", "year", "source"]]


def _validate_case(args) -> None:
    from .validate import explain_case
    d = explain_case(args.case)
    table = d["comparisons"]
    if args.family:
        table = table[table["family"] == args.family]
    if args.json:
        print(json.dumps(_clean({**{k: v for k, v in d.items()
                                    if k not in ("estimate", "comparisons")},
                                 "estimate": d["estimate"].to_dict(),
                                 "comparisons": table.to_dict(orient="records")}), indent=2))
        return
    print(f"{d['case']}: {d['name']}")
    print(f"  source      {d['source']} ({d['source_locator']}; {d['source_date']}); "
          f"status {d['status']}")
    print("  inputs      " + ", ".join(f"{k} {v:g}" if isinstance(v, float) else f"{k} {v}"
                                       for k, v in d["inputs"].items()))
    print(f"  assumed     {d['note'] or 'nothing: the source states every input used'}")
    print(f"  model gap   {d['model_gap'] or 'none'}")
    _print_estimate(d["estimate"].to_dict())
    for _, r in table.iterrows():
        print(f"  published   {r['metric']}: reported {_fmt(r['reported'], digits=4)}, "
              f"predicted {_fmt(r['predicted'], digits=4)} ({r['error_pct']:+.1f}%)"
              + (", by construction" if r["by_construction"] else ""))
    if table.empty:
        print("  published   no figure of this family to compare")


def _validate(args) -> None:
    import pandas as pd
    if args.case is not None and not args.case.strip():
        raise ValueError("case: an empty id names no published run (see `traincost "
                         "validate` for the ids)")
    if args.case:
        _validate_case(args)
        return
    from .validate import compare_published, power_interval_coverage, summary
    bar, progress = _progress_bar("validate", " runs")
    try:
        table = compare_published(progress=progress)
    finally:
        if bar is not None:
            bar.close()
    if args.family:
        table = table[table["family"] == args.family]
    summ = summary(table)
    power = power_interval_coverage() if args.family in (None, "power") else None
    if args.json:
        extra = {} if power is None else {
            "power_intervals": power.reset_index().to_dict(orient="records")}
        print(json.dumps(_clean({"cases": table.to_dict(orient="records"),
                                 "summary": summ.reset_index().to_dict(orient="records"),
                                 **extra}), indent=2))
        return
    with pd.option_context("display.width", 200, "display.max_rows", 500,
                           "display.max_colwidth", 40, "display.float_format", "{:,.4g}".format):
        shown = table.drop(columns=["note", "model_gap"])
        shown.insert(shown.columns.get_loc("status") + 1, "gap",
                     np.where(table["model_gap"].astype(bool), "gap", ""))
        if args.wide:
            print(wide_text(shown, index=False))
        else:
            print(text_table(shown.to_dict(orient="records"), _VALIDATE_COLUMNS,
                             squeeze=("layout", "metric")))
            print(_MORE)
        print("\ngap: a run the model cannot represent (model_gap in data/published_runs.csv),\n"
              "  summarised apart below; `traincost validate --case ID` says why\n"
              "mean signed: throughput + where the model is faster than the run (a step time's\n"
              "  miss counted as the rate's); other families + where it predicts more")
        print()
        if args.wide:
            print(wide_text(summ))
        else:
            print(text_table(summ.reset_index().to_dict(orient="records"), _SUMMARY_COLUMNS,
                             squeeze="worst_case"))
        from .calibration import DATA_VERSION, FIT_DATE, METRICS
        print("\n" + _wrap(f"calibration ({FIT_DATE}, data {DATA_VERSION}): throughput MAPE "
              f"{METRICS['in_sample_mape_pct']}% in sample, {METRICS['loo_mape_pct']}% "
              f"out of sample (leave-one-out; worst {METRICS['loo_worst_pct']}%, "
              f"{METRICS['loo_worst_case']}); over the target's SC21 + MegaScale rows "
              f"{METRICS['loo_target_mape_pct']}%, worst {METRICS['loo_target_worst_pct']}%; "
              f"{METRICS['cv_mape_pct']}% "
              f"{METRICS['cv_folds']}-fold (worst {METRICS['cv_worst_min_pct']}-"
              f"{METRICS['cv_worst_pct']}% over {METRICS['cv_seeds']} random splits), "
              f"over {METRICS['cases']} cases; fp8 stage: {METRICS['fp8_loo_mape_pct']}% "
              f"leave-one-out over {METRICS['fp8_cases']} fp8 runs (worst "
              f"{METRICS['fp8_loo_worst_pct']}%); `python -m traincost.calibrate` refits"))
        _print_held_out(METRICS)
        if power is not None and len(power):
            print(_power_intervals_line(power))


def _print_held_out(metrics: dict) -> None:
    """The calibration's held-out errors beside leave-one-out: by source document, by
    publication and by framework, then per framework factor and accelerator family."""
    from .calibration import BY_FAMILY, FRAMEWORKS
    m = metrics
    print(_wrap(f"every fitted run ({m['fitted_cases']}, the frameworks' own factors included): "
          f"{m['loso_mape_pct']}% holding out one source document at a time "
          f"({m['loso_sources']} documents, worst {m['loso_worst_pct']}%), "
          f"{m['lopo_mape_pct']}% one publication at a time, {m['lofo_mape_pct']}% holding "
          f"out a whole framework ({m['lofo_cases']} runs of the frameworks with a factor of "
          f"their own, predicted with the reference's; worst {m['lofo_worst_pct']}%); "
          f"runs no fit uses (framework not stated or too few runs): "
          f"{m['unfitted_mape_pct']}% over {m['unfitted_cases']}"))
    for key, r in FRAMEWORKS.items():
        held = r["held_out_framework_mape_pct"]
        # the reference framework on another family is never held out as a framework
        held = (f"{held}% with the reference factor" if math.isfinite(held) else
                "not held out as a framework (the reference framework's own)")
        print(_wrap(f"  framework {key}: factor {r['factor']:.3f} from {r['runs']} runs in "
              f"{r['documents']} documents; leave-one-out {r['loo_mape_pct']}% "
              f"(worst {r['loo_worst_pct']}%), {held}", "    "))
    for family, r in BY_FAMILY.items():
        print(f"  {family}: {r['cases']} runs, leave-one-out {r['mape_pct']}% "
              f"(worst {r['worst_pct']}%)")
    from .uncertainty import ERROR_CLASSES
    shown = [c for c in (*ERROR_CLASSES, "all")
             if f"interval_{c}_coverage_pct" in m]
    if shown:
        print(_wrap("80% intervals (`estimate --uncertainty`), measured throughput inside its own "
              "interval with its source document left out: " + "; ".join(
                  f"{c} {m[f'interval_{c}_coverage_pct']}% of {m[f'interval_{c}_figures']} "
                  f"(median p90/p10 {m[f'interval_{c}_median_width']})" for c in shown)))


def _power_intervals_line(power) -> str:
    """One paragraph: how many measured powers lie inside their 80% interval, and which
    do not (:func:`traincost.validate.power_interval_coverage`)."""
    outside = power[~power["inside"]]
    text = (f"80% power intervals: measured average power per device inside its own "
            f"interval for {int(power['inside'].sum())} of {len(power)} runs "
            f"({100 * power['inside'].mean():.0f}%)")
    if len(outside):
        text += "; outside: " + "; ".join(
            f"{case} {_fmt(r['reported'])} W against {_fmt(r['p10'])}-{_fmt(r['p90'])} W"
            for case, r in outside.iterrows())
    return _wrap(text)


def _device_counts(text):
    try:
        counts = [int(x) for x in text.split(",")]        # an empty item is not a count
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a comma-separated list of whole "
                                         "numbers") from None
    if not counts or min(counts) <= 0:
        raise argparse.ArgumentTypeError(f"{text!r}: device counts must be > 0")
    return counts


_SEARCH_SHOWN = ("accelerator", "devices", "tp", "pp", "dp", "cp", "ep", "vpp", "zero",
                 "micro_batch", "recompute", "mfu", "memory_gib_per_device", "train_time_days",
                 "facility_energy_mwh", "co2e_t", "cost_usd")


def _start_window(args, kwargs: dict) -> dict:
    """``--start-window FROM:TO``: :func:`traincost.explore.cleanest_start` over the
    window for the estimate's inputs, as JSON ``start_window``: the window, its days, the
    cleanest and the dirtiest start and their operational carbon [tCO2e], the undated
    run's."""
    from . import explore

    text = args.start_window
    if kwargs.get("start") is not None:
        raise ValueError("start-window: give --start or --start-window, not both")
    parts = text.split(":")
    if len(parts) != 2:
        raise ValueError(f"start-window: {text!r} must be FROM:TO, two dates "
                         "YYYY-MM-DD:YYYY-MM-DD")
    params = {"accelerator": args.accelerator, "devices": args.devices,
              **{k: v for k, v in kwargs.items() if k != "region"}}
    try:
        df = explore.cleanest_start(params, kwargs.get("region"), parts[0].strip(),
                                    parts[1].strip())
    except ValueError as exc:
        msg = str(exc)
        if msg.startswith(("earliest:", "latest:")):
            raise ValueError(f"start-window: {msg.split(': ', 1)[1]}") from None
        raise
    best, worst = explore.extreme_starts(df)
    return {"earliest": df["start"].iloc[0], "latest": df["start"].iloc[-1],
            "days": len(df), "basis": best["basis"],
            "cleanest_start": best["start"], "cleanest_co2e_t": float(best["co2e_t"]),
            "worst_start": worst["start"], "worst_co2e_t": float(worst["co2e_t"]),
            "annual_co2e_t": float(best["annual_co2e_t"])}


def _grid_text(d: dict) -> str:
    """The grid intensity the carbon line used: the annual figure, or the run's months'."""
    g = d["grid_profile"]
    if g["basis"] == "monthly":
        span = f"{g['start']} to {g['end']}" if g["end"] else f"the months from {g['start']}"
        return (f"{g['gco2e_per_kwh']:.0f} g/kWh over {span}, "
                f"{d['region']}, annual {g['annual_gco2e_per_kwh']:.0f}")
    return f"{d['grid_gco2e_per_kwh']:.0f} g/kWh, {d['region']}"


def _progress_bar(desc: str, unit: str):
    """A progress bar on stderr when it is a terminal (tqdm; shown after half a second,
    cleared when done), as ``(bar, progress(done, total))``; ``(None, None)`` otherwise, so
    pipes, logs and tests see nothing."""
    if not sys.stderr.isatty():
        return None, None
    from tqdm import tqdm
    bar = tqdm(total=0, unit=unit, unit_scale=True, delay=0.5, leave=False, file=sys.stderr,
               desc=desc)

    def progress(done, total):
        bar.total = total
        bar.update(done - bar.n)
    return bar, progress


def _search(args) -> None:
    import pandas as pd
    from .search import search
    ids = args.accelerators.strip()
    ids = "all" if ids == "all" else [s.strip() for s in ids.split(",") if s.strip()]
    bar, progress = _progress_bar("search", " layouts")
    try:
        res = search(ids, args.devices, max_days=args.max_days, max_cost_usd=args.max_cost_usd,
                     max_co2e_t=args.max_co2e_t, memory_headroom=args.memory_headroom,
                     objective=args.objective, top=args.top,
                     uncertainty=args.uncertainty, seed=args.seed,
                     progress=progress, **_kwargs(args))
    finally:
        if bar is not None:
            bar.close()
    if args.json:
        print(json.dumps(_clean(res.to_dict()), indent=2))
        return
    cap = f" (devices capped at {args.power_cap:g} W)" if args.power_cap else ""
    lines = [_wrap(f"searched {res.layouts_enumerated:,} layouts in {res.elapsed_s:.2f} s{cap}: "
                   f"{res.layouts_evaluated:,} valid, {res.layouts_fit:,} fit in memory with "
                   f"{res.memory_headroom:.0%} headroom, {res.layouts_feasible:,} meet the "
                   "constraints")]
    for obj, row in res.best.items():
        if row is None:
            lines.append(f"best by {obj:6s}  none")
            continue
        lines.append(_wrap(f"best by {obj:6s}  {row['accelerator']} x {row['devices']} "
                           f"{_layout_text(row)}: {_fmt(row['train_time_days'])} days, "
                           f"{_fmt(row['facility_energy_mwh'])} MWh, "
                           f"{_fmt(row['co2e_t'])} tCO2e, {_fmt(row['cost_usd'], digits=4)} USD",
                           " " * 16))
    print("\n".join(lines))
    print(f"\ntop {len(res.top)} by {res.objective}:")
    banded = [c for c in res.top.columns if c.endswith(("_p10", "_p50", "_p90"))]
    if not len(res.top):
        print("  none")
    elif args.wide:
        with pd.option_context("display.width", 250, "display.max_columns", 30):
            print(wide_text(res.top[[*_SEARCH_SHOWN, *banded]], index=False))
    else:
        rows = res.top.to_dict(orient="records")
        cols = list(_SEARCH_COLUMNS)
        for r in rows:
            r["layout"] = _layout_text(r)
        if banded:
            col = banded[0][:-len("_p10")]
            for r in rows:
                r["band"] = _range_text(r, col)
            cols.append(("band", _BAND_HEADS.get(col, f"{col} p10-p90"), "text"))
        print(text_table(rows, cols, squeeze="band" if banded else None))
        print(_MORE)
    print("\nPareto fronts: " + ", ".join(f"{k.replace('_', ' vs ')} {len(v)} layouts"
                                          for k, v in res.pareto.items()))
    print(_wrap(f"MFU vs published: {res.mfu_note()}"))
    for w in res.warnings:
        print(_wrap(f"warning: {w}"))
    for n in res.notes:
        print(_wrap(f"note: {n}"))


def main(argv=None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return _run(args)
    except BrokenPipeError:                  # e.g. `traincost catalog regions | head`
        sys.stdout = open(os.devnull, "w")
        return 0


def _run(args) -> int:
    try:
        if args.command == "estimate":
            kwargs, window = _kwargs(args), None
            if args.start_window is not None:
                window = _start_window(args, kwargs)
                kwargs["start"] = window["cleanest_start"]
            d = estimate(accelerator=args.accelerator, devices=args.devices,
                         uncertainty=args.uncertainty, seed=args.seed, **kwargs).to_dict()
            if window is not None:
                d["start_window"] = window
            if args.json:
                print(json.dumps(_clean(d), indent=2))
            else:
                _print_estimate(d)
        elif args.command == "compare":
            ids = list(catalog.by_id("accelerators")) if args.accelerators.strip() == "all" \
                else [s.strip() for s in args.accelerators.split(",") if s.strip()]
            if not ids:
                raise ValueError(f"accelerators: {args.accelerators!r} names no accelerator "
                                 "(comma-separated catalog ids, or all)")
            for acc_id in ids:
                catalog.accelerator(acc_id)                  # unknown id -> exit 2
            df = compare(ids, args.devices, uncertainty=args.uncertainty, seed=args.seed,
                         **_kwargs(args))
            if args.json:
                print(json.dumps(_clean(df.reset_index().to_dict(orient="records")), indent=2))
            elif args.wide:
                import pandas as pd
                with pd.option_context("display.width", 250, "display.max_columns", 60):
                    print(wide_text(df))
            else:
                rows = df.reset_index().to_dict(orient="records")
                cols = list(_COMPARE_COLUMNS)
                if args.uncertainty:                     # the days' range for the energy
                    for r in rows:
                        r["days_range"] = _range_text(r, "train_time_days")
                    cols[6] = ("days_range", "days p10-p90", "text")
                for r in rows:
                    r["layout"] = _layout_text(r)
                print(text_table(rows, cols, squeeze="note"))
                print(_MORE)
        elif args.command == "search":
            _search(args)
        elif args.command == "validate":
            _validate(args)
        else:
            df = _catalog(args.table)
            if args.json:
                print(json.dumps(_clean(df.reset_index().to_dict(orient="records")), indent=2))
            elif args.wide:
                import pandas as pd
                with pd.option_context("display.width", 250, "display.max_columns", 30,
                                       "display.max_colwidth", 60, "display.max_rows", 1000):
                    print(wide_text(df))
            else:
                cols = _CATALOG_COLUMNS[args.table]
                print(text_table(_catalog_rows(args.table, df), cols,
                                 squeeze=_CATALOG_SQUEEZE[args.table]))
                print(_MORE)
    except ValueError as exc:
        sys.stderr.write(f"traincost: error: {str(exc).splitlines()[0]}\n")
        return EXIT_USAGE
    return 0


if __name__ == "__main__":
    sys.exit(main())
