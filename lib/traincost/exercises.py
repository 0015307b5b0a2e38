"""Check functions for the classroom exercises in ``notebooks/exercises/``.

Each exercise notebook asks one question and ends with a call such as
``exercises.check_flops_of_a_model(ANSWER)``. The checker computes the right answer
from traincost's own formulas (the same ones the estimate uses), compares the
student's answer within a stated tolerance and returns :class:`Feedback`: right, or
not yet with a hint that names the concept and the formula, and, for the usual
mistakes (forward pass only, GB for GiB, PUE left out, ...), says which one it looks
like. The right answer is neither printed nor kept on the feedback; the worked answers are
:mod:`traincost.instructor`'s, for instructors and tests, and the exercise notebooks never
import it. Worked solutions are in ``notebooks/exercises/solutions/``.

Examples
--------
>>> from traincost import exercises
>>> print(exercises.check_pipeline_bubble(None))
No answer yet: replace None with your answer and run the cell again.
>>> exercises.check_pipeline_bubble(7 / 32).correct     # (p - 1) / (v * m), m = 512 / (16 * 1)
True
>>> fb = exercises.check_pipeline_bubble(7 / 39)
>>> fb.correct, "share of the whole step" in fb.hint
(False, True)
"""

from __future__ import annotations

import html
import math
from dataclasses import dataclass

import pandas as pd

from . import catalog, explore
from .assumptions import DEFAULT
from .estimate import compare
from .performance import pipeline_bubble_fraction
from .power import capped_clock_fraction, device_power_w
from .units import GB, GIB, GRAMS_PER_TONNE, JOULES_PER_MWH, SECONDS_PER_HOUR

#: layout knobs a student chooses in the "choosing a layout" exercise
LAYOUT_ANSWER_KEYS = ("tp", "pp", "micro_batch", "recompute", "zero")

#: accelerators and defaults of the "cheapest green option" exercise
GREEN_ACCELERATORS = ("a100-sxm4-80gb", "h100-sxm5-80gb", "h200-sxm-141gb", "tpu-v5p")


@dataclass(frozen=True, repr=False)
class Feedback:
    """The result of checking one answer.

    Parameters
    ----------
    exercise : str
        Exercise id. [-]
    correct : bool
        Whether the answer is right within the tolerance. [-]
    message : str
        One line: right, or not yet and in which direction. [-]
    hint : str
        The concept and its formula (empty when right). [-]
    tolerance : str
        How close counts as right, in words. [-]
    """

    exercise: str
    correct: bool
    message: str
    hint: str = ""
    tolerance: str = ""

    def __str__(self) -> str:
        lines = [self.message]
        if self.hint:
            lines.append(f"Hint: {self.hint}")
        if self.tolerance:
            lines.append(f"(Counted as right: {self.tolerance}.)")
        return "\n".join(lines)

    __repr__ = __str__

    def _repr_html_(self) -> str:
        colour = "#009E73" if self.correct else "#D55E00"
        parts = [f"<b style='color:{colour}'>{html.escape(self.message)}</b>"]
        if self.hint:
            parts.append(f"<b>Hint:</b> {html.escape(self.hint)}")
        if self.tolerance:
            parts.append(f"<span style='color:#555'>Counted as right: "
                         f"{html.escape(self.tolerance)}.</span>")
        return (f"<div style='border-left:4px solid {colour};padding:4px 10px'>"
                + "<br>".join(parts) + "</div>")


_NO_ANSWER = "No answer yet: replace None with your answer and run the cell again."
#: how far off a wrong answer must be for its feedback to say "more than ten times" [-]
ORDER_OF_MAGNITUDE = 10.0


def _as_number(exercise: str, answer, unit: str):
    """The answer as a float, or Feedback saying what is wrong with it."""
    if answer is None:
        return Feedback(exercise, False, _NO_ANSWER)
    if isinstance(answer, bool):
        return Feedback(exercise, False, f"Give a number in {unit}, not {answer!r}.")
    try:
        value = float(answer)
    except (TypeError, ValueError):
        return Feedback(exercise, False, f"Give a number in {unit}; {answer!r} is not one.")
    if not math.isfinite(value):
        return Feedback(exercise, False, f"Give a finite number in {unit}, not {value!r}.")
    return value


def _near(value: float, target: float, rel_tol: float) -> bool:
    return math.isfinite(target) and target != 0 and abs(value - target) <= rel_tol * abs(target)


