"""Energy, carbon and cost of a run, from its power, time and site.

All functions broadcast over numpy arrays and work in SI (J, s, g), converting only
through the named constants in :mod:`traincost.units`.

References
----------
.. [1] Patterson et al. 2021, arXiv:2104.10350 (energy = power x time x PUE;
   emissions = energy x grid intensity).
.. [2] Luccioni, Viguier & Ligozat, "Estimating the Carbon Footprint of BLOOM", JMLR 2023
   (embodied emissions amortised over the hardware's life).
.. [3] Li, Yang, Islam & Ren, "Making AI Less 'Thirsty'", arXiv:2304.03271 (operational
   water = E_IT x WUE_on-site + E_IT x PUE x EWIF_off-site).
"""

from __future__ import annotations

import numpy as np

from .units import GRAMS_PER_KG, JOULES_PER_KWH, LITRES_PER_M3, SECONDS_PER_HOUR


def it_energy_j(avg_power_w, num_devices, wall_time_s):
    """IT energy: E_IT = P_avg x N x T. [J]

    Examples
    --------
    >>> it_energy_j(400.0, 8, 3600.0) / 3.6e6   # kWh
    3.2
    """
    return avg_power_w * num_devices * wall_time_s


def facility_energy_j(it_energy, pue):
    """Facility energy at the plug: E = E_IT x PUE. [J]"""
    return it_energy * pue


def operational_co2e_g(facility_energy, grid_gco2e_per_kwh):
    """Location-based operational emissions: E[kWh] x intensity [gCO2e/kWh]. [gCO2e]"""
    return facility_energy / JOULES_PER_KWH * grid_gco2e_per_kwh


def window_mean_factor(month_factors, start_month, duration_months):
    """Mean of a yearly cycle of twelve monthly factors over a window. [-]

    ``(C(x0 + d) - C(x0)) / d`` with ``C`` the running sum of the factors, month by month
    and cycling year after year (a run past the data's last year takes its calendar
    months' factors again), ``x0`` the start in months from 1 January and ``d`` the
    window's length in months; the start month's own factor for a window of zero length.

    Parameters
    ----------
    month_factors : array, shape (12,) or (n, 12)
        Each calendar month's factor (January first); one row per window where (n, 12). [-]
    start_month : float or array
        Start, months from 1 January (15 March: 2 + 14/31). [months]
    duration_months : float or array
        Window length. [months]

    Examples
    --------
    >>> f = [1.2] * 6 + [0.8] * 6                   # a dirtier first half-year
    >>> [round(float(window_mean_factor(f, x0, d)), 9) for x0, d in ((0, 12), (4, 4), (1.5, 3))]
    [1.0, 1.0, 1.2]
    >>> float(window_mean_factor(f, 7.0, 0.0))       # a window of no length: its month
    0.8
    """
    f = np.asarray(month_factors, dtype=float)
    x0 = np.asarray(start_month, dtype=float)
    d = np.asarray(duration_months, dtype=float)
    n = np.broadcast_shapes(x0.shape, d.shape, f.shape[:-1])
    rows = np.broadcast_to(f, (*n, 12))
    cum = np.concatenate([np.zeros((*n, 1)), np.cumsum(rows, axis=-1)], axis=-1)

    def running(x):
        cycles = np.floor(x / 12.0)
        r = x - 12.0 * cycles
        i = np.minimum(np.floor(r).astype(int), 11)
        at = np.take_along_axis(cum, i[..., None], axis=-1)[..., 0]
        fi = np.take_along_axis(rows, i[..., None], axis=-1)[..., 0]
        return cycles * cum[..., 12] + at + (r - i) * fi, fi

    x0b, db = np.broadcast_to(x0, n), np.broadcast_to(d, n)
    c0, f0 = running(x0b)
    c1, _ = running(x0b + db)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(db > 0, (c1 - c0) / np.where(db > 0, db, 1.0), f0)


def onsite_water_m3(it_energy, wue_l_per_kwh):
    """Water the data centre consumes on site: E_IT [kWh] x WUE [L/kWh] [3]. [m3]

    >>> float(onsite_water_m3(3.6e9, 0.5))        # 1 MWh of IT energy at 0.5 L/kWh
    0.5
    """
    return it_energy / JOULES_PER_KWH * wue_l_per_kwh / LITRES_PER_M3


def offsite_water_m3(facility_energy, grid_water_l_per_kwh):
    """Water the grid's generation consumes for the electricity drawn: E_facility [kWh]
    x EWIF [L/kWh], the energy at the plug, PUE included [3]. [m3]

    >>> float(offsite_water_m3(3.6e9, 3.0))
    3.0
    """
    return facility_energy / JOULES_PER_KWH * grid_water_l_per_kwh / LITRES_PER_M3


def embodied_co2e_g(embodied_kgco2e, num_devices, wall_time_s, lifetime_s):
    """Embodied emissions of the devices, amortised over their life [2]. [gCO2e]

    Notes
    -----
    C = C_device x N x T / T_life; NaN where the device's embodied figure is unknown.
    """
    return embodied_kgco2e * GRAMS_PER_KG * num_devices * wall_time_s / lifetime_s


