"""Collective communication on a two-tier network (scale-up domain, scale-out fabric).

All functions broadcast over numpy arrays.

Ranks are ordered tp (innermost), cp, ep, dp, pp (outermost), as Megatron-Core orders
its process groups. A group of ``n`` ranks spaced ``stride`` apart stays inside one
scale-up domain when ``n * stride <= domain``; otherwise its ring crosses the scale-out
fabric, whose NICs the group's ranks in each domain share the collective over
(:func:`link`).

References
----------
.. [1] NVIDIA nccl-tests, doc/PERFORMANCE.md: ring all-reduce moves 2(n-1)/n * S bytes
   per rank, all-gather and reduce-scatter (n-1)/n * S ("bus bandwidth").
.. [2] Thakur, Rabenseifner & Gropp, "Optimization of Collective Communication
   Operations in MPICH", IJHPCA 2005 (ring algorithms, latency terms).
"""

from __future__ import annotations

import numpy as np

#: ring steps and the fraction of the message each rank sends, per collective kind [1]
_COLLECTIVES = {
    "all_reduce": (2.0, 2.0),        # (latency steps per (n-1), volume factor of (n-1)/n)
    "all_gather": (1.0, 1.0),
    "reduce_scatter": (1.0, 1.0),
    "all_to_all": (1.0, 1.0),
}


def crosses_domain(n, stride, domain):
    """Whether a group of ``n`` ranks, ``stride`` apart, spans more than one scale-up domain.

    >>> [bool(crosses_domain(n, stride, 8)) for n, stride in ((8, 1), (16, 1), (2, 8))]
    [False, True, True]
    """
    return n * stride > domain


