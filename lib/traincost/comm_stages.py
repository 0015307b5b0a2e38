"""The communication stages of :func:`traincost.model.evaluate`: what a micro-batch's
tensor-, context-, expert- and pipeline-parallel exchanges expose, and the data-parallel
exchange (flat, hybrid-sharded or across sites) and optimizer step of a whole step.

Each stage wires named formulas of :mod:`traincost.comm` and :mod:`traincost.performance`
on the columns :func:`traincost.model.evaluate` passes it (``c``), the assumptions (``a``)
and the namespaces of the stages before it (``g`` the layout, ``w`` the workload, ``comp``
the compute, ``shard`` the memory stage's); every input may be an array.
"""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np

from . import comm, memory, performance, workload
from .arrays import any_true
from .assumptions import Assumptions


def _network(c: dict, a: Assumptions) -> tuple:
    """The device's network tiers, as :func:`traincost.comm.link` takes them: the scale-out
    rate across domains is the NIC's over the fabric's oversubscription; a mesh domain
    splits the scale-up rate over its links; the fitted scale-up efficiency scaled by the
    device's measured all-reduce fraction over the reference devices' (at most 1)."""
    return (c["scaleup_domain_devices"], c["scaleup_bytes_per_s"],
            c["scaleout_bytes_per_s"] / c["scaleout_oversubscription"],
            np.minimum(1.0, a.scaleup_comm_efficiency * c["scaleup_efficiency_ratio"]),
            a.scaleout_comm_efficiency, a.scaleup_latency_s,
            a.scaleout_latency_s, c["scaleup_mesh"])


def _with_contention(a: Assumptions, raw_s, exposed_s):
    """Exposed communication plus what the part hidden behind compute slows that compute
    by (:func:`traincost.performance.overlap_contention`). [s]"""
    return exposed_s + performance.overlap_contention(np.maximum(raw_s - exposed_s, 0.0),
                                                      a.overlap_compute_slowdown)


def microbatch_comm_stage(c: dict, a: Assumptions, g: SimpleNamespace, w: SimpleNamespace,
                          comp: SimpleNamespace) -> dict:
    """Exposed communication and straggler wait of one micro-batch on the fullest stage. [s]

    Returns ``tp``, ``stragglers``, ``cp``, ``ep`` and ``pp`` (zero where the dimension is
    one). Tensor-parallel all-reduces hide behind the MLP path's GEMMs in a stack that
    overlaps them (MegaScale Sec. 3.2), expert all-to-alls behind the micro-batch's compute
    (DeepSeek-V3 Sec. 3.2.2), pipeline sends likewise; context-parallel gathers hide
    ``cp_overlap_fraction`` of themselves. What a stack hides still costs what it slows the
    compute beside it by (:func:`traincost.performance.overlap_contention`), and that is
    counted with the exchange; the expert all-to-all's is the SM share its kernels take
    (``ep_overlap_comm_sm_fraction``, in the compute).
    """
    t, p, cp, ep, lps = c["tp"], c["pp"], c["cp"], c["ep"], g.layers_per_stage
    net = _network(c, a)
    act_bytes = g.tokens_mb * c["hidden"] * g.act_e
    bw_tp, lat_tp = comm.link(t, 1, *net)
    # torchtitan's op policy keeps the reduce-scatters' outputs, not the all-gathers'
    regather = (c["recompute"] == workload.RECOMPUTE_CODES["selective"]) \
        & (c["selective_policy"] == memory.SELECTIVE_POLICIES["odd-matmuls"])
    tp_layer = comm.tp_allreduces_per_layer(c["parallel_block"], g.full_rc, regather) \
        * comm.collective_time("all_reduce", act_bytes, t, bw_tp, lat_tp)
    if g.moe and any_true(g.fold > 1):
        tp_layer = tp_layer - _folded_expert_tp_saving(c, g, w, net, act_bytes, regather)
    tp_mb = _with_contention(a, lps * tp_layer, lps * performance.stack_exposed(
        tp_layer, performance.tp_overlap_window(comp.layer_mm, comp.attn_mm, g.full_rc),
        c["tp_overlap"], a.stack_overlap_window_fraction, a.tp_overlap_fraction,
        c["tp_overlap_hidden_share"]))
    straggler_mb = performance.straggler_time(
        a.straggler_forward_slowdown, a.straggler_device_fraction, c["devices"], lps,
        comp.fwd_layer + comp.recompute_layer)
    cp_mb = 0.0                                      # a group of one sends nothing
    if g.any_cp:
        bw_cp, lat_cp = comm.link(cp, t, *net)
        cp_raw = lps * comm.cp_kv_gather_time(
            c["micro_batch"], c["seq_len"], c["kv_heads"], c["head_dim"], t, cp, bw_cp, lat_cp,
            g.full_rc, g.act_e)
        cp_mb = _with_contention(a, cp_raw, cp_raw * (1 - a.cp_overlap_fraction))
    ep_mb = 0.0                                      # no MoE layers
    if g.moe:
        # the expert group strides over the replicas (t cp apart), or, folded over the
        # tensor-parallel ranks the experts are not split over, over those (etp apart)
        stride = np.where(g.fold > 1, g.etp, t * cp)
        bw_ep, lat_ep = comm.all_to_all_link(ep, stride, *net)
        copies = comm.ep_token_copies(c["top_k"], c["route_nodes"], ep, stride,
                                      c["scaleup_domain_devices"])
        # the MTP modules' MoE blocks, like their compute, on the last stage of an even
        # split, spread over the stages of a balanced one
        moe_units = w.params["moe_layers"] * g.stage_share \
            + np.where(c["experts"] > 0, c["mtp_depth"], 0) / np.where(g.balanced, p, 1)
        ep_raw = moe_units * comm.ep_all_to_all_time(g.tokens_mb, copies, c["hidden"], t, ep,
                                                     bw_ep, lat_ep, g.full_rc, g.act_e)
        ep_mb = performance.stack_exposed(ep_raw, comp.compute_mb, c["ep_overlap"],
                                          a.stack_overlap_window_fraction,
                                          a.ep_overlap_fraction)
    bw_pp, lat_pp = comm.link(p, t * cp * g.dp, *net, p2p=True)
    pp_send = comm.pp_send_time(act_bytes, a.sequence_parallel, t, p, c["vpp"], bw_pp, lat_pp)
    pp_mb = _with_contention(a, pp_send, performance.stack_exposed(
        pp_send, comp.compute_mb, c["pp_overlap"], a.stack_overlap_window_fraction))
    cross_mb = cross_fill = 0.0                      # one site: nothing crosses
    if g.multi_site:
        cross_mb, cross_fill = _pipeline_across_sites(c, a, g, comp, act_bytes, pp_send, pp_mb)
    return {"tp": tp_mb, "stragglers": straggler_mb, "cp": cp_mb, "ep": ep_mb, "pp": pp_mb,
            "cross_site": cross_mb, "cross_site_fill": cross_fill}


