"""The one table of inputs (traincost.options) and what is generated from it."""

from __future__ import annotations

import importlib
import inspect
import re

import pytest

import traincost
from traincost import cli, model, options

sweep_module = importlib.import_module("traincost.sweep")   # the module, not the function


def _flags(sub: str) -> set:
    parser = cli.build_parser()
    action = next(a for a in parser._actions if a.dest == "command")
    return {s for a in action.choices[sub]._actions for s in a.option_strings}


@pytest.mark.parametrize("sub", ["estimate", "compare", "search"])
def test_every_declared_input_is_a_flag(sub):
    flags = _flags(sub)
    assert {o.flag for o in options.INPUTS} <= flags
    assert "--micro-batch" in flags and "--price-model" in flags


def test_every_flag_has_help():
    parser = cli.build_parser()
    action = next(a for a in parser._actions if a.dest == "command")
    for sub in ("estimate", "compare", "search"):
        for a in action.choices[sub]._actions:
            assert a.help, f"{sub} {a.option_strings} has no help"


@pytest.mark.parametrize("function", [traincost.estimate, traincost.search])
def test_every_declared_input_is_a_keyword(function):
    params = inspect.signature(function).parameters
    for o in options.INPUTS:
        assert o.name in params, o.name
        assert params[o.name].kind is inspect.Parameter.KEYWORD_ONLY
        assert params[o.name].default == o.default
        assert f"\n{o.name} : " in inspect.getdoc(function), f"{o.name} not documented"


def test_unknown_keyword_is_a_type_error():
    with pytest.raises(TypeError, match="unexpected keyword argument 'tensor_parallel'"):
        traincost.estimate(accelerator="h100-sxm5-80gb", devices=8, model="llama2-7b",
                           global_batch=64, tensor_parallel=8)


def test_cli_keywords_reach_the_api():
    """Every flag's value reaches the keyword of the same name: a parsed command line
    becomes exactly the declared keywords."""
    args = cli.build_parser().parse_args(
        ["estimate", "--accelerator", "h100-sxm5-80gb", "--devices", "8", "--model",
         "llama2-7b", "--global-batch", "64", "--tp", "2", "--power-cap", "500",
         "--overlap", "tp,dp"])
    kw = cli._kwargs(args)
    assert set(kw) == set(options.names())
    assert (kw["tp"], kw["power_cap"], kw["overlap"], kw["price_model"]) == (2, 500.0, "tp,dp",
                                                                            "rental")


def test_sweep_reads_yes_and_no_as_written():
    """'false' in a sweep cell is False: a GPT-3 with a gated MLP would have 232.6B
    parameters (issue 25), the plain one 175B."""
    import pandas as pd
    out = traincost.sweep(pd.DataFrame({"accelerator": "a100-sxm4-80gb", "devices": 1024,
                                        "model": "gpt3-175b", "global_batch": 1536,
                                        "gated_mlp": ["false", "no", "true"], "tp": 8,
                                        "pp": 8}))
    assert out["params"].iloc[0] == out["params"].iloc[1] < 180e9 < out["params"].iloc[2]
    with pytest.raises(ValueError, match=r"gated-mlp: 'maybe' is not yes or no.*\(row 0\)"):
        traincost.sweep(pd.DataFrame({"accelerator": ["a100-sxm4-80gb"], "devices": [8],
                                      "model": ["gpt3-175b"], "global_batch": [8],
                                      "gated_mlp": ["maybe"]}))


def test_sweep_columns_come_from_the_table():
    assert sweep_module._SITE_COLUMNS == ("region", "grid_gco2e_per_kwh", "pue",
                                          "wue_l_per_kwh", "price_usd_per_h", "price_model")
    assert sweep_module._SYSTEM_COLUMNS == ("power_cap_w", "scaleup_domain_devices",
                                            "scaleup_gbps", "scaleout_gbps",
                                            "scaleout_oversubscription",
                                            "interruption_rate", "interruption_minutes",
                                            "sites", "site_link_gbps",
                                            "site_link_latency_ms")
    assert "optimizer_state" in sweep_module.STACK_COLUMNS
    assert "precision" not in sweep_module.STACK_COLUMNS


