"""Catalogs load through the package (importlib.resources), and agree with sources."""

import math

import pandas as pd
import pytest

import traincost
from traincost import catalog

DESIGN_IDS = ("v100-sxm2-32gb a100-sxm4-40gb a100-sxm4-80gb a100-pcie-80gb h100-sxm5-80gb "
              "h100-pcie-80gb h800-sxm5-80gb h200-sxm-141gb b200 gb200 l4 l40s mi250x-gcd mi300x "
              "mi325x tpu-v3 tpu-v4 tpu-v5e tpu-v5p tpu-v6e gaudi2 gaudi3 trainium2").split()


def test_package_ships_every_table():
    assert {"accelerators.csv", "models.csv", "pue.csv", "cloud_regions.csv",
            "schema.csv"} <= set(catalog.data_files())


@pytest.mark.parametrize("acc_id", DESIGN_IDS)
def test_every_design_accelerator_builds(acc_id):
    acc = catalog.accelerator(acc_id)
    assert acc.idle_w < acc.tdp_w
    assert acc.peak_flop_per_s("bf16" if not math.isnan(acc.peak_bf16_flop_per_s) else "fp16") > 0


def test_spec_anchors():
    # NVIDIA A100 datasheet: 312 TFLOP/s dense bf16, 80 GB, 400 W; H100 SXM: 989 TFLOP/s, 700 W.
    # The "80 GB" is binary: nvidia-smi reports 81920 MiB for an A100-SXM4-80GB.
    a100 = catalog.accelerator("a100-sxm4-80gb")
    assert (a100.peak_bf16_flop_per_s, a100.hbm_bytes, a100.tdp_w) == (312e12, 81920 * 2**20, 400)
    h100 = catalog.accelerator("h100-sxm5-80gb")
    assert h100.peak_bf16_flop_per_s == pytest.approx(989e12, rel=0.001) and h100.tdp_w == 700


@pytest.mark.parametrize("model_id", list(catalog.models().index))
def test_every_preset_builds_and_matches_its_reported_size(model_id):
    row = catalog.models().loc[model_id]
    est = traincost.estimate(accelerator="h200-sxm-141gb", devices=1024, model=model_id,
                             global_batch=1024)
    # presets are named by rounded sizes ("7B"); within 4% of the reported figure
    assert est.params == pytest.approx(float(row["params_reported"]), rel=0.04)


def test_an_interleaved_moe_preset_counts_its_dense_layers_by_share():
    # Llama 4 Maverick (MaxText llama4-17b-128e.yml: MoE in every second of 48 layers, 128
    # experts of 8,192 top-1 plus a shared one; the other 24 dense at 16,384), by hand:
    # untied embedding and output 2 x 202,048 x 5,120, attention 48 x (2 h^2 + 2 x h x 1,024),
    # dense 24 x 3 h 16,384, experts 24 x 129 x 3 h 8,192, routers 24 x h x 128, norms
    # 2 h x 48 + h: 400,711,848,960, the card's 400B; active, one routed and the shared
    # expert: 17,184,691,200, its 17B
    h = 5120
    common = 2 * 202048 * h + 48 * (2 * h * h + 2 * h * 1024) + 24 * 3 * h * 16384 \
        + 24 * h * 128 + 2 * h * 48 + h
    est = traincost.estimate(accelerator="tpu-v5p", devices=128, model="llama4-maverick",
                             global_batch=512, tp=4, zero=3, recompute="full")
    assert est.params == common + 24 * 129 * 3 * h * 8192 == 400_711_848_960
    assert est.report["active_params"] == common + 24 * 2 * 3 * h * 8192 == 17_184_691_200


def test_unknown_ids_list_what_is_allowed():
    with pytest.raises(ValueError, match="allowed: .*a100-sxm4-80gb"):
        catalog.accelerator("a100")
    with pytest.raises(ValueError, match="model"):
        catalog.model("gpt-5")


def test_grid_intensity_from_codecarbon():
    # CodeCarbon ships France at 56 gCO2e/kWh (Ember 2023) and a 475 g world average (IEA)
    assert catalog.grid_intensity("FRA")[0] == pytest.approx(56.0, abs=1.0)
    assert catalog.grid_intensity("world")[0] == pytest.approx(475.0)
    assert catalog.grid_intensity("fra")[0] == catalog.grid_intensity("FRA")[0]