def _folded_expert_tp_saving(c, g, w, net, act_bytes, regather):
    """What an MoE layer's MLP side saves in tensor-parallel collectives, averaged over the
    layers, where the experts' tensor parallelism ``e`` is narrower than tp. [s]

    A layer's collectives are half the attention's, half the MLP's
    (:func:`traincost.comm.tp_allreduces_per_layer`). Folded (Megatron-Core's MoE parallel
    folding), the routed experts gather their tokens over their own ``e`` ranks only, a
    rank's sequence-parallel shard of ``S/t`` each, so ``S e/t`` over ``e`` ranks where the
    dense MLP moves ``S`` over ``t``; ``e = 1`` gathers nothing. A parallel block, whose
    one collective serves attention and MLP together, keeps it whole.
    """
    t, etp = c["tp"], g.etp
    per_pass = comm.tp_allreduces_per_layer(False, g.full_rc, regather) / 2
    bw_t, lat_t = comm.link(t, 1, *net)
    bw_e, lat_e = comm.link(etp, 1, *net)
    dense_mlp = comm.collective_time("all_reduce", act_bytes, t, bw_t, lat_t)
    expert_mlp = comm.collective_time("all_reduce", act_bytes * etp / t, etp, bw_e, lat_e)
    moe_share = w.params["moe_layers"] / c["layers"]
    saving = per_pass * (dense_mlp - expert_mlp) * moe_share
    return np.where((g.fold > 1) & np.logical_not(c["parallel_block"]), saving, 0.0)


def _site_link(c: dict, a: Assumptions):
    """What a site-pair link achieves, each direction [B/s]: the link given, else
    (NaN) buildings of one campus (:func:`traincost.comm.campus_link_bytes_per_s`), times
    ``site_link_comm_efficiency``."""
    given = c["site_link_bytes_per_s"]
    campus = comm.campus_link_bytes_per_s(c["devices"], c["sites"], c["scaleout_bytes_per_s"],
                                          a.site_link_oversubscription)
    return np.where(np.isnan(given), campus, given) * a.site_link_comm_efficiency


def _site_latency(c: dict, a: Assumptions):
    """One-way latency between two sites [s]: the one given, else (NaN)
    ``assumptions.site_link_latency_s``, which an interval draws."""
    given = c["site_link_latency_s"]
    return np.where(np.isnan(given), a.site_link_latency_s, given)


