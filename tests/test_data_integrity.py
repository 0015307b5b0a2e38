"""Integrity checks for the sourced catalogs under data/.

Reads data/schema.csv and every table it names; checks headers, required cells,
types, ranges, allowed values, unique ids, provenance columns and a few
cross-column rules. pandas only: no traincost import, so a broken catalog is
reported here even when the library cannot load it.
"""
import pathlib
import re

import pandas as pd
import pytest

DATA = pathlib.Path(__file__).resolve().parents[1] / "data"
STATUSES = {"spec", "measured", "reported", "estimate"}
DATE_RE = re.compile(r"^\d{4}(-(0[1-9]|1[0-2])(-(0[1-9]|[12]\d|3[01]))?)?$")
STRICT_DATE_RE = re.compile(r"^\d{4}-(0[1-9]|1[0-2])(-(0[1-9]|[12]\d|3[01]))?$")

# Public contract from DESIGN.md ("Accelerator ids"), in this order.
DESIGN_ACCELERATOR_IDS = (
    "v100-sxm2-32gb a100-sxm4-40gb a100-sxm4-80gb a100-pcie-80gb h100-sxm5-80gb "
    "h100-pcie-80gb h800-sxm5-80gb h200-sxm-141gb b200 gb200 l4 l40s mi250x-gcd mi300x "
    "mi325x tpu-v3 tpu-v4 tpu-v5e tpu-v5p tpu-v6e gaudi2 gaudi3 trainium2"
).split()


def _read_raw(path):
    """Every cell as a string; empty cells as ''."""
    return pd.read_csv(path, dtype=str, keep_default_na=False, encoding="utf-8")


SCHEMA = _read_raw(DATA / "schema.csv")
TABLES = list(dict.fromkeys(SCHEMA["table"]))


def _spec(table):
    return SCHEMA[SCHEMA["table"] == table].reset_index(drop=True)


def _table(table):
    return _read_raw(DATA / f"{table}.csv")


def _num(df, col):
    s = df[col].replace("", None)
    return pd.to_numeric(s, errors="coerce")


def test_schema_itself():
    assert list(SCHEMA.columns) == [
        "table", "column", "dtype", "unit", "required", "min", "max", "allowed", "description"]
    assert set(SCHEMA["dtype"]) <= {"str", "int", "float", "bool"}
    assert set(SCHEMA["required"]) <= {"0", "1"}
    assert not SCHEMA.duplicated(["table", "column"]).any()
    assert {"accelerators", "models", "pue", "cloud_regions"} <= set(TABLES)


@pytest.mark.parametrize("table", TABLES)
def test_file_encoding_and_header(table):
    raw = (DATA / f"{table}.csv").read_bytes()
    assert not raw.startswith(b"\xef\xbb\xbf"), "no byte-order mark"
    raw.decode("utf-8")
    df = _table(table)
    assert list(df.columns) == list(_spec(table)["column"]), "header must equal schema order"
    assert len(df) > 0


@pytest.mark.parametrize("table", TABLES)
def test_cells_against_schema(table):
    df = _table(table)
    problems = []
    for _, c in _spec(table).iterrows():
        col, dtype = c["column"], c["dtype"]
        cells = df[col]
        filled = cells != ""
        if c["required"] == "1" and (~filled).any():
            problems.append(f"{col}: required but empty in rows {list(df.loc[~filled, 'id'])}")
        vals = cells[filled]
        if dtype in ("int", "float", "bool"):
            nums = pd.to_numeric(vals, errors="coerce")
            bad = nums.isna()
            if bad.any():
                problems.append(f"{col}: not numeric {list(vals[bad])}")
                continue
            if dtype in ("int", "bool"):
                frac = nums[(nums - nums.round()).abs() > 1e-9]
                if len(frac):
                    problems.append(f"{col}: not integer {list(frac)}")
            if dtype == "bool" and not set(nums.astype(int)) <= {0, 1}:
                problems.append(f"{col}: bool must be 0/1")
            if c["min"] != "" and (nums < float(c["min"])).any():
                problems.append(f"{col}: below min {c['min']}: {list(nums[nums < float(c['min'])])}")
            if c["max"] != "" and (nums > float(c["max"])).any():
                problems.append(f"{col}: above max {c['max']}: {list(nums[nums > float(c['max'])])}")
        if c["allowed"] != "":
            allowed = set(c["allowed"].split("|"))
            bad = set(vals) - allowed
            if bad:
                problems.append(f"{col}: values {bad} not in {allowed}")
        if col.endswith("_date"):
            bad = [v for v in vals if not DATE_RE.match(v)]
            if bad:
                problems.append(f"{col}: bad dates {bad}")
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("table", TABLES)
def test_ids_unique_and_provenance(table):
    df = _table(table)
    assert (df["id"] != "").all()
    assert not df["id"].duplicated().any(), list(df.loc[df["id"].duplicated(), "id"])
    bad_ids = [i for i in df["id"] if not re.match(r"^[a-z0-9][a-z0-9.\-]*$", i)]
    assert not bad_ids, bad_ids
    for col in ("source", "source_date", "status"):
        assert col in df.columns
        assert (df[col].str.strip() != "").all(), f"{table}: empty {col}"
    assert set(df["status"]) <= STATUSES
    bad = [d for d in df["source_date"] if not STRICT_DATE_RE.match(d)]
    assert not bad, f"source_date must be YYYY-MM or YYYY-MM-DD: {bad}"