def _check_value(exercise: str, answer, expected: float, *, rel_tol: float, unit: str,
                 concept: str, mistakes=(), right_note: str = "") -> Feedback:
    """Compare a numeric answer with ``expected``; diagnose known mistakes.

    ``mistakes`` holds (value the mistake gives, what to say); an answer within the
    tolerance of such a value gets that specific hint before the general one.
    """
    tolerance = f"within ±{100 * rel_tol:g} % of the value traincost's formulas give"
    value = _as_number(exercise, answer, unit)
    if isinstance(value, Feedback):
        hint = "" if answer is None else concept
        return Feedback(exercise, False, value.message, hint, tolerance if hint else "")
    if _near(value, expected, rel_tol):
        note = f" {right_note}" if right_note else ""
        return Feedback(exercise, True, f"Right: {value:.3g} {unit}.{note}", "", tolerance)
    for mistake_value, text in mistakes:
        if _near(value, mistake_value, rel_tol):
            return Feedback(exercise, False, f"Not yet: {value:.3g} {unit} is off.",
                            f"{text} {concept}", tolerance)
    # the direction, and whether it is off by more than an order of magnitude (a units
    # slip), but not by how much: a ratio would let the next try be the answer
    ratio = value / expected
    if ratio > 0:
        high = ratio > 1
        far = (ratio if high else 1 / ratio) > ORDER_OF_MAGNITUDE
        how = ("more than ten times " if far else "") + ("too high" if high else "too low")
    else:
        how = "of the wrong sign"
    return Feedback(exercise, False, f"Not yet: {value:.3g} {unit} is {how}.", concept,
                    tolerance)


# --------------------------------------------------------------------------------------
# 1. FLOP of a model
# --------------------------------------------------------------------------------------
FLOPS_CONCEPT = ("Training costs about 6 FLOP per parameter per token (2 in the forward pass, "
                 "4 in the backward pass) plus attention, 12·L·h·s per token (PaLM, App. B): "
                 "C ≈ (6·N + 12·L·h·s) · D, with N parameters, L layers, h hidden size, "
                 "s sequence length, D training tokens.")


def _solution_flops_of_a_model(model: str = "llama2-7b", tokens: float | None = None) -> float:
    """Model training FLOP of a preset: model FLOP per token x tokens (no recompute). [FLOP]"""
    return explore.model_flop_per_token(model) * catalog.job(model, tokens=tokens).tokens


def check_flops_of_a_model(answer, model: str = "llama2-7b",
                           tokens: float | None = None) -> Feedback:
    """Check the total training FLOP of ``model`` on ``tokens`` tokens (±5 %). [FLOP]

    Parameters
    ----------
    answer : float
        The student's total training compute. [FLOP]
    model : str
        Preset id. [-]
    tokens : float, optional
        Training tokens; the preset's reported figure when None. [tokens]
    """
    wl, job = catalog.model(model), catalog.job(model, tokens=tokens)
    expected = _solution_flops_of_a_model(model, tokens)
    n = float(explore.parameter_counts(wl, job.seq_len)["total"])
    attention_share = 12 * wl.layers * wl.hidden * job.seq_len * job.tokens / expected
    mistakes = [
        (6 * n * job.tokens, f"That is 6·N·D alone: at sequence length {job.seq_len} the "
                             f"attention term adds about {100 * attention_share:.0f} %."),
        (2 * n * job.tokens, "That looks like the forward pass only (2·N·D): the backward "
                             "pass costs twice the forward."),
        (expected / job.tokens, "That looks like FLOP per token: multiply by the training "
                                "tokens D."),
    ]
    return _check_value("flops-of-a-model", answer, expected, rel_tol=0.05, unit="FLOP",
                        concept=FLOPS_CONCEPT, mistakes=mistakes)


# --------------------------------------------------------------------------------------
# 2. Will it fit?
# --------------------------------------------------------------------------------------
FIT_CONCEPT = ("Mixed-precision Adam keeps 2 bytes of bf16 weights, 2 of gradients and 12 of "
               "optimizer state (fp32 master copy, momentum, variance) per parameter: 16·N "
               "bytes (ZeRO paper, Sec. 3.1). ZeRO stage 1 divides the optimizer states by dp, "
               "stage 2 also the gradients, stage 3 also the weights. 1 GiB = 2^30 bytes.")


def _solution_will_it_fit(model: str = "llama2-13b", dp: int = 8, zero: int = 0) -> float:
    """Weights + gradients + Adam states per device (no tp/pp), in GiB. [GiB]"""
    return explore.model_state_gib(model, dp, zero)


