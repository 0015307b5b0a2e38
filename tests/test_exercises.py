"""Each classroom exercise, kernel-free: its solution passes the check, a wrong answer gets a
"not yet" with a hint that names the concept and states the tolerance, and the usual
mistakes are recognised. The notebooks themselves (exercise and worked solution) run under
nbval with the rest of notebooks/."""
from pathlib import Path

import nbformat
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import traincost
from traincost import catalog, exercises, instructor
from traincost.units import GB, GIB

NOTEBOOKS = Path(__file__).resolve().parents[1] / "notebooks" / "exercises"

#: a wrong answer for each exercise, built from its solution
WRONG = {
    "flops-of-a-model": lambda s: 1.5 * s,
    "will-it-fit": lambda s: 0.5 * s,
    "pipeline-bubble": lambda s: 2 * s,
    "choosing-a-layout": lambda s: {**s, "tp": 1, "pp": 1, "zero": 0, "recompute": "none"},
    "pue-and-region": lambda s: 3 * s,
    "cheapest-green-option": lambda s: "a100-sxm4-80gb",
    "power-cap": lambda s: 1.5 * s,
    "implied-mfu": lambda s: 2.5 * s,
    "pue-range": lambda s: 1.2 * s,
}
#: a word of each exercise's concept that its hint must name
CONCEPT_WORD = {
    "flops-of-a-model": "6·N", "will-it-fit": "ZeRO", "pipeline-bubble": "(p − 1)",
    "choosing-a-layout": "memory", "pue-and-region": "PUE",
    "cheapest-green-option": "budget",
    "power-cap": "cap/TDP",
    "implied-mfu": "6·N·D",
    "pue-range": "90th percentile",
}


@pytest.fixture(scope="module", params=sorted(exercises.EXERCISES))
def exercise(request):
    check, solution = instructor.EXERCISES[request.param]
    return request.param, check, solution, solution()


def test_solution_passes(exercise):
    name, check, _, answer = exercise
    fb = check(answer)
    assert fb.correct, str(fb)
    assert fb.exercise == name
    assert fb.message.startswith("Right")
    assert fb.tolerance                                 # the tolerance is stated


def test_wrong_answer_gets_a_hint_naming_the_concept(exercise):
    name, check, _, answer = exercise
    fb = check(WRONG[name](answer))
    assert not fb.correct
    assert fb.message.startswith("Not yet")
    assert CONCEPT_WORD[name] in fb.hint
    assert fb.tolerance and "Counted as right" in str(fb)


def test_no_answer_yet_is_not_an_error(exercise):
    _, check, _, _ = exercise
    fb = check(None)
    assert not fb.correct and "No answer yet" in fb.message


def test_feedback_renders_as_text_and_html(exercise):
    name, check, _, answer = exercise
    for fb in (check(answer), check(WRONG[name](answer))):
        assert fb.message in str(fb) and fb.message in repr(fb)
        assert "<div" in fb._repr_html_()


@pytest.mark.parametrize("name", ["flops-of-a-model", "will-it-fit", "pipeline-bubble",
                                  "pue-and-region", "power-cap", "implied-mfu", "pue-range"])
def test_wrong_numeric_answer_does_not_give_the_answer_away(name):
    check, solution = instructor.EXERCISES[name]
    expected = solution()
    fb = check(WRONG[name](expected))
    assert f"{expected:.3g}" not in str(fb)


@pytest.mark.parametrize("name", ["flops-of-a-model", "will-it-fit", "pipeline-bubble",
                                  "pue-and-region", "power-cap", "implied-mfu", "pue-range"])
@pytest.mark.parametrize("bad", ["lots", [1, 2], float("inf"), True])
def test_non_numbers_are_explained(name, bad):
    check = exercises.EXERCISES[name]
    fb = check(bad)
    assert not fb.correct and "number" in fb.message


# --- 1. FLOP of a model: hand-derived and the usual mistakes ---------------------------------
def test_flops_textbook_formula_is_right_and_6nd_alone_is_not():
    wl, job = catalog.model("llama2-7b"), catalog.job("llama2-7b")
    n = traincost.estimate(accelerator="b200", devices=8, model="llama2-7b",
                           global_batch=1024).params
    palm = (6 * n + 12 * wl.layers * wl.hidden * job.seq_len) * job.tokens   # PaLM App. B
    assert exercises.check_flops_of_a_model(palm).correct
    fb = exercises.check_flops_of_a_model(6 * n * job.tokens)
    assert not fb.correct and "6·N·D alone" in fb.hint
    fb = exercises.check_flops_of_a_model(2 * n * job.tokens)
    assert "forward pass only" in fb.hint