def _pipeline_across_sites(c, a, g, comp, act_bytes, pp_send, pp_mb):
    """Where the pipeline's stages cross the sites: the extra exposed time of one
    micro-batch on a boundary stage, and the link latency of the pipeline's fill and
    drain per step. [s]

    The last stage of a site sends its v chunks' outputs across the link, every replica's
    at once (:func:`traincost.comm.cross_site_send_time`, dp x cp micro-batch activations),
    and its v backward sends inside the site; the step runs at the pace of that stage,
    ``max(t_pp, exposed(v (t_cross + t_send)))``, each with what its hidden part slows the
    compute by (:func:`traincost.performance.overlap_contention`). Filling and draining
    the pipeline crosses a site boundary ``v s - 1`` times each way, and no overlap hides
    the one-way delay of those hops: ``2 (v s - 1) latency``.
    """
    link_bw = _site_link(c, a)
    latency, v = _site_latency(c, a), c["vpp"]
    cross_send = comm.cross_site_send_time(g.dp * c["cp"] * act_bytes, link_bw, latency)
    boundary_raw = v * cross_send + pp_send / 2
    boundary = _with_contention(a, boundary_raw, performance.stack_exposed(
        boundary_raw, comp.compute_mb, c["pp_overlap"], a.stack_overlap_window_fraction))
    extra = np.where(g.pp_cross, np.maximum(boundary - pp_mb, 0.0), 0.0)
    fill = np.where(g.pp_cross, 2 * (v * g.sites - 1) * latency, 0.0)
    return extra, fill


def data_parallel_stage(c: dict, a: Assumptions, g: SimpleNamespace, w: SimpleNamespace,
                        shard: SimpleNamespace, comp: SimpleNamespace) -> dict:
    """Exposed data-parallel exchange and the optimizer step, per step. [s]

    The gradients are all-reduced over the replicas (the experts' over their own); under
    ZeRO-3 only reduce-scattered, and the weights regathered for every micro-batch's
    passes (:func:`traincost.performance.zero3_gathers_exposed`). Under hybrid sharding the
    reduction and the gathers run inside each shard group, and the groups all-reduce the
    dense gradients' shards across, ``2 (r - 1)/r * P/G`` bytes a device over the link
    that joins the r replicas. A framework that syncs every micro-batch's gradients under
    ZeRO-3 (``data/frameworks.csv`` ``grad_sync_every_microbatch``: FSDP without no_sync)
    reduces in each backward pass beside its gathers, not once a step; the exchange across
    sites still runs once a step. What hides behind the backward passes (the gathers, and the
    reduction of an overlapping stack) costs what it slows them by
    (:func:`traincost.performance.overlap_contention`). Returns ``dp_comm``
    (:func:`traincost.performance.dp_exposed_time`), ``cross_site_comm`` (what the
    exchange across sites adds, :func:`_replicas_across_sites`) and ``optimizer``
    (:func:`traincost.performance.optimizer_step_time`).
    """
    t, ep, zero, full_rc = c["tp"], c["ep"], c["zero"], g.full_rc
    net = _network(c, a)
    bw_dp, lat_dp = comm.link(g.dp_cp, t, *net)
    if any_true(ep != 1):
        bw_edp, lat_edp = comm.link(g.dp_ep, g.etp * ep, *net)
    else:
        bw_edp, lat_edp = bw_dp, lat_dp              # ep = 1: the expert group is the dp group
    # frozen weights (LoRA) have no gradients to reduce and no optimizer step
    reduce_bytes = c["grad_reduce_bytes_per_param"] * np.logical_not(c["frozen_weights"])
    grad_expert = shard.expert * reduce_bytes
    dp_reduce = comm.collective_time("all_reduce", shard.dense * reduce_bytes, g.dp_cp, bw_dp,
                                     lat_dp)
    if g.moe:                                        # a dense model has no expert gradients
        dp_reduce = dp_reduce + np.where(
            grad_expert > 0, comm.collective_time("all_reduce", grad_expert, g.dp_ep, bw_edp,
                                                  lat_edp), 0.0)
    dp_reduce = np.where(c["frozen_weights"], 0.0, dp_reduce)     # nothing to reduce at all
    # a micro-batch's passes in units of one forward: forward 1, backward 2 (about 1 with
    # frozen weights), and with full recomputation one more forward inside the backward
    forward_mb = comp.compute_mb / (3 + full_rc - c["frozen_weights"])
    backward_mb = 2 * forward_mb
    replica_reduce = 0.0                             # one shard group: no replicas
    if g.any_replicas:
        # hybrid sharding: each device ends its group's reduction holding 1/group of the
        # (dense) gradients, and the devices holding the same shard in the replicas
        # all-reduce it
        bw_rep, lat_rep = comm.link(g.replicas, t * g.dp_cp, *net)
        replica_reduce = np.where(g.replicas > 1, comm.collective_time(
            "all_reduce", shard.dense * reduce_bytes / g.dp_cp, g.replicas, bw_rep, lat_rep),
            0.0)
    if g.any_zero3:
        zero3 = zero == 3
        units = g.layers_per_stage                   # all-gathers per pass
        gather = comm.zero3_gather_time(shard.dense * c["gather_bytes_per_param"], units,
                                        g.dp_cp, bw_dp, lat_dp)
        if g.moe:
            w_expert = shard.expert * c["gather_bytes_per_param"]
            gather = gather + np.where(w_expert > 0, comm.zero3_gather_time(
                w_expert, units, g.dp_ep, bw_edp, lat_edp), 0.0)
        dp_step = np.where(zero3, dp_reduce / 2, dp_reduce) + replica_reduce   # ZeRO-3: RS
        last = performance.zero3_gathers_exposed(
            gather, units, forward_mb, backward_mb, full_rc, a.zero3_prefetch_overlap_fraction)
        # a framework that syncs every micro-batch's gradients (FSDP's post-backward
        # reduce-scatter, no no_sync) reduces in each of the m - 1 earlier backward passes
        # too, beside that pass's gathers; the last one's is the step's own
        # (dp_exposed_time). Not where a pipeline keeps the stage's gradients unsharded
        # between micro-batches (pp_keeps_gathered).
        every = zero3 & c["grad_sync_every_microbatch"] \
            & np.logical_not(c["pp_keeps_gathered"] & (c["pp"] > 1)) & (g.m > 1)
        synced = performance.zero3_gathers_exposed(
            gather, units, forward_mb, backward_mb, full_rc, a.zero3_prefetch_overlap_fraction,
            dp_step) if any_true(every) else last
        gathers_exposed = np.where(zero3, np.where(every, (last + (g.m - 1) * synced) / g.m,
                                                   last), 0.0)
        early_reduce = np.where(every, (g.m - 1) * dp_step, 0.0)
    else:
        dp_step, gathers_exposed = dp_reduce + replica_reduce, 0.0
        gather = early_reduce = 0.0
    # all of it, hidden or not: every micro-batch's passes gather the weights again under
    # ZeRO-3 (none otherwise), and reduce their gradients where the framework syncs each
    dp_raw = dp_step + early_reduce + np.where(zero == 3, g.m * (2 + full_rc) * gather, 0.0)
    dp_exposed = _with_contention(a, dp_raw, performance.dp_exposed_time(
        dp_step, backward_mb, gathers_exposed, g.m, c["vpp"], c["dp_overlap"],
        a.dp_overlap_fraction))
    cross = 0.0                                      # one site: nothing crosses
    if g.multi_site:
        cross = _replicas_across_sites(c, a, g, w, dp_step, dp_raw, gathers_exposed,
                                       backward_mb, dp_exposed)
    optimizer_params = memory.optimizer_shard_params(shard.dense, shard.expert, zero, g.dp_cp,
                                                     g.dp_ep)
    step_bytes = np.where(c["optimizer_bf16"], a.optimizer_step_bf16_bytes_per_param,
                          a.optimizer_step_bytes_per_param) * np.logical_not(c["frozen_weights"])
    return {"dp_comm": dp_exposed, "cross_site_comm": cross,
            "optimizer": performance.optimizer_step_time(optimizer_params, step_bytes,
                                                         c["hbm_bytes_per_s"])}


