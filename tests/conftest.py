"""Shared fixtures: catalog objects and a reference layout (Megatron-LM SC21 Table 1)."""

import os

import pytest

os.environ.setdefault("MPLBACKEND", "Agg")
os.environ.setdefault("CODECARBON_LOG_LEVEL", "error")

# Megatron-LM SC21 (Narayanan et al. 2021, arXiv:2104.04473) Table 1, 145.6B row:
# 80 layers, h 12288, 96 heads, V 51200, s 2048, t 8, p 8, 1536 A100s, batch 2304,
# 148 TFLOP/s per GPU (counting the recompute forward pass).
SC21_145B = dict(accelerator="a100-sxm4-80gb", devices=1536, layers=80, hidden=12288, heads=96,
                 vocab=51200, seq_len=2048, global_batch=2304, micro_batch=1, tp=8, pp=8,
                 recompute="full", tokens=300e9)


@pytest.fixture
def sc21_145b():
    return dict(SC21_145B)
