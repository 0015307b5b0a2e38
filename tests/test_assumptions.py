"""Every modelling assumption has a unit, a source, a status and a rationale."""

import pytest

from traincost.assumptions import DEFAULT, describe, with_overrides


def test_every_assumption_is_documented():
    table = describe()
    assert len(table) >= 20
    for name, row in table.iterrows():
        assert row["unit"] and row["source"] and row["rationale"], name
        assert row["status"] in {"spec", "measured", "reported", "estimate", "fitted"}, name


def test_fractions_are_fractions():
    for name, row in describe().iterrows():
        if row["unit"] == "fraction":
            assert 0 <= row["value"] <= 1, name


def test_overrides_are_checked():
    a = with_overrides(interruption_lost_s=600.0)
    assert a.interruption_lost_s == 600.0 and DEFAULT.interruption_lost_s != 600.0
    with pytest.raises(ValueError, match="unknown assumption"):
        with_overrides(goodput=0.8)
