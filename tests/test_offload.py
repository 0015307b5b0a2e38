"""Activation offload (``recompute="offload"``), a recompute alternative (issue 21).

The toy of test_model (one head of 4, h 4, MLP 8 not gated, two tokens, no flash kernel)
keeps, per layer and micro-batch, nothing recomputed (Korthikanti et al. 2022, arXiv:
2205.05198, Sec. 4.1, at 16 bits: 11 sbh + 5 a s^2 b for attention, 3 sbh + 4 s b f for
the MLP with f = 2h, 4 sbh for the two norms' inputs):
sb = 2: attention 2 x 44 = 88, MLP 2 x (12 + 32) = 88, norms 2 x 16 = 32, scores
5 x 1 x 2 x 2 = 20: 228 bytes.
"""

from __future__ import annotations

import numpy as np
import pytest

import traincost
from traincost import model
from traincost.assumptions import DEFAULT as A
from traincost.workload import RECOMPUTE_CODES

from test_model import toy

FULL = 228.0                          # one toy layer's activations, one micro-batch [bytes]
OFFLOAD = RECOMPUTE_CODES["offload"]


def test_offload_keeps_two_layers_and_sends_the_rest_to_the_host():
    """Four toy layers, one micro-batch in flight: without recompute the device holds 4 x 228
    bytes plus the loss's; offloading, it keeps the last layer's and one on its way (2 x 228)
    plus the loss's, and the host holds the other 2 x 228 = 456 bytes."""
    none = model.evaluate(toy(layers=4))
    off = model.evaluate(toy(layers=4, recompute=OFFLOAD, host_link_bytes_per_s=1e12,
                             host_memory_bytes=1e12))
    assert none["memory_activations_bytes"] - off["memory_activations_bytes"] == \
        pytest.approx(2 * FULL)
    assert off["offloaded_bytes_per_device"] == pytest.approx(2 * FULL)
    assert none["offloaded_bytes_per_device"] == 0.0


def test_offload_must_fit_in_host_memory():
    """The 456 offloaded bytes need 456 bytes of host memory per device."""
    base = dict(layers=4, recompute=OFFLOAD, host_link_bytes_per_s=1e12)
    assert bool(model.evaluate(toy(**base, host_memory_bytes=2 * FULL))["fits_in_memory"])
    assert not bool(model.evaluate(toy(**base, host_memory_bytes=2 * FULL - 1))["fits_in_memory"])


def test_offload_shows_only_the_copy_time_the_compute_does_not_hide():
    """Each layer's 228 bytes go out under the next layer's forward (576 FLOP at the
    achieved rate r) and back under its backward (2 x 576 / r). A host rate that makes the
    copy take 1000 s at the assumed copy efficiency exposes 1000 - 576/r of the forward's
    and nothing of the backward's (1152 / r = 1507 s > 1000 s), for each of the 4 layers."""
    r = A.in_model_matmul_fraction
    rate = FULL / 1000.0 / A.host_copy_efficiency
    none = model.evaluate(toy(layers=4))["step_compute_s"]
    off = model.evaluate(toy(layers=4, recompute=OFFLOAD, host_link_bytes_per_s=rate,
                             host_memory_bytes=1e12))["step_compute_s"]
    assert 1000.0 < 1152 / r
    assert off - none == pytest.approx(4 * (1000.0 - 576 / r), rel=1e-12)
    fast = model.evaluate(toy(layers=4, recompute=OFFLOAD, host_link_bytes_per_s=1e12,
                              host_memory_bytes=1e12))["step_compute_s"]
    assert fast == none                   # a fast link hides every copy: no recompute cost


def test_offload_recomputes_nothing():
    """Offload runs each layer's forward once: FLOP per token as without recompute."""
    none = model.evaluate(toy(layers=4))
    off = model.evaluate(toy(layers=4, recompute=OFFLOAD, host_link_bytes_per_s=1e12,
                             host_memory_bytes=1e12))
    assert off["hardware_flop_per_token"] == none["hardware_flop_per_token"]


def test_a_device_without_a_published_host_link_names_the_field():
    with pytest.raises(ValueError, match="recompute: offload needs tpu-v5p's host link"):
        traincost.estimate(accelerator="tpu-v5p", devices=256, model="llama2-7b",
                           global_batch=256, tp=1, pp=1, recompute="offload")


