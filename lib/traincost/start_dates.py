"""When a run starts: the same run's operational carbon by the month it starts in
(:func:`carbon_by_start_month`) and the carbon-aware what-if, the cleanest start day within
a window (:func:`cleanest_start`, the CLI's ``--start-window``), both on Ember's monthly
shape of each region's country (:func:`traincost.footprint.window_mean_factor`).

Notebook 05 and its widgets use them; :mod:`traincost.explore` names them too.
"""

from __future__ import annotations

import datetime

import numpy as np
import pandas as pd

from . import options
from .estimate import estimate
from .explain import fixed_layout
from .sweep import sweep


#: calendar months' short names, January first
MONTH_NAMES = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov",
               "Dec")


def carbon_by_start_month(params: dict, regions, year: int = 2025) -> pd.DataFrame:
    """The same run (same layout and energy) started on the first of each month of a year,
    in several grid regions: its operational carbon over the months it spans
    (:func:`traincost.footprint.window_mean_factor` on Ember's monthly shape for the
    region's country) against the undated run's (the annual figure).

    Parameters
    ----------
    params : dict
        ``accelerator``, ``model``, ``devices``, ``global_batch``, optional ``tokens``. [-]
    regions : sequence of str
        Region ids (``traincost.catalog.regions()``).
    year : int
        The year whose months the runs start in: it sets the dates (the shape by month is
        the data's mean year). [-]

    Returns
    -------
    pandas.DataFrame
        One row per region and start month: ``region``, ``month`` (1-12), ``start``,
        ``end`` (ISO dates), ``basis`` (``monthly``, or ``annual`` for a region without
        monthly figures), ``train_time_days``, ``grid_gco2e_per_kwh`` (over the run's
        months) [gCO2e/kWh], ``co2e_t`` [tCO2e], ``annual_co2e_t`` (undated) [tCO2e] and
        ``change_pct`` (against it) [%].

    Raises
    ------
    ValueError
        ``regions: ...`` when none is given, ``year: ...`` for one that is not a whole
        year of the calendar (1-9999, as Python's dates), or the
        estimate's one-line message.
    """
    regions = list(regions or ())
    if not regions:
        raise ValueError("regions: select at least one region")
    if isinstance(year, bool) or not isinstance(year, (int, np.integer)) \
            or not datetime.MINYEAR <= year <= datetime.MAXYEAR:
        raise ValueError(f"year: {year!r} must be a whole year from {datetime.MINYEAR} to "
                         f"{datetime.MAXYEAR}")
    common = {"accelerator": params["accelerator"], "devices": params["devices"],
              "model": params["model"], "global_batch": params["global_batch"],
              "tokens": params.get("tokens")}
    first = estimate(**common, region=regions[0])
    layout = fixed_layout(first)
    rows = []
    for region in regions:
        undated = first if region == regions[0] else estimate(**common, region=region,
                                                              **layout)
        for month in range(1, 13):
            est = estimate(**common, region=region, start=f"{year}-{month:02d}-01",
                           **layout)
            g = est.grid_profile()
            rows.append({"region": region, "month": month, "start": g["start"],
                         "end": g["end"], "basis": g["basis"],
                         "train_time_days": est.report["train_time_days"],
                         "grid_gco2e_per_kwh": g["gco2e_per_kwh"],
                         "co2e_t": est.report["co2e_t"],
                         "annual_co2e_t": undated.report["co2e_t"]})
    df = pd.DataFrame(rows)
    df["change_pct"] = 100.0 * (df["co2e_t"] / df["annual_co2e_t"] - 1.0)
    return df


#: the longest window :func:`cleanest_start` walks day by day: ten years [days]
MAX_START_WINDOW_DAYS = 3653


#: starts whose carbon differs by less than this share are equal (the same months at the
#: same energy, summed in another order): :func:`extreme_starts` takes the earliest [-]
EQUAL_CARBON_RTOL = 1e-9


def extreme_starts(df: pd.DataFrame) -> tuple:
    """(cleanest, dirtiest): the rows of :func:`cleanest_start`'s table with the least and
    the most ``co2e_t``, each the earliest start of those within :data:`EQUAL_CARBON_RTOL`
    of it. Starts whose run spans the same months have the same carbon up to float
    round-off, which must not decide between them.

    >>> df = pd.DataFrame({"start": ["2025-11-01", "2025-11-02", "2025-12-01"],
    ...                    "co2e_t": [2.0 * (1 + 1e-14), 2.0, 1.0]})
    >>> best, worst = extreme_starts(df)
    >>> best["start"], worst["start"]
    ('2025-12-01', '2025-11-01')
    """
    co2e = df["co2e_t"].to_numpy(dtype=float)
    low, high = co2e.min(), co2e.max()
    first = lambda mask: df.iloc[int(np.flatnonzero(mask)[0])]        # noqa: E731
    return (first(co2e <= low + EQUAL_CARBON_RTOL * abs(low)),
            first(co2e >= high - EQUAL_CARBON_RTOL * abs(high)))