def test_flops_per_token_instead_of_total_is_recognised():
    tokens = catalog.job("llama2-7b").tokens
    fb = exercises.check_flops_of_a_model(instructor.solution_flops_of_a_model() / tokens)
    assert "per token" in fb.hint


# --- 2. Will it fit ----------------------------------------------------------------------
def test_will_it_fit_by_hand():
    n = traincost.estimate(accelerator="a100-sxm4-80gb", devices=8, model="llama2-13b",
                           global_batch=1024).params
    assert exercises.check_will_it_fit(16 * n / GIB, zero=0).correct
    assert exercises.check_will_it_fit(16 * n / GIB / 8, zero=3, dp=8).correct
    assert exercises.check_will_it_fit((2 + 2 + 12 / 8) * n / GIB, zero=1, dp=8).correct
    fb = exercises.check_will_it_fit(16 * n / GB, zero=0)
    assert not fb.correct and "GiB" in fb.hint
    fb = exercises.check_will_it_fit(16 * n / GIB, zero=2, dp=8)
    assert "unsharded" in fb.hint
    right = exercises.check_will_it_fit(16 * n / GIB, zero=0)
    assert "do not fit" in right.message                     # 194 GiB > 74.5 GiB


# --- 3. Pipeline bubble ------------------------------------------------------------------
@settings(max_examples=40, deadline=None)
@given(p=st.integers(2, 16), v=st.sampled_from([1, 2, 4]), dp=st.sampled_from([1, 2, 4, 8]),
       b=st.sampled_from([1, 2]), k=st.integers(1, 8))
def test_bubble_is_p_minus_1_over_v_m(p, v, dp, b, k):
    B = dp * b * 8 * k                                      # a batch that divides evenly
    m = B // (dp * b)
    fb = exercises.check_pipeline_bubble((p - 1) / (v * m), pp=p, vpp=v, global_batch=B,
                                         dp=dp, micro_batch=b)
    assert fb.correct


def test_bubble_mistakes_are_recognised():
    assert "whole step" in exercises.check_pipeline_bubble(7 / 39).hint
    assert "B/b" in exercises.check_pipeline_bubble(7 / 512).hint
    assert "percentage" in exercises.check_pipeline_bubble(100 * 7 / 32).hint
    assert "interleaving" in exercises.check_pipeline_bubble(7 / 32, vpp=2).hint
    assert exercises.check_pipeline_bubble(7 / 64, vpp=2).correct


def test_bubble_question_must_divide():
    with pytest.raises(ValueError, match="global_batch"):
        exercises.check_pipeline_bubble(0.1, global_batch=100, dp=16)


# --- 4. Choosing a layout ------------------------------------------------------------------
def test_solution_layout_is_valid_and_fits():
    best = instructor.solution_choosing_a_layout()
    est = traincost.estimate(accelerator="h100-sxm5-80gb", devices=64, model="llama2-70b",
                             global_batch=1024, vpp=1, cp=1, ep=1, **best)
    assert est.fits_in_memory
    assert set(best) == set(exercises.LAYOUT_ANSWER_KEYS)


def test_layout_feedback_says_what_is_wrong():
    invalid = exercises.check_choosing_a_layout(dict(tp=3, pp=1, micro_batch=1,
                                                     recompute="full", zero=1))
    assert not invalid.correct and "cannot run" in invalid.message and "tp 3" in invalid.message
    too_big = exercises.check_choosing_a_layout(dict(tp=1, pp=1, micro_batch=1,
                                                     recompute="none", zero=0))
    assert "does not fit" in too_big.message
    slow = exercises.check_choosing_a_layout(dict(tp=8, pp=8, micro_batch=1,
                                                  recompute="full", zero=1))
    assert not slow.correct and "slower" in slow.message
    missing = exercises.check_choosing_a_layout(dict(tp=8))
    assert "missing" in missing.message
    assert "dict" in exercises.check_choosing_a_layout((8, 1)).message


def test_any_layout_within_the_tolerance_counts():
    best = instructor.solution_choosing_a_layout()
    loose = exercises.check_choosing_a_layout(best, within=10.0)
    assert loose.correct