def test_the_search_does_not_pick_offload_unless_asked():
    """Offload is a stack's stated choice, not a searched one (layout.SEARCH_SPACE)."""
    res = traincost.search(accelerators=["h100-sxm5-80gb"], devices=[64], model="llama2-13b",
                           global_batch=256, pp=1, space={"tp": [1, 2, 4, 8]}, top=10_000)
    assert set(res.top["recompute"]) == {"none", "selective", "full"}


def test_offload_moves_the_activations_a_real_layout_holds():
    """Llama 2 70B on 8 H100s at tp 8, no pipeline: what offload takes off the device is what
    the host holds, and it can only add time to the step (the copies hide or show)."""
    kw = dict(accelerator="h100-sxm5-80gb", devices=8, model="llama2-70b", global_batch=64,
              tp=8, pp=1, zero=3, micro_batch=1)
    none = traincost.estimate(**kw, recompute="none")
    off = traincost.estimate(**kw, recompute="offload")
    moved = none.report["memory_activations_gib"] - off.report["memory_activations_gib"]
    assert off.report["offloaded_gib_per_device"] == pytest.approx(moved)
    assert moved > 0.9 * none.report["memory_activations_gib"]      # 78 of 80 layers
    assert off.report["step_time_s"] >= none.report["step_time_s"]


def test_an_offloading_estimate_says_what_it_assumed():
    """The caveat states the host-side figures the copies were priced with: H100 SXM's PCIe
    Gen5 x16 at 64 GB/s each way x 0.80 = 51.2 GB/s, and DGX H100's 2 TB over 8 GPUs."""
    est = traincost.estimate(accelerator="h100-sxm5-80gb", devices=8, model="llama2-7b",
                             global_batch=64, tp=1, pp=1, zero=3, micro_batch=1,
                             recompute="offload")
    said = " ".join(c["says"] if isinstance(c, dict) else str(c) for c in est.caveats)
    assert "activations offloaded" in said
    assert f"{64e9 * A.host_copy_efficiency / 1e9:.3g} GB/s each way" in said
    assert f"{256e9 / 2**30:.3g} GiB per device" in said
    assert est.to_dict()["host_memory_gib_per_device"] == pytest.approx(256e9 / 2**30)


def test_the_cli_refuses_offload_where_the_host_link_is_unpublished(capsys):
    from clihelpers import run
    rc, out, err = run(["estimate", "--accelerator", "tpu-v5p", "--devices", "64", "--model",
                        "llama2-7b", "--global-batch", "64", "--recompute", "offload"], capsys)
    assert rc == 2
    assert err.strip().count("\n") == 0 and "recompute: offload needs tpu-v5p" in err


def test_a_comparison_keeps_the_devices_that_can_offload(capsys):
    """compare: a device that cannot offload is a row with its reason, not a crash; the
    others are estimated (the table printed a layout and 'fits yes' for it, then crashed)."""
    from clihelpers import run
    rc, out, err = run(["compare", "--accelerators", "h100-sxm5-80gb,tpu-v5p", "--devices",
                        "64", "--model", "llama2-70b", "--global-batch", "256", "--tp", "8",
                        "--pp", "1", "--zero", "3", "--micro-batch", "1", "--recompute",
                        "offload"], capsys)
    assert rc == 0, err
    h100 = next(line for line in out.splitlines() if line.startswith("h100-sxm5-80gb"))
    tpu = next(line for line in out.splitlines() if line.startswith("tpu-v5p"))
    assert " offl " in h100 and " yes " in h100
    assert " - " in tpu and " n/a " in tpu and " yes " not in tpu
    notes = traincost.compare(accelerators=["h100-sxm5-80gb", "tpu-v5p"], devices=64,
                              model="llama2-70b", global_batch=256, tp=8, pp=1, zero=3,
                              micro_batch=1, recompute="offload")["note"]
    assert notes["tpu-v5p"].startswith("recompute: offload needs tpu-v5p")