def cleanest_start(params: dict, region: str, earliest, latest) -> pd.DataFrame:
    """The carbon-aware what-if: the same run (same layout, energy and length) started on
    each day from ``earliest`` to ``latest`` in one grid region, and its operational carbon
    over the months each start spans; the cleanest start is the row of least ``co2e_t``,
    the earliest of equals (:func:`extreme_starts`).

    Every start is one row of one :func:`traincost.sweep` at the layout the undated
    estimate chose, so each row is what ``estimate(..., start=day)`` gives: the energy is
    the same, the intensity is the region's annual figure times Ember's seasonal shape for
    its country averaged over the run's months (:func:`traincost.footprint.window_mean_factor`).
    A region without monthly figures gives the annual figure for every start (``basis``
    ``annual``).

    Parameters
    ----------
    params : dict
        ``accelerator``, ``model``, ``devices``, ``global_batch``, optional ``tokens``,
        and any other :func:`traincost.estimate` keyword of one value (the CLI passes its
        flags); ``start`` is the what-if's and may not be given. [-]
    region : str or None
        Region id (``traincost.catalog.regions()``); None: the estimate's default.
    earliest, latest : str or datetime.date
        First and last start date allowed, YYYY-MM-DD; at most
        :data:`MAX_START_WINDOW_DAYS` days apart. [-]

    Returns
    -------
    pandas.DataFrame
        One row per start day: ``start``, ``end`` (ISO dates), ``basis``,
        ``train_time_days``, ``grid_gco2e_per_kwh`` (over the run's months) [gCO2e/kWh],
        ``co2e_t`` [tCO2e], ``annual_co2e_t`` (undated) [tCO2e] and ``change_pct`` [%].

    Raises
    ------
    ValueError
        ``earliest: ...`` / ``latest: ...`` for a date that is not YYYY-MM-DD or a window
        that runs backwards or past ten years, or the estimate's one-line message.
    """
    days = []
    for name, value in (("earliest", earliest), ("latest", latest)):
        try:
            days.append(value if isinstance(value, datetime.date)
                        else datetime.date.fromisoformat(str(value)))
        except ValueError:
            raise ValueError(f"{name}: {value!r} is not a date YYYY-MM-DD") from None
    first, last = days
    span = (last - first).days
    if span < 0:
        raise ValueError(f"latest: {last.isoformat()} is before earliest {first.isoformat()}")
    if span + 1 > MAX_START_WINDOW_DAYS:
        raise ValueError(f"latest: a window of {span + 1:,} days is longer than the "
                         f"{MAX_START_WINDOW_DAYS:,} (ten years) walked day by day")
    if params.get("site_regions") is not None:
        raise ValueError("site-regions: the cleanest-start what-if dates a run on one grid "
                         "region; over several sites' regions give a start date instead")
    if params.get("start") is not None:
        raise ValueError("start: the window chooses the start; give earliest and latest, "
                         "not a start date")
    common = {k: v for k, v in {**params, "region": region}.items()
              if v is not None and k != "start"}
    undated = estimate(**common)
    starts = [(first + datetime.timedelta(days=i)).isoformat() for i in range(span + 1)]
    # the estimate's keywords as the sweep's columns (grid_intensity: grid_gco2e_per_kwh, ...)
    rows = pd.DataFrame({_sweep_column(k): v for k, v in {**common, **fixed_layout(undated)}.items()},
                        index=range(len(starts)))
    rows["start"] = starts
    out = sweep(rows)
    days_run = out["train_time_days"].to_numpy(dtype=float)
    # the basis the estimate itself uses: the region's (or the default one's) months, none
    # for a given intensity
    basis = estimate(**common, **fixed_layout(undated), start=starts[0]).grid_profile()["basis"]
    df = pd.DataFrame({
        "start": starts,
        "end": [(datetime.date.fromisoformat(d) + datetime.timedelta(days=float(n))).isoformat()
                for d, n in zip(starts, days_run)],
        "basis": basis,
        "train_time_days": days_run,
        "grid_gco2e_per_kwh": undated.site.grid_gco2e_per_kwh
        * out["grid_factor"].to_numpy(dtype=float),
        "co2e_t": out["co2e_t"].to_numpy(dtype=float),
        "annual_co2e_t": undated.report["co2e_t"]})
    df["change_pct"] = 100.0 * (df["co2e_t"] / df["annual_co2e_t"] - 1.0)
    return df


def _sweep_column(keyword: str) -> str:
    """The :func:`traincost.sweep` column of an estimate keyword (its declared ``column``:
    ``grid_intensity`` is ``grid_gco2e_per_kwh``, ``power_cap`` ``power_cap_w``, ...)."""
    try:
        return options.option(keyword).column
    except KeyError:                            # accelerator, devices: columns as they are
        return keyword