def check_will_it_fit(answer, model: str = "llama2-13b", dp: int = 8, zero: int = 0,
                      accelerator: str = "a100-sxm4-80gb") -> Feedback:
    """Check the model-state memory per device, in GiB (±3 %). [GiB]

    Parameters
    ----------
    answer : float
        Weights + gradients + optimizer states on one device. [GiB]
    model : str
        Preset id. [-]
    dp : int
        Data-parallel devices ZeRO shards over. [-]
    zero : int
        ZeRO stage 0-3. [-]
    accelerator : str
        Whose memory the right answer is compared with (said when right). [-]
    """
    expected = _solution_will_it_fit(model, dp, zero)
    hbm_gib = catalog.accelerator(accelerator).hbm_bytes / GIB
    states_all = explore.model_state_gib(model, dp, 0)
    mistakes = [
        (expected * GIB / GB, "That looks like GB (10^9 bytes), not GiB (2^30 bytes)."),
        (expected * 4 / 16, "That counts only weights and gradients: Adam's states are "
                            "missing."),
    ]
    if zero > 0:
        mistakes.append((states_all, f"That is the unsharded total: ZeRO stage {zero} divides "
                                     "part of it by dp."))
        mistakes.append((states_all / dp, "That divides everything by dp, which only ZeRO "
                                          "stage 3 does."))
    fits = "fit" if expected < hbm_gib else "do not fit"
    right_note = (f"On one {accelerator} ({hbm_gib:.3g} GiB) these states alone {fits}; "
                  "activations and framework memory come on top.")
    return _check_value("will-it-fit", answer, expected, rel_tol=0.03, unit="GiB",
                        concept=FIT_CONCEPT, mistakes=mistakes, right_note=right_note)


# --------------------------------------------------------------------------------------
# 3. The pipeline bubble
# --------------------------------------------------------------------------------------
BUBBLE_CONCEPT = ("With p pipeline stages and m micro-batches per step (m = B / (dp·b)), the "
                  "1F1B schedule idles (p − 1) micro-batch slots at the start and end of a step; "
                  "relative to the ideal compute time the bubble is (p − 1) / (v·m), v being "
                  "the interleaved chunks per stage (Narayanan et al. SC21, Sec. 2.2). Give it "
                  "as a fraction, not a percentage.")


def _solution_pipeline_bubble(pp: int = 8, vpp: int = 1, global_batch: int = 512, dp: int = 16,
                             micro_batch: int = 1) -> float:
    """(p − 1) / (v·m) with m = B / (dp·b). [-]"""
    m = global_batch // (dp * micro_batch)
    return float(pipeline_bubble_fraction(pp, vpp, m))


def check_pipeline_bubble(answer, pp: int = 8, vpp: int = 1, global_batch: int = 512,
                          dp: int = 16, micro_batch: int = 1) -> Feedback:
    """Check the pipeline-bubble fraction (p − 1)/(v·m) (±2 %). [-]

    Parameters
    ----------
    answer : float
        Bubble time relative to the ideal compute time, as a fraction. [-]
    pp, vpp, global_batch, dp, micro_batch : int
        p, v, B, dp, b of the question. [-]
    """
    if global_batch % (dp * micro_batch):
        raise ValueError(f"global_batch: {global_batch} must be a multiple of dp*micro_batch "
                         f"= {dp * micro_batch}")
    expected = _solution_pipeline_bubble(pp, vpp, global_batch, dp, micro_batch)
    m = global_batch // (dp * micro_batch)
    mistakes = [
        ((pp - 1) / (vpp * m + pp - 1), "That is the bubble's share of the whole step, "
                                        "(p − 1)/(v·m + p − 1); the question asks for it "
                                        "relative to the ideal compute time."),
        ((pp - 1) / (vpp * global_batch / micro_batch), "That uses m = B/b: each of the dp "
                                                        "pipelines gets only B/(dp·b) "
                                                        "micro-batches."),
        (100 * expected, "That looks like a percentage."),
    ]
    if vpp > 1:
        mistakes.append(((pp - 1) / m, "That ignores interleaving: v chunks per stage divide "
                                       "the bubble by v."))
    return _check_value("pipeline-bubble", answer, expected, rel_tol=0.02, unit="(fraction)",
                        concept=BUBBLE_CONCEPT, mistakes=mistakes)