def rental_cost_usd(device_hours, price_usd_per_h):
    """Rental cost: device-hours x price per device-hour. [USD]"""
    return device_hours * price_usd_per_h


def ownership_cost_parts_usd(device_hours, capex_usd, lifetime_h, facility_energy,
                             electricity_usd_per_kwh):
    """The two parts of the ownership cost: (depreciation, electricity). [USD]

    Depreciation is straight-line, capex x device_hours / life_hours; electricity is
    E_facility[kWh] x price[USD/kWh]. Assumes the devices are busy over their whole life
    (no idle capacity is charged to the run).

    >>> [float(x) for x in ownership_cost_parts_usd(100.0, 35040.0, 35040.0, 3.6e9, 0.1)]
    [100.0, 100.0]
    """
    return (capex_usd * device_hours / lifetime_h,
            facility_energy / JOULES_PER_KWH * electricity_usd_per_kwh)


def facility_depreciation_usd(device_hours, critical_w, usd_per_w, lifetime_h):
    """The run's share of the building: straight-line depreciation of the data centre's
    construction cost for the IT power each device needs. [USD]

    ``usd_per_w x critical_w x device_hours / life_hours``, with ``critical_w`` the IT power
    per device the facility is built to deliver [W] (the device at its power limit plus its
    host's share) and ``usd_per_w`` the construction cost per watt of critical load; as for
    the devices, the building is assumed busy over its whole life.

    >>> float(facility_depreciation_usd(175_200.0, 1000.0, 10.0, 175_200.0))   # 20 y of 1 kW
    10000.0
    """
    return usd_per_w * critical_w * device_hours / lifetime_h


def ownership_cost_usd(device_hours, capex_usd, lifetime_h, facility_energy, electricity_usd_per_kwh):
    """Ownership cost: straight-line depreciation of the devices plus electricity. [USD]

    Notes
    -----
    C = capex x device_hours / life_hours + E_facility[kWh] x price[USD/kWh]
    (:func:`ownership_cost_parts_usd`).
    """
    depreciation, electricity = ownership_cost_parts_usd(device_hours, capex_usd, lifetime_h,
                                                         facility_energy, electricity_usd_per_kwh)
    return depreciation + electricity


def device_hours(num_devices, wall_time_s):
    """Device-hours: N x T / 3600. [h]"""
    return num_devices * wall_time_s / SECONDS_PER_HOUR



def pooled_site(pue, per_facility_kwh, per_it_kwh=()):
    """The one PUE, per-facility-kWh factors and per-IT-kWh factors that give a multi-site
    run's totals. [-], [unit of the factors]

    The sites hold equal shares of the devices and run in lockstep, so each draws 1/n of
    the IT energy: the facility energy is ``E_IT mean(PUE_i)``, what scales with it (the
    grid's carbon ``g``, its water) ``E_IT/n sum(PUE_i g_i)``, and what scales with the IT
    energy (the on-site WUE) ``E_IT mean(w_i)``. A single site of ``PUE = mean(PUE_i)``,
    ``g = sum(PUE_i g_i) / sum(PUE_i)`` and ``w = mean(w_i)`` gives them exactly.
    ``per_facility_kwh`` and ``per_it_kwh`` are lists of per-site lists, one per factor.

    >>> pooled_site([1.1, 1.5], [[100.0, 500.0]], [[0.2, 0.6]])   # g = (110 + 750) / 2.6
    (1.3, [330.7692307692308], [0.4])
    """
    pue = [float(x) for x in pue]
    facility = [sum(p * float(g) for p, g in zip(pue, f)) / sum(pue) for f in per_facility_kwh]
    it = [sum(float(x) for x in f) / len(f) for f in per_it_kwh]
    return sum(pue) / len(pue), facility, it


def site_parts(it_energy, pue, grid_gco2e_per_kwh, cost_usd, electricity_usd, wue_l_per_kwh,
               grid_water_l_per_kwh) -> list:
    """Each site's share of a multi-site run: (IT energy [J], facility energy [J],
    emissions [gCO2e], cost [USD], on-site water [m3], off-site water [m3]) per site, in
    order.

    Each site draws 1/n of the IT energy (:func:`pooled_site`) at its own PUE, grid and
    WUE; the rental cost and the ownership model's depreciation split evenly with the
    device-hours, its electricity with the facility energy. The parts sum to the run's
    totals.

    >>> second = site_parts(7.2e9, [1.0, 1.5], [0.0, 0.0], 10.0, 0.0, [1, 1], [2, 2])[1]
    >>> [round(x / 3.6e9, 3) for x in second[:2]], second[3:]   # MWh IT, facility; USD, m3
    ([1.0, 1.5], (5.0, 1.0, 3.0))
    """
    n = len(pue)
    it = it_energy / n
    shares = [facility_energy_j(it, p) for p in pue]
    total = sum(shares)
    shared = (cost_usd - electricity_usd) / n            # rental, or the depreciation
    return [(it, fac, operational_co2e_g(fac, g), shared + electricity_usd * fac / total,
             onsite_water_m3(it, w), offsite_water_m3(fac, gw))
            for fac, g, w, gw in zip(shares, grid_gco2e_per_kwh, wue_l_per_kwh,
                                     grid_water_l_per_kwh)]
