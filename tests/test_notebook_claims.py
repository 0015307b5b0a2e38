"""The numbers notebooks' prose quotes from the model agree with the model (issue 26).

Each test reads a sentence of the notebook's Markdown, takes the figures it quotes, and
computes the same figures from the validation (``validate.compare_published``,
``validate.predict_case``) at the rounding the sentence uses. A model change that moves one
of them fails here, naming the sentence, until the prose is brought in line. Historical
figures ("predicted before they joined the fit: ...") are facts of their date and are not
checked; only what the model says now is.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

import traincost
from traincost import catalog, validate
from traincost.assumptions import DEFAULT

NOTEBOOKS = Path(__file__).resolve().parents[1] / "notebooks"


def markdown(name: str) -> str:
    """A notebook's Markdown, soft breaks and indentation joined into single spaces."""
    cells = json.loads((NOTEBOOKS / name).read_text())["cells"]
    text = "\n".join("".join(c["source"]) for c in cells if c["cell_type"] == "markdown")
    return re.sub(r"\s+", " ", text)


@pytest.fixture(scope="module")
def prose() -> str:
    return markdown("07-validation.ipynb")


@pytest.fixture(scope="module")
def table():
    return validate.compare_published()


def quoted(prose: str, pattern: str) -> tuple:
    """The groups of ``pattern`` in the prose, as floats (thousands separators dropped);
    fails naming the pattern where the sentence is gone."""
    m = re.search(pattern, prose)
    assert m, f"the text no longer says: {pattern}"
    return tuple(float(g.replace(",", "")) for g in m.groups())


def error(table, case: str, metric: str) -> float:
    row = table[(table["case"] == case) & (table["metric"] == metric)]
    assert len(row) == 1, (case, metric)
    return float(row["error_pct"].iloc[0])


def predicted(case: str, **change) -> dict:
    row = catalog.published_runs().loc[case].copy()
    for k, v in change.items():
        row[k] = v
    return validate.predict_case(row).values


def test_llama3_long_context_stage_is_bracketed(prose):
    """Llama 3 405B's 131K-token stage: the search's pick and full recompute either side of
    the published 38 % MFU (Llama Team 2024, Table 4)."""
    pick, full = quoted(prose, r"brackets the published 38 % MFU: (\d+) % with the search's "
                               r"pick.*?, (\d+) % with full recomputation")
    assert round(100 * float(predicted("llama3-405b-16384-cp16")["mfu"])) == pick
    assert round(100 * float(predicted("llama3-405b-16384-cp16", recompute="full")["mfu"])) \
        == full
    assert full < 38 < pick


def test_gpt3_power_and_energy(prose, table):
    """Patterson et al. 2021: GPT-3's 330 W a V100 and 1,287 MWh."""
    (about,) = quoted(prose, r"Its 330 W and its 1,287 MWh follow within about (\d+) %")
    assert abs(error(table, "patterson-gpt3-175b", "avg_power_w_per_device")) <= about + 0.5
    assert abs(error(table, "patterson-gpt3-175b", "energy_mwh")) <= about + 0.5
    (energy,) = quoted(prose, r"GPT-3's energy within about (\d+) %")
    assert abs(error(table, "patterson-gpt3-175b", "energy_mwh")) <= energy + 0.5
    # "predicted within a few per cent": the throughput OpenAI reported, 24.6 TFLOP/s a V100
    assert abs(error(table, "patterson-gpt3-175b", "model_tflops_per_device")) < 5


def test_mosaicml_single_node_a100_runs(prose, table):
    (within,) = quoted(prose, r"four single-node A100 runs without activation checkpointing "
                              r"land within (\d+) %")
    for size in ("1b", "3b", "7b", "13b"):
        assert abs(error(table, f"mosaicml-mpt-{size}-8-a100", "mfu")) <= within, size


def test_t5_stand_in(prose, table):
    """T5 on TPU v3 (Patterson et al. 2021): 45.6 TFLOP/s, 20 days, 85.7 MWh."""
    high, days, energy = quoted(prose, r"its throughput is (\d+) % high; .*? its 20 days and "
                                       r"85\.7 MWh land (\d+) % and (\d+) % low")
    assert round(error(table, "patterson-t5-11b", "hardware_tflops_per_device")) == high
    assert round(-error(table, "patterson-t5-11b", "train_time_days")) == days
    assert round(-error(table, "patterson-t5-11b", "energy_mwh")) == energy