# --- 5. PUE and region ---------------------------------------------------------------------
@pytest.mark.parametrize("region", ["SWE", "POL", "world"])
def test_pue_and_region_by_hand(region):
    g = catalog.regions().loc[region, "grid_gco2e_per_kwh"]
    right = 200 * 1.3 * g / 1000                              # MWh x PUE x g/kWh / 1000
    assert exercises.check_pue_and_region(right, pue=1.3, region=region).correct
    assert "leaves out the PUE" in exercises.check_pue_and_region(
        200 * g / 1000, pue=1.3, region=region).hint
    assert "kilograms" in exercises.check_pue_and_region(
        right * 1000, pue=1.3, region=region).hint


# --- 6. The cheapest green option ---------------------------------------------------------
def test_green_solution_meets_budget_and_nothing_cheaper_does():
    for region, budget in (("world", 45.0), ("FRA", 45.0), ("POL", 60.0)):
        answer = instructor.solution_cheapest_green_option(region=region, budget_t=budget)
        df = exercises.green_options(region=region)
        ok = df[(df["co2e_t"] <= budget) & df["cost_usd"].notna()]
        if answer is None:
            assert ok.empty
            continue
        assert df.loc[answer, "co2e_t"] <= budget
        assert (ok["cost_usd"] >= df.loc[answer, "cost_usd"]).all()
        assert exercises.check_cheapest_green_option(answer, region=region,
                                                     budget_t=budget).correct


def test_green_feedback_explains_the_choice():
    over = exercises.check_cheapest_green_option("a100-sxm4-80gb", region="world",
                                                 budget_t=1.0)
    assert "over the budget" in over.message
    assert exercises.check_cheapest_green_option("none", budget_t=0.001).correct
    assert "not an option" in exercises.check_cheapest_green_option("gpu-9000").message
    assert not exercises.check_cheapest_green_option("none", budget_t=1e6).correct


# --- the notebooks exist and call their checker ----------------------------------------------
def _code(path):
    return "\n".join(c.source for c in nbformat.read(path, as_version=4).cells
                     if c.cell_type == "code")


@pytest.mark.parametrize("name", sorted(exercises.EXERCISES))
def test_exercise_and_solution_notebooks_call_the_checker(name):
    checker = exercises.EXERCISES[name].__name__
    student = sorted(NOTEBOOKS.glob(f"*-{name}.ipynb"))
    solution = sorted((NOTEBOOKS / "solutions").glob(f"*-{name}.ipynb"))
    assert len(student) == 1 and len(solution) == 1, name
    assert checker in _code(student[0])
    assert "= None" in _code(student[0])                      # the student fills it in
    assert checker in _code(solution[0]) and "assert" in _code(solution[0])


# --- 7. A power cap ----------------------------------------------------------------------
def test_power_cap_by_hand():
    # A100 SXM: TDP 400 W, idle 60 W; compute draw share c = 0.85; cap 300 W.
    # time: 1 / (300/400)^0.24 = 1 / 0.93329 = 1.07148
    # energy: (60 + 240 x 0.85) x 1.07148 / (60 + 340 x 0.85) = 264 x 1.07148 / 349 = 0.81052
    assert exercises.check_power_cap(1.0715, "time").correct
    assert exercises.check_power_cap(0.8105).correct
    assert instructor.solution_power_cap("energy") == pytest.approx(0.81052, rel=1e-4)


@pytest.mark.parametrize("answer,says", [
    (264 / 349, "power ratio alone"),           # the slowdown left out
    (0.75, "cap/TDP"),                          # the cap ratio as the energy ratio
    (300 / 400 * 1.07148, "takes the cap as the draw"),
    (1.07148, "energy is power × time"),
])
def test_power_cap_energy_mistakes_are_named(answer, says):
    fb = exercises.check_power_cap(answer)
    assert not fb.correct and says in fb.hint


@pytest.mark.parametrize("answer,says", [(0.93329, "clock (speed) factor"),
                                         (400 / 300, "whole power ratio")])
def test_power_cap_time_mistakes_are_named(answer, says):
    fb = exercises.check_power_cap(answer, "time")
    assert not fb.correct and says in fb.hint


def test_power_cap_quantity_must_be_known():
    with pytest.raises(ValueError, match="quantity: 'power'"):
        instructor.solution_power_cap("power")


# --- 8. What a model card's GPU-hours imply ----------------------------------------------
def test_implied_mfu_by_hand():
    # Llama 3.1 card: 8B (8.0e9 parameters), 15T tokens, 1.46M H100 GPU-h; H100 SXM dense
    # bf16 peak 989 TFLOP/s: 6 x 8e9 x 1.5e13 / (1.46e6 x 3600 x 9.89e14) = 7.2e23 / 5.198e24
    assert instructor.solution_implied_mfu() == pytest.approx(0.13851, rel=1e-4)
    assert exercises.check_implied_mfu(0.1385).correct
    # 405B: 6 x 405e9 x 15.6e12 / (30.84e6 x 3600 x 989e12) = 0.3452
    assert instructor.solution_implied_mfu("llama3.1-405b") == pytest.approx(0.3452, rel=1e-3)