# ---------------------------------------------------------------- accelerators
def test_accelerator_ids_match_design_in_order():
    ids = list(_table("accelerators")["id"])
    missing = [i for i in DESIGN_ACCELERATOR_IDS if i not in ids]
    assert not missing, f"DESIGN.md ids missing: {missing}"
    assert ids[: len(DESIGN_ACCELERATOR_IDS)] == DESIGN_ACCELERATOR_IDS


def test_accelerators_have_half_precision_peak():
    df = _table("accelerators")
    none = df[(df["peak_bf16_flop_per_s"] == "") & (df["peak_fp16_flop_per_s"] == "")]
    assert none.empty, list(none["id"])


def test_accelerator_power_and_price_consistency():
    df = _table("accelerators")
    tdp, idle = _num(df, "tdp_w"), _num(df, "idle_w")
    assert (idle < tdp).all(), list(df.loc[~(idle < tdp), "id"])
    priced = df["price_usd_per_h"] != ""
    for col in ("price_kind", "price_provider", "price_date", "price_source"):
        empty = priced & (df[col] == "")
        assert not empty.any(), f"{col} missing for priced rows {list(df.loc[empty, 'id'])}"
    for col in ("price_date",):
        bad = [d for d in df.loc[priced, col] if not STRICT_DATE_RE.match(d)]
        assert not bad, bad
    has_emb = df["embodied_kgco2e"] != ""
    assert not (has_emb & (df["embodied_basis"] == "")).any()
    assert not (has_emb & (df["embodied_source"] == "")).any()
    owned = df["capex_usd"] != ""
    assert not (owned & (df["capex_date"] == "")).any()
    assert not (owned & (df["capex_source"] == "")).any()
    assert not (~owned & (df["capex_source"] != "")).any()


def test_purchase_prices_against_their_sources():
    """Hand-checked against the cited rows (capex_source): a baseboard of 8 divided by 8, a
    package of two GCDs by 2, a kit of 8 by 8, the midpoint of a quoted range."""
    df = _table("accelerators").set_index("id")
    capex = lambda i: float(df.loc[i, "capex_usd"])  # noqa: E731
    assert capex("h100-sxm5-80gb") == pytest.approx(248_956 / 8, abs=0.01)  # HGX H100 total
    assert capex("h200-sxm-141gb") == pytest.approx(270_565 / 8, abs=0.03)  # total rounded
    assert capex("mi250x-gcd") == 14_500 / 2          # The Next Platform, per package
    assert capex("gaudi2") == 65_000 / 8 and capex("gaudi3") == 125_000 / 8  # Intel kits of 8
    assert capex("b200") == (30_000 + 40_000) / 2     # "between $30,000 and $40,000 per unit"
    # rental: instance price / its devices
    price = lambda i: float(df.loc[i, "price_usd_per_h"])  # noqa: E731
    assert price("v100-sxm2-32gb") == pytest.approx(31.212 / 8)       # p3dn.24xlarge
    assert price("l4") == pytest.approx(13.3504 / 8)                   # g6.48xlarge
    assert price("tpu-v5p") == pytest.approx(25804.8 / 6144)           # tpu-v5p-12288
    assert price("gaudi2") == pytest.approx(10.40 / 8) and price("mi300x") == 48 / 8


def test_accelerator_spot_values():
    """Hand-checked against the cited sources (see data/README.md)."""
    df = _table("accelerators").set_index("id")
    f = lambda i, c: float(df.loc[i, c])  # noqa: E731
    assert f("a100-sxm4-80gb", "peak_bf16_flop_per_s") == 312e12  # NVIDIA A100 datasheet
    assert f("h100-sxm5-80gb", "peak_bf16_flop_per_s") == 989e12  # dense, not 1979 sparse
    assert f("v100-sxm2-32gb", "peak_fp16_flop_per_s") == 125e12  # Patterson et al. 2021 fn12
    assert df.loc["v100-sxm2-32gb", "peak_bf16_flop_per_s"] == ""  # no bf16 on Volta
    assert df.loc["a100-sxm4-40gb", "peak_fp8_flop_per_s"] == ""  # no fp8 on Ampere
    assert f("tpu-v3", "tdp_w") == 262  # Google Cloud TPU v3 doc: measured max chip power
    assert f("tpu-v4", "hbm_bytes") == 32 * 2**30  # Google states 32 GiB
    assert f("h100-sxm5-80gb", "scaleup_bytes_per_s") == 450e9  # 900 GB/s bidirectional
    # mi250x-gcd is half a package: 383 TFLOP/s and 128 GB per package
    assert f("mi250x-gcd", "peak_bf16_flop_per_s") == 383e12 / 2
    assert f("mi250x-gcd", "hbm_bytes") == 128e9 / 2
    assert int(df.loc["gb200", "scaleup_domain_devices"]) == 72