def ranks_per_domain(n, stride, domain):
    """How many of a group's ``n`` ranks, ``stride`` apart, share one scale-up domain. [-]

    >>> [int(ranks_per_domain(n, stride, 8)) for n, stride in ((64, 1), (64, 2), (8, 8), (4, 1))]
    [8, 4, 1, 4]
    """
    return np.maximum(1, np.minimum(n, domain // np.maximum(stride, 1)))


def link(n, stride, domain, scaleup_bytes_per_s, scaleout_bytes_per_s, scaleup_eff,
         scaleout_eff, scaleup_latency_s, scaleout_latency_s, mesh=False, p2p=False):
    """Bandwidth and latency a group of ``n`` ranks, ``stride`` apart, communicates at.

    A ring collective (all-reduce, all-gather, reduce-scatter) whose group crosses domains
    runs in two levels, as NCCL runs it: inside each domain over the scale-up links, and
    between domains each of the ``g`` ranks a domain holds (:func:`ranks_per_domain`) moves
    its 1/g share over its own NIC, one ring per rail. The fabric then carries the
    collective at ``g`` times one device's NIC rate, up to the scale-up rate:
    ``min(g B_out eff_out, B_up eff_up)`` (an all-to-all: :func:`all_to_all_link`).
    Measured: 2 x 8 H100 over EFA at 50 GB/s per GPU all-reduce at 487 GB/s bus
    bandwidth, where one NIC's rate would cap it at 50 (AWS awsome-distributed-training,
    micro-benchmarks/nccl-tests README; Bekman, ML Engineering, network/benchmarks: 4 x 8
    B200, 377 GB/s).

    A ``mesh`` domain joins each device to each of the domain's other ``D - 1`` devices by
    its own share of the scale-up rate (Gaudi 2/3: 21 ports, 3 to each of 7 peers, Intel's
    Network Configuration page; MI300X: one xGMI link to each of 7), where a switch gives
    every device its full rate to any group. The ``g`` ranks a group holds in one domain
    reach each other over ``g - 1`` of those links only: ``B_up (g - 1) / (D - 1)``, a
    pair at one seventh of an eight-device box (and a point-to-point send, ``p2p``, one
    link whatever the group); a group with one rank per domain has no scale-up leg.

    Parameters
    ----------
    n, stride, domain : int or array
        Group size, rank spacing, scale-up domain size. [-]
    scaleup_bytes_per_s, scaleout_bytes_per_s : float or array
        Per-device one-direction link bandwidths. [bytes/s]
    scaleup_eff, scaleout_eff : float
        Achieved fraction of link bandwidth. [-]
    scaleup_latency_s, scaleout_latency_s : float
        Latency per ring step. [s]
    mesh : bool or array
        The domain is a mesh of point-to-point links (else a switch). [-]
    p2p : bool
        The group's traffic is sends between neighbours (a pipeline), one peer each. [-]

    Returns
    -------
    (bytes_per_s, latency_s) achieved by the group. [bytes/s], [s]

    Examples
    --------
    >>> net = (8, 262.5e9, 37.5e9, 1.0, 1.0, 0.0, 0.0)
    >>> [float(link(g, 1, *net, mesh=True)[0]) / 1e9 for g in (2, 4, 8)]
    [37.5, 112.5, 262.5]
    >>> float(link(2, 1, *net)[0]) / 1e9                  # a switch: the full rate
    262.5
    """
    inside = np.logical_not(crosses_domain(n, stride, domain))
    in_domain = ranks_per_domain(n, stride, domain)
    peers = 1 if p2p else np.maximum(in_domain - 1, 1)
    links = np.where(mesh, peers / np.maximum(domain - 1, 1), 1.0)
    up = scaleup_bytes_per_s * scaleup_eff * links
    # one rank per domain: no scale-up leg to cap the fabric's rate
    up_leg = np.where(np.asarray(mesh) & (in_domain <= 1), np.inf, up)
    bw = np.where(inside, up, np.minimum(in_domain * scaleout_bytes_per_s * scaleout_eff, up_leg))
    lat = np.where(inside, scaleup_latency_s, scaleout_latency_s)
    return bw, lat


def all_to_all_link(n, stride, domain, scaleup_bytes_per_s, scaleout_bytes_per_s, scaleup_eff,
                    scaleout_eff, scaleup_latency_s, scaleout_latency_s, mesh=False):
    """Bandwidth and latency an all-to-all of ``n`` ranks, ``stride`` apart, runs at.

    An all-to-all is ``n - 1`` concurrent point-to-point exchanges: each rank sends ``S/n``
    of its buffer ``S`` to each other rank (NCCL runs it as a group of ``ncclSend`` and
    ``ncclRecv`` calls, its user guide's "Point-to-point communication: all-to-all"; the
    peers in a node over NVLink, the others over the network). Of a rank's ``n - 1`` peers,
    the ``g - 1`` in its own scale-up domain (:func:`ranks_per_domain`) are reached over the
    scale-up links and the ``n - g`` others over the rank's own NIC, both at once, so the
    slower leg sets the time:

        t = max((g - 1)/n S / B_up, (n - g)/n S / B_out)

    with ``B_up`` the scale-up rate a group of ``g`` reaches (a mesh's own links, as
    :func:`link`) and ``B_out`` one NIC's rate, each times its efficiency. Returned as the
    rate ``B = (n - 1) / max((g - 1)/B_up, (n - g)/B_out)`` that :func:`collective_time`'s
    ``(n - 1)/n S / B`` turns back into ``t``; inside one domain ``B = B_up``. With one rank
    a domain (``g = 1``) every byte crosses the network: ``B = B_out``.

    Parameters and returns as :func:`link`.

    Examples
    --------
    >>> net = (8, 300e9, 25e9, 1.0, 1.0, 0.0, 0.0)
    >>> [float(all_to_all_link(n, s, *net)[0]) / 1e9 for n, s in ((8, 1), (8, 8), (16, 1))]
    [300.0, 25.0, 46.875]
    """
    g = ranks_per_domain(n, stride, domain)
    inside = np.logical_not(crosses_domain(n, stride, domain))
    up, up_lat = link(g, 1, domain, scaleup_bytes_per_s, scaleout_bytes_per_s, scaleup_eff,
                      scaleout_eff, scaleup_latency_s, scaleout_latency_s, mesh)
    out = scaleout_bytes_per_s * scaleout_eff
    n = np.asarray(n, dtype=float)
    slowest = np.maximum((g - 1) / up, (n - g) / out)            # [s per byte a peer]
    bw = np.where(inside, up, (n - 1) / np.where(slowest > 0, slowest, np.inf))
    lat = np.where(inside, up_lat, scaleout_latency_s)
    return bw, lat


def collective_time(kind, size_bytes, n, bytes_per_s, latency_s):
    """Time of one ring collective.

    Parameters
    ----------
    kind : str
        ``all_reduce``, ``all_gather``, ``reduce_scatter`` or ``all_to_all``.
    size_bytes : float or array
        The full buffer S (all-reduce input, all-gather output, all-to-all data per rank). [bytes]
    n : int or array
        Ranks in the group. [-]
    bytes_per_s, latency_s : float or array
        Achieved bandwidth and per-step latency. [bytes/s], [s]

    Returns
    -------
    Time, zero for a group of one. [s]

    Notes
    -----
    t = f_v * (n-1)/n * S / bw + f_l * (n-1) * latency, with (f_l, f_v) = (2, 2) for
    all-reduce and (1, 1) for the others [1, 2].

    Examples
    --------
    >>> round(float(collective_time("all_reduce", 1e9, 8, 100e9, 0.0)), 4)
    0.0175
    """
    steps, volume = _COLLECTIVES[kind]
    n = np.asarray(n, dtype=float)
    t = volume * (n - 1) / n * size_bytes / bytes_per_s + steps * (n - 1) * latency_s
    return np.where(n > 1, t, 0.0)


def p2p_time(size_bytes, bytes_per_s, latency_s):
    """Time of one point-to-point send. [s]"""
    return size_bytes / bytes_per_s + latency_s


def tp_allreduces_per_layer(parallel_block, full_recompute, regather=False):
    """Tensor-parallel all-reduces of one layer per micro-batch (all-reduce equivalents). [-]

    Two per pass (after attention and after the MLP), forward and backward, and another
    two in the recompute forward; a parallel block sums attention and MLP before its one
    all-reduce per pass (MegaScale, Jiang et al. NSDI'24, Sec. 3.1, Fig. 3a). Under
    sequence parallelism each is an all-gather and a reduce-scatter, half an all-reduce
    each; a per-operator selective policy that saves the reduce-scatters' outputs but not
    the all-gathers' (``regather``: torchtitan's op policy, whose save list holds the
    matmuls, attention and ``reduce_scatter_tensor``) gathers each pass's input again to
    recompute the matmuls it did not keep: half an all-reduce more per pass.

    >>> [float(tp_allreduces_per_layer(p, f))
    ...  for p, f in ((False, False), (False, True), (True, False))]
    [4.0, 6.0, 2.0]
    >>> float(tp_allreduces_per_layer(False, False, True))     # 2 x (2 + 1/2)
    5.0
    """
    passes = np.where(full_recompute, 1.0, np.where(regather, 0.5, 0.0))
    return np.where(parallel_block, 1, 2) * (2 + passes)


def cp_kv_gather_time(micro_batch, seq_len, kv_heads, head_dim, tp, cp, bytes_per_s,
                      latency_s, full_recompute, bytes_per_element=2.0):
    """Context-parallel key/value all-gathers of one layer per micro-batch. [s]

    Each rank gathers the K and V of the whole sequence, ``2 b s a_kv d e / t`` bytes,
    once in the forward and twice in the backward (a gather and a reduce-scatter of their
    gradients), once more to recompute (Megatron-Core context parallelism; Liu et al.,
    Ring Attention, arXiv:2310.01889).

    >>> float(cp_kv_gather_time(1, 1000, 1, 1, 1, 2, 1000.0, 0.0, False, 1.0))   # 3 x 1000 B / 2
    3.0
    """
    kv_bytes = 2 * micro_batch * seq_len * kv_heads * head_dim * bytes_per_element / tp
    return (3 + full_recompute) * collective_time("all_gather", kv_bytes, cp, bytes_per_s,
                                                  latency_s)


def ep_token_copies(top_k, route_nodes, ep, stride, domain):
    """Copies of a token the expert all-to-all sends over the network. [-]

    Each token goes to its k experts; under node-limited routing (DeepSeek-V3,
    arXiv:2412.19437, Sec. 3.2.2) an expert group spanning scale-up domains sends it once
    per target node, at most ``route_nodes`` times, and forwards it inside the node.

    >>> [int(ep_token_copies(8, m, 64, 1, 8)) for m in (0, 4)]
    [8, 4]
    """
    node_limited = (route_nodes > 0) & crosses_domain(ep, stride, domain)
    return np.where(node_limited, np.minimum(top_k, route_nodes), top_k)


def ep_all_to_all_time(tokens, copies, hidden, tp, ep, bytes_per_s, latency_s, full_recompute,
                       bytes_per_element=2.0):
    """Expert-parallel all-to-alls of one MoE layer per micro-batch. [s]

    Dispatch and combine in the forward and the backward, two more under full
    recomputation, each moving ``tokens * copies * h * e / t`` bytes per rank.

    >>> float(ep_all_to_all_time(1, 2, 1, 1, 2, 1.0, 0.0, False, 1.0))    # 4 x 2 B / 2
    4.0
    """
    a2a_bytes = tokens * copies * hidden * bytes_per_element / tp
    return (4 + 2 * full_recompute) * collective_time("all_to_all", a2a_bytes, ep, bytes_per_s,
                                                      latency_s)


def pp_send_time(activation_bytes, sequence_parallel, tp, pp, vpp, bytes_per_s, latency_s):
    """Pipeline sends of one micro-batch on one stage: forward and backward, per chunk. [s]

    ``2 v (S / bw + latency)`` with S the activations at a stage boundary, split over the
    tensor-parallel ranks under sequence parallelism; zero without a pipeline.

    >>> [float(pp_send_time(8.0, True, 2, p, 1, 1.0, 0.0)) for p in (1, 4)]
    [0.0, 8.0]
    """
    send = activation_bytes / np.where(sequence_parallel, tp, 1)
    return np.where(pp > 1, 2 * vpp * p2p_time(send, bytes_per_s, latency_s), 0.0)


def zero3_gather_time(weight_bytes, units, n, bytes_per_s, latency_s):
    """ZeRO-3 / FSDP weight all-gathers of one pass, one per layer. [s]

    ``units * t_all_gather(W / units)``: the bandwidth term of the whole shard, the latency
    term once per layer.

    >>> float(zero3_gather_time(8.0, 4, 2, 1.0, 0.5))      # 4 x (0.5 x 2 + 0.5)
    6.0
    """
    return units * collective_time("all_gather", weight_bytes / units, n, bytes_per_s, latency_s)


#: which parallel dimension crosses the sites of a run over several buildings or regions,
#: as the model's columns code it (``cross_site``): the data-parallel replicas (each site
#: holds whole pipelines) or the pipeline's stages (each site holds some stages of every
#: replica). Meta's ScaleAcross study (Li et al. 2026) names the placement of parallelism
#: over the sites as the first choice of such a run.
CROSS_SITE_CODES = {"dp": 0, "pp": 1}
#: the placement a code stands for
CODE_TO_CROSS_SITE = {v: k for k, v in CROSS_SITE_CODES.items()}


def cross_site_all_reduce_time(total_bytes, sites, bytes_per_s, latency_s):
    """The exchange across sites of a hierarchical all-reduce (or its all-gather half). [s]

    Inside each site the replicas first reduce-scatter, so every device holds a 1/n_l
    share of its gradients; the devices of a site then all-reduce their shares with the
    devices holding the same share in the other sites, and all-gather inside the site
    again (NCCL's and Megatron-Core's hierarchical scheme). Every device of a site sends at
    once, so a site-pair link carries the ring all-reduce of everything the site holds:
    ``total_bytes``, one whole copy of the model's gradients. With s sites in a ring,
    :func:`collective_time` over ``sites`` ranks:

        t = 2 (s-1)/s * S / B + 2 (s-1) * latency

    ``bytes_per_s`` is what one site-pair link achieves, each direction; zero for one site.

    >>> float(cross_site_all_reduce_time(10e9, 2, 10e9, 0.01))      # 1 s + 2 x 10 ms
    1.02
    >>> float(cross_site_all_reduce_time(10e9, 1, 10e9, 0.01))
    0.0
    """
    return collective_time("all_reduce", total_bytes, sites, bytes_per_s, latency_s)


def cross_site_send_time(send_bytes, bytes_per_s, latency_s):
    """One pipeline send across a site boundary, every replica's at once. [s]

    All data-parallel replicas cross the same boundary together, so the link carries
    ``send_bytes`` = dp x cp x (one micro-batch's activations at a stage boundary):
    ``S / B + latency`` (:func:`p2p_time`).

    >>> float(cross_site_send_time(1e9, 1e9, 0.02))
    1.02
    """
    return p2p_time(send_bytes, bytes_per_s, latency_s)


def campus_link_bytes_per_s(devices, sites, scaleout_bytes_per_s, oversubscription):
    """A site-pair link between buildings of one campus, each direction. [B/s]

    A site's devices at their scale-out bandwidth, over the oversubscription of the mesh
    joining the buildings: ``n/s * B_out / r`` (Meta joins Llama 4's buildings at 1:2.8,
    NCCLX, arXiv:2510.20171 Sec. 2).

    >>> float(campus_link_bytes_per_s(64, 2, 50e9, 2.0))
    800000000000.0
    """
    return devices / sites * scaleout_bytes_per_s / oversubscription
