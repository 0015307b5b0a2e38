"""Energy, carbon and cost arithmetic against Patterson et al. 2021 (GPT-3, Table 4)."""

import pytest

from traincost.footprint import (device_hours, embodied_co2e_g, facility_energy_j, it_energy_j,
                                 operational_co2e_g, ownership_cost_usd, rental_cost_usd)
from traincost.units import GRAMS_PER_TONNE, JOULES_PER_MWH, SECONDS_PER_DAY


def test_patterson_gpt3_energy_and_emissions():
    # Patterson et al. 2021 (arXiv:2104.10350) Table 4, GPT-3: 10,000 V100s, 14.8 days,
    # 330 W average system power per GPU, PUE 1.1 -> 1,287 MWh; 0.429 kgCO2e/kWh -> 552 t
    wall = 14.8 * SECONDS_PER_DAY
    e_it = it_energy_j(330.0, 10_000, wall)
    e_fac = facility_energy_j(e_it, 1.1)
    assert e_fac / JOULES_PER_MWH == pytest.approx(1287, rel=0.005)
    co2 = operational_co2e_g(e_fac, 429.0) / GRAMS_PER_TONNE
    assert co2 == pytest.approx(552.1, rel=0.005)


def test_device_hours_and_rental():
    assert device_hours(8, 3600.0 * 10) == 80.0
    assert rental_cost_usd(80.0, 2.5) == 200.0


def test_embodied_amortisation():
    # 463 kg per GPU over 4 years, 1000 GPUs for 1 year -> 115.75 t
    year = 365.25 * SECONDS_PER_DAY
    assert embodied_co2e_g(463.0, 1000, year, 4 * year) / GRAMS_PER_TONNE == pytest.approx(115.75)


def test_ownership_cost():
    # $20,000 over 35,064 h, used 35,064 device-hours, plus 1 MWh at $0.10/kWh
    assert ownership_cost_usd(35064.0, 20000.0, 35064.0, JOULES_PER_MWH, 0.10) == pytest.approx(20100.0)


def test_ownership_overhead_follows_cottier_shares():
    """Cottier et al. 2024's abstract: server components 15-22%, cluster interconnect 9-13%
    and energy 2-6% of frontier runs' amortized hardware and energy cost, the chips the
    rest. Beyond the chips' price, owning costs (servers + network) / chips."""
    from traincost.assumptions import DEFAULT
    mid = (18.5 + 11.0) / (100 - 18.5 - 11.0 - 4.0)
    low, high = (15 + 9) / (100 - 15 - 9 - 2), (22 + 13) / (100 - 22 - 13 - 6)
    assert DEFAULT.ownership_system_overhead_fraction == pytest.approx(mid, abs=0.005)
    assert low < DEFAULT.ownership_system_overhead_fraction < high


def test_ownership_share_is_drawn_in_intervals():
    """Its range, Cottier et al.'s 0.32-0.59, is an assumption range of every interval, so
    an owned run's cost carries it."""
    import traincost
    from traincost import uncertainty
    est = traincost.estimate("a100-sxm4-40gb", 64, model="llama2-7b", global_batch=512,
                             tokens=1e10, price_model="ownership")
    drawn = {i.id: i for i in uncertainty.uncertain_inputs(est)}
    assert "ownership-overhead" in drawn
    assert drawn["ownership-overhead"].input == "ownership_system_overhead_fraction"
    low, _, high = uncertainty.intervals(est, draws=2000, seed=3)["cost_usd"]
    assert low < est.cost_usd < high