# --------------------------------------------------------------------------------------
# 4. Choosing a layout
# --------------------------------------------------------------------------------------
LAYOUT_CONCEPT = ("A good layout first fits in memory (ZeRO shards states, recompute and "
                  "small micro-batches cut activations, tp and pp split the model), then wastes "
                  "the least time: tensor parallelism inside one fast scale-up domain "
                  "(tp ≤ 8 on 8-GPU servers), few enough pipeline stages that the bubble "
                  "(p − 1)/(v·m) stays small, and no more recompute than memory needs.")

_PART_HINTS = {
    "tp_comm": "Most of the lost time is tensor-parallel all-reduces: they sit on the "
               "critical path and get slow beyond one fast scale-up domain.",
    "bubble": "Most of the lost time is the pipeline bubble (p − 1)/(v·m): fewer stages or "
              "more micro-batches per step shrink it.",
    "pp_comm": "Pipeline sends between stages cost time: fewer stages need fewer of them.",
    "dp_comm": "Data-parallel traffic shows: ZeRO-3 regathers the weights for every "
               "micro-batch, and a large dp all-reduces more often across the network.",
    "optimizer": "The optimizer step is slow: ZeRO stage 1 or higher shards it over dp.",
    "stragglers": "More devices wait longer for the slowest machine: a job of n devices "
                  "meets a straggler more often as n grows.",
    "layer_overhead": "The framework spends a fixed time on each layer for every "
                      "micro-batch: fewer, larger micro-batches (or a leaner stack) pay it "
                      "less often.",
    "compute": "Your compute time is higher than needed: full recompute repeats the forward "
               "pass, and tiny GEMMs (small micro-batch, large tp) run below peak.",
}


def _layout_question(model, accelerator, devices, global_batch):
    return {"model": model, "accelerator": accelerator, "devices": devices,
            "global_batch": global_batch, "vpp": 1}


def _fastest_layout(model, accelerator, devices, global_batch):
    """The estimate of the fastest layout traincost's search finds (vpp = cp = ep = 1)."""
    return explore.layout_estimate(_layout_question(model, accelerator, devices, global_batch))


def _solution_choosing_a_layout(model: str = "llama2-70b", accelerator: str = "h100-sxm5-80gb",
                               devices: int = 64, global_batch: int = 1024) -> dict:
    """The fastest layout that fits, as traincost's search finds it (vpp = cp = ep = 1)."""
    layout = explore.fixed_layout(_fastest_layout(model, accelerator, devices, global_batch))
    return {k: layout[k] for k in LAYOUT_ANSWER_KEYS}


def check_choosing_a_layout(answer, model: str = "llama2-70b",
                            accelerator: str = "h100-sxm5-80gb", devices: int = 64,
                            global_batch: int = 1024, within: float = 0.10) -> Feedback:
    """Check a chosen layout: valid, fits, and within ``within`` of the fastest step time.

    Parameters
    ----------
    answer : dict
        ``tp``, ``pp``, ``micro_batch``, ``recompute`` (none/selective/full), ``zero``
        (0-3); vpp is 1. [-]
    model, accelerator : str
        Preset and accelerator ids. [-]
    devices : int
        Devices; dp = devices / (tp·pp). [-]
    global_batch : int
        Sequences per step. [sequences]
    within : float
        How much slower than the fastest layout still counts as right. [-]
    """
    name = "choosing-a-layout"
    tolerance = (f"the layout is valid, fits in memory and its step time is within "
                 f"{100 * within:g} % of the fastest layout traincost finds")
    fastest = _fastest_layout(model, accelerator, devices, global_batch)
    best = {k: v for k, v in explore.fixed_layout(fastest).items() if k in LAYOUT_ANSWER_KEYS}
    if answer is None:
        return Feedback(name, False, _NO_ANSWER, "", tolerance)
    if not isinstance(answer, dict):
        return Feedback(name, False, "Give the layout as a dict, e.g. dict(tp=4, pp=2, "
                        "micro_batch=1, recompute='selective', zero=1).", "", tolerance)
    missing = [k for k in LAYOUT_ANSWER_KEYS if k not in answer]
    extra = sorted(set(answer) - set(LAYOUT_ANSWER_KEYS))
    if missing or extra:
        what = (f"missing {', '.join(missing)}" if missing else "") + \
               ("; " if missing and extra else "") + \
               (f"unknown {', '.join(extra)}" if extra else "")
        return Feedback(name, False, f"Give exactly {', '.join(LAYOUT_ANSWER_KEYS)} ({what}).",
                        "", tolerance)
    try:
        est = explore.layout_estimate({**_layout_question(model, accelerator, devices,
                                                          global_batch), **answer})
    except ValueError as exc:
        return Feedback(name, False, f"Not yet: this layout cannot run: {exc}", LAYOUT_CONCEPT,
                        tolerance)
    d = est.to_dict()
    if not d["fits_in_memory"]:
        return Feedback(name, False,
                        f"Not yet: it needs {d['memory_gib_per_device']:.3g} GiB per device of "
                        f"{d['hbm_gib_per_device']:.3g} GiB: it does not fit.",
                        "Memory per device = states sharded by ZeRO and by tp·pp, plus "
                        "activations (cut by recompute and a smaller micro-batch). "
                        + LAYOUT_CONCEPT, tolerance)
    ratio = est.step_time_s / fastest.step_time_s
    if ratio <= 1 + within:
        return Feedback(name, True, f"Right: it fits ({d['memory_gib_per_device']:.3g} GiB "
                        f"per device) and its step takes {est.step_time_s:.3g} s, "
                        f"{100 * (ratio - 1):+.0f} % against the fastest layout found.", "",
                        tolerance)
    mine, theirs = est.step_breakdown_s(), fastest.step_breakdown_s()
    worst = max(mine, key=lambda k: mine[k] - theirs.get(k, 0.0))
    return Feedback(name, False, f"Not yet: it fits, but its step takes "
                    f"{est.step_time_s:.3g} s, {100 * (ratio - 1):.0f} % slower than the "
                    "fastest layout found.", f"{_PART_HINTS.get(worst, '')} {LAYOUT_CONCEPT}",
                    tolerance)