def test_a_search_counts_host_memory_for_offloading_layouts():
    """An offloading layout whose host share is too small does not fit, in a search as in an
    estimate: an H100 with 1 GB of host memory cannot hold Llama 2 70B's offloaded
    activations (10.8 GiB a device at tp 8, micro-batch 1, 4,096 tokens)."""
    import dataclasses

    from traincost import catalog
    small = dataclasses.replace(catalog.accelerator("h100-sxm5-80gb"), host_memory_bytes=1e9)
    kw = dict(devices=64, model="llama2-70b", global_batch=512, tp=8, pp=1, zero=3,
              micro_batch=1, recompute="offload")
    assert not traincost.estimate(accelerator=small, **kw).fits_in_memory
    assert traincost.estimate(accelerator="h100-sxm5-80gb", **kw).fits_in_memory
    res = traincost.search(accelerators=[small], devices=[64], model="llama2-70b",
                           global_batch=512, tp=8, pp=1, zero=3, micro_batch=1,
                           space={"recompute": [3]})
    assert res.layouts_evaluated > 0 and res.layouts_fit == 0
    res = traincost.search(accelerators=["h100-sxm5-80gb"], devices=[64], model="llama2-70b",
                           global_batch=512, tp=8, pp=1, zero=3, micro_batch=1,
                           space={"recompute": [3]})
    assert res.layouts_fit > 0


def test_offloading_half_the_layers_keeps_the_other_half_on_the_device():
    """Megatron-Core's cpu_offloading_num_layers 2 of 4 toy layers (recompute_fraction 0.5):
    the device keeps the two layers it does not offload (2 x 228), the one on its way (228)
    and the loss's; the host holds the first two layers' 2 x 228 less the one in transit,
    half the whole mode's 456 bytes: 228."""
    none = model.evaluate(toy(layers=4))
    part = model.evaluate(toy(layers=4, recompute=OFFLOAD, recompute_fraction=0.5,
                              host_link_bytes_per_s=1e12, host_memory_bytes=1e12))
    assert none["memory_activations_bytes"] - part["memory_activations_bytes"] == \
        pytest.approx(FULL)
    assert part["offloaded_bytes_per_device"] == pytest.approx(FULL)
    assert part["hardware_flop_per_token"] == none["hardware_flop_per_token"]
    small = toy(layers=4, recompute=OFFLOAD, recompute_fraction=0.5,
                host_link_bytes_per_s=1e12, host_memory_bytes=FULL - 1)
    assert not bool(model.evaluate(small)["fits_in_memory"])


def test_offloading_half_the_layers_exposes_half_the_copies():
    """The copy-bound case of test_offload_shows_only_the_copy_time_the_compute_does_not_hide
    with 2 of the 4 layers offloaded: 2 x (1000 - 576/r) s instead of 4 x."""
    r = A.in_model_matmul_fraction
    rate = FULL / 1000.0 / A.host_copy_efficiency
    none = model.evaluate(toy(layers=4))["step_compute_s"]
    part = model.evaluate(toy(layers=4, recompute=OFFLOAD, recompute_fraction=0.5,
                              host_link_bytes_per_s=rate, host_memory_bytes=1e12))
    assert part["step_compute_s"] - none == pytest.approx(2 * (1000.0 - 576 / r), rel=1e-12)


def test_a_share_of_offload_through_the_estimate_and_the_cli(capsys):
    """--recompute offload --recompute-fraction 0.5 keeps the mode (a share alone still
    means full recompute) and moves half of what offloading every layer moves."""
    from clihelpers import run
    kw = dict(accelerator="h100-sxm5-80gb", devices=8, model="llama2-70b", global_batch=64,
              tp=8, pp=1, zero=3, micro_batch=1)
    whole = traincost.estimate(**kw, recompute="offload")
    half = traincost.estimate(**kw, recompute="offload", recompute_fraction=0.5)
    assert half.parallel.recompute == "offload"
    assert half.report["offloaded_gib_per_device"] == pytest.approx(
        0.5 * whole.report["offloaded_gib_per_device"])
    rc, out, err = run(["estimate", "--accelerator", "h100-sxm5-80gb", "--devices", "8",
                        "--model", "llama2-70b", "--global-batch", "64", "--tp", "8", "--pp",
                        "1", "--zero", "3", "--micro-batch", "1", "--recompute", "offload",
                        "--recompute-fraction", "0.5", "--json"], capsys)
    assert rc == 0, err
    assert '"recompute": "offload"' in out
