"""Memory of a layout search stays bounded as the number of layouts grows.

Run:  python benchmarks/bench_memory.py [--json]

A synthetic enumeration: GPT-3 175B (global batch 1536) searched on 21 device counts
(2^k and 3 x 2^k, 64 to 65,536) on 2 accelerators (about 1e6 candidate layouts) and then on
all 23 catalog accelerators (about 1.3e7). tracemalloc's peak (numpy reports its buffers to
it) is compared with what holding every candidate's layout columns alone would take
(8 int64 columns each). A measurement to read, not an assertion.
"""

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_var] = "1"

import json  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
import tracemalloc  # noqa: E402

import traincost  # noqa: E402
from traincost.search import DEFAULT_CHUNK_SIZE  # noqa: E402

KW = dict(model="gpt3-175b", global_batch=1536, tokens=300e9, top=10)
COUNTS = sorted({2**k for k in range(6, 17)} | {3 * 2**k for k in range(5, 15)})


def run(accelerators: list) -> dict:
    traincost.search(accelerators[:1], COUNTS[:1], **KW)          # imports, catalogs, caches
    tracemalloc.start()
    t0 = time.perf_counter()
    res = traincost.search(accelerators, COUNTS, **KW)
    elapsed = time.perf_counter() - t0
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return {"accelerators": len(accelerators), "device_counts": len(COUNTS),
            "layouts_enumerated": res.layouts_enumerated,
            "layouts_evaluated": res.layouts_evaluated, "seconds": elapsed,
            "peak_mib": peak / 2**20,
            "all_candidates_mib": res.layouts_enumerated * 8 * 8 / 2**20,
            "pareto_sizes": {k: len(v) for k, v in res.pareto.items()}}


def main() -> None:
    ids = list(traincost.accelerators().index)
    rows = [run(ids[:2]), run(ids)]
    if "--json" in sys.argv:
        print(json.dumps({"chunk_size": DEFAULT_CHUNK_SIZE, "runs": rows}, indent=2))
        return
    print(f"search memory, chunk size {DEFAULT_CHUNK_SIZE:,} (tracemalloc peak)")
    for r in rows:
        print(f"  {r['layouts_enumerated']:>12,} layouts walked ({r['layouts_evaluated']:,} valid "
              f"evaluated; {r['accelerators']} accelerators x {r['device_counts']} device "
              f"counts) in {r['seconds']:.1f} s: peak {r['peak_mib']:.0f} MiB (holding every "
              f"candidate's layout alone: {r['all_candidates_mib']:,.0f} MiB); Pareto fronts "
              f"{r['pareto_sizes']}")


if __name__ == "__main__":
    main()