# --------------------------------------------------------------------------------------
# 5. PUE and region
# --------------------------------------------------------------------------------------
PUE_CONCEPT = ("Energy at the plug = IT energy × PUE; operational emissions = energy at the "
               "plug × grid intensity. Mind the units: 1 MWh × 1 gCO2e/kWh = 1 kgCO2e, so "
               "tCO2e = MWh × PUE × gCO2e/kWh / 1000.")


def _solution_pue_and_region(it_energy_mwh: float = 200.0, pue: float = 1.1,
                            region: str = "SWE") -> float:
    """Operational emissions of ``it_energy_mwh`` of IT energy at ``pue`` in ``region``. [tCO2e]"""
    from .footprint import facility_energy_j, operational_co2e_g

    grid = float(catalog.regions().loc[region, "grid_gco2e_per_kwh"])
    facility = facility_energy_j(it_energy_mwh * JOULES_PER_MWH, pue)
    return float(operational_co2e_g(facility, grid)) / GRAMS_PER_TONNE


def check_pue_and_region(answer, it_energy_mwh: float = 200.0, pue: float = 1.1,
                         region: str = "SWE") -> Feedback:
    """Check the operational tCO2e of an IT energy at a PUE in a grid region (±2 %). [tCO2e]

    Parameters
    ----------
    answer : float
        Operational emissions. [tCO2e]
    it_energy_mwh : float
        Energy of the IT equipment. [MWh]
    pue : float
        Power usage effectiveness of the data centre. [-]
    region : str
        Grid region id (``traincost.catalog.regions()``). [-]
    """
    expected = _solution_pue_and_region(it_energy_mwh, pue, region)
    mistakes = [
        (expected / pue, "That leaves out the PUE: cooling and power conversion come on top of "
                         "the IT energy."),
        (expected / pue ** 2, "That divides by the PUE: it multiplies."),
        (expected * 1000, "That looks like kilograms, not tonnes."),
        (expected / 1000, "Check MWh against kWh."),
    ]
    return _check_value("pue-and-region", answer, expected, rel_tol=0.02, unit="tCO2e",
                        concept=PUE_CONCEPT, mistakes=mistakes)


# --------------------------------------------------------------------------------------
# 6. The cheapest green option
# --------------------------------------------------------------------------------------
GREEN_CONCEPT = ("First drop every option whose operational emissions exceed the budget "
                 "(emissions = energy at the plug × grid intensity, so the same accelerator "
                 "emits less on a cleaner grid), then pick the cheapest that remains (cost = "
                 "device-hours × price per device-hour). Fast, cheap and green need not be "
                 "the same accelerator.")


def green_options(model: str = "llama2-7b", devices: int = 256,
                  accelerators=GREEN_ACCELERATORS, region: str = "world",
                  global_batch: int = 1024):
    """:func:`traincost.compare` of the exercise's options (one row per accelerator)."""
    return compare(list(accelerators), devices, model=model, global_batch=global_batch,
                   region=region)


