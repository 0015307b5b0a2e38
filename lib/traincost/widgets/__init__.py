"""Interactive widgets for the notebooks (the only package that imports ipywidgets).

Builders *return* a widget (they never display it), so a notebook cell ends with the
call and tests can drive the controls kernel-side, without a browser:

>>> from traincost import widgets
>>> box = widgets.compare_accelerators(accelerators=("a100-sxm4-80gb", "h100-sxm5-80gb"))
>>> sorted(box.result.index)
['a100-sxm4-80gb', 'h100-sxm5-80gb']
>>> box.controls["devices"].value = 512     # recomputes at once (observe, no button)
>>> box.message.value
''

The package is a small kit (:mod:`traincost.widgets.kit`: formatting, shared controls,
the refresher that shows errors in place) and one module per notebook:
:mod:`~traincost.widgets.run_cost` (00), :mod:`~traincost.widgets.compare` (01),
:mod:`~traincost.widgets.flops` (02), :mod:`~traincost.widgets.parallelism` (03),
:mod:`~traincost.widgets.layout` (04, on :func:`traincost.search`),
:mod:`~traincost.widgets.power` (05), :mod:`~traincost.widgets.dollars` (06),
:mod:`~traincost.widgets.validation` (07, on :mod:`traincost.validate`),
:mod:`~traincost.widgets.measure` (08) and :mod:`~traincost.widgets.sites` (09). Every
public name is re-exported here.

The arithmetic lives below: :func:`traincost.compare` / :func:`traincost.estimate`,
:mod:`traincost.explore` (02-06, and why the other layouts of a search lose) and
:mod:`traincost.measure` (08). Those raise ``ValueError`` with one line for bad input;
a builder's callback catches it and shows the message in ``box.message``, so no
exception leaves a callback.
"""

from ..explore import EXPOSED_COMM_PARTS, layout_label, layout_of, one_knob_variants
from ..search import OBJECTIVES
from .compare import (DEFAULT_ACCELERATORS, compare_accelerators, compare_table,
                      format_compare_table, problems, table_html)
from .dollars import (DEADLINE_ACCELERATORS, DEADLINE_DEVICE_COUNTS, candidates_html,
                      cheapest_for_deadline, rent_or_own, rent_own_html, winner_html)
from .flops import flops_and_memory, memory_summary_html
from .kit import (CURATED_REGIONS, MICRO_BATCH_CHOICES, RECOMPUTE_CHOICES, TP_CHOICES,
                  ZERO_CHOICES, in_voila, lab_only, parse_device_counts, parse_optional_number,
                  parse_price, preset_tokens, region_options, sig)
from .layout import (FIND_ACCELERATORS, FIND_DEVICE_COUNTS, LAYOUT_KNOBS, OBJECTIVE_CHOICES,
                     SEARCH_TOP, best_summary_html, find_best_layout, run_search,
                     search_notes_html, top_table, why_lose_html, why_lose_rows,
                     why_others_lose)
from .measure import measured_vs_estimated
from .parallelism import derived_dp, layout_summary_html, parallelism_explorer
from .power import (CARBON_REGIONS, SEASON_REGIONS, carbon_table_html, cleanest_start_window,
                    power_cap_explorer,
                    power_cap_summary_html, power_explorer, power_summary_html, region_carbon,
                    start_month_carbon, start_month_table_html)
from .run_cost import run_cost, run_cost_html, run_cost_summary
from .sites import (SITE_CHOICES, SYNC_CHOICES, sites_estimate, sites_explorer,
                    sites_summary_html, sites_table)
from .validation import (case_explorer, case_html, filter_validation, validation_cases_html,
                         validation_explorer, validation_summary_table)

__all__ = [
    # kit
    "CURATED_REGIONS", "MICRO_BATCH_CHOICES", "RECOMPUTE_CHOICES", "TP_CHOICES",
    "ZERO_CHOICES", "in_voila", "lab_only", "parse_device_counts", "parse_optional_number",
    "parse_price",
    "preset_tokens", "region_options", "sig",
    # 00, 01
    "run_cost", "run_cost_html", "run_cost_summary",
    "DEFAULT_ACCELERATORS", "compare_accelerators", "compare_table", "format_compare_table",
    "problems", "table_html",
    # 02, 03
    "flops_and_memory", "memory_summary_html",
    "derived_dp", "layout_summary_html", "parallelism_explorer",
    # 04
    "EXPOSED_COMM_PARTS", "FIND_ACCELERATORS", "FIND_DEVICE_COUNTS", "LAYOUT_KNOBS",
    "OBJECTIVES", "OBJECTIVE_CHOICES", "SEARCH_TOP", "best_summary_html", "find_best_layout",
    "layout_label", "layout_of", "one_knob_variants", "run_search", "search_notes_html",
    "top_table", "why_lose_html", "why_lose_rows", "why_others_lose",
    # 05, 06
    "CARBON_REGIONS", "carbon_table_html", "power_cap_explorer", "power_cap_summary_html",
    "power_explorer", "power_summary_html", "region_carbon", "SEASON_REGIONS",
    "start_month_carbon", "start_month_table_html", "cleanest_start_window",
    "DEADLINE_ACCELERATORS", "DEADLINE_DEVICE_COUNTS", "candidates_html",
    "cheapest_for_deadline", "rent_or_own", "rent_own_html", "winner_html",
    # 07, 08
    "case_explorer", "case_html", "filter_validation", "validation_cases_html",
    "validation_explorer", "validation_summary_table",
    "measured_vs_estimated",
    # 09
    "SITE_CHOICES", "SYNC_CHOICES", "sites_estimate", "sites_explorer", "sites_summary_html",
    "sites_table",
]