def test_frontier_readings(prose, table):
    """Frontier (Dash et al. 2024): its '% of peak' read as model FLOPs, and as the
    recompute-counting FLOPs its scripts log (x 4/3 under full recomputation)."""
    low, high = quoted(prose, r"read as model FLOPs the model lands between (\d+) % low and "
                              r"(\d+) % high")
    cases = ("frontier-22b-16gcd", "frontier-175b-1024gcd", "frontier-1t-3072gcd")
    errs = [error(table, c, "mfu") for c in cases]
    assert round(-min(errs)) == low and round(max(errs)) == high
    lo, hi = quoted(prose, r"it is (\d+)-(\d+) % fast")
    runs = catalog.published_runs()
    fast = []
    for c in cases:
        v = predicted(c)
        share = float(v["model_flop_per_token"]) / float(v["hardware_flop_per_token"])
        fast.append(100 * (float(v["mfu"]) / (float(runs.loc[c, "reported_mfu"]) * share) - 1))
    assert round(min(fast)) == lo and round(max(fast)) == hi


def test_megascale_530b_weak_scaling(prose, table):
    """MegaScale Figure 9: MFU from 2,240 to 11,200 GPUs, each stack."""
    base, model = quoted(prose, r"The baseline loses (\d+) % of its MFU over that range, the "
                                r"model ([\d.]+) %")
    (own,) = quoted(prose, r"MegaScale's overlapped stack loses none, the model ([\d.]+) %")
    runs = catalog.published_runs()

    def loss(stack, col):
        a = f"megascale-530b-{stack}-2240"
        b = f"megascale-530b-{stack}-11200"
        if col == "reported":
            return 100 * (1 - runs.loc[b, "reported_mfu"] / runs.loc[a, "reported_mfu"])
        return 100 * (1 - float(predicted(b)["mfu"]) / float(predicted(a)["mfu"]))

    assert round(loss("megatron", "reported")) == base
    assert round(loss("megatron", "predicted"), 1) == model
    assert round(loss("megascale", "reported"), 1) == 0.0
    assert round(loss("megascale", "predicted"), 1) == own


def test_stragglers_share_at_scale(prose):
    """MegaScale Secs. 5.1, 6.3: the expected wait for a straggler at 10,000+ GPUs."""
    lo, hi = quoted(prose, r"it takes (\d+)-(\d+) % of the step at 10,000\+ GPUs")
    for case in ("megascale-175b-megatron-12288", "megascale-530b-megatron-11200"):
        v = predicted(case)
        share = 100 * float(v["step_stragglers_s"]) / float(v["step_time_s"])
        assert lo <= share <= hi, (case, share)
    # "a 256-GPU job holds one about one time in seven"
    f = DEFAULT.straggler_device_fraction
    assert round(1 / (1 - (1 - f) ** 256)) == 7


def test_llama3_8k_stages_land_above_their_mfu(prose, table):
    quoted(prose, r"the predicted MFU lands above the published 43 % and 41 %")
    assert error(table, "llama3-405b-8192-cp1", "mfu") > 0
    assert error(table, "llama3-405b-16384-cp1", "mfu") > 0


def test_summary_powers(prose, table):
    (within,) = quoted(prose, r"the measured powers are within (\d+) % on average")
    assert validate.summary(table).loc["power", "mape_pct"] <= within


def test_model_gap_texts_quote_the_model(table):
    """The same figures where data/published_runs.csv explains a model gap (what
    ``traincost validate --case ID`` prints)."""
    runs = catalog.published_runs()
    t5 = re.sub(r"\s+", " ", runs.loc["patterson-t5-11b", "model_gap"])
    high, days, energy = quoted(t5, r"runs (\d+)% above the measured 45\.6 TFLOP/s, .*? its days "
                                    r"and energy land (\d+)% and (\d+)% low")
    assert round(error(table, "patterson-t5-11b", "hardware_tflops_per_device")) == high
    assert round(-error(table, "patterson-t5-11b", "train_time_days")) == days
    assert round(-error(table, "patterson-t5-11b", "energy_mwh")) == energy
    llama = runs.loc["llama3-405b-16384-cp16", "model_gap"]
    pick, full = quoted(llama, r"38% MFU, (\d+)% with the search's pick .*? and (\d+)% with full")
    assert round(100 * float(predicted("llama3-405b-16384-cp16")["mfu"])) == pick
    assert round(100 * float(predicted("llama3-405b-16384-cp16", recompute="full")["mfu"])) \
        == full


def test_notebook_02_recompute_costs():
    """Notebook 02: what selective (torchtitan's per-operator policy) and full recomputation
    add to the FLOP per token of Llama 3 8B at 8,192 tokens."""
    text = markdown("02-flops-and-memory.ipynb")
    (op,) = quoted(text, r"less memory for about (\d+)% more FLOP on Llama 3 8B at 8,192 tokens")
    assert "full recomputation costs about a third more" in text

    def extra(**kw):
        r = traincost.estimate(accelerator="h100-sxm5-80gb", devices=8, model="llama3.1-8b",
                               global_batch=64, seq_len=8192, **kw).report
        return float(r["hardware_flop_per_token"]) / float(r["model_flop_per_token"]) - 1

    assert round(100 * extra(recompute="selective", framework="torchtitan")) == op
    assert 0.28 <= extra(recompute="full") <= 0.38                 # "about a third"