def _solution_cheapest_green_option(model: str = "llama2-7b", devices: int = 256,
                                   accelerators=GREEN_ACCELERATORS, region: str = "world",
                                   budget_t: float = 45.0, global_batch: int = 1024):
    """The cheapest accelerator whose operational tCO2e is within budget (None if none)."""
    df = green_options(model, devices, accelerators, region, global_batch)
    fits = df["fits_in_memory"].map(lambda v: bool(v) if pd.notna(v) else False)
    ok = df[fits & (df["co2e_t"] <= budget_t) & df["cost_usd"].notna()]
    if ok.empty:
        return None
    return str(ok.sort_values(["cost_usd", "co2e_t"]).index[0])


def check_cheapest_green_option(answer, model: str = "llama2-7b", devices: int = 256,
                                accelerators=GREEN_ACCELERATORS, region: str = "world",
                                budget_t: float = 45.0, global_batch: int = 1024) -> Feedback:
    """Check the cheapest accelerator that stays within a carbon budget (exact choice).

    Parameters
    ----------
    answer : str or None
        Accelerator id, or ``"none"`` when no option meets the budget. [-]
    model : str
        Preset id. [-]
    devices : int
        Devices of each accelerator. [-]
    accelerators : sequence of str
        The options. [-]
    region : str
        Grid region id. [-]
    budget_t : float
        Carbon budget for operational emissions. [tCO2e]
    global_batch : int
        Sequences per step. [sequences]
    """
    name = "cheapest-green-option"
    tolerance = ("the exact accelerator; costs and emissions as traincost.compare computes "
                 "them")
    expected = _solution_cheapest_green_option(model, devices, accelerators, region, budget_t,
                                              global_batch)
    if answer is None:
        return Feedback(name, False, _NO_ANSWER, "", tolerance)
    choice = str(answer).strip().lower()
    options = [a.lower() for a in accelerators]
    if choice == "none":
        if expected is None:
            return Feedback(name, True, "Right: no option meets the budget.", "", tolerance)
        return Feedback(name, False, "Not yet: at least one option meets the budget.",
                        GREEN_CONCEPT, tolerance)
    if choice not in options:
        return Feedback(name, False, f"Choose one of {', '.join(options)} (or 'none'); "
                        f"{answer!r} is not an option.", "", tolerance)
    df = green_options(model, devices, accelerators, region, global_batch)
    row = df.loc[choice]
    if choice == expected:
        return Feedback(name, True, f"Right: {choice} emits {row['co2e_t']:.3g} tCO2e "
                        f"(budget {budget_t:g}) for ${row['cost_usd']:,.0f}, the cheapest that "
                        "stays within budget.", "", tolerance)
    if pd.isna(row["fits_in_memory"]) or not bool(row["fits_in_memory"]):
        why = row["note"] or "it cannot run this job"
        return Feedback(name, False, f"Not yet: {choice} is out ({why}).", GREEN_CONCEPT,
                        tolerance)
    if pd.isna(row["cost_usd"]):
        return Feedback(name, False, f"Not yet: {choice} has no catalog price, so its cost "
                        "cannot be compared.", GREEN_CONCEPT, tolerance)
    if row["co2e_t"] > budget_t:
        return Feedback(name, False, f"Not yet: {choice} emits {row['co2e_t']:.3g} tCO2e in "
                        f"{region}, over the budget of {budget_t:g}.", GREEN_CONCEPT,
                        tolerance)
    if expected is None:
        return Feedback(name, False, "Not yet.", GREEN_CONCEPT, tolerance)
    return Feedback(name, False, f"Not yet: {choice} stays within budget "
                    f"({row['co2e_t']:.3g} tCO2e) but another option that does costs less.",
                    GREEN_CONCEPT, tolerance)


# --------------------------------------------------------------------------------------
# 7. A power cap
# --------------------------------------------------------------------------------------
POWER_CAP_CONCEPT = ("A power cap slows a matmul-bound step: its rate falls to "
                     "(cap/TDP)^x of the uncapped one (x = power_cap_clock_exponent), so the "
                     "step takes 1/(cap/TDP)^x as long. The device draws "
                     "P_idle + (P_max − P_idle)·c while it computes, with P_max the cap instead "
                     "of the TDP. Energy per step = power × time: both change.")

#: what the power-cap exercise can ask for
POWER_CAP_QUANTITIES = ("time", "energy")


