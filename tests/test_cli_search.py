"""`traincost search`: JSON keys, human output, exit codes and one-line errors."""

import json
import sys

import pytest

from clihelpers import run, with_flags
from traincost.cli import main

BASE = ["search", "--accelerators", "a100-sxm4-80gb,h100-sxm5-80gb", "--devices", "32,64",
        "--model", "llama2-7b", "--global-batch", "512", "--tokens", "1e10"]


def test_json_keys(capsys):
    rc, out, _ = run(BASE + ["--top", "4", "--objective", "energy", "--json"], capsys)
    assert rc == 0
    d = json.loads(out)
    for key in ("objective", "layouts_enumerated", "layouts_evaluated", "layouts_fit",
                "layouts_feasible", "elapsed_s", "memory_headroom", "constraints", "best", "top",
                "pareto", "pareto_sizes", "mfu_band", "warnings", "notes"):
        assert key in d, key
    assert d["objective"] == "energy" and len(d["top"]) == 4
    assert set(d["best"]) == {"time", "energy", "cost", "carbon"}
    assert d["top"][0]["facility_energy_mwh"] == d["best"]["energy"]["facility_energy_mwh"]
    assert set(d["pareto"]) == {"time_cost", "time_energy", "time_carbon"}
    assert d["pareto_sizes"]["time_cost"] == len(d["pareto"]["time_cost"]) >= 1
    row = d["top"][0]
    assert row["tp"] * row["pp"] * row["dp"] * row["cp"] == row["devices"]
    assert {"accelerator", "mfu", "memory_gib_per_device", "memory_warning", "train_time_days",
            "cost_usd", "co2e_t"} <= set(row)


def test_constraints_reach_the_search(capsys):
    rc, out, _ = run(BASE + ["--max-days", "1e6", "--max-cost-usd", "1e12", "--max-co2e-t",
                             "1e9", "--memory-headroom", "0.2", "--json"], capsys)
    d = json.loads(out)
    assert rc == 0 and d["memory_headroom"] == 0.2
    assert d["constraints"] == {"max_days": 1e6, "max_cost_usd": 1e12, "max_co2e_t": 1e9}
    rc, out, _ = run(BASE + ["--max-days", "1e-6", "--json"], capsys)
    d = json.loads(out)
    assert rc == 0 and d["layouts_feasible"] == 0 and d["best"]["time"] is None


def test_human_output(capsys):
    rc, out, err = run(BASE + ["--top", "3", "--memory-headroom", "0"], capsys)
    assert rc == 0 and err == ""
    assert out.startswith("searched ") and " layouts in " in out and " s: " in out
    assert "top 3 by time" in out and "Pareto fronts:" in out and "MFU vs published" in out
    assert "warning:" in out          # headroom 0: some top layouts use > 90% of HBM


def test_all_accelerators(capsys):
    rc, out, _ = run(["search", "--accelerators", "all", "--devices", "16", "--model",
                      "gpt2-small", "--global-batch", "64", "--tokens", "1e9", "--json"], capsys)
    d = json.loads(out)
    assert rc == 0 and d["layouts_feasible"] > 0
    assert len({r["accelerator"] for r in d["top"]}) >= 1


@pytest.mark.parametrize("flags,name", [
    (["--devices", "0"], "devices"), (["--devices", "x"], "devices"),
    (["--accelerators", "a100-sxm4-80gb,warp-drive"], "accelerator"),
    (["--objective", "speed"], "objective"), (["--top", "0"], "top"),
    (["--max-days", "-1"], "max-days"), (["--max-cost-usd", "abc"], "max-cost-usd"),
    (["--memory-headroom", "1.5"], "memory-headroom"), (["--tp", "7"], "tp"),
    (["--global-batch", "abc"], "global-batch"), (["--region", "atlantis"], "region"),
    (["--model", "gpt-99"], "model"), (["--precision", "fp8", "--accelerators",
                                        "a100-sxm4-80gb"], "precision"),
])
def test_bad_input_exits_2_with_one_line(flags, name, capsys):
    with pytest.raises(SystemExit) as exc:
        sys.exit(main(with_flags(BASE, flags) + ["--json"]))
    out = capsys.readouterr()
    assert exc.value.code == 2
    assert out.out == ""
    assert len(out.err.strip().splitlines()) == 1 and name in out.err
