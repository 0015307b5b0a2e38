"""Write the golden tables the architecture refactor (issue 20) is checked against.

Run once, before a refactor starts, from the repository root::

    python tests/golden/make_golden.py

It writes, beside this file:

* ``sweep_inputs.csv.gz`` - the sweep's input table, and ``sweep.csv.gz`` every contract column of a broad :func:`traincost.sweep`: all
  accelerators, dense and MoE presets, every software-stack knob, every precision, fitting
  and non-fitting layouts and layouts that break a rule (several thousand rows, drawn with a
  fixed seed; kept once drawn, since the draw depends on the catalog: ``--new-inputs``
  draws them again);
* ``estimates.json`` - :func:`traincost.estimate` with the layout left open (the search picks
  it) for a few dozen configurations, each as its ``to_dict()``;
* ``validate.json`` - ``traincost validate --json``.

``tests/test_golden.py`` recomputes the same and compares: a refactor ends with no
difference beyond float round-off. A difference that is a bug fix regenerates the table in
its own commit, with its own test, and says so.
"""

from __future__ import annotations

import json
import pathlib
import sys

import numpy as np
import pandas as pd

HERE = pathlib.Path(__file__).parent
SEED = 20261201
ROWS = 6000

DENSE = ("gpt3-175b", "llama2-7b", "llama3.1-70b", "llama3.1-405b", "megatron-1.7b",
         "nemotron4-15b", "bloom-176b", "mpt-7b", "gpt2-small", "t5-11b", "llama2-34b")
MOE = ("mixtral-8x7b", "deepseek-v3")
KERNELS = ("auto", "flash", "cudnn", "materialized")
OVERLAPS = ("none", "tp", "pp", "dp", "ep", "tp,pp,dp", "tp,pp,dp,ep")
PRECISIONS = ("bf16", "fp16", "fp8", "tf32")
RECOMPUTE = ("none", "selective", "full")
REGIONS = (None, "aws-us-east-1", "FRA")


def sweep_table(seed: int = SEED, rows: int = ROWS) -> pd.DataFrame:
    """The golden sweep's input table: one random configuration per row, fixed seed."""
    import traincost
    from traincost import catalog

    rng = np.random.default_rng(seed)
    accs = catalog.accelerators()
    out = []
    models = DENSE + MOE
    while len(out) < rows:
        acc_id = str(rng.choice(accs.index))
        acc = catalog.accelerator(acc_id)
        precision = str(rng.choice(PRECISIONS))
        try:
            acc.peak_flop_per_s(precision)
        except ValueError:
            precision = acc.default_precision
        model = str(rng.choice(models))
        moe = model in MOE
        devices = int(rng.choice((8, 16, 64, 256, 512, 2048, 4096)))
        row = {
            "accelerator": acc_id, "devices": devices, "model": model,
            "global_batch": int(rng.choice((256, 512, 1024, 2048))),
            "tp": int(rng.choice((1, 2, 4, 8))), "pp": int(rng.choice((1, 2, 4, 8))),
            "cp": int(rng.choice((1, 1, 2))),
            "ep": int(rng.choice((1, 2, 8))) if moe else 1,
            "vpp": int(rng.choice((1, 1, 2))), "zero": int(rng.choice((0, 1, 2, 3))),
            "micro_batch": int(rng.choice((1, 2, 4))),
            "recompute": str(rng.choice(RECOMPUTE)),
            "precision": precision,
            "attention_kernel": str(rng.choice(KERNELS)),
            "parallel_block": bool(rng.random() < 0.2),
            "overlap": str(rng.choice(OVERLAPS)),
            "balanced_pipeline": bool(rng.random() < 0.2),
            "fp8_activations": bool(model == "deepseek-v3" and precision == "fp8"
                                    and rng.random() < 0.5),
            "optimizer_state": str(rng.choice(("fp32", "bf16"))),
            "seq_len": int(rng.choice((2048, 4096, 8192))),
            "tokens": float(rng.choice((1e11, 2e12))),
            "region": rng.choice(REGIONS),
            "pue": float(rng.choice((np.nan, 1.1, 1.4))),
            "price_model": str(rng.choice(("rental", "rental", "ownership"))),
            "power_cap_w": (np.nan if rng.random() < 0.8
                            else float(acc.idle_w + (acc.tdp_w - acc.idle_w) * 0.75)),
        }
        if row["price_model"] == "ownership" and not np.isfinite(acc.capex_usd):
            row["price_model"] = "rental"
        if row["region"] is None:
            row["grid_gco2e_per_kwh"] = float(rng.choice((50.0, 400.0)))
        try:      # keep only rows whose entities are valid: rule breaks stay (invalid rows)
            traincost.sweep(pd.DataFrame([row]))
        except ValueError:
            continue
        out.append(row)
    return pd.DataFrame(out)


