"""Time of one estimate's intervals and sensitivity through one evaluate call each.

Run:  python benchmarks/bench_uncertainty.py [--json]

Issue 22's target: 10,000 draws of one configuration in under 1 s on one core. The draws of
the model's held-out error and of the sourced input ranges (traincost.uncertainty) run the
estimate's layout through the vectorised traincost.model.evaluate once; the Sobol'
sensitivity (SALib, 512 base samples, N (D + 2) rows) once more, plus SALib's estimator.
A measurement to read, not an assertion.
"""

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_var] = "1"

import json  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402

import traincost  # noqa: E402
from traincost.uncertainty import intervals, sensitivity  # noqa: E402

CASES = (("h100-sxm5-80gb", 64, dict(model="llama3.1-8b", global_batch=512, tokens=1e11)),
         ("a100-sxm4-80gb", 1024, dict(model="gpt3-175b", global_batch=1536, tokens=3e11)),
         ("tpu-v5p", 256, dict(model="maxtext-32b", global_batch=1024, tokens=1e11)))


def main() -> int:
    rows = []
    for acc, n, kw in CASES:
        est = traincost.estimate(acc, n, **kw)
        intervals(est, draws=100)                      # warm: imports, catalogs
        sensitivity(est, base_samples=64)
        best = min(_timed(est) for _ in range(5))
        sens = min(_timed(est, sensitivity) for _ in range(3))
        rows.append({"accelerator": acc, "devices": n, "model": kw["model"],
                     "draws": 10_000, "seconds": best, "sensitivity_seconds": sens})
    if "--json" in sys.argv:
        print(json.dumps(rows, indent=1))
    else:
        for r in rows:
            print(f"{r['model']:14s} on {r['devices']:5d} x {r['accelerator']:15s} "
                  f"{r['draws']:,} draws in {r['seconds'] * 1e3:.1f} ms, sensitivity in "
                  f"{r['sensitivity_seconds'] * 1e3:.0f} ms")
    return 0


def _timed(est, what=None) -> float:
    t0 = time.perf_counter()
    if what is None:
        intervals(est, draws=10_000, seed=0)
    else:
        what(est, seed=0)
    return time.perf_counter() - t0


if __name__ == "__main__":
    raise SystemExit(main())
