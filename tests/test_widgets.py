"""Kernel-side tests of traincost.widgets: build each widget, drive its controls, check
what it shows. No browser: the callbacks run synchronously when a control's value changes.
"""
import math
import re

import pandas as pd
import pytest

from traincost import catalog, widgets

TWO = ("a100-sxm4-80gb", "h100-sxm5-80gb")
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


@pytest.fixture
def box():
    return widgets.compare_accelerators()


@pytest.fixture
def small():
    return widgets.compare_accelerators(accelerators=TWO)


def table_rows(box):
    """Accelerator ids shown in the HTML table's body, in order."""
    body = box.table.value.split("<tbody>")[1]
    return re.findall(r"<tr>\s*<th>([^<]+)</th>", body)


# --- compare_accelerators: defaults ---------------------------------------------------------
def test_default_shows_one_row_per_selected_accelerator(box):
    selected = box.controls["accelerators"].value
    assert set(widgets.DEFAULT_ACCELERATORS) == set(selected)
    assert {"a100-sxm4-80gb", "h100-sxm5-80gb"} <= set(selected)
    assert list(box.result.index) == list(selected)
    assert table_rows(box) == list(selected)
    assert all(math.isfinite(d) and d > 0 for d in box.result["train_time_days"])
    assert box.message.value == ""
    assert box.chart.value[:8] == PNG_MAGIC


def test_default_tokens_are_the_presets(box):
    preset = catalog.models().loc["llama2-7b", "tokens_reported"]
    assert box.controls["tokens"].value * 1e9 == pytest.approx(preset)


def test_table_has_units_in_headers(box):
    header = box.table.value.split("</thead>")[0]
    for unit in ("[days]", "[MWh]", "CO2e [t]", "[USD]"):
        assert unit in header


# --- compare_accelerators: controls change the result the right way -------------------------
def test_more_devices_fewer_days(small):
    before = small.result["train_time_days"].copy()
    small.controls["devices"].value = 512
    after = small.result["train_time_days"]
    assert (after < before).all()
    assert (small.result["devices"] == 512).all()


def test_added_accelerator_appears(small):
    small.controls["accelerators"].value = (*TWO, "mi300x")
    assert "mi300x" in small.result.index
    assert "mi300x" in table_rows(small)
    assert len(small.result) == 3


def test_more_tokens_proportionally_more_days(small):
    before = small.result["train_time_days"].copy()
    small.controls["tokens"].value *= 2
    assert small.result["train_time_days"].to_numpy() == pytest.approx(2 * before.to_numpy())


def test_facility_energy_scales_with_pue(small):
    small.controls["pue_auto"].value = False
    assert not small.controls["pue"].disabled
    small.controls["pue"].value = 1.2
    low = small.result["facility_energy_mwh"].copy()
    small.controls["pue"].value = 1.5
    high = small.result["facility_energy_mwh"]
    # facility energy = IT energy x PUE
    assert high.to_numpy() == pytest.approx(low.to_numpy() * 1.5 / 1.2)


def test_auto_pue_shows_the_default_used(small):
    assert small.controls["pue_auto"].value
    assert small.controls["pue"].disabled
    assert small.controls["pue"].value == pytest.approx(catalog.site("world").pue)


def test_carbon_scales_with_grid_intensity(small):
    small.controls["pue_auto"].value = False
    small.controls["pue"].value = 1.3
    world = small.result["co2e_t"].copy()
    small.controls["region"].value = "FRA"
    fra = small.result["co2e_t"]
    g = catalog.regions()["grid_gco2e_per_kwh"]
    assert fra.to_numpy() == pytest.approx(world.to_numpy() * g["FRA"] / g["world"])


def test_price_override_is_price_times_device_hours(small):
    small.controls["price"].value = "2.5"
    r = small.result
    assert r["cost_usd"].to_numpy() == pytest.approx(2.5 * r["device_hours"].to_numpy())
    small.controls["price"].value = ""            # back to the catalog price
    assert small.message.value == ""


def test_model_change_brings_its_tokens(small):
    small.controls["model"].value = "gpt3-175b"
    assert small.controls["tokens"].value * 1e9 == pytest.approx(
        catalog.models().loc["gpt3-175b", "tokens_reported"])
    assert set(small.result.index) == set(TWO)


def test_region_dropdown_is_short_and_starts_with_world(box):
    options = [rid for _, rid in box.controls["region"].options]
    assert options[0] == "world"
    assert 8 <= len(options) <= 20
    assert set(options) <= set(catalog.regions().index)


