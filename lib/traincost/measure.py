"""Measure a small training run on this machine, and estimate it the way traincost does.

Notebook 08 trains a tiny two-layer perceptron (MLP) with NumPy for a few seconds, lets
CodeCarbon's offline tracker measure its energy, and sets beside it traincost's method
in miniature:

* FLOP of the run, counted from the matrix shapes (:func:`mlp_flop_per_step`);
* the machine's achieved matrix-multiply rate, timed on a square matmul
  (:func:`matmul_flop_per_s`, the CPU's analogue of an accelerator's measured MAMF);
* a power figure (CodeCarbon's measured or estimated CPU power, plus its RAM power as
  the "host share");
* time = FLOP / rate, energy = power x time (:func:`estimate_run`, which calls the
  same :mod:`traincost.footprint` functions as the large-model estimate).

Everything here is small and deterministic except the timings. CodeCarbon is imported
only inside :func:`track_with_codecarbon`; it runs offline (``country_iso_code``) and
writes no file.

Examples
--------
>>> run = train_mlp(steps=3, batch=8, d_in=16, d_hidden=32, d_out=4)
>>> run.flop == 3 * mlp_flop_per_step(8, 16, 32, 4)
True
>>> est = estimate_run(1e9, flop_per_s=1e10, cpu_power_w=10.0)
>>> est["time_s"], est["cpu_energy_j"]
(0.1, 1.0)

References
----------
.. [1] CodeCarbon, https://github.com/mlco2/codecarbon (OfflineEmissionsTracker; CPU power
   from RAPL where readable, else TDP x CPU load; RAM power from installed memory).
.. [2] Kaplan et al., "Scaling Laws for Neural Language Models", arXiv:2001.08361, Sec. 2.1
   (training FLOP about 6 x parameters per example: 2 forward, 4 backward).
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass

import numpy as np
import pandas as pd

from . import footprint
from .units import GRAMS_PER_KG, JOULES_PER_KWH

#: sizes of the notebook's MLP: a few seconds of float32 work on a 2-core CPU
DEFAULT_MLP = {"batch": 256, "d_in": 512, "d_hidden": 1024, "d_out": 16}



def mlp_flop_per_step(batch, d_in, d_hidden, d_out):
    """Matrix-multiply FLOP of one SGD step of a two-layer MLP. [FLOP]

    Parameters
    ----------
    batch : int or array
        Examples per step, b. [-]
    d_in, d_hidden, d_out : int or array
        Input, hidden and output widths, d, h, o. [-]

    Returns
    -------
    FLOP of the step's matrix multiplies (element-wise work not counted). [FLOP]

    Notes
    -----
    A (b x k) @ (k x n) multiply costs 2*b*k*n FLOP (one multiply and one add per term).

    * forward: x W1 (2*b*d*h) and relu(.) W2 (2*b*h*o);
    * backward: dW2 (2*b*h*o), the hidden gradient dH (2*b*h*o) and dW1 (2*b*d*h).
      The input gradient dX is not needed (x is data), which saves 2*b*d*h.

    Total 4*b*d*h + 6*b*h*o. The "6 x parameters per example" rule [2] assumes every
    layer also passes a gradient back, so for this MLP it overcounts by 2*b*d*h.

    Examples
    --------
    >>> mlp_flop_per_step(1, 1, 1, 1)
    10
    >>> mlp_flop_per_step(2, 3, 4, 5)  # 4*2*3*4 + 6*2*4*5
    336
    """
    b, d, h, o = batch, d_in, d_hidden, d_out
    forward = 2 * b * d * h + 2 * b * h * o
    backward = 2 * b * h * o + 2 * b * h * o + 2 * b * d * h     # dW2, dH, dW1
    return forward + backward


@dataclass(frozen=True)
class MLPRun:
    """What :func:`train_mlp` did.

    Parameters
    ----------
    steps : int
        SGD steps taken. [-]
    flop : float
        Matrix-multiply FLOP of all steps (:func:`mlp_flop_per_step` x steps). [FLOP]
    seconds : float
        Wall-clock time of the training loop alone. [s]
    losses : numpy.ndarray
        Mean-squared error before each step. [-]
    """

    steps: int
    flop: float
    seconds: float
    losses: np.ndarray

    @property
    def achieved_flop_per_s(self) -> float:
        """FLOP / seconds: the rate the loop actually reached. [FLOP/s]"""
        return self.flop / self.seconds


def _check_positive_int(name, value):
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value <= 0:
        raise ValueError(f"{name}: {value!r} must be a positive whole number")


def train_mlp(steps: int = 400, batch: int = DEFAULT_MLP["batch"],
              d_in: int = DEFAULT_MLP["d_in"], d_hidden: int = DEFAULT_MLP["d_hidden"],
              d_out: int = DEFAULT_MLP["d_out"], learning_rate: float = 0.03,
              seed: int = 0, max_seconds: float | None = None) -> MLPRun:
    """Train a two-layer ReLU MLP with plain SGD on a synthetic regression task.

    Parameters
    ----------
    steps : int
        SGD steps. [-]
    batch, d_in, d_hidden, d_out : int
        Batch size and layer widths. [-]
    learning_rate : float
        SGD step size. [-]
    seed : int
        Seed of the data, the teacher network and the initial weights. [-]
    max_seconds : float, optional
        Stop after the step that passes this much loop time, even if fewer than
        ``steps`` were taken (keeps a notebook short on a slow or busy machine). [s]

    Returns
    -------
    MLPRun
        FLOP, loop time and the loss history.

    Notes
    -----
    Targets come from a fixed random "teacher" network, so the loss can fall. Eight
    batches are drawn once and cycled, so the timed loop does matrix work, not random
    number generation. float32 throughout, as accelerators train in low precision.
    """
    for name, value in (("steps", steps), ("batch", batch), ("d_in", d_in),
                        ("d_hidden", d_hidden), ("d_out", d_out)):
        _check_positive_int(name, value)
    if not learning_rate > 0:
        raise ValueError(f"learning_rate: {learning_rate!r} must be > 0")
    if max_seconds is not None and not max_seconds > 0:
        raise ValueError(f"max_seconds: {max_seconds!r} must be > 0 (or None)")
    budget = float("inf") if max_seconds is None else float(max_seconds)
    rng = np.random.default_rng(seed)
    f32 = np.float32
    xs = rng.standard_normal((8, batch, d_in)).astype(f32)
    teacher = rng.standard_normal((d_in, d_out)).astype(f32) / np.sqrt(d_in)
    ys = np.tanh(xs @ teacher).astype(f32)
    w1 = (rng.standard_normal((d_in, d_hidden)) * np.sqrt(2.0 / d_in)).astype(f32)
    w2 = (rng.standard_normal((d_hidden, d_out)) / np.sqrt(d_hidden)).astype(f32)
    lr = f32(learning_rate)
    losses = np.empty(steps)
    taken = 0
    start = time.perf_counter()
    for i in range(steps):
        x, y = xs[i % 8], ys[i % 8]
        pre = x @ w1                                  # forward: 2*b*d*h
        hid = np.maximum(pre, 0)
        out = hid @ w2                                # 2*b*h*o
        err = out - y
        losses[i] = float(np.mean(err * err))
        g_out = err * f32(2.0 / err.size)
        g_w2 = hid.T @ g_out                          # backward: 2*b*h*o
        g_hid = (g_out @ w2.T) * (pre > 0)            # 2*b*h*o
        g_w1 = x.T @ g_hid                            # 2*b*d*h
        w1 -= lr * g_w1
        w2 -= lr * g_w2
        taken = i + 1
        if time.perf_counter() - start > budget:
            break
    seconds = time.perf_counter() - start
    flop = taken * mlp_flop_per_step(batch, d_in, d_hidden, d_out)
    return MLPRun(steps=taken, flop=float(flop), seconds=seconds, losses=losses[:taken])


def matmul_flop_per_s(n: int = 1024, repeats: int = 5, dtype=np.float32) -> float:
    """Best achieved rate of an n x n x n matrix multiply on this machine. [FLOP/s]

    Parameters
    ----------
    n : int
        Matrix size. [-]
    repeats : int
        Timed runs after one warm-up; the fastest counts. [-]
    dtype : numpy dtype
        Element type. [-]

    Returns
    -------
    2*n**3 / (fastest time). [FLOP/s]

    Notes
    -----
    Like an accelerator's measured maximum achievable matmul FLOP/s (MAMF), this is a
    best case: one large, square, cache-friendly multiply. A training loop's smaller,
    thinner multiplies and its element-wise work reach less of it.
    """
    _check_positive_int("n", n)
    _check_positive_int("repeats", repeats)
    rng = np.random.default_rng(0)
    a = rng.standard_normal((n, n)).astype(dtype)
    b = rng.standard_normal((n, n)).astype(dtype)
    a @ b                                             # warm-up (threads, caches)
    best = float("inf")
    for _ in range(repeats):
        t0 = time.perf_counter()
        a @ b
        best = min(best, time.perf_counter() - t0)
    return 2.0 * n**3 / best


def estimate_run(flop, flop_per_s, cpu_power_w, host_power_w=0.0,
                 grid_gco2e_per_kwh=None) -> dict:
    """traincost's estimate in miniature: time from FLOP, energy from power x time.

    Parameters
    ----------
    flop : float
        Work of the run. [FLOP]
    flop_per_s : float
        Rate the run is assumed to reach. [FLOP/s]
    cpu_power_w : float
        Power of the processor while it runs. [W]
    host_power_w : float
        Everything else counted (CodeCarbon: RAM). [W]
    grid_gco2e_per_kwh : float, optional
        Grid intensity; adds ``co2e_g``. [gCO2e/kWh]

    Returns
    -------
    dict
        ``time_s`` [s], ``cpu_energy_j`` and ``energy_j`` (CPU + host) [J], and
        ``co2e_g`` [gCO2e] when an intensity is given.

    Notes
    -----
    T = FLOP / rate; E = P x T (:func:`traincost.footprint.it_energy_j` with one
    device); emissions = E [kWh] x intensity (PUE 1: a desktop has no cooling plant).
    """
    for name, value in (("flop", flop), ("flop_per_s", flop_per_s)):
        if not value > 0:
            raise ValueError(f"{name}: {value!r} must be > 0")
    for name, value in (("cpu_power_w", cpu_power_w), ("host_power_w", host_power_w)):
        if not value >= 0:
            raise ValueError(f"{name}: {value!r} must be >= 0")
    time_s = flop / flop_per_s
    out = {"time_s": time_s,
           "cpu_energy_j": footprint.it_energy_j(cpu_power_w, 1, time_s),
           "energy_j": footprint.it_energy_j(cpu_power_w + host_power_w, 1, time_s)}
    if grid_gco2e_per_kwh is not None:
        out["co2e_g"] = footprint.operational_co2e_g(out["energy_j"], grid_gco2e_per_kwh)
    return out


def track_with_codecarbon(fn, *, country_iso_code: str = "FRA",
                          measure_power_secs: float = 1.0):
    """Run ``fn()`` under CodeCarbon's offline tracker; return its result and the measurement.

    Parameters
    ----------
    fn : callable
        What to measure (no arguments).
    country_iso_code : str
        ISO-3 country whose grid intensity CodeCarbon applies (offline, no network). [-]
    measure_power_secs : float
        CodeCarbon's sampling interval. [s]

    Returns
    -------
    (result, dict)
        ``fn()``'s return value and ``duration_s`` [s], ``cpu_power_w``,
        ``ram_power_w`` [W], ``cpu_energy_j``, ``ram_energy_j``, ``energy_j`` [J],
        ``co2e_g`` [gCO2e], ``tracking_mode`` and ``cpu_model``.

    Notes
    -----
    Sets ``CODECARBON_LOG_LEVEL=error`` unless already set, so its log lines stay out of
    the notebook. Without readable RAPL counters (virtual machines) CodeCarbon estimates
    CPU power from the CPU's TDP and load, and RAM power from the installed memory: the
    "measurement" is then itself partly a model.
    """
    os.environ.setdefault("CODECARBON_LOG_LEVEL", "error")
    from codecarbon import OfflineEmissionsTracker

    options = {"country_iso_code": country_iso_code, "measure_power_secs": measure_power_secs,
               "log_level": os.environ["CODECARBON_LOG_LEVEL"]}
    try:                                   # no output file (current CodeCarbon 3.x)
        tracker = OfflineEmissionsTracker(**options, output_methods=[])
    except TypeError:                      # earlier 3.x releases: the older flag
        tracker = OfflineEmissionsTracker(**options, save_to_file=False)
    tracker.start()
    try:
        result = fn()
    finally:
        tracker.stop()
    d = tracker.final_emissions_data
    measured = {
        "duration_s": float(d.duration),
        "cpu_power_w": float(d.cpu_power),
        "ram_power_w": float(d.ram_power),
        "cpu_energy_j": float(d.cpu_energy) * JOULES_PER_KWH,
        "ram_energy_j": float(d.ram_energy) * JOULES_PER_KWH,
        "energy_j": float(d.energy_consumed) * JOULES_PER_KWH,
        "co2e_g": float(d.emissions) * GRAMS_PER_KG,
        "tracking_mode": str(d.tracking_mode),
        "cpu_model": str(d.cpu_model),
    }
    return result, measured


def side_by_side(measured: dict, estimated: dict) -> pd.DataFrame:
    """Measured and estimated time and energy in one table, with their ratio.

    Parameters
    ----------
    measured : dict
        ``time_s``, ``cpu_energy_j``, ``energy_j`` (and optionally ``co2e_g``).
    estimated : dict
        The same keys (:func:`estimate_run`).

    Returns
    -------
    pandas.DataFrame
        One row per quantity (with its unit), columns ``measured``, ``estimated`` and
        ``measured / estimated``.

    Examples
    --------
    >>> side_by_side({"time_s": 2.0, "cpu_energy_j": 8.0, "energy_j": 40.0},
    ...              {"time_s": 1.0, "cpu_energy_j": 4.0, "energy_j": 20.0}).iloc[:, 2].tolist()
    [2.0, 2.0, 2.0]
    """
    labels = {"time_s": "time [s]", "cpu_energy_j": "CPU energy [J]",
              "energy_j": "CPU + RAM energy [J]", "co2e_g": "emissions [gCO2e]"}
    rows = []
    for key, label in labels.items():
        if key in measured and key in estimated:
            m, e = float(measured[key]), float(estimated[key])
            rows.append({"quantity": label, "measured": m, "estimated": e,
                         "measured / estimated": m / e if e else float("nan")})
    return pd.DataFrame(rows).set_index("quantity")