def _solution_power_cap(quantity: str = "energy", cap_w: float = 300.0,
                       accelerator: str = "a100-sxm4-80gb") -> float:
    """A compute-bound step under a power cap, over the same step uncapped. [-]

    ``quantity`` ``"time"``: the step time ratio, 1/(cap/TDP)^x; ``"energy"``: the device
    energy ratio, P(cap)·t(cap) / (P(TDP)·t(TDP)), with P the device's draw while it
    computes (:func:`traincost.power.device_power_w` at busy share 1).
    """
    if quantity not in POWER_CAP_QUANTITIES:
        raise ValueError(f"quantity: {quantity!r} is not one of {', '.join(POWER_CAP_QUANTITIES)}")
    acc = catalog.accelerator(accelerator)
    a = DEFAULT
    time = 1.0 / capped_clock_fraction(cap_w, acc.tdp_w, a.power_cap_clock_exponent)
    if quantity == "time":
        return float(time)
    capped = device_power_w(cap_w, acc.idle_w, 1.0, a.compute_power_fraction,
                            a.wait_power_fraction)
    rated = device_power_w(acc.tdp_w, acc.idle_w, 1.0, a.compute_power_fraction,
                           a.wait_power_fraction)
    return float(capped * time / rated)


def check_power_cap(answer, quantity: str = "energy", cap_w: float = 300.0,
                    accelerator: str = "a100-sxm4-80gb") -> Feedback:
    """Check the time or device-energy ratio of a compute-bound step under a cap (±0.5 %). [-]

    Parameters
    ----------
    answer : float
        Capped over uncapped: step time (``quantity="time"``) or the device's energy per
        step (``"energy"``). [-]
    quantity : str
        ``"time"`` or ``"energy"``. [-]
    cap_w : float
        The power limit. [W]
    accelerator : str
        Accelerator id. [-]
    """
    expected = _solution_power_cap(quantity, cap_w, accelerator)
    acc = catalog.accelerator(accelerator)
    speed = 1.0 / _solution_power_cap("time", cap_w, accelerator)
    if quantity == "time":
        mistakes = [
            (speed, "That is the clock (speed) factor: the step takes its inverse."),
            (acc.tdp_w / cap_w, "That slows the step by the whole power ratio: the rate "
                                f"falls only as its {DEFAULT.power_cap_clock_exponent:g}th "
                                "power."),
        ]
    else:
        power_only = expected * speed
        mistakes = [
            (power_only, "That is the power ratio alone: the capped step also takes longer."),
            (cap_w / acc.tdp_w, "That is cap/TDP: the device does not draw its maximum while "
                                "it computes, and the step takes longer."),
            (cap_w / acc.tdp_w / speed, "That takes the cap as the draw while computing: the "
                                        "device draws P_idle + (cap − P_idle)·c."),
            (1.0 / speed, "That is the time ratio: energy is power × time."),
        ]
    return _check_value("power-cap", answer, expected, rel_tol=0.005, unit="(capped ÷ uncapped)",
                        concept=POWER_CAP_CONCEPT, mistakes=mistakes)


# --------------------------------------------------------------------------------------
# 8. What a model card's GPU-hours imply
# --------------------------------------------------------------------------------------
IMPLIED_MFU_CONCEPT = ("A model card's GPU-hours imply a utilisation: the training FLOP, about "
                       "6·N·D (N parameters, D tokens), over what the GPUs could have done in "
                       "those hours at their dense peak, GPU-hours × 3600 s/h × peak FLOP/s. "
                       "A fraction 0-1, comparable with published MFU.")


def _card_figures(case: str):
    """(parameters, tokens, GPU-hours, dense peak FLOP/s) of a published run, as its
    source and the catalog state them."""
    runs = catalog.published_runs()
    if case not in runs.index:
        raise ValueError(f"case: {case!r} is not a published run id")
    row = runs.loc[case]
    if pd.isna(row["reported_device_hours"]) or pd.isna(row["tokens"]):
        raise ValueError(f"case: {case!r} reports no device-hours and tokens to compare")
    params = float(catalog.models().loc[row["model_preset"], "params_reported"])
    acc = catalog.accelerator(row["accelerator"])
    return (params, float(row["tokens"]), float(row["reported_device_hours"]),
            acc.peak_flop_per_s(str(row["precision"]) if isinstance(row["precision"], str)
                                else "bf16"))