def _replicas_across_sites(c, a, g, w, dp_step, dp_raw, gathers_exposed, backward_mb,
                           dp_exposed):
    """Where the data-parallel replicas cross the sites: what their exchange over the
    site links adds to a step. [s]

    Each site shards and reduces inside itself (hybrid sharding, ``layout_stage``'s
    ``dp_cp``), so every device ends its in-site reduction holding its share of the
    gradients, and the devices holding the same share in the ``s`` sites all-reduce it over
    the link: a site-pair link carries the ring all-reduce of one whole copy of the model's
    gradients (:func:`traincost.comm.cross_site_all_reduce_time`), whatever the ZeRO stage.
    Synchronous (``sync_every`` 1), the exchange hides as the in-site one does
    (:func:`traincost.performance.dp_exposed_time`) and the part returned is what it adds
    to the exposed time. Relaxed (DiLoCo, every H steps), the outer exchange of the weight
    updates, blocking, costs 1/H of itself per step.
    """
    exchange = comm.cross_site_all_reduce_time(
        w.params["total"] * c["grad_reduce_bytes_per_param"]
        * np.logical_not(c["frozen_weights"]), g.sites, _site_link(c, a),
        _site_latency(c, a))
    synchronous = _with_contention(a, dp_raw + exchange, performance.dp_exposed_time(
        dp_step + exchange, backward_mb, gathers_exposed, g.m, c["vpp"], c["dp_overlap"],
        a.dp_overlap_fraction)) - dp_exposed
    relaxed = exchange / c["sync_every"]
    return np.where(g.dp_cross, np.where(g.relaxed, relaxed, synchronous), 0.0)
