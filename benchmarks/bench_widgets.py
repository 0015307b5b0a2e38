"""How fast each notebook widget answers a change, as a student feels it.

Run:  python benchmarks/bench_widgets.py [--json] [--changes N]

Issue 26's target: every widget answers a change in <= 0.5 s median and <= 1.5 s worst. Each
widget of traincost.widgets is built with its defaults, then one of its controls is changed
N times (default 8) between values that make it recompute: the device count where it has
one (halved and doubled in turn), else its first slider or dropdown, stepped through its
range. The time is the wall clock of the assignment ``control.value = ...``, which runs the
widget's whole refresh (estimates, tables, the PNG chart) synchronously, as it does in a
kernel. A measurement to read, not an assertion; the first build warms the imports and the
catalogs.

Two times per change: ``first`` is when the first output (an HTML text or a chart of the
widget) receives a non-empty value, the moment a student sees the answer begin (in a kernel
each widget's new value is sent to the browser as it is set, before the rest of the refresh
runs); ``median``/``worst`` are the whole refresh, every table and chart redrawn.
"""

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_var] = "1"
os.environ.setdefault("MPLBACKEND", "Agg")

import json  # noqa: E402
import statistics  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402

import ipywidgets  # noqa: E402

from traincost import widgets  # noqa: E402

#: the widgets measured, by notebook, and the control changed (None: chosen as above)
CASES = (("00", "run_cost", None), ("01", "compare_accelerators", None),
         ("02", "flops_and_memory", None), ("03", "parallelism_explorer", None),
         ("04", "find_best_layout", None), ("05", "power_explorer", None),
         ("05", "power_cap_explorer", None), ("05", "region_carbon", None),
         ("05", "start_month_carbon", None), ("05", "cleanest_start_window", None),
         ("06", "rent_or_own", None),
         ("06", "cheapest_for_deadline", None), ("07", "validation_explorer", None),
         ("07", "case_explorer", None), ("09", "sites_explorer", None))


def _control(box, name):
    """The control to change and the values to step it through."""
    controls = box.controls
    if name is None:
        name = next((k for k in ("devices", "devices_each") if k in controls), None)
    if name is not None and isinstance(controls[name], (ipywidgets.IntText,
                                                        ipywidgets.BoundedIntText)):
        v = controls[name].value
        return name, [v * 2, v, v // 2 or 1, v]
    for key, c in controls.items():
        if isinstance(c, (ipywidgets.FloatSlider, ipywidgets.IntSlider)):
            lo, hi = c.min, c.max
            return key, [lo + (hi - lo) * f for f in (0.25, 0.75, 0.5, 1.0)]
        if isinstance(c, (ipywidgets.Dropdown, ipywidgets.ToggleButtons)) and len(c.options) > 1:
            values = [o[1] if isinstance(o, tuple) else o for o in c.options]
            return key, (values[1:4] + [c.value])
    raise LookupError("no control to change")


def _outputs(widget, controls) -> list:
    """The widget's output texts and charts (HTML and Image views that are not controls)."""
    found, stack = [], [widget]
    while stack:
        w = stack.pop()
        if isinstance(w, (ipywidgets.HTML, ipywidgets.Image)) and w not in controls:
            found.append(w)
        stack.extend(getattr(w, "children", ()))
    return found


def measure(name: str, control=None, changes: int = 8) -> dict:
    t0 = time.perf_counter()
    box = getattr(widgets, name)()
    built = time.perf_counter() - t0
    key, values = _control(box, control)
    shown = []

    def on_output(change):
        if change["new"] and not shown:
            shown.append(time.perf_counter())

    for w in _outputs(box, list(box.controls.values())):
        w.observe(on_output, names="value")
    times, firsts = [], []
    for i in range(changes):
        shown.clear()
        t0 = time.perf_counter()
        box.controls[key].value = values[i % len(values)]
        times.append(time.perf_counter() - t0)
        firsts.append((shown[0] if shown else time.perf_counter()) - t0)
    return {"widget": name, "control": key, "build_s": built,
            "first_s": statistics.median(firsts),
            "median_s": statistics.median(times), "worst_s": max(times),
            "message": getattr(box, "message", None) and box.message.value[:80]}


def main() -> int:
    changes = int(sys.argv[sys.argv.index("--changes") + 1]) if "--changes" in sys.argv else 8
    rows = [{"notebook": nb, **measure(name, control, changes)} for nb, name, control in CASES]
    if "--json" in sys.argv:
        print(json.dumps(rows, indent=1))
        return 0
    print(f"{'nb':3s}{'widget':24s}{'control':14s}{'build':>8s}{'first':>8s}{'median':>9s}"
          f"{'worst':>8s}")
    for r in rows:
        flag = "" if r["median_s"] <= 0.5 and r["worst_s"] <= 1.5 else "  over target"
        print(f"{r['notebook']:3s}{r['widget']:24s}{r['control']:14s}{r['build_s']:7.2f}s"
              f"{r['first_s']:7.2f}s{r['median_s']:8.2f}s{r['worst_s']:7.2f}s{flag}")
    print(f"target (issue 26): median <= 0.5 s, worst <= 1.5 s; {changes} changes each; "
          "first: the first output shown (median)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