# --- compare_accelerators: invalid input shows a message, never raises ----------------------
@pytest.mark.parametrize("control, value, word", [
    ("devices", 0, "devices"),
    ("devices", -8, "devices"),
    ("devices", 100, "batch"),         # 100 devices cannot split a batch of 1024 evenly
    ("tokens", 0.0, "tokens"),
    ("global_batch", 0, "batch"),
    ("price", "abc", "price"),
    ("price", "-3", "price"),
])
def test_invalid_input_shows_message(small, control, value, word):
    small.controls[control].value = value           # must not raise
    assert word in small.message.value.lower()
    assert small.result is None
    assert small.table.value == ""
    assert "Traceback" not in small.message.value


def test_no_accelerator_selected_shows_message(small):
    small.controls["accelerators"].value = ()
    assert "accelerator" in small.message.value
    assert small.result is None


def test_recovers_after_invalid_input(small):
    before = small.result.copy()
    small.controls["devices"].value = 0
    assert small.result is None
    small.controls["devices"].value = 256
    assert small.message.value == ""
    pd.testing.assert_frame_equal(small.result, before)


def test_does_not_fit_is_a_message_with_a_row():
    box = widgets.compare_accelerators(model="llama2-70b", accelerators=("a100-sxm4-40gb",),
                                       devices=8)
    assert "does not fit" in box.message.value
    assert list(box.result.index) == ["a100-sxm4-40gb"]


def test_builder_rejects_unknown_ids():
    with pytest.raises(ValueError, match="model"):
        widgets.compare_accelerators(model="no-such-model")
    with pytest.raises(ValueError, match="accelerator"):
        widgets.compare_accelerators(accelerators=("no-such-chip",))
    with pytest.raises(ValueError, match="region"):
        widgets.compare_accelerators(region="ATLANTIS")


def test_builder_accepts_a_region_outside_the_short_list():
    box = widgets.compare_accelerators(accelerators=TWO, region="NOR")
    assert box.controls["region"].value == "NOR"
    assert box.message.value == ""


# --- pure helpers ---------------------------------------------------------------------------
def test_compare_table_pure_function():
    params = {"model": "llama2-7b", "accelerators": TWO, "devices": 256, "tokens": None,
              "global_batch": 1024, "region": "world", "pue": None, "price_per_hour": None}
    df = widgets.compare_table(params)
    assert isinstance(df, pd.DataFrame) and list(df.index) == list(TWO)
    assert isinstance(widgets.compare_table({**params, "accelerators": ()}), str)
    msg = widgets.compare_table({**params, "devices": 0})
    assert isinstance(msg, str) and "devices" in msg


@pytest.mark.parametrize("value, expected", [
    (704_284.08, "704,000"), (33.4109, "33.4"), (0.44417, "0.444"), (150.19, "150"),
    (1234.5, "1,230"), (float("nan"), "n/a"), (None, "n/a"),
])
def test_sig(value, expected):
    assert widgets.sig(value) == expected


@pytest.mark.parametrize("text, expected", [("", None), ("  ", None), (None, None),
                                             ("2.5", 2.5), ("$3", 3.0)])
def test_parse_price(text, expected):
    assert widgets.parse_price(text) == expected


def test_parse_price_rejects_text():
    with pytest.raises(ValueError, match="price-per-hour"):
        widgets.parse_price("cheap")


# --- run_cost ------------------------------------------------------------------------------
def test_run_cost_default_shows_headline_numbers():
    box = widgets.run_cost()
    r = box.result
    assert r["accelerator"] == "h100-sxm5-80gb" and r["devices"] == 256
    assert math.isfinite(r["train_time_days"]) and r["train_time_days"] > 0
    for word in ("days", "MWh", "tCO2e", "$", "MFU", "tp "):
        assert word in box.summary.value
    assert box.message.value == ""


def test_run_cost_reacts_to_controls():
    box = widgets.run_cost()
    days = box.result["train_time_days"]
    box.controls["devices"].value = 512
    assert box.result["train_time_days"] < days
    box.controls["accelerator"].value = "a100-sxm4-80gb"
    assert box.result["accelerator"] == "a100-sxm4-80gb"
    co2 = box.result["co2e_t"]
    box.controls["region"].value = "SWE"
    g = catalog.regions()["grid_gco2e_per_kwh"]
    assert box.result["co2e_t"] == pytest.approx(co2 * g["SWE"] / g["world"])


@pytest.mark.parametrize("control, value, word", [
    ("devices", -1, "devices"), ("devices", 100, "batch"), ("tokens", -5.0, "tokens")])
def test_run_cost_invalid_input_shows_message(control, value, word):
    box = widgets.run_cost()
    box.controls[control].value = value
    assert word in box.message.value.lower()
    assert box.result is None and box.summary.value == ""


def test_run_cost_without_price_says_so():
    box = widgets.run_cost(accelerator="mi300x")
    assert "no catalog price" in box.summary.value
