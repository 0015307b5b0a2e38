"""Hybrid sharding (``shard_group``): ZeRO/FSDP inside groups of data-parallel ranks, the
groups replicas that all-reduce their gradient shards across (PyTorch FSDP's HYBRID_SHARD,
whose default group is a node; MaxText's FSDP inside a TPU slice and data parallelism
across slices). Values by hand from ZeRO's state sizes (Rajbhandari et al. 2020, Sec. 5:
16 bytes a parameter over the sharding ranks) and the ring all-reduce (2 (n-1)/n of the
buffer over the link)."""

import pytest

import traincost
from traincost import comm, model
from traincost.assumptions import DEFAULT as A
from traincost.cli import main

#: Llama 2 7B on 16 A100 80GB (two nodes of 8), data parallel only, ZeRO-1, no overlap
KW = dict(model="llama2-7b", global_batch=16, seq_len=4096, tokens=1e11, tp=1, pp=1, cp=1,
          ep=1, vpp=1, zero=1, micro_batch=1, recompute="none", precision="bf16")
P = 6_738_415_616            # Llama 2 7B's parameters, embeddings and output layer included
#: what the memory model counts on a device of the one stage: all of them but the final
#: RMSNorm's 4,096 weights, which it leaves out (6e-7 of the total)
P_DEVICE = P - 4096


def test_the_optimizer_state_shards_over_the_group_not_all_ranks():
    """ZeRO-1 over 16 ranks holds 12 B x P / 16 of Adam state a device; sharded in groups
    of 8 (one node), 12 B x P / 8: 10,107,617,280 bytes (P_DEVICE), twice the flat figure."""
    flat = traincost.estimate("a100-sxm4-80gb", 16, **KW)
    hsdp = traincost.estimate("a100-sxm4-80gb", 16, shard_group=8, **KW)
    assert flat.params == P
    assert hsdp.memory_optimizer_bytes == pytest.approx(12 * P_DEVICE / 8, rel=1e-12)
    assert hsdp.memory_optimizer_bytes == pytest.approx(2 * flat.memory_optimizer_bytes,
                                                        rel=1e-12)
    assert hsdp.memory_weights_bytes == flat.memory_weights_bytes       # ZeRO-1: weights whole


def test_the_replicas_all_reduce_a_group_shard_of_the_gradients():
    """Two replicas of a node each: the gradients (fp32 for bf16, 4 B a parameter) are
    all-reduced inside the node, then each device's 1/8 shard, P_DEVICE x 4 / 8 =
    3,369,205,760 bytes, is all-reduced with its twin in the other node over one NIC: 2 x 1/2 of it at
    the NIC's achieved rate, plus two latency steps. Without overlap the step waits for
    both."""
    hsdp = traincost.estimate("a100-sxm4-80gb", 16, shard_group=8, **KW)
    acc = hsdp.accelerator
    net = (acc.scaleup_domain_devices, acc.scaleup_bytes_per_s, acc.scaleout_bytes_per_s,
           A.scaleup_comm_efficiency, A.scaleout_comm_efficiency, A.scaleup_latency_s,
           A.scaleout_latency_s, False)
    bw_in, lat_in = comm.link(8, 1, *net)
    bw_out, lat_out = comm.link(2, 8, *net)
    assert bw_out == pytest.approx(acc.scaleout_bytes_per_s * A.scaleout_comm_efficiency)
    in_node = 2 * 7 / 8 * P_DEVICE * 4 / bw_in + 2 * 7 * lat_in
    across = 2 * 1 / 2 * (P_DEVICE * 4 / 8) / bw_out + 2 * 1 * lat_out
    assert hsdp.step_dp_comm_s == pytest.approx(in_node + across, rel=1e-9)


def test_one_group_of_all_ranks_is_the_flat_layout():
    flat = traincost.estimate("a100-sxm4-80gb", 16, **KW)
    whole = traincost.estimate("a100-sxm4-80gb", 16, shard_group=16, **KW)
    assert whole.step_time_s == flat.step_time_s
    assert whole.memory_bytes_per_device == flat.memory_bytes_per_device


@pytest.mark.parametrize("over, words", [
    (dict(shard_group=6), "shard-group 6 must divide the data-parallel ranks of a site"),
    (dict(shard_group=8, zero=0), "shard-group 8 shards the model states within its group: "
                                  "it needs ZeRO 1-3, not 0"),
    (dict(shard_group=-1), "shard-group: -1 must be at least 0"),
])
def test_a_group_that_cannot_be_is_refused(over, words):
    with pytest.raises(ValueError, match=words):
        traincost.estimate("a100-sxm4-80gb", 16, **{**KW, **over})


def test_cli_flag_and_the_search_keeps_to_the_rule(capsys):
    import json
    args = ("estimate --accelerator a100-sxm4-80gb --devices 16 --model llama2-7b "
            "--global-batch 16 --seq-len 4096 --shard-group 8 --json").split()
    assert main(args) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["stack"]["shard_group"] == 8
    dp = out["devices"] // (out["parallel"]["tp"] * out["parallel"]["pp"]
                            * out["parallel"]["cp"])
    assert dp % 8 == 0 and out["parallel"]["zero"] >= 1      # searched within the rules
    assert "shard_group" in model.INPUT_COLUMNS
