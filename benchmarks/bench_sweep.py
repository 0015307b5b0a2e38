"""Speed of the vectorised model, the layout search, one estimate and the CLI.

Run:  python benchmarks/bench_sweep.py [--json]

Single-threaded (OMP/OPENBLAS/MKL threads set to 1 before numpy loads). The case is
GPT-3 175B (global batch 1536 sequences of 2048 tokens, 300B tokens) on 1,024 A100 SXM4
80GB. Targets (issue 4): >= 1,000,000 layouts evaluated per second on one core, an
exhaustive search in < 5 s, one fully specified estimate in < 1 ms in-process. These are
measurements to read, not assertions: nothing here fails a build.
"""

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_var] = "1"

import json  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402

import traincost  # noqa: E402
from traincost import layout  # noqa: E402
from traincost.assemble import columns, job_inputs, system  # noqa: E402
from traincost.model import evaluate  # noqa: E402

ACC, DEVICES, MODEL, BATCH, TOKENS = "a100-sxm4-80gb", 1024, "gpt3-175b", 1536, 300e9
FIXED = dict(tp=8, pp=16, cp=1, ep=1, vpp=1, zero=1, micro_batch=1, recompute="full")
ROWS = 1_000_000


def best_of(fn, repeat=3):
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def evaluate_rate() -> dict:
    """evaluate() over 1e6 valid layouts of the case (its valid layouts, repeated)."""
    sys_ = system(ACC, DEVICES)
    spec = job_inputs(model=MODEL, global_batch=BATCH, tokens=TOKENS)
    wl, job = spec.workload, spec.job
    lay = layout.candidates({}, heads=wl.heads, layers=wl.layers, experts=wl.experts,
                            devices=DEVICES, domain=sys_.domain_devices,
                            global_batch=job.global_batch, seq_len=job.seq_len)
    ok = np.flatnonzero(layout.valid({**layout.arch_columns(spec, DEVICES), **lay}))
    idx = np.resize(ok, ROWS)
    cols = columns(sys_, spec, "bf16", {k: v[idx] for k, v in lay.items()})
    with np.errstate(all="ignore"):
        evaluate(cols)
        s = best_of(lambda: evaluate(cols))
    return {"rows": ROWS, "distinct_layouts": int(len(ok)), "seconds": s,
            "layouts_per_s": ROWS / s}


def search_time() -> dict:
    kw = dict(model=MODEL, global_batch=BATCH, tokens=TOKENS)
    out = {}
    res = traincost.search(ACC, DEVICES, **kw)
    out["default_space"] = {"seconds": best_of(lambda: traincost.search(ACC, DEVICES, **kw)),
                            "enumerated": res.layouts_enumerated,
                            "evaluated": res.layouts_evaluated}
    # every tp up to the domain, every micro-batch dividing B, every vpp dividing L
    space = {"tp": range(1, 9), "micro_batch": layout.divisors(BATCH),
             "vpp": layout.divisors(96)}
    res = traincost.search(ACC, DEVICES, space=space, **kw)
    out["exhaustive_space"] = {
        "seconds": best_of(lambda: traincost.search(ACC, DEVICES, space=space, **kw)),
        "enumerated": res.layouts_enumerated, "evaluated": res.layouts_evaluated}
    for v in out.values():
        v["evaluated_per_s"] = v["evaluated"] / v["seconds"]
        v["enumerated_per_s"] = v["enumerated"] / v["seconds"]
    out["best"] = {k: (int(res.best["time"][k]) if k != "recompute"
                       else res.best["time"][k])
                   for k in ("tp", "pp", "dp", "vpp", "zero", "micro_batch", "recompute")}
    return out


def estimate_time() -> dict:
    kw = dict(accelerator=ACC, devices=DEVICES, model=MODEL, global_batch=BATCH, tokens=TOKENS)
    traincost.estimate(**kw, **FIXED)
    n = 200
    fixed_ms = best_of(lambda: [traincost.estimate(**kw, **FIXED) for _ in range(n)],
                       repeat=5) / n * 1e3
    traincost.estimate(**kw)
    t0 = time.perf_counter()
    for _ in range(10):
        traincost.estimate(**kw)
    open_ms = (time.perf_counter() - t0) / 10 * 1e3
    return {"fully_specified_ms": fixed_ms, "layout_searched_ms": open_ms}


def cli_time() -> dict:
    exe = os.path.join(os.path.dirname(sys.executable), "traincost")
    cmds = {
        "search": [exe, "search", "--accelerators", ACC, "--devices", str(DEVICES), "--model",
                   MODEL, "--global-batch", str(BATCH), "--tokens", str(TOKENS), "--top", "5"],
        "estimate": [exe, "estimate", "--accelerator", ACC, "--devices", str(DEVICES),
                     "--model", MODEL, "--global-batch", str(BATCH), "--tokens", str(TOKENS)],
    }
    out = {}
    for name, cmd in cmds.items():
        subprocess.run(cmd, check=True, capture_output=True)          # warm the file cache
        out[f"{name}_s"] = best_of(lambda: subprocess.run(cmd, check=True, capture_output=True))
    return out


def main() -> None:
    result = {"case": f"{MODEL} on {DEVICES} x {ACC}, global batch {BATCH}",
              "evaluate": evaluate_rate(), "search": search_time(),
              "estimate": estimate_time(), "cli": cli_time()}
    if "--json" in sys.argv:
        print(json.dumps(result, indent=2))
        return
    e, s, t, c = result["evaluate"], result["search"], result["estimate"], result["cli"]
    print(result["case"], "(one core)")
    print(f"  evaluate       {e['layouts_per_s']:>12,.0f} layouts/s   ({e['rows']:,} rows in "
          f"{e['seconds']:.3f} s; target >= 1,000,000/s)")
    for name in ("default_space", "exhaustive_space"):
        r = s[name]
        print(f"  search         {r['seconds']:>12.3f} s          ({name.replace('_', ' ')}: "
              f"{r['enumerated']:,} layouts walked, {r['evaluated']:,} valid evaluated, "
              f"{r['evaluated_per_s']:,.0f} evaluated/s; target < 5 s)")
    print(f"  best layout    {s['best']}")
    print(f"  estimate       {t['fully_specified_ms']:>12.3f} ms         (fully specified; "
          f"target < 1 ms; {t['layout_searched_ms']:.1f} ms with the layout searched)")
    print(f"  CLI            {c['search_s']:>12.2f} s          (traincost search, wall clock; "
          f"traincost estimate {c['estimate_s']:.2f} s)")


if __name__ == "__main__":
    main()
