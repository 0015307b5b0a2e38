"""The worked answers to the classroom exercises, for instructors and tests.

The exercise notebooks (``notebooks/exercises/``) import :mod:`traincost.exercises`, whose
checkers compute the right answer from traincost's own formulas, compare, and return
right-or-not-yet feedback without the answer: neither printed nor kept on the feedback. The
answers themselves are here, in a module the exercise notebooks never import; the worked
solution notebooks (``notebooks/exercises/solutions/``) are the instructors' copies, and the
Binder build removes them from the tree it serves (``binder/postBuild``).

Examples
--------
>>> from traincost import instructor
>>> instructor.solution_pipeline_bubble()                    # (8 - 1) / (1 x 512 / 16)
0.21875
>>> check, answer = instructor.EXERCISES["pipeline-bubble"]
>>> check(answer()).correct
True
"""

from __future__ import annotations

from . import exercises as _ex

solution_flops_of_a_model = _ex._solution_flops_of_a_model
solution_will_it_fit = _ex._solution_will_it_fit
solution_pipeline_bubble = _ex._solution_pipeline_bubble
solution_choosing_a_layout = _ex._solution_choosing_a_layout
solution_pue_and_region = _ex._solution_pue_and_region
solution_cheapest_green_option = _ex._solution_cheapest_green_option
solution_power_cap = _ex._solution_power_cap
solution_implied_mfu = _ex._solution_implied_mfu
solution_pue_range = _ex._solution_pue_range

#: every exercise: id -> (checker, worked answer)
EXERCISES = {
    "flops-of-a-model": (_ex.check_flops_of_a_model, solution_flops_of_a_model),
    "will-it-fit": (_ex.check_will_it_fit, solution_will_it_fit),
    "pipeline-bubble": (_ex.check_pipeline_bubble, solution_pipeline_bubble),
    "choosing-a-layout": (_ex.check_choosing_a_layout, solution_choosing_a_layout),
    "pue-and-region": (_ex.check_pue_and_region, solution_pue_and_region),
    "cheapest-green-option": (_ex.check_cheapest_green_option, solution_cheapest_green_option),
    "power-cap": (_ex.check_power_cap, solution_power_cap),
    "implied-mfu": (_ex.check_implied_mfu, solution_implied_mfu),
    "pue-range": (_ex.check_pue_range, solution_pue_range),
}