def test_each_input_has_one_container_and_a_unit():
    assert len({o.name for o in options.INPUTS}) == len(options.INPUTS)
    for o in options.INPUTS:
        assert o.container in options.CONTAINERS and o.unit
        assert o.help and not o.help.endswith(".")


def test_bad_declarations_are_refused():
    with pytest.raises(ValueError, match="container: 'Device'"):
        options.Option("x", "layout", "Device", "int", "-", "x")
    with pytest.raises(ValueError, match="kind: 'number'"):
        options.Option("x", "layout", "Job", "number", "-", "x")


def test_model_outputs_are_declared():
    """Every output of evaluate is in model.OUTPUTS or a breakdown part, and each is an
    attribute of Estimate with its unit in the doc."""
    from traincost.assemble import columns, job_inputs, system
    lay = {"tp": 1, "pp": 1, "cp": 1, "ep": 1, "vpp": 1, "zero": 1, "micro_batch": 1,
           "recompute": 1}
    out = model.evaluate(columns(system("a100-sxm4-80gb", 8),
                                 job_inputs(model="llama2-7b", global_batch=64), "bf16", lay))
    parts = {f"step_{k}_s" for k in model.STEP_PARTS} | {f"memory_{k}_bytes"
                                                         for k in model.MEMORY_PARTS}
    assert set(out) == {name for name, _, _ in model.OUTPUTS} | parts
    for name, unit, _ in model.OUTPUTS:
        assert f"[{unit}]" in getattr(traincost.Estimate, name).__doc__


# ---- every input checked once, from its declaration (issue 25) ------------------------
BASE = dict(accelerator="h100-sxm5-80gb", devices=64, model="llama2-7b", global_batch=512)


@pytest.mark.parametrize("name, value, words", [
    ("tp", 10**20, "tp: 100000000000000000000 must be at most 16,777,216"),
    ("layers", 10**6, "layers: 1000000 must be at most 4,096"),
    ("tokens", "2e12", "tokens: '2e12' is not a number"),
    ("tp", "8.0", "tp: '8.0' is not a whole number"),
    ("tp", 2.5, "tp: 2.5 is not a whole number"),
    ("pp", True, "pp: True is not a whole number"),
    ("power_cap", float("nan"), "power-cap: nan is not a finite number"),
    ("price_per_hour", float("inf"), "price-per-hour: inf is not a finite number"),
    ("ffn_hidden", 0, "ffn-hidden: 0 must be at least 1"),
    ("kv_heads", 0, "kv-heads: 0 must be at least 1"),
    ("gated_mlp", "perhaps", "gated-mlp: 'perhaps' is not yes or no"),
    ("recompute", "some", "recompute: 'some' is not one of none, selective, full"),
    ("zero", 4, "zero: 4 is not one of 0, 1, 2, 3"),
    ("pue", 0.5, "pue: 0.5 must be at least 1"),
])
def test_bad_values_are_refused_by_name(name, value, words):
    with pytest.raises(ValueError) as err:
        traincost.estimate(**{**BASE, name: value})
    assert words in str(err.value)


def test_devices_past_the_maximum_are_refused():
    """Not a negative memory, time and cost from a 64-bit wrap-around."""
    with pytest.raises(ValueError, match="devices: 9223372036854775807 must be at most"):
        traincost.estimate(**{**BASE, "devices": 2**63 - 1})


def test_yes_no_spellings_mean_what_they_say():
    """The string 'false' is False (not bool('false') == True), as in sweep's columns."""
    assert [options.check("gated_mlp", v) for v in ("False", "no", "0", 0, "TRUE", "on")] \
        == [False, False, False, False, True, True]


