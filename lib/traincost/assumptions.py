"""Modelling assumptions: every judgement the model makes, in one place.

Hardware, site and price *facts* live in ``data/*.csv`` with a source and a date.
What is left are modelling *judgements* (how efficient a kernel is, how much power a
device draws while it waits, how much of a run is lost to restarts). Each one is a
field of :class:`Assumptions` with its unit, source, status and a one-line rationale
in the field's metadata, so an estimate can always show what it assumed:

>>> from traincost.assumptions import DEFAULT, describe
>>> DEFAULT.operations_goodput_fraction
0.9
>>> describe().loc["interruption_lost_s", "unit"]
's'

Status values follow data/README.md: ``spec`` (a specification or a definition),
``measured`` (a measurement we cite), ``reported`` (a figure a source reports),
``estimate`` (our judgement from cited evidence), and ``fitted`` for the efficiency
constants that :mod:`traincost.calibrate` fits to published runs (their sourced value is
kept as ``prior``; :data:`PRIOR` holds all priors, :data:`DEFAULT` the fitted set).
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields, replace
from typing import TYPE_CHECKING

if TYPE_CHECKING:                       # pandas is imported where a table is built
    import pandas as pd

from .units import SECONDS_PER_DAY


def _a(value, unit, source, status, rationale):
    return field(default=value, metadata={"unit": unit, "source": source, "status": status,
                                          "rationale": rationale})


@dataclass(frozen=True)
class Assumptions:
    """Modelling defaults, each with unit, source, status and rationale (see ``describe``)."""

    # --- model state bytes (mixed-precision Adam) --------------------------------------
    weight_bytes_per_param: float = _a(
        2.0, "bytes/param", "Rajbhandari et al. 2020 (ZeRO, arXiv:1910.02054) Sec. 3.1", "spec",
        "16-bit (bf16/fp16) working copy of the weights.")
    grad_bytes_per_param: float = _a(
        2.0, "bytes/param", "Rajbhandari et al. 2020 (ZeRO) Sec. 3.1", "spec",
        "16-bit gradients.")
    optimizer_bytes_per_param: float = _a(
        12.0, "bytes/param", "Rajbhandari et al. 2020 (ZeRO) Sec. 3.1 (K=12)", "spec",
        "fp32 master weights, Adam momentum and variance: 4+4+4 bytes.")
    optimizer_bf16_bytes_per_param: float = _a(
        4.0, "bytes/param", "NeMo megatron_base_model.setup_optimization: distributed_fused_adam "
        "with optimizer dtype equal to the bf16 model dtype sets store_params=False (no "
        "master copy); Apex DistributedFusedAdam keeps its state in that dtype", "spec",
        "optimizer_state bf16: Adam momentum and variance in bf16, 2+2 bytes, and no fp32 "
        "master weights (NVIDIA dgxc-benchmarking nemotron4-340b-synth.yaml: optim dtype bf16).")
    optimizer_step_bytes_per_param: float = _a(
        30.0, "bytes/param", "derived from the Adam update in Kingma & Ba 2015 (arXiv:1412.6980)",
        "estimate",
        "The step reads fp32 master, m, v and fp32 grad (16 B), writes master, m, v (12 B) "
        "and the 16-bit weights (2 B); it is HBM-bound.")
    optimizer_step_bf16_bytes_per_param: float = _a(
        14.0, "bytes/param", "derived from the Adam update in Kingma & Ba 2015 (arXiv:1412.6980)",
        "estimate",
        "optimizer_state bf16: the step reads bf16 m, v, grad and weight (8 B) and writes m, "
        "v and the weight (6 B).")
    grad_reduce_bytes_per_param: float = _a(
        2.0, "bytes/param", "Rajbhandari et al. 2020 (ZeRO) Sec. 7 (communication volume in Psi "
        "16-bit elements)", "spec",
        "fp16 training reduces its gradients in 16-bit, as in ZeRO's communication analysis "
        "(Megatron-LM's default without --accumulate-allreduce-grads-in-fp32).")
    grad_reduce_fp32_bytes_per_param: float = _a(
        4.0, "bytes/param", "Megatron-LM megatron/training/arguments.py ('bfloat16 requires "
        "gradient accumulation and all-reduce to be done in fp32': accumulate_allreduce_grads_"
        "in_fp32 forced for bf16); torchtitan's FSDP2 MixedPrecisionPolicy reduce_dtype fp32 "
        "(training.mixed_precision_reduce, float32 its only choice at 9dec370)", "spec",
        "Every other precision (bf16, fp8 with bf16 weights, tf32) reduces its gradients in "
        "fp32.")
    framework_reserved_bytes: float = _a(
        2.0 * 2**30, "bytes", "PyTorch CUDA semantics notes (CUDA context, caching allocator); "
        "NCCL environment docs (NCCL_BUFFSIZE per channel and peer)", "estimate",
        "CUDA context (~0.5 GiB), NCCL buffers and allocator fragmentation that the "
        "analytical memory terms do not see.")
    host_copy_efficiency: float = _a(
        0.80, "fraction", "pinned host-device copies measured with nvbandwidth over the link's "
        "line rate each direction: PCIe Gen4 x16 A100 25.1-26.3 of 32 GB/s (NVIDIA/nvbandwidth "
        "issue 42; Azure/AI-benchmarking-guide ND_A100_v4), Gen5 x16 H100 and H200 51-52 of 64 "
        "with the SM copy (Azure ND H100 v5, ND H200 v5), 55.2-57.1 with the copy engines "
        "(nvbandwidth issue 6), 49.1-51.8 with both directions at once (a B300 system's "
        "bidirectional copy-engine test); GH200's NVLink-C2C 295-375 of 450", "measured",
        "Share of the host link's line rate (data/accelerators.csv host_link_bytes_per_s) "
        "activation offload copies at. 0.80 is the middle of the PCIe figures (0.77-0.89), "
        "the two directions running at once as forward and backward copies of a pipeline's "
        "micro-batches do; GH200's device-to-host copy reaches only 0.66.")
    loss_bytes_per_logit: float = _a(
        4.0, "bytes", "Megatron-Core tensor_parallel/cross_entropy.py "
        "(_VocabParallelCrossEntropy: exp and softmax gradient written in place on the fp32 "
        "logits)", "spec",
        "What the loss holds per logit at its peak in 16-bit training when the framework "
        "does not say (data/frameworks.csv loss_bytes_per_logit): one fp32 copy of the "
        "logits, which Megatron's vocabulary-parallel cross-entropy works on in place.")
    final_norm_bytes_per_element: float = _a(
        2.0, "bytes", "Megatron-Core's final layer norm (TransformerEngine's fused RMSNorm/"
        "LayerNorm keeps its 16-bit input and per-row statistics); the output layer "
        "(ColumnParallelLinear) keeps its sequence shard and re-gathers it in the backward "
        "(tensor_parallel/layers.py, LinearWithGradAccumulationAndAsyncCommunication)", "spec",
        "Bytes per element of its input the final norm keeps for its backward when the "
        "framework does not say (data/frameworks.csv final_norm_bytes); see "
        "memory.head_bytes.")
    fused_loss_bytes_per_logit: float = _a(
        4.0, "bytes", "derived: a fused softmax cross-entropy keeps the 16-bit logits for its "
        "backward and writes their 16-bit gradient in one kernel (torch.compile of the loss in "
        "torchtitan bbb1b616e, 2025-04: 'reduction of memory'); cf. the eager loss's 12",
        "estimate",
        "What a fused or compiled loss holds per logit at its peak (--fused-loss): the bf16 "
        "logits and their bf16 gradient, 2 + 2 bytes; per-row statistics are negligible.")
    output_imbalance_caveat_fraction: float = _a(
        0.03, "fraction", "traincost calibration: leave-one-out MAPE about 4% "
        "(calibration.METRICS['loo_mape_pct'])",
        "estimate",
        "An estimate with an uneven pipeline split carries a caveat when its last stage, which "
        "computes the output layer whole, has at least this much more work than the average "
        "stage (workload.last_stage_excess), pointing at --balanced-pipeline. Below the "
        "model's own out-of-sample error the loss is not worth a line.")
    long_context_rank_tokens: float = _a(
        16384.0, "tokens", "NVIDIA NeMo's long-sequence page (data/published_runs.csv "
        "nemo-longseq-*): on H100 its 4K and 8K rows land within 4% of the model, its 16K row "
        "(16,384 tokens a rank) 20.8% fast and every longer one 34-55% fast; torchtitan's 32K "
        "run without context parallelism 17% fast", "estimate",
        "An estimate whose context-parallel rank holds at least this many tokens of a "
        "sequence (seq_len / cp) carries the long-context caveat, and its interval draws "
        "from the long-context runs' errors (traincost.uncertainty.error_class): from "
        "there, published runs ran slower than the model predicts (issue 21).")
    memory_headroom_fraction: float = _a(
        0.10, "fraction", "Rajbhandari et al. 2020 (ZeRO) Sec. 3.2 (fragmentation: out-of-memory "
        "with over 30% of memory still free in extreme cases); PyTorch CUDA semantics notes "
        "(caching allocator, expandable_segments)", "estimate",
        "Share of device memory a search keeps free beyond the modelled peak: allocator "
        "fragmentation, transient buffers (bucketed gradients, gathered weights) and kernel "
        "workspaces. traincost.search treats a layout as fitting only below (1 - this) of HBM "
        "and warns when a layout uses more.")
    why_lose_excess_fraction: float = _a(
        0.05, "fraction", "traincost calibration: leave-one-out MAPE about 4% "
        "(calibration.METRICS['loo_mape_pct'])", "estimate",
        "explore.why_others_lose names a one-knob variant of the best layout as losing to its "
        "pipeline bubble (or its exposed communication) only when that part exceeds the best "
        "layout's by more than this share: a smaller difference is within the model's own "
        "out-of-sample error and does not explain a loss.")

    # --- activations ---------------------------------------------------------------------
    sequence_parallel: bool = _a(
        True, "flag", "Korthikanti et al. 2022 (arXiv:2205.05198) Sec. 4.2.2", "estimate",
        "Megatron-LM runs tensor parallelism with sequence parallelism by default since 2022; "
        "it divides all stored activations by t.")

    flash_causal_work_fraction: float = _a(
        0.5, "fraction", "Dao 2023, FlashAttention-2 (arXiv:2307.08691) Sec. 3.1.1 (causal "
        "masking skips the blocks above the diagonal)", "estimate",
        "Share of the full s x s attention-core work a fused causal kernel executes: the "
        "blocks strictly above the diagonal are skipped, half the square for s much larger "
        "than the block size. Materialised attention computes the whole square.")
    flash_backward_forward_ratio: float = _a(
        2.5, "ratio", "Dao 2023, FlashAttention-2 (arXiv:2307.08691) Algorithm 2: the "
        "backward pass runs five s x s matmuls (S = QK^T again, dV, dP, dQ, dK) to the "
        "forward's two", "estimate",
        "Backward-to-forward work of a fused attention core, which recomputes the scores "
        "instead of storing them (2 for an unfused core, whose backward runs four).")
    unmeasured_attention_matmul_fraction: float = _a(
        0.65, "fraction", "data/accelerators.csv, the devices with both a fused-attention and "
        "a matmul-ceiling measurement, each at its faster kernel: A100 SXM/PCIe "
        "FlashAttention-2 189/271.2 and 176.2/252.9 = 0.697, H100/H800/H200 cuDNN "
        "514.0/794.5 = 0.647, B200 cuDNN 1083.7/1745 = 0.621, GB200 1131.5/1822 = 0.621; "
        "median of the eight devices 0.647 (traincost.catalog.measured_attention_fractions)",
        "estimate",
        "Rate of a fused (flash) attention core over the 16-bit matmul ceiling (MAMF) on a device with no "
        "fused-attention measurement (Gaudi, TPU, AMD in the catalog). Every measured device's "
        "best fused kernel runs well below its GEMM ceiling (the softmax, the online rescaling "
        "and the causal diagonal blocks are not matmuls); taking the in-model matmul rate "
        "instead made such a core faster than any measured kernel. Borrowed, not measured on "
        "those devices.")
    triton_attention_flash2_fraction: float = _a(
        0.43, "fraction", "Dao 2023, FlashAttention-2 (arXiv:2307.08691) Fig. 4d, A100 80GB "
        "SXM4, causal, head dim 128, forward + backward (the bar labels of "
        "Dao-AILab/flash-attention assets/flash2_a100_fwd_bwd_benchmark.png): FlashAttention "
        "Triton 68, 74, 78, 80 TFLOP/s against FlashAttention-2 155, 173, 182, 189 at 2k-16k "
        "tokens = 0.44, 0.43, 0.43, 0.42 (head dim 64: 0.56-0.47); FlashAttention-1, which "
        "Tri Dao finds his Triton kernel slightly slower than, 0.44-0.45 of it. llm-foundry's "
        "benchmarks ran it: attn_impl 'triton', the default of "
        "scripts/train/benchmarking/submit_benchmarks.py at 9fa3ceb9, b2a43a14 and 5e85bd62, "
        "which sweep.sh does not override", "estimate",
        "Rate of the 2022-2023 Triton FlashAttention kernel (attention kernel 'triton') over "
        "FlashAttention-2's on the same device, at head dim 128 (most of the models that ran "
        "it). Measured on A100 only; on H100 borrowed: the kernel, like FlashAttention-2, runs "
        "Ampere's tensor-core instructions there.")
    attention_half_rate_kv_tokens: float = _a(
        250.0, "tokens", "Dao 2023, FlashAttention-2 (arXiv:2307.08691) Fig. 4c/4d: A100 80GB "
        "SXM4, causal, forward + backward, sequence 512 to 16k at 16k tokens per batch; "
        "head dim 64 (88, 119, 140, 156, 165, 171 TFLOP/s, the figure's text layer) gives "
        "L0 = 252, head dim 128 (99, 133, 155, 173, 182, 189, the bar labels of "
        "Dao-AILab/flash-attention assets/flash2_a100_fwd_bwd_benchmark.png) L0 = 242 "
        "(least squares of rate_max L/(L + L0) over the six bars). "
        "Shah et al. 2024, FlashAttention-3 (arXiv:2407.08608) Fig. 5d, H100 causal forward: "
        "FlashAttention-2 L0 = 204, cuDNN 192, FlashAttention-3 304", "estimate",
        "L0 in rate(L) = rate_max * L/(L + L0), L the keys per query row a fused attention "
        "call processes (s/2 causal): the fixed cost of each block of query rows against "
        "the keys streamed past it. From each sweep's 512 and 16k ends; 250 reproduces the "
        "A100 head-dim-64 sweep within 1.5% from its 16k point alone.")
    flash_stats_bytes_per_head: float = _a(
        4.0, "bytes", "Dao et al. 2022, FlashAttention (arXiv:2205.14135) Algorithm 2 / "
        "FlashAttention-2 Algorithm 1: the forward saves the log-sum-exp per query row, fp32",
        "estimate", "Activation bytes per token and head a fused attention kernel keeps for "
        "its backward instead of the s x s scores.")

    # --- compute efficiency --------------------------------------------------------------
    in_model_matmul_fraction: float = _a(
        0.75, "fraction", "prior; Narayanan et al. SC21 (arXiv:2104.04473) Fig. 6-7 show "
        "transformer-layer GEMM throughput well below isolated-GEMM maxima", "estimate",
        "Fraction of the accelerator's maximum achievable matmul FLOP/s (MAMF) that a whole "
        "layer's GEMMs reach, backward and attention included; a fused attention kernel keeps "
        "the same share of its own isolated rate (data/accelerators.csv attention_*: like MAMF, "
        "a kernel timed alone), so both run at the in-step share one fit finds. Calibrated in "
        "the accuracy issue.")
    fp8_matmul_fraction: float = _a(
        1.0, "fraction", "prior: fp8 GEMMs keep the bf16 in-model share of their (lower, "
        "measured) fp8 MAMF ceiling; calibrated on NVIDIA's paired BF16/FP8 NeMo benchmarks "
        "(github.com/NVIDIA/dgxc-benchmarking, same layouts, H100), where FP8 runs 1.34-1.53x "
        "faster than BF16, not the ~1.7x the two ceilings alone give", "estimate",
        "Share of the in-model matmul efficiency fp8 GEMMs keep relative to bf16 ones: the "
        "quantisation work an fp8 recipe adds around each GEMM (casts, transposes, scaling "
        "factors) and its shorter GEMMs. Applies to every GEMM of an fp8 run. Calibrated in the "
        "accuracy issue.")
    default_mamf_fraction: float = _a(
        0.80, "fraction", "stas00/ml-engineering compute/accelerator/README.md MAMF tables "
        "v2 (A100 SXM 271.2/312, A100 PCIe 252.9/312, H100 SXM 794.5/989, B200 1745/2250, "
        "GB200 1822/2500, Gaudi 3 1243/1677)", "measured",
        "Used only where data/accelerators.csv has no measured MAMF: the middle of the "
        "measured MAMF/peak ratios of NVIDIA and Intel parts (0.73-0.87).")
    elementwise_traffic_factor: float = _a(
        2.0, "dimensionless", "Korthikanti et al. 2022 Sec. 4.1 (34*s*b*h bytes of activations "
        "per layer)", "estimate",
        "Element-wise work (norms, activation functions, dropout, residuals, softmax) moves "
        "about twice the bytes it stores (one read, one write); it is HBM-bound.")
    eager_rmsnorm_passes: float = _a(
        16.0, "16-bit elements moved / element", "PyTorch torchtitan torchtitan/models/norms.py "
        "RMSNorm (x * rsqrt(x.pow(2).mean(-1) + eps) on x.float(), then type_as and the weight; "
        "train_configs/llama3_8b.toml norm_type rmsnorm, compile false); Meta's Llama reference "
        "model.py the same", "estimate",
        "What one RMSNorm moves beyond a fused kernel's one read and one write, counted per "
        "eager kernel in 16-bit units (an fp32 element counts 2): x.float() 1+2, pow 2+2, mean "
        "2, x * rsqrt 2+2, type_as 2+1, * weight 1+1 = 18, less the fused 2. A Llama-style "
        "block runs two. Applies to eager element-wise work only "
        "(performance.eager_elementwise_passes).")
    eager_rope_passes: float = _a(
        8.0, "16-bit elements moved / element", "PyTorch torchtitan torchtitan/models/llama/"
        "model.py apply_rotary_emb (view_as_complex of xq.float() and xk.float(), a complex "
        "multiply, view_as_real, type_as); Meta's Llama reference model.py the same",
        "estimate",
        "What the eager rotary embedding moves per element of the queries and keys beyond a "
        "fused kernel's read and write: float() 1+2, the complex multiply 2+2, type_as 2+1 = "
        "10, less 2.")
    eager_swiglu_passes: float = _a(
        2.0, "16-bit elements moved / element", "PyTorch torchtitan torchtitan/models/llama/"
        "model.py FeedForward.forward (w2(F.silu(w1(x)) * w3(x)))", "estimate",
        "What the eager SwiGLU moves per element of the MLP's inner width f beyond a fused "
        "kernel's (read both halves, write the product: 3): silu 1+1 then the product 2+1 = "
        "5, less 3.")

    # --- communication -------------------------------------------------------------------
    scaleup_comm_efficiency: float = _a(
        0.75, "fraction", "NVIDIA nccl-tests on DGX A100: all-reduce bus bandwidth ~230 GB/s "
        "of 300 GB/s NVLink (stas00/ml-engineering network benchmarks)", "estimate",
        "Achieved bus bandwidth as a fraction of the one-direction link bandwidth.")
    reference_allreduce_busbw_fraction: float = _a(
        230 / 300, "fraction", "NVIDIA nccl-tests on DGX A100: all-reduce bus bandwidth ~230 "
        "GB/s of 300 GB/s NVLink (stas00/ml-engineering network benchmarks)", "measured",
        "The microbenchmark fraction of the devices whose runs fit scaleup_comm_efficiency "
        "(0.753 fitted against 0.767 measured: training reaches what nccl-tests does). A device "
        "with its own measured fraction (data/accelerators.csv allreduce_busbw_fraction) "
        "scales the fitted efficiency by its fraction over this one.")
    scaleout_comm_efficiency: float = _a(
        0.80, "fraction", "nccl-tests multi-node InfiniBand results (stas00/ml-engineering "
        "network/README.md)", "estimate",
        "Achieved bus bandwidth as a fraction of the NIC line rate per device.")
    scaleup_latency_s: float = _a(
        5e-6, "s", "NCCL latency per ring step on NVLink (nccl-tests small-message times)",
        "estimate", "Latency per ring step inside the scale-up domain.")
    scaleout_latency_s: float = _a(
        1.5e-5, "s", "NCCL latency per ring step across InfiniBand (nccl-tests small-message "
        "times)", "estimate", "Latency per ring step across the scale-out network.")
    site_link_oversubscription: float = _a(
        2.8, "ratio", "Si et al. (Meta) 2025, 'Collective Communication for 100k+ GPUs' "
        "(NCCLX, arXiv:2510.20171) Sec. 2, as quoted in stored research notes: Llama 4's "
        "buildings are meshed at 'the same over-subscription ratio as cross-AI-Zone traffic "
        "(1:2.8)'; Llama 3 (arXiv:2407.21783 Sec. 3.3.1) ran 1:7 between pods of one "
        "building", "reported",
        "Where no link is given (--site-link-gbps), the sites are buildings of one campus "
        "joined as Meta joins its buildings: a site's devices x their scale-out bandwidth / "
        "this ratio, each direction.")
    site_link_latency_s: float = _a(
        1.5e-4, "s", "NCCLX (arXiv:2510.20171) Fig. 1 tiers as quoted in stored research "
        "notes: 5 us in a rack, 35 us in an AI zone, 75-150 us across zones and buildings; "
        "light in fibre adds 4.9-5.0 us per km (MapYourTech, 'The 5-microsecond rule'; "
        "NVIDIA's long-haul NeMo blog: 'often 20 milliseconds or more' between regions)",
        "reported",
        "One-way latency between two sites where none is given (--site-link-latency-ms): "
        "the cross-building end of Meta's tiers.")
    site_link_comm_efficiency: float = _a(
        0.80, "fraction", "no collective benchmark over a data-centre interconnect was found; "
        "the nccl-tests multi-node prior of the scale-out fabric (stas00/ml-engineering "
        "network/README.md), not its fitted value, which also absorbs in-node effects the "
        "ring model leaves out", "estimate", "Achieved fraction of a site-pair link's "
        "bandwidth in the cross-site exchange.")
    tp_overlap_fraction: float = _a(
        0.0, "fraction", "Narayanan et al. SC21 Sec. 3.3: tensor-parallel all-reduces sit on "
        "the critical path", "estimate",
        "Fraction of tensor-parallel communication hidden behind compute.")
    stack_overlap_window_fraction: float = _a(
        1.0, "fraction", "Jiang et al. 2024, MegaScale (arXiv:2402.15627) Sec. 3.2: "
        "all-gather/reduce-scatter fused into the MLP GEMMs in chunks, asynchronous "
        "pipeline send/receive", "estimate",
        "Share of the compute window usable to hide communication when the software stack "
        "overlaps it (Workload.overlap): chunked fusion can hide up to the whole window; "
        "SM contention between the kernels is not modelled.")
    cp_overlap_fraction: float = _a(
        0.8, "fraction", "Megatron-LM context parallelism docs (ring attention overlaps KV "
        "exchange with attention compute)", "estimate",
        "Fraction of context-parallel KV exchange hidden behind attention compute.")
    ep_overlap_fraction: float = _a(
        0.0, "fraction", "DeepSeek-V3 report Sec. 3.2.1 needed custom DualPipe to hide "
        "all-to-all; default frameworks expose it", "estimate",
        "Fraction of expert-parallel all-to-all hidden behind compute when the stack does "
        "not overlap it (Workload.overlap without 'ep').")
    ep_overlap_comm_sm_fraction: float = _a(
        20 / 132, "fraction", "DeepSeek-AI 2024, DeepSeek-V3 Technical Report "
        "(arXiv:2412.19437) Sec. 3.5.1: 'we allocate 20 out of the 132 SMs available in the "
        "H800 GPU for this purpose', which 'will limit the computational throughput'; Sec. "
        "3.2.2: 'only 20 SMs are sufficient to fully utilize the bandwidths of IB and "
        "NVLink'", "reported",
        "Share of the SMs an overlapping stack (Workload.overlap 'ep') gives the expert "
        "all-to-all kernels; the compute of every micro-batch runs on the rest, 1/(1 - f) "
        "times slower, while the all-to-all hides behind it. Taken as proportional: "
        "memory-bound kernels lose less than their SM share, so this is an upper bound.")
    overlap_compute_slowdown: float = _a(
        0.189, "fraction", "Lee et al. 2025, 'Characterizing Compute-Communication Overlap in "
        "GPU-Accelerated Distributed Deep Learning: Performance and Power Implications' "
        "(arXiv:2507.03114), abstract: 'overlapping computation and communication can result "
        "in an average computational slowdown of 18.9%, with a maximum of 40.0% slowdown', "
        "GPT and Llama layers on four A100, H100, MI250 and MI210; PyTorch PR #179937 "
        "(2026-04): 'NCCL collectives use SMs, which makes matmuls that are overlapped by them "
        "30-40% slower' (8 H100, NVLink)", "reported",
        "How much slower compute runs while a collective it hides runs beside it (the "
        "collective's kernels hold SMs and share the HBM): hidden communication of t_h costs "
        "the step t_h s/(1 + s) (traincost.performance.overlap_contention). The measured "
        "average, not fitted; the expert all-to-all of a stack that overlaps it has its own "
        "SM share (ep_overlap_comm_sm_fraction).")
    zero3_prefetch_overlap_fraction: float = _a(
        1.0, "fraction", "PyTorch FSDP notes, 'FSDP Prefetch Nuances' (docs.pytorch.org/docs/"
        "stable/notes/fsdp.html): layer i+1's all-gather, issued on a separate stream, "
        "overlaps layer i's compute, only the first all-gather cannot; DeepSpeed ZeRO-3 "
        "prefetches parameters the same way (stage3_prefetch_bucket_size)", "estimate",
        "Share of a pass's compute that ZeRO-3/FSDP weight all-gathers can hide behind.")
    dp_overlap_fraction: float = _a(
        0.0, "fraction", "Megatron-LM as in SC21 (arXiv:2104.04473) and MegaScale's baseline "
        "(arXiv:2402.15627 Sec. 3.2) reduces gradients after the backward pass; an "
        "overlapping stack is Workload.overlap 'dp'. Fitted to the throughput set from a 0.5 "
        "prior (PyTorch DDP's bucketed overlap, Li et al. VLDB 2020) it went to its bound 0 "
        "(calibration of 2026-11-30), so it is fixed, not fitted", "estimate",
        "Fraction of the last micro-batch's backward time that data-parallel gradient "
        "traffic hides behind when the stack does not overlap it (ZeRO-3 weight gathers: "
        "zero3_prefetch_overlap_fraction).")

    # --- stragglers ----------------------------------------------------------------------
    straggler_device_fraction: float = _a(
        1.0 - 0.995 ** (1.0 / 8.0), "fraction of devices", "Jiang et al. NSDI'24 "
        "(MegaScale, arXiv:2402.15627) Sec. 5.1: 'a minor fraction of machines "
        "(approximately 0.5%) exhibit substantially slower performance during training ... "
        "The training efficiency is predominantly determined by the slowest machine's "
        "performance'; 8 GPUs per machine", "reported",
        "Chance that a device sits in a slow machine: 1 - 0.995^(1/8) per GPU, so a job of "
        "n devices holds at least one straggler with probability 1 - (1 - f)^n (15% of "
        "256-GPU jobs, all of the 12,288-GPU ones). Measured on MegaScale's cluster; others "
        "may differ.")
    straggler_forward_slowdown: float = _a(
        0.10, "fraction", "Jiang et al. NSDI'24 (MegaScale) Sec. 6.3: 'specific hosts took "
        "approximately 10% more time to execute the same forward computations compared to "
        "other ranks'", "reported",
        "Extra time a straggler takes for forward work (and the recompute forward). Its "
        "pipeline stage sets the pace of every micro-batch of its replica, and synchronous "
        "training waits for that replica, so the step pays this share of the forward work "
        "times the chance that the job has a straggler. At 10,000+ GPUs that is 2-3% of the "
        "step, more than the ~0.7 MFU points MegaScale gained by removing the slow hosts it "
        "found; the same section's other waits for the slowest rank (garbage collection, "
        "fluctuating PyTorch operations) are not counted separately. Not fitted: with it, "
        "the 5-fold error of the throughput fit fell from 4.2% (worst 10.9%) to 3.7% (worst "
        "9.5%) on the same 70 cases and split, and every source's held-out error fell.")

    # --- reliability ---------------------------------------------------------------------
    operations_goodput_fraction: float = _a(
        0.9, "fraction", "Jiang et al. NSDI'24 (MegaScale) Sec. 6: effective training time "
        "ratio >90%; Llama 3 Herd of Models (arXiv:2407.21783) Sec. 3.3.4: >90% on 16,384 "
        "H100s; BLOOM on 384 A100s: 118.24 days (Luccioni et al. 2023 Table 1) for 366B tokens "
        "at a measured 104.7 s per 2048 x 2048-token step (tr11 README), 0.89-0.91 with its "
        "batch ramp-up (data/published_runs.csv bloom-176b)", "reported",
        "Share of the wall clock a run's operations leave to training at any scale "
        "(evaluation pauses, checkpoint saves, loss-spike rollbacks, maintenance): a 384-GPU "
        "and a 16,384-GPU run both kept about 90%. The goodput is the lower of it and what "
        "interruptions leave (traincost.performance.goodput).")
    interruption_rate_per_device_s: float = _a(
        466 / (16384 * 54 * SECONDS_PER_DAY), "1/s per device", "Dubey et al. 2024, The "
        "Llama 3 Herd of Models (arXiv:2407.21783) Sec. 3.3.4 and Table 5: 466 job "
        "interruptions (47 planned, 419 unexpected) in a 54-day snapshot of Llama 3 405B pre-training on "
        "16,384 H100 GPUs", "reported",
        "Job interruptions per device and second of training: 466 / (16,384 x 54 days) = "
        "21.9 per million device-hours, one per 2.8 h at that scale. A first run on a "
        "research cluster sees about six times more (OPT-175B: one per 7.5 h on 992 A100s, "
        "134 per million device-hours; data/input_ranges.csv interruption-rate-first-run).")
    interruption_lost_s: float = _a(
        (1 / 0.9 - 1) * 54 * SECONDS_PER_DAY / 466, "s", "derived from Dubey et al. 2024 "
        "(arXiv:2407.21783) Sec. 3.3.4: 'higher than 90% effective training time' over the "
        "466 interruptions of its 54 days", "estimate",
        "Wall clock each interruption costs (finding the fault, restarting, reloading the "
        "checkpoint, redoing the steps since it): (1/0.9 - 1) x 54 days / 466 = 18.5 min, "
        "the cost at which interruptions alone would leave Llama 3's 90% at its rate and "
        "scale (an upper bound: the paper says 'higher than', and other losses share the "
        "10%). Interruptions then take more than operations_goodput_fraction leaves past "
        "16,384 devices: 32,768 keep 82% (traincost.performance.goodput).")

    # --- power ---------------------------------------------------------------------------
    compute_power_fraction: float = _a(
        0.85, "fraction", "Cottier et al. 2024 (arXiv:2405.21015) assume 75% of TDP on "
        "average; Newkirk et al. 2025 (arXiv:2506.14551) measure an 8xH100 node at ~76% "
        "of its rating", "estimate",
        "Share of the (max - idle) power range a device draws while it runs dense compute.")
    wait_power_fraction: float = _a(
        0.68, "fraction", "derived from Fernandez et al. TMLR 2025: 128->2048 GPUs cut "
        "throughput per GPU 37% but power per GPU only 6%. An effective value, not the draw "
        "of a GPU that only waits: measured blocked waits sit near idle (the Perseus "
        "authors' Zeus/lowtime defaults for a GPU blocked in an NCCL receive, 70-75.5 W on "
        "A100, 0.03-0.05 of the range; a CUDA context adds 26-50 W over bare idle, Vadari "
        "arXiv:2605.23918), so the 6% says the GPUs at 2,048 still partly computed (slower "
        "kernels, overlapped collectives, 1 s power averaging). The eight measured power "
        "runs agree with it: 7.8% MAPE, against 9.7% at 0.2 and 10.1% at 0.1 "
        "(`traincost validate --family power`)", "estimate",
        "Share of the (max - idle) range drawn over the part of a step the model counts as "
        "not computing (exposed communication and the pipeline bubble), as whole-run power "
        "measurements see it.")
    host_power_fraction_of_tdp: float = _a(
        0.30, "fraction", "DGX-1 V100 3.5 kW and DGX A100 6.5 kW max system power vs 8 x "
        "GPU TDP (NVIDIA datasheets); Newkirk et al. 2025", "estimate",
        "Host CPUs, DRAM, NICs, fans and switches per device, averaged over a run, as a "
        "fraction of the device's TDP (their maximum share is 0.45-1.0 TDP).")
    power_cap_clock_exponent: float = _a(
        0.24, "-", "two dies measured at two power limits each, stas00/ml-engineering "
        "Maximum Achievable Matmul FLOPS table v2 (data/accelerators.csv mamf_source): GA100, "
        "A100 PCIe 300 W 252.9 vs A100 SXM 400 W 271.2 TFLOP/s, ln(252.9/271.2)/ln(300/400) "
        "= 0.243; Blackwell, B200 1000 W 1745 vs GB200 1200 W 1822 TFLOP/s, "
        "ln(1745/1822)/ln(1000/1200) = 0.237; their mean", "estimate",
        "A power limit below the rated maximum lowers the clock at which matmul and fused "
        "attention run: their rate scales as (cap / TDP)^exponent. Memory-bound work and "
        "communication are left as they are (HBM and links are not clocked down).")
    power_cap_measured_min_fraction: float = _a(
        0.75, "fraction", "the lowest cap / TDP behind power_cap_clock_exponent: A100 PCIe "
        "300 W against the same die's 400 W", "measured",
        "Below this share of the rated maximum the power-cap clock law is an extrapolation, "
        "and an estimate says so.")

    # --- carbon and money ----------------------------------------------------------------
    server_host_embodied_kgco2e: float = _a(
        578.0, "kgCO2e/accelerator", "median of four sourced host shares of an 8-accelerator "
        "server (everything but the accelerators, per accelerator): BLOOM's 2,500 kg / 8 = 313 "
        "(Luccioni et al. 2023), a TPU v6e host 3,550 / 8 = 444 and an AWS p5.48xlarge 5,700 / 8 "
        "= 713 and a DGX reference server 6,000 / 8 = 750 (EcoLogits methodology, after "
        "Schneider et al. 2025 and BoaviztAPI)", "estimate",
        "Server-basis embodied carbon of a device with a chip figure and no server one: chip "
        "+ this share (range 313-750).")
    embodied_lifetime_years: float = _a(
        4.0, "years", "Luccioni et al. 2023 (JMLR, BLOOM) and Morrison et al. 2025 amortise "
        "server embodied emissions over 4 years", "reported",
        "Service life over which a device's embodied carbon is spread.")
    ownership_lifetime_years: float = _a(
        4.0, "years", "Cottier et al. 2024 Sec. 2 amortise hardware over its useful life",
        "estimate", "Years over which an owned device's purchase price is depreciated.")
    ownership_system_overhead_fraction: float = _a(
        0.44, "fraction of the accelerators' price", "Cottier et al. 2024 (arXiv:2405.21015) "
        "abstract: of the amortized hardware and energy cost of frontier runs, server "
        "components 15-22%, cluster-level interconnect 9-13%, energy 2-6%, the accelerator "
        "chips the rest; at the midpoints (18.5 + 11) / (100 - 18.5 - 11 - 4) = 0.44 (range "
        "(15 + 9) / 74 = 0.32 to (22 + 13) / 59 = 0.59)", "estimate",
        "What owning devices costs beyond their chips' price (the servers' CPUs, memory, "
        "boards, power supplies and the cluster's network), as a share of the chips' price.")
    facility_capex_usd_per_w: float = _a(
        11.7, "USD/W of critical (IT) load", "Cushman & Wakefield, Data Center Development "
        "Cost Guide 2025 (US), 'Construction costs by market': the cost to develop one MW of "
        "critical load across 19 US markets, average $11.7 million (San Antonio $9.3 million "
        "to Reno $15.0 million); construction only (land, owner-furnished equipment, design "
        "and soft costs excluded)", "reported",
        "What building the data centre costs per watt of the IT power it is built to deliver; "
        "the ownership model charges the run its device-hours' share of it.")
    facility_lifetime_years: float = _a(
        20.0, "years", "DuPont Fabros Technology 10-K 2013 (SEC EDGAR CIK 1407739, note 'Real "
        "Estate Assets'): a wholesale data-centre operator depreciates power distribution "
        "units, HVAC and security systems over 20 years, UPS and chiller pumps over 25, "
        "switchgear, transformers and chilled-water pipes over 30, the building over 40", "estimate",
        "Years over which the building is depreciated: the power and cooling equipment's 20 "
        "years, the shortest of the lives above, for the critical-capacity build-out that is "
        "53% of a data centre's development cost (Cushman & Wakefield 2025).")
    electricity_usd_per_kwh: float = _a(
        0.08, "USD/kWh", "US EIA Electric Power Monthly, average industrial retail price "
        "2023-2024 (~8 cents/kWh)", "reported",
        "Electricity price for the ownership cost model when none is given.")
    default_pue_operator: str = _a(
        "industry-average", "id in data/pue.csv", "Uptime Institute Global Data Center "
        "Survey", "reported",
        "PUE when no operator or cloud region says otherwise: the conservative survey mean.")

    # --- validation against published runs (used only where a source is silent) ---------
    validation_default_devices: int = _a(
        2048, "devices", "Touvron et al. 2023 (LLaMA, arXiv:2302.13971) Sec. 2.4: 2048 "
        "A100-80GB for the 65B model", "reported",
        "Device count assumed for a published run that reports device-hours but not its "
        "device count; device-hours depend on it only through communication and bubble.")
    validation_default_batch_tokens: float = _a(
        4194304.0, "tokens", "Touvron et al. 2023 (LLaMA) Sec. 2.3 and Llama 2 (arXiv:2307.09288) "
        "Sec. 2.2: global batch of '4M tokens', which is 2^22: 2048 sequences of 2048 (LLaMA) "
        "and 1024 of 4096 (Llama 2)", "reported",
        "Tokens per optimizer step assumed for a published run that does not state its batch. "
        "A power of two, as those batches are: 4.0e6 tokens of 8192 gave 488 sequences, which "
        "only data-parallel degrees dividing 488 = 8 x 61 could split, and forced an 8B model "
        "onto tp 8 x pp 16.")


#: the sourced priors, before any fit
PRIOR = Assumptions()


def _calibrated(prior: Assumptions) -> Assumptions:
    """The priors with the constants fitted by :mod:`traincost.calibrate` applied."""
    try:
        from .calibration import CONSTANTS
    except ImportError:                      # no fit generated yet: the priors stand
        return prior
    return replace(prior, **CONSTANTS)


#: what every estimate uses unless told otherwise: priors + fitted constants
DEFAULT = _calibrated(PRIOR)


def describe(assumptions: Assumptions = DEFAULT) -> pd.DataFrame:
    """All assumptions as a table: value, unit, status, source and rationale.

    Parameters
    ----------
    assumptions : Assumptions
        The set to describe. [-]

    Returns
    -------
    pandas.DataFrame indexed by assumption name.
    """
    import pandas as pd
    try:
        from .calibration import CONSTANTS, DATA_VERSION, FIT_DATE
    except ImportError:
        CONSTANTS, DATA_VERSION, FIT_DATE = {}, "", ""
    rows = []
    for f in fields(assumptions):
        row = {"name": f.name, "value": getattr(assumptions, f.name), **f.metadata,
               "prior": getattr(PRIOR, f.name)}
        if f.name in CONSTANTS and row["value"] == CONSTANTS[f.name]:
            row["status"] = "fitted"
            row["source"] = (f"fitted by traincost.calibrate on {FIT_DATE} to "
                             f"data/published_runs.csv ({DATA_VERSION}); prior from "
                             f"{f.metadata['source']}")
        rows.append(row)
    return pd.DataFrame(rows).set_index("name")


def with_overrides(assumptions: Assumptions = DEFAULT, **overrides) -> Assumptions:
    """A copy of ``assumptions`` with some fields replaced (names are checked)."""
    known = {f.name for f in fields(assumptions)}
    unknown = sorted(set(overrides) - known)
    if unknown:
        raise ValueError(f"unknown assumption(s) {unknown}; allowed: {sorted(known)}")
    return replace(assumptions, **overrides)