def _solution_implied_mfu(case: str = "llama3.1-8b") -> float:
    """The fraction of the dense peak a published run's device-hours imply. [-]

    6 · N · D / (device-hours × 3600 × peak), with N the parameters and D the tokens its
    source states, and the catalog's dense 16-bit peak of its accelerator.
    """
    params, tokens, hours, peak = _card_figures(case)
    return 6.0 * params * tokens / (hours * SECONDS_PER_HOUR * peak)


def check_implied_mfu(answer, case: str = "llama3.1-8b") -> Feedback:
    """Check the fraction of peak a model card's GPU-hours imply (±2 %). [-]

    Parameters
    ----------
    answer : float
        6·N·D / (GPU-hours × 3600 × peak), a fraction 0-1. [-]
    case : str
        Published run id with device-hours and tokens (``data/published_runs.csv``). [-]
    """
    expected = _solution_implied_mfu(case)
    mistakes = [
        (100 * expected, "That is a percentage: give the fraction (0-1)."),
        (expected / 3, "That counts the forward pass only, 2·N·D: training is 6·N·D."),
        (expected * SECONDS_PER_HOUR, "GPU-hours are hours: multiply by 3600 s/h before "
                                      "dividing."),
        (expected / 2, "That divides by the sparse peak, twice the dense one: utilisation "
                       "is counted against the dense peak."),
    ]
    return _check_value("implied-mfu", answer, expected, rel_tol=0.02, unit="of the peak",
                        concept=IMPLIED_MFU_CONCEPT, mistakes=mistakes)


# --------------------------------------------------------------------------------------
# 9. Where a range comes from: an 80% range is p10 to p90, not min to max
# --------------------------------------------------------------------------------------
PUE_RANGE_CONCEPT = ("An 80% range runs from the 10th to the 90th percentile, not from the "
                     "minimum to the maximum. A triangular distribution on [a, b] with mode c "
                     "has F(x) = (x − a)²/((b − a)(c − a)) below c and "
                     "1 − (b − x)²/((b − a)(b − c)) above; facility energy = IT energy × PUE, "
                     "so with only the PUE uncertain its p90/p10 is the PUE's.")


def _unknown_site_pue() -> tuple:
    """The unknown site's PUE range: its minimum and maximum, and its p10 and p90 excess
    over 1 (data/input_ranges.csv's factors on PUE - 1 around the survey mean PUE the
    catalog uses for it, through traincost.uncertainty's quantile function). [-]"""
    from .uncertainty import range_ppf

    row = catalog.input_ranges().set_index("id").loc["pue-unknown-site"]
    excess = catalog.pue(DEFAULT.default_pue_operator)[0] - 1
    p10, p90 = (excess * float(f) for f in range_ppf(row)([0.1, 0.9]))
    return 1 + excess * float(row["low"]), 1 + excess * float(row["high"]), p10, p90


def _solution_pue_range() -> float:
    """p90/p10 of the facility energy when the unknown site's PUE is its only uncertain
    input: the PUE's own p90/p10, (1 + its p90 excess) / (1 + its p10 excess). [-]"""
    _, _, p10, p90 = _unknown_site_pue()
    return (1 + p90) / (1 + p10)


def check_pue_range(answer) -> Feedback:
    """Check p90/p10 of the facility energy with the PUE the only uncertain input (±1 %). [-]

    Parameters
    ----------
    answer : float
        The ratio of the 90th to the 10th percentile of the facility energy. [-]
    """
    expected = _solution_pue_range()
    low, high, excess_p10, excess_p90 = _unknown_site_pue()
    mistakes = [
        (high / low, "That is the whole span, maximum over minimum."),
        (excess_p90 / excess_p10, "That is the range of PUE − 1, the overhead alone: the "
                                  "facility energy scales with the PUE itself."),
        (expected - 1, "That is the ratio minus one: give p90 ÷ p10 itself."),
    ]
    return _check_value("pue-range", answer, expected, rel_tol=0.01, unit="(p90 ÷ p10)",
                        concept=PUE_RANGE_CONCEPT, mistakes=mistakes)


#: every exercise: id -> its checker (the worked answers: :mod:`traincost.instructor`)
EXERCISES = {
    "flops-of-a-model": check_flops_of_a_model,
    "will-it-fit": check_will_it_fit,
    "pipeline-bubble": check_pipeline_bubble,
    "choosing-a-layout": check_choosing_a_layout,
    "pue-and-region": check_pue_and_region,
    "cheapest-green-option": check_cheapest_green_option,
    "power-cap": check_power_cap,
    "implied-mfu": check_implied_mfu,
    "pue-range": check_pue_range,
}