def test_tokens_fewer_than_one_step_are_refused():
    with pytest.raises(ValueError, match=r"tokens: 1000 is fewer than one optimizer step's "
                                         r"2,097,152"):
        traincost.estimate(**{**BASE, "tokens": 1000})


@pytest.mark.parametrize("flags", [["--tp", "7"], ["--devices", "0"], ["--model", "nope"],
                                   ["--pue", "0.5"], ["--power-cap", "nan"]])
def test_compare_exits_2_on_bad_input(flags, capsys):
    argv = ["compare", "--accelerators", "a100-sxm4-80gb,h100-sxm5-80gb", "--devices", "64",
            "--model", "llama2-7b", "--global-batch", "512"]
    if flags[0] == "--devices":
        argv[4] = flags[1]
        flags = []
    rc = cli.main(argv + flags)
    out, err = capsys.readouterr()
    assert rc == 2 and out == ""
    assert err.startswith("traincost: error: ") and err.count("\n") == 1


def test_compare_names_no_accelerator(capsys):
    rc = cli.main(["compare", "--accelerators", ",,,", "--devices", "64", "--model",
                   "llama2-7b", "--global-batch", "512"])
    assert rc == 2 and "accelerators: ',,,' names no accelerator" in capsys.readouterr().err


def test_compare_keeps_a_device_that_cannot_run_as_a_row():
    """An infeasible row is a result: fp8 on an A100 (no fp8 peak) beside an H100 that has it."""
    df = traincost.compare(["a100-sxm4-80gb", "h100-sxm5-80gb"], 64, model="llama2-7b",
                           global_batch=512, precision="fp8")
    assert df.loc["a100-sxm4-80gb", "note"] and not df.loc["h100-sxm5-80gb", "note"]


def test_validate_refuses_an_empty_case_id(capsys):
    """`validate --case ''` is an error, not the whole table with exit 0."""
    assert cli.main(["validate", "--case", ""]) == 2
    out, err = capsys.readouterr()
    assert out == "" and "case: an empty id names no published run" in err


def test_a_rental_price_with_the_ownership_model_is_refused():
    """--price-model ownership --price-per-hour 5 would ignore the price (issue 25)."""
    with pytest.raises(ValueError, match="price-per-hour: 5 USD/h is a rental price"):
        traincost.estimate(**BASE, price_model="ownership", price_per_hour=5)


@pytest.mark.parametrize("column, value, shown", [("tp", 10**20, "100000000000000000000"),
                                                  ("devices", 2**63 - 1, "9223372036854775807"),
                                                  ("devices", True, "True"),
                                                  ("tp", "8", "'8'")])
def test_sweep_layout_columns_are_bounded_numbers(column, value, shown):
    """A 20-digit tp used to wrap to a negative int64 and read as a broken rule; a True
    device count used to run one device."""
    import pandas as pd
    table = pd.DataFrame([{"accelerator": "h100-sxm5-80gb", "devices": 64, "model": "llama2-7b",
                           "global_batch": 512, column: value}])
    with pytest.raises(ValueError, match=rf"{column}: {re.escape(shown)} \(row 0\) must be a "
                                         "whole number from 1 to 16,777,216"):
        traincost.sweep(table)


@pytest.mark.parametrize("flags, words", [(["--devices", "8,,16"], "not a comma-separated list"),
                                          (["--top", "99999999999999999999"],
                                           "top: 99999999999999999999 must be at most")])
def test_search_flags_are_bounded_and_whole(flags, words, capsys):
    argv = ["search", "--accelerators", "h100-sxm5-80gb", "--devices", "64", "--model",
            "llama2-7b", "--global-batch", "512"]
    if flags[0] == "--devices":
        argv[4] = flags[1]
    else:
        argv += flags
    try:
        rc = cli.main(argv)
    except SystemExit as exc:                         # argparse's refusal
        rc = exc.code
    out, err = capsys.readouterr()
    assert rc == 2 and out == "" and words in err