#: configurations whose layout the search chooses
ESTIMATES = (
    dict(accelerator="h100-sxm5-80gb", devices=512, model="llama2-70b", global_batch=1024),
    dict(accelerator="a100-sxm4-80gb", devices=1536, model="gpt3-175b", global_batch=1536),
    dict(accelerator="h100-sxm5-80gb", devices=256, model="mixtral-8x7b", global_batch=512),
    dict(accelerator="h800-sxm5-80gb", devices=2048, model="deepseek-v3", global_batch=4096,
         precision="fp8"),
    dict(accelerator="tpu-v5p", devices=256, model="llama2-7b", global_batch=512),
    dict(accelerator="mi300x", devices=64, model="llama3.1-8b", global_batch=256),
    dict(accelerator="gaudi2", devices=64, model="mixtral-8x7b", global_batch=256),
    dict(accelerator="v100-sxm2-32gb", devices=1024, model="gpt3-175b", global_batch=1536),
    dict(accelerator="b200", devices=1024, model="llama3.1-405b", global_batch=2048,
         precision="fp8", overlap="tp,pp,dp"),
    dict(accelerator="gb200", devices=512, model="llama3.1-70b", global_batch=1024,
         region="FRA", price_model="ownership"),
    dict(accelerator="a100-sxm4-40gb", devices=8, model="llama2-7b", global_batch=64,
         power_cap=350),
    dict(accelerator="l40s", devices=16, model="gpt2-small", global_batch=64),
    dict(accelerator="h200-sxm-141gb", devices=128, model="nemotron4-340b", global_batch=256,
         optimizer_state="bf16"),
    dict(accelerator="h100-sxm5-80gb", devices=64, layers=32, hidden=4096, heads=32,
         seq_len=4096, global_batch=512, tp=8),
    dict(accelerator="a100-sxm4-80gb", devices=4096, model="llama2-70b", global_batch=2048,
         attention_kernel="materialized", recompute="selective"),
    dict(accelerator="trainium2", devices=128, model="llama2-13b", global_batch=512),
)


def read_inputs() -> pd.DataFrame:
    """The saved sweep input table, as the golden sweep and its test both read it."""
    return pd.read_csv(HERE / "sweep_inputs.csv.gz")


def estimates() -> list:
    """``to_dict()`` of each configuration in :data:`ESTIMATES` (search on)."""
    import traincost
    return [traincost.estimate(**kw).to_dict() for kw in ESTIMATES]


def validate_json() -> dict:
    """What ``traincost validate --json`` prints, parsed."""
    import contextlib
    import io
    from traincost import cli
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        rc = cli.main(["validate", "--json"])
    if rc:
        raise SystemExit(f"validate --json exited {rc}")
    return json.loads(buf.getvalue())


def main() -> int:
    import traincost
    # the input rows are the guard's fixed sample: drawn once, kept (their draw depends on the
    # catalog, e.g. which devices have a purchase price); --new-inputs draws them again
    if "--new-inputs" in sys.argv or not (HERE / "sweep_inputs.csv.gz").exists():
        sweep_table().to_csv(HERE / "sweep_inputs.csv.gz", index=False, float_format="%.17g")
    out = traincost.sweep(read_inputs())
    out.to_csv(HERE / "sweep.csv.gz", index=False, float_format="%.17g")
    (HERE / "estimates.json").write_text(json.dumps(
        [{"inputs": kw, "result": r} for kw, r in zip(ESTIMATES, estimates())], indent=1,
        default=str) + "\n")
    (HERE / "validate.json").write_text(json.dumps(validate_json(), indent=1) + "\n")
    print(f"wrote {len(out)} sweep rows ({int(out['valid'].sum())} valid, "
          f"{int((out['valid'] & ~out['fits_in_memory']).sum())} valid but not fitting), "
          f"{len(ESTIMATES)} estimates and the validation")
    return 0


if __name__ == "__main__":
    sys.exit(main())
