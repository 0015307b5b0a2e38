"""Collective communication on a two-tier network (scale-up domain, scale-out fabric).

All functions broadcast over numpy arrays.

Ranks are ordered tp (innermost), cp, ep, dp, pp (outermost), as Megatron-Core orders
its process groups. A group of ``n`` ranks spaced ``stride`` apart stays inside one
scale-up domain when ``n * stride <= domain``; otherwise its ring crosses the scale-out
fabric and runs at that fabric's per-device bandwidth.

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


def link(n, stride, domain, scaleup_bytes_per_s, scaleout_bytes_per_s, scaleup_eff,
         scaleout_eff, scaleup_latency_s, scaleout_latency_s):
    """Bandwidth and latency a group of ``n`` ranks, ``stride`` apart, communicates at.

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

    Returns
    -------
    (bytes_per_s, latency_s) achieved by the group. [bytes/s], [s]
    """
    inside = np.logical_not(crosses_domain(n, stride, domain))
    bw = np.where(inside, scaleup_bytes_per_s * scaleup_eff, scaleout_bytes_per_s * scaleout_eff)
    lat = np.where(inside, scaleup_latency_s, scaleout_latency_s)
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
