"""The one table of inputs (traincost.options) and what is generated from it."""

from __future__ import annotations

import importlib
import inspect

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
    assert o.name in (function.__doc__ or "")


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


def test_sweep_columns_come_from_the_table():
    assert sweep_module._SITE_COLUMNS == ("region", "grid_gco2e_per_kwh", "pue",
                                          "price_usd_per_h", "power_cap_w", "price_model")
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
    from traincost.assemble import build_workload, columns
    acc = traincost.catalog.accelerator("a100-sxm4-80gb")
    wl = build_workload("llama2-7b", global_batch=64)
    lay = {"tp": 1, "pp": 1, "cp": 1, "ep": 1, "vpp": 1, "zero": 1, "micro_batch": 1,
           "recompute": 1}
    out = model.evaluate(columns(acc, wl, traincost.catalog.site(None), "bf16", 8, lay))
    parts = {f"step_{k}_s" for k in model.STEP_PARTS} | {f"memory_{k}_bytes"
                                                         for k in model.MEMORY_PARTS}
    assert set(out) == {name for name, _, _ in model.OUTPUTS} | parts
    for name, unit, _ in model.OUTPUTS:
        assert f"[{unit}]" in getattr(traincost.Estimate, name).__doc__