@pytest.mark.parametrize("answer,says", [
    (13.85, "percentage"),                  # 100 x the fraction
    (0.13851 / 3, "forward pass only"),     # 2·N·D
    (0.13851 * 3600, "multiply by 3600"),   # hours taken as seconds
    (0.13851 / 2, "sparse peak"),           # against 1979 TFLOP/s
])
def test_implied_mfu_mistakes_are_named(answer, says):
    fb = exercises.check_implied_mfu(answer)
    assert not fb.correct and says in fb.hint


def test_implied_mfu_needs_a_run_with_hours_and_tokens():
    with pytest.raises(ValueError, match="case: 'llama9'"):
        instructor.solution_implied_mfu("llama9")
    with pytest.raises(ValueError, match="no device-hours and tokens"):
        instructor.solution_implied_mfu("sc21-t1-1.7b")


def test_the_index_counts_the_exercises_there_are():
    """00-index's sentence about the exercises names as many as notebooks/exercises holds
    (it said seven when there were eight)."""
    import json
    import pathlib
    import re
    root = pathlib.Path(__file__).resolve().parents[1] / "notebooks"
    words = {"six": 6, "seven": 7, "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12}
    text = "".join("".join(c["source"]) for c in
                   json.loads((root / "00-index.ipynb").read_text())["cells"])
    said = re.search(r"\b(\w+) classroom exercises\b", text).group(1)
    assert words[said] == len(list((root / "exercises").glob("[0-9][0-9]-*.ipynb")))


# --- 9. Where a range comes from: p10 to p90 of a triangular PUE ------------------------------
def test_pue_range_by_hand_and_its_usual_mistakes():
    # data/input_ranges.csv pue-unknown-site: PUE 1.2 to 2.0, mode 1.56 (Uptime 2024), as
    # factors 0.357, 1, 1.786 on PUE - 1 = 0.56. Triangle: p10 = a + sqrt(0.1 (b-a)(c-a))
    # = 1.2 + sqrt(0.0288) = 1.3697; p90 = b - sqrt(0.1 (b-a)(b-c)) = 2 - sqrt(0.0352)
    # = 1.8124; p90 / p10 = 1.3232
    assert instructor.solution_pue_range() == pytest.approx(1.3232, rel=5e-4)
    assert exercises.check_pue_range(1.3232).correct
    assert "whole span" in exercises.check_pue_range(2.0 / 1.2).hint
    assert "PUE − 1" in exercises.check_pue_range(0.8124 / 0.3697).hint


@pytest.mark.parametrize("name", ["flops-of-a-model", "will-it-fit", "pipeline-bubble",
                                  "pue-and-region", "power-cap", "implied-mfu", "pue-range"])
def test_feedback_says_the_direction_but_not_the_factor(name):
    # issue 26: "answer 1 and the feedback says how far off you are", then 1/that is
    # accepted. An arbitrary wrong answer gets high or low (and "more than ten times" for
    # a units-sized slip), never a ratio to invert
    check, solution = instructor.EXERCISES[name]
    expected = solution()
    for factor, words in ((1.37, "too high"), (1 / 1.37, "too low"),
                          (37.0, "more than ten times too high")):
        fb = check(expected * factor)
        assert not fb.correct
        if "is off" in fb.message:                  # a recognised mistake: its own hint
            continue
        assert fb.message.endswith(f"{words}."), fb.message
        assert "1.4" not in fb.message and "37" not in fb.message.replace(
            f"{expected * factor:.3g}", "")


def test_a_student_notebook_cannot_read_the_answer():
    # issue 26: feedback says right or not yet, never the number; the exercise module a
    # student imports holds checkers only, the worked answers live in traincost.instructor,
    # and the Binder build removes the solution notebooks from the tree it serves
    fb = exercises.check_pipeline_bubble(0.05)
    assert not fb.correct and "0.21875" not in str(fb) and "0.219" not in str(fb)
    assert not any("0.21875" in repr(getattr(fb, k)) for k in vars(fb))
    assert not [n for n in dir(exercises) if n.startswith("solution")]
    assert all(callable(c) for c in exercises.EXERCISES.values())
    post_build = (Path(__file__).resolve().parents[1] / "binder" / "postBuild").read_text()
    assert "rm -rf notebooks/exercises/solutions" in post_build