def test_notebook_03_hidden_comm_is_not_free():
    """Notebook 03's stack note: compute beside a collective runs about 19% slower (Lee et
    al. 2025, arXiv:2507.03114: 18.9% on average), so a hidden bar keeps about a sixth."""
    text = re.sub(r"\s+", " ", markdown("03-parallelism-explorer.ipynb"))
    (slower,) = quoted(text, r"the compute beside a collective runs about (\d+) % slower")
    s = DEFAULT.overlap_compute_slowdown
    assert round(100 * s) == slower
    quoted(text, r"a hidden bar keeps about a sixth of its length")
    assert round(1 / (s / (1 + s))) == 6                   # t s/(1 + s) of a hidden t


def test_long_context_model_gap_texts_quote_the_model(table):
    """The long-context model gaps of data/published_runs.csv quote the validation's
    figures as they stand (``traincost validate --case ID`` prints the text)."""
    runs = catalog.published_runs()
    err = table[table["family"] == "throughput"].set_index("case")["error_pct"]

    def slower(case):                     # predicted rate over measured: x slower a step
        return f"{1 + err[case] / 100:.2f}x"
    tt = re.sub(r"\s+", " ", runs.loc["tt-h100-llama3.1-8b-8-cp1-s32k", "model_gap"])
    assert f"are {slower('tt-h100-llama3.1-405b-512-4d-cp8-s256k')} (405B) and " \
        f"{slower('tt-h100-llama3.1-8b-8-cp8-s256k')} (8B) slower than predicted" in tt
    assert f"without context parallelism {slower('tt-h100-llama3.1-8b-8-cp1-s32k')} (" in tt
    h100 = err[err.index.str.startswith("nemo-longseq-llama2-7b-h100-")]
    rank = runs.loc[h100.index, "seq_len"]
    long, short = h100[rank >= 16384], h100[rank < 16384]
    text = runs.loc["nemo-longseq-llama2-7b-h100-s16k", "model_gap"]
    assert f"steps {long.min():.0f}-{long.max():.0f}% too fast" in text
    assert f"land within {short.abs().max():.0f}%" in text
    b200 = err[err.index.str.startswith("nemo-longseq-llama3.1-8b-b200-")]
    text = runs.loc["nemo-longseq-llama3.1-8b-b200-s8k", "model_gap"]
    rest = b200.drop("nemo-longseq-llama3.1-8b-b200-s8k")
    assert f"runs the 8K step {b200['nemo-longseq-llama3.1-8b-b200-s8k']:.0f}% fast and the " \
        f"16K-1M steps from {rest.max():.0f}% fast to {-rest.min():.0f}% slow" in text


def test_moe_model_gap_texts_quote_the_model(table):
    """The Qwen3 MoE model gaps quote the validation as it stands: the Grok-1 steps' excess,
    the two Qwen3-30B-A3B dispatchers and the Qwen3-235B runs now."""
    runs = catalog.published_runs()
    err = table[table["family"] == "throughput"].set_index("case")["error_pct"]
    grok = table[table["case"].str.startswith("nvidia-dgxc-grok1-")]
    longer = 100.0 * (grok["reported"] / grok["predicted"] - 1.0)
    ep16 = err["mbridge-260401-h100-qwen3-30b-a3b-16"]
    deepep = err["mbridge-2602-h100-qwen3-30b-a3b-16"]
    text = runs.loc["mbridge-260401-h100-qwen3-30b-a3b-16", "model_gap"]
    assert f"whose steps took {longer.min():.0f}-{longer.max():.0f}% longer" in text
    assert f"(comm.all_to_all_link), {ep16:.1f}% (" in text and f"+{deepep:.1f}%)" in text
    text = runs.loc["mbridge-2602-h100-qwen3-30b-a3b-16", "model_gap"]
    assert f"the step took {1 + deepep / 100:.1f}x what the model predicts (+{deepep:.1f}%)" \
        in text
    assert f"it ran {100 * (1 / (1 + ep16 / 100) - 1):.0f}% faster than predicted" in text
    text = runs.loc["mbridge-2511-h100-qwen3-235b-a22b-256", "model_gap"]
    assert f"+{err['mbridge-2511-h100-qwen3-235b-a22b-256']:.1f}% and " \
        f"+{err['mbridge-260401-h100-qwen3-235b-a22b-256']:.1f}% since" in text