def test_a_cloud_region_reads_codecarbons_table():
    # CodeCarbon's cloud/impact.csv gives Google's europe-west1 (St. Ghislain, Belgium) 122
    # gCO2e/kWh, from Google's region-carbon page (the file's first cell carries a BOM)
    g, source = catalog.grid_intensity("gcp:europe-west1")
    assert g == 122.0
    assert "cloud.google.com/sustainability/region-carbon" in source
    assert catalog.regions().loc["gcp:europe-west1", "name"] == \
        "Google Cloud Platform europe-west1 (St. Ghislain, Belgium)"


def test_codecarbon_files_are_the_ones_codecarbon_reads():
    """traincost reads CodeCarbon's data files directly (no import of CodeCarbon or
    pandas for a grid lookup); the paths must stay CodeCarbon's own."""
    from codecarbon.input import DataSource
    cfg = DataSource().config
    assert catalog.CODECARBON_FILES == {
        "carbon_intensity_per_source": cfg["carbon_intensity_per_source_path"],
        "global_energy_mix": cfg["global_energy_mix_data_path"],
        "usa_emissions": cfg["usa_emissions_data_path"],
        "cloud_emissions": cfg["cloud_emissions_path"]}
    ds = DataSource()
    assert catalog.grid_intensity("DEU")[0] == \
        float(ds.get_global_energy_mix_data()["DEU"]["carbon_intensity"])


