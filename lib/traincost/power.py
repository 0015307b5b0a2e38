"""Average power per device from how it spends a training step.

References
----------
.. [1] Patterson et al., "Carbon Emissions and Large Neural Network Training",
   arXiv:2104.10350, Table 4 (GPT-3: 330 W measured per V100 incl. host share).
.. [2] Fernandez et al., "Energy Considerations of Large Language Model Inference and
   Training" / TMLR 2025: power per GPU barely falls as throughput per GPU does.
.. [3] Newkirk et al., arXiv:2506.14551 (8xH100 node at ~76% of its rating in training).
.. [4] stas00/ml-engineering, compute/accelerator/README.md, Maximum Achievable Matmul
   FLOPS table v2: the same die measured at two power limits (A100 PCIe 300 W and SXM
   400 W; B200 1000 W and GB200 1200 W), see ``power_cap_clock_exponent``.
"""

from __future__ import annotations


def device_power_w(tdp_w, idle_w, busy_fraction, compute_power_fraction, wait_power_fraction):
    """Average power of the accelerator itself over a step.

    Parameters
    ----------
    tdp_w, idle_w : float or array
        Maximum and idle power. [W]
    busy_fraction : float or array
        Share of the step spent computing (the rest waits on communication or the
        pipeline bubble). [-]
    compute_power_fraction, wait_power_fraction : float
        Share of the (max - idle) range drawn while computing and while waiting. [-]

    Returns
    -------
    Average device power. [W]

    Notes
    -----
    P = P_idle + (P_max - P_idle) * (u * c + (1 - u) * w), with u the busy share, c and w
    the compute and waiting draw. w is high: collectives keep the SMs and HBM busy, which
    is why power per GPU barely falls as scale lowers throughput [2].

    Examples
    --------
    >>> device_power_w(400.0, 50.0, 1.0, 0.8, 0.5)
    330.0
    """
    activity = busy_fraction * compute_power_fraction + (1 - busy_fraction) * wait_power_fraction
    return idle_w + (tdp_w - idle_w) * activity


def capped_clock_fraction(power_cap_w, tdp_w, exponent):
    """Share of its rated matmul rate a device keeps under a power limit. [-]

    Parameters
    ----------
    power_cap_w, tdp_w : float or array
        The limit set on the device and its rated maximum; cap <= TDP. [W]
    exponent : float
        ``power_cap_clock_exponent``. [-]

    Returns
    -------
    (P_cap / P_TDP)^exponent, 1 at the rated maximum. [-]

    Notes
    -----
    A matmul-bound kernel at the rated limit already runs at it; a lower limit makes the
    firmware lower the clock until the draw fits. Near the top of the voltage-frequency
    curve the draw grows about as f^4 (f V^2 with V rising with f, plus leakage), so the
    rate goes as the limit^(1/4). The exponent 0.24 is what two dies measured at two
    limits each give [4]: 252.9/271.2 TFLOP/s at 300/400 W (GA100) and 1745/1822 at
    1000/1200 W (Blackwell).

    Examples
    --------
    >>> round(capped_clock_fraction(300.0, 400.0, 0.24), 4)
    0.9333
    """
    return (power_cap_w / tdp_w) ** exponent


def host_power_w(tdp_w, host_power_fraction_of_tdp):
    """Host CPUs, memory, NICs, fans and switches, per device, averaged over a run. [W]

    Notes
    -----
    P_host = f_host * TDP: the maximum non-GPU share of an 8-GPU server is 0.45-1.0 TDP
    (DGX-1 3.5 kW, DGX A100 6.5 kW, DGX H100 10.2 kW system maxima), less on average [3].
    """
    return host_power_fraction_of_tdp * tdp_w
