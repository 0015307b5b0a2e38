"""Embodied carbon on a stated basis (issue 24): the die (LLMCarbon), the accelerator
package, the whole server per accelerator (data/embodied.csv), each amortised over the
hardware's life as Luccioni et al. 2023 do: C = C_device x N x T_run / T_life."""

from __future__ import annotations

import statistics

import pytest

import traincost
from traincost import catalog
from traincost.assumptions import DEFAULT

RUN = dict(model="llama2-7b", global_batch=512, tokens=1e11, tp=1, pp=1, cp=1, ep=1, vpp=1,
           zero=1, micro_batch=1, recompute="selective")
LIFE_DAYS = DEFAULT.embodied_lifetime_years * 365.25


def _json(acc: str) -> dict:
    return traincost.estimate(acc, 64, **RUN).to_dict()


def test_each_basis_by_hand():
    """H100: 14.65 kg die (LLMCarbon), 164 kg chip (NVIDIA's HGX H100 PCF, 1,312 kg per
    8-GPU baseboard), 876.5 kg server (EcoLogits: 5,700 / 8 + 164)."""
    d = _json("h100-sxm5-80gb")
    share = 64 * d["train_time_days"] / LIFE_DAYS
    by = d["embodied_co2e_t_by_basis"]
    assert by["die"] == pytest.approx(14.65 * share / 1e3, rel=1e-9)
    assert by["chip"] == pytest.approx(1312 / 8 * share / 1e3, rel=1e-9)
    assert by["server"] == pytest.approx((5700 / 8 + 164) * share / 1e3, rel=1e-9)
    assert by["die"] == pytest.approx(d["embodied_co2e_t"])     # the default stays the die's
    assert set(d["sources"]["embodied"]) == {"die", "chip", "server"}


def test_a_chip_without_a_server_figure_adds_the_host_share():
    """B200: NVIDIA's HGX B200 PCF (2,274 kg / 8) and no server figure: chip + 578 kg."""
    d = _json("b200")
    share = 64 * d["train_time_days"] / LIFE_DAYS
    by = d["embodied_co2e_t_by_basis"]
    assert by["die"] is None
    assert by["server"] == pytest.approx((2274 / 8 + 578) * share / 1e3, rel=1e-9)
    assert "server_host_embodied_kgco2e" in d["sources"]["embodied"]["server"]


def test_the_host_share_is_the_median_of_its_sources():
    hosts = [2500 / 8, 3550 / 8, 5700 / 8, 6000 / 8]        # BLOOM, TPU v6e, p5.48xlarge, DGX
    assert DEFAULT.server_host_embodied_kgco2e == pytest.approx(statistics.median(hosts), abs=0.5)


def test_no_figure_is_a_stated_gap():
    d = _json("mi300x")
    assert d["embodied_co2e_t_by_basis"] == {"die": None, "chip": None, "server": None}
    assert d["sources"]["embodied"] == {}


def test_rows_name_catalog_devices_and_a_server_outweighs_its_chip():
    rows = catalog.embodied_table()
    assert set(rows["accelerator"]) <= set(catalog.accelerators().index)
    for acc, group in rows.groupby("accelerator"):
        kg = dict(zip(group["basis"], group["kgco2e_per_device"]))
        if {"chip", "server"} <= set(kg):
            assert kg["server"] > kg["chip"], acc


def test_cli_prints_each_basis(capsys):
    from traincost.cli import main
    base = ["estimate", "--accelerator", "mi300x", "--devices", "64", "--model", "llama2-7b",
            "--global-batch", "512"]
    assert main(base) == 0
    assert "embodied unknown (no figure for this device)" in capsys.readouterr().out
    assert main([*base[:2], "h100-sxm5-80gb", *base[3:]]) == 0
    line = [x for x in capsys.readouterr().out.splitlines() if "embodied" in x][0]
    assert "(die)" in line and "(chip)" in line and "(server)" in line