# ---------------------------------------------------------------- models
def test_model_shapes():
    df = _table("models")
    heads, kv = _num(df, "heads"), _num(df, "kv_heads")
    mha = df["attention"] == "mha"
    assert ((heads[mha] % kv[mha]) == 0).all(), list(df.loc[mha & (heads % kv != 0), "id"])
    no_head_dim = mha & (df["head_dim"] == "")
    hidden = _num(df, "hidden")
    assert ((hidden[no_head_dim] % heads[no_head_dim]) == 0).all()
    mla_cols = ["q_lora_rank", "kv_lora_rank", "qk_rope_head_dim", "v_head_dim"]
    for col in mla_cols:
        assert (df.loc[mha, col] == "").all(), f"{col} must be blank for mha rows"
        assert (df.loc[~mha, col] != "").all(), f"{col} required for mla rows"
    assert (df.loc[~mha, "head_dim"] != "").all()


def test_dense_and_moe_models():
    df = _table("models")
    experts = _num(df, "experts")
    dense = experts == 0
    for col in ("top_k", "shared_experts", "moe_ffn_hidden", "dense_layers"):
        assert (_num(df, col)[dense] == 0).all(), f"dense models need {col} == 0"
    moe = ~dense
    topk = _num(df, "top_k")
    assert ((topk[moe] >= 1) & (topk[moe] <= experts[moe])).all()
    assert (_num(df, "moe_ffn_hidden")[moe] > 0).all()
    assert (_num(df, "dense_layers")[moe] < _num(df, "layers")[moe]).all()
    assert (df.loc[moe, "active_params_reported"] != "").all()


def test_megatron_rows_reproduce_table1():
    """Narayanan et al. SC21 Eq. 2 reproduces their Table 1 parameter counts."""
    df = _table("models")
    meg = df[(df["family"] == "megatron-gpt") & df["name"].str.contains("SC21 Table 1")]
    assert len(meg) == 10
    for _, r in meg.iterrows():
        L, h = int(r["layers"]), int(r["hidden"])
        V, s = int(r["vocab"]), int(r["seq_len"])
        n = 12 * L * h * h * (1 + 13 / (12 * h) + (V + s) / (12 * L * h))
        # Table 1 prints billions to one decimal: agree within half a unit (0.05e9)
        assert abs(n - float(r["params_reported"])) <= 0.05e9 + 1e-6 * n, r["id"]


def test_nemotron_presets_count_their_nemo_configs():
    """nemotron4-{15b,340b}-synth.yaml: squared-ReLU MLP (two h x f matrices), 8 KV groups of
    head dim h/a, untied 256,000-token embeddings; no biases. Counted by hand, without the
    norms: 15B 15.628e9, 340B 341.04e9 (the model card's "340 billion parameters")."""
    import traincost
    for preset, (L, h, a, f) in {"nemotron4-15b": (32, 6144, 48, 24576),
                                 "nemotron4-340b": (96, 18432, 96, 73728)}.items():
        kv = 8 * h // a
        n = L * (2 * h * h + 2 * h * kv + 2 * h * f) + 2 * 256000 * h
        est = traincost.estimate("h100-sxm5-80gb", 256, model=preset, global_batch=256)
        assert est.params == pytest.approx(n, rel=2e-4)        # + the layer norms' 4h per layer


def test_required_model_presets_present():
    ids = set(_table("models")["id"])
    want = {"gpt3-175b", "megatron-1.7b", "megatron-3.6b", "megatron-7.5b", "megatron-18.4b",
            "megatron-39.1b", "megatron-76.1b", "megatron-145.6b", "megatron-310.1b",
            "megatron-529.6b", "megatron-1t", "llama2-7b", "llama2-13b", "llama2-70b",
            "llama3.1-8b", "llama3.1-70b", "llama3.1-405b", "bloom-176b", "opt-175b",
            "mixtral-8x7b", "deepseek-v3", "gpt2-small"}
    assert want <= ids, want - ids


# ---------------------------------------------------------------- pue / regions
def test_pue_rows():
    df = _table("pue")
    assert {"google", "meta", "microsoft", "aws", "industry-average"} <= set(df["id"])


def test_cloud_region_rows():
    df = _table("cloud_regions")
    assert (df["id"] == df["provider"] + "-" + df["region"]).all()
    assert df["country_iso3"].str.fullmatch(r"[A-Z]{3}").all()
    sub = df["subregion"] != ""
    assert df.loc[sub, "subregion"].str.fullmatch(r"[a-z ]+").all()
    assert set(df.loc[sub, "country_iso3"]) <= {"USA", "CAN"}
    assert (df["provider"] == "aws").sum() >= 15
    assert (df["provider"] == "azure").sum() >= 12