def test_an_estimate_imports_neither_pandas_nor_codecarbon():
    """Issue 26: importing pandas and CodeCarbon cost a CLI estimate about 0.6 s of CPU
    before any arithmetic; an estimate, its layout search, a cloud region and a start date
    need neither (tables are built, with pandas, only where a table is asked for)."""
    import subprocess
    import sys
    code = ("import contextlib, io, sys\n"
            "from traincost import cli\n"
            "with contextlib.redirect_stdout(io.StringIO()):\n"
            "    rc = cli.main(['estimate', '--accelerator', 'h100-sxm5-80gb', '--devices',\n"
            "                   '64', '--model', 'llama3.1-70b', '--global-batch', '256',\n"
            "                   '--region', 'aws:us-east-1', '--start', '2025-03-01'])\n"
            "print(rc, [m for m in ('pandas', 'codecarbon') if m in sys.modules])\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout.split()
    assert out == ["0", "[]"]


def test_records_read_what_read_table_reads():
    """The catalog's lookups read rows as dicts (:func:`catalog.records`, no pandas); each
    cell must be what pandas reads: NaN where empty, the same number or text."""
    for name in ("accelerators", "models", "frameworks", "published_runs", "pue", "water",
                 "embodied", "cloud_regions", "grid_monthly", "input_ranges", "mfu_bands"):
        table = catalog.read_table(name).to_dict("records")
        rows = catalog.records(name)
        assert len(rows) == len(table), name
        for got, want in zip(rows, table):
            assert got.keys() == want.keys(), name
            for col, value in want.items():
                if isinstance(value, float) and math.isnan(value):
                    assert isinstance(got[col], float) and math.isnan(got[col]), (name, col)
                else:
                    assert got[col] == value, (name, col, got[col], value)


def test_aws_region_maps_to_a_location():
    regions = catalog.regions()
    aws = [r for r in regions.index if r.startswith("aws:")]
    assert "aws:us-east-1" in aws
    assert regions.loc["aws:us-east-1", "grid_gco2e_per_kwh"] > 0


def test_pue_operator_values():
    # Google fleet ~1.10; Uptime Institute survey average 1.56 (2024)
    assert catalog.pue("google")[0] == pytest.approx(1.10, abs=0.01)
    assert catalog.pue("industry-average")[0] == pytest.approx(1.56, abs=0.03)


def test_site_rejects_region_and_intensity_together():
    with pytest.raises(ValueError, match="grid-intensity"):
        catalog.site("FRA", grid_intensity_g=100.0)


def test_h200_computes_like_the_h100_sxm_it_shares_a_die_with():
    # H200 = the GH100 compute die of H100 SXM with 141 GB of HBM3e. stas00's MAMF v2 table
    # (compute/accelerator/README.md, 2026-07-31 revision) gives H100 SXM bf16 794.5
    # TFLOP/s, "H200 is the same", and measures H200 fp8 at 1453.4 beside H100's 1402.6;
    # the attention ceilings come by die identity (data/README.md), so no H200 estimate
    # runs its attention faster than anything measured on that die
    h100, h200 = catalog.accelerator("h100-sxm5-80gb"), catalog.accelerator("h200-sxm-141gb")
    for precision in ("bf16", "fp8"):
        assert h200.peak_flop_per_s(precision) == h100.peak_flop_per_s(precision)
    assert h200.mamf_fraction(0.5) == h100.mamf_fraction(0.5) == pytest.approx(794.5 / 989)
    assert h200.mamf_fraction(0.5, "fp8") == pytest.approx(1453.4 / 1979)
    assert h100.mamf_fraction(0.5, "fp8") == pytest.approx(1402.6 / 1979)
    for kernel in ("flash", "cudnn"):
        assert h200.attention_flop_per_s(kernel) == h100.attention_flop_per_s(kernel)
        assert h200.measured_attention(kernel)
    assert h200.attention_kv_tokens == h100.attention_kv_tokens == 4096
    assert h200.hbm_bytes_per_s > h100.hbm_bytes_per_s


def test_blackwell_attention_rates_come_from_the_cudnn_frontend_benchmark():
    # NVIDIA cudnn-frontend benchmark/sdpa_benchmark_training/artifacts, batch 1, 128 query
    # heads, head dim 128, causal, s 4096 (2048 keys per query row); each file prints the
    # forward and backward times [ms] and rates [TFLOP/s]. The forward counts the causal
    # half of 4bhs^2d, the backward 2.5x that, so forward + backward = sum(rate x time) /
    # sum(time). GB200 (cuDNN 9.17): cudnn_fe 1386 in 0.397, 1054 in 1.304; PyTorch's
    # flash backend 387 in 1.422, 311 in 4.414. B200 (flash_attn 2.7.4): 342.99 in 1.603,
    # 273.484 in 5.025
    forward_flop = 0.5 * 4 * 1 * 128 * 4096**2 * 128
    assert 1386e12 * 0.397e-3 == pytest.approx(forward_flop, rel=2e-3)
    assert 1054e12 * 1.304e-3 == pytest.approx(2.5 * forward_flop, rel=2e-3)
    gb200, b200 = catalog.accelerator("gb200"), catalog.accelerator("b200")
    cudnn = 3.5 * forward_flop / ((0.397 + 1.304) * 1e-3)                   # 1131 TFLOP/s
    assert gb200.attention_flop_per_s("cudnn") == pytest.approx(cudnn, rel=2e-3)
    assert gb200.attention_flop_per_s("flash") == pytest.approx(
        3.5 * forward_flop / ((1.422 + 4.414) * 1e-3), rel=2e-3)            # 329.5
    assert b200.attention_flop_per_s("flash") == pytest.approx(
        3.5 * forward_flop / ((1.603 + 5.025) * 1e-3), rel=2e-3)            # 290.3
    # B200's cuDNN rate by die identity, scaled by the measured matmul ceilings
    assert b200.attention_flop_per_s("cudnn") == pytest.approx(cudnn * 1745.0 / 1822.0,
                                                               rel=2e-3)
    for acc in (gb200, b200):
        assert acc.attention_kv_tokens == 2048
        assert acc.measured_attention("flash") and acc.measured_attention("cudnn")
    # on Blackwell, as on H100, cuDNN's fused attention runs at about 0.6 of the matmul
    # ceiling, and FlashAttention-2 (built for Ampere/Hopper) far below it
    assert 0.55 < gb200.attention_flop_per_s("cudnn") / gb200.mamf_bf16_flop_per_s < 0.7
    assert gb200.attention_flop_per_s("flash") / gb200.mamf_bf16_flop_per_s < 0.2


def test_a100_pcie_carries_the_sxm_attention_rate_scaled_by_the_matmul_ceilings():
    # same GA100 die and boost clock, a 300 W limit instead of 400 W: FlashAttention-2's
    # 189 TFLOP/s on the SXM card (Fig. 4d) x 252.9/271.2 (stas00 MAMF v2) = 176.2
    pcie, sxm = catalog.accelerator("a100-pcie-80gb"), catalog.accelerator("a100-sxm4-80gb")
    assert pcie.attention_flop_per_s("flash") == pytest.approx(189e12 * 252.9 / 271.2,
                                                               rel=1e-3)
    assert pcie.attention_kv_tokens == sxm.attention_kv_tokens == 8192
    assert pcie.attention_kernel_used("auto") == "flash"


@pytest.mark.parametrize("device, bf16, fp8", [
    ("b200", 1745.0 / 2250, 3432.5 / 4500), ("gb200", 1822.0 / 2500, 3615.6 / 5000),
    ("gaudi2", 418.7 / 432, 826.5 / 865), ("gaudi3", 1243.0 / 1677, 1289.5 / 1677)])
def test_blackwell_and_gaudi_run_at_their_measured_matmul_ceilings(device, bf16, fp8):
    # stas00's MAMF v2 tables (mean of 100 iterations), 2026-07-31 revision: MAMF / peak
    acc = catalog.accelerator(device)
    assert acc.mamf_fraction(0.5) == pytest.approx(bf16, rel=1e-4)
    assert acc.mamf_fraction(0.5, "fp8") == pytest.approx(fp8, rel=1e-4)


# ---- data checked against data/schema.csv on load (issue 25) ---------------------------
def _raw(name):
    from traincost import catalog
    return catalog.read_raw_table(name)


def test_a_peak_written_with_its_unit_names_file_row_and_column():
    """'312 TFLOPS' used to become NaN and fall back silently to another peak."""
    from traincost import catalog
    raw = _raw("accelerators")
    row = int(raw.index[raw["id"] == "a100-sxm4-80gb"][0])
    raw.loc[row, "peak_bf16_flop_per_s"] = "312 TFLOPS"
    with pytest.raises(ValueError, match=rf"data/accelerators.csv line {row + 2} "
                                         r"\(id 'a100-sxm4-80gb'\), column "
                                         r"peak_bf16_flop_per_s: '312 TFLOPS' is not a number"):
        catalog.check_table("accelerators", raw)


def test_duplicate_ids_and_missing_columns_are_named():
    from traincost import catalog
    raw = _raw("accelerators")
    dup = pd.concat([raw, raw.iloc[[3]]], ignore_index=True)
    with pytest.raises(ValueError, match=rf"line {len(raw) + 2}: id '{raw['id'][3]}' "
                                         "appears twice"):
        catalog.check_table("accelerators", dup)
    with pytest.raises(ValueError, match="data/accelerators.csv: column 'tdp_w' is missing"):
        catalog.check_table("accelerators", raw.drop(columns="tdp_w"))
    with pytest.raises(ValueError, match="column 'colour' is not in data/schema.csv"):
        catalog.check_table("accelerators", raw.assign(colour="green"))


def test_out_of_range_and_unlisted_values_are_named():
    from traincost import catalog
    raw = _raw("pue")
    bad = raw.copy()
    bad.loc[0, "pue"] = "0.5"
    spec = catalog.schema().query("table == 'pue' and column == 'pue'").iloc[0]
    with pytest.raises(ValueError, match=f"column pue: 0.5 is below the minimum {spec['min']}"):
        catalog.check_table("pue", bad)
    bad = raw.copy()
    bad.loc[0, "status"] = "rumoured"
    with pytest.raises(ValueError, match="column status: 'rumoured' is not one of"):
        catalog.check_table("pue", bad)


def _models_csv(text: str, tmp_path, monkeypatch) -> None:
    """Serve ``text`` as the package's data/models.csv (the schema cached from the real
    data first)."""
    from traincost import tables
    catalog.schema()
    (tmp_path / "models.csv").write_text(text)

    class _Files:
        @staticmethod
        def files(package):
            return tmp_path
    monkeypatch.setattr(tables, "resources", _Files)


def test_a_file_pandas_cannot_parse_is_named(tmp_path, monkeypatch):
    _models_csv('id,name\n"unclosed,quote\n', tmp_path, monkeypatch)
    with pytest.raises(ValueError, match=r"^data/models.csv: "):
        catalog.read_table("models")


def test_a_row_with_too_few_cells_is_named(tmp_path, monkeypatch):
    """pandas pads a short row with NaN; the catalog names it instead."""
    _models_csv("id,name\nllama,Llama\ngpt\n", tmp_path, monkeypatch)
    with pytest.raises(ValueError, match=r"^data/models.csv line 3: 1 cells, the header "
                                         r"has 2$"):
        catalog.read_table("models")


def test_an_infinite_number_in_the_data_is_named():
    from traincost import catalog
    bad = _raw("pue")
    bad.loc[0, "pue"] = "inf"
    with pytest.raises(ValueError, match="column pue: 'inf' is not a finite number"):
        catalog.check_table("pue", bad)
