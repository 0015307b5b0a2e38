"""The refactor's guard (issue 20): the numbers do not move.

``tests/golden/`` holds tables written by ``tests/golden/make_golden.py`` at commit
4a52c2f, before the architecture work started: a 6,000-row sweep over every accelerator,
dense and MoE presets, every stack knob and precision (fitting, non-fitting and rule-breaking
layouts), 16 searched estimates and ``traincost validate --json``. Each is recomputed here
and must agree to float round-off (relative 1e-9). Outputs added later (new keys) are
allowed; a golden key that disappears or changes is not.

Bug fixes that move numbers regenerate the table in their own commit, named here:
- fp8 on devices whose fp8 peak equals their bf16 peak (TPU v5p and v6e, Gaudi 3): the 135
  such valid sweep rows, and only they, run 0-17% faster (test_stack's
  test_fp8_is_never_slower_than_bf16).
- ownership in full (issue 24): an owned device's purchase is its chips' price and the
  servers and network around them (assumptions.ownership_system_overhead_fraction, Cottier
  et al. 2024's shares); the 227 valid sweep rows priced as owned, and only they, change
  their cost_usd. The same regeneration adds the columns of this session (water,
  step_cross_site_comm_s) and the validation's five MLPerf LoRA power cases.
- goodput from interruptions (issue 21): no sweep row or searched estimate moves (each runs
  at most 16,384 devices, where the operations' 90% stays the lower share); validate.json
  moves only for LLaMA 65B, whose "21 days" and GPU-hours the paper derives from its
  380 tokens/s per GPU (time_basis compute_only: its five figures).
- measured fp8 matmul ceilings for MI300X (Azure's hipBLASLt sweep, 1159.5 TFLOP/s) and
  MI325X (AMD's, 1519): the 88 valid fp8 sweep rows on those two devices, and only they,
  run slower (the bf16 ratio times the fp8 peak had put both ceilings above every fp8 GEMM
  measured on them). The same regeneration adds the goodput column and key, and the
  validation's eight new Gaudi 2 and LUMI MI250X cases.
- Megatron-DeepSpeed on Intel fitted (issue 21: MLPerf's three Gaudi 2 GPT-3 logs join
  Intel's page, 6 runs in 4 documents; factor 1.018): the 374 valid sweep rows on Gaudi 2
  and Gaudi 3 (their framework unstated, so the family's one fitted stack, as on TPUs)
  run 0.2% slower to 1.7% faster, estimate[6] (Mixtral 8x7B on 64 Gaudi 2) 49.59 -> 48.79 s,
  and the validation's Intel cases move with it. The same regeneration adds the
  grid_factor column and the grid_profile key (issue 24).
- the building in the ownership cost (issue 24: $11.7 per watt of critical load over 20
  years, Cushman & Wakefield 2025): the 227 valid sweep rows priced as owned, and only they,
  cost 4.3-9.3% more (median 5.3%); no estimate and no validation figure moves.
- prices and die values where sources were found (issue 24): rental prices for V100, L4,
  L40S, MI300X, GB200, Gaudi 2/3 and TPU v5e/v5p/v6e (now read, not recalled), purchase
  prices for 14 more devices, LLMCarbon die values for A100, L4, L40S, MI250X and Gaudi 2:
  only cost_usd (1,235 sweep rows, rented on the seven newly priced devices) and
  embodied_co2e_t (1,290) move, each from null to a number, and in the estimates only those
  keys; no time, energy or validation figure moves. The input rows are kept (make_golden.py
  now draws them only with --new-inputs). The same regeneration adds the sources.price key.
- the mesh scale-up domain (issue 21: Gaudi 2/3 and MI300X/MI325X join a box's devices point
  to point, so a group of g of the box's D uses g - 1 of the D - 1 links; Intel's Network
  Configuration page): the 583 valid sweep rows on those four devices, and only they, move
  (step time -9.2% to +105%, median +1.1%: small tensor-, data- or expert-parallel groups
  slower, Gaudi's other rows faster with Megatron-DeepSpeed on Intel refitted from 1.018 to
  1.124), estimate[6] (Mixtral 8x7B on 64 Gaudi 2) 48.79 -> 44.74 s, and the validation's
  Gaudi cases with them.
- torchtitan's 405B 1F1B row read as stated (issue 21: vpp 1 and torchtitan's default of one
  micro-batch per pipeline stage, micro-batch 4; searched before): torchtitan on NVIDIA
  refits 0.862 -> 0.882; no sweep row moves (the sweep runs no torchtitan row), the
  validation's torchtitan cases and the estimates' accuracy notes do.
- torchtitan's memory habits (issue 21: its 'op' selective policy, eager fp32 loss and
  FSDP2's gathered units, data/frameworks.csv; seven rows that state the op policy now say
  selective): torchtitan on NVIDIA refits 0.882 -> 0.868; no sweep row moves (no framework
  column: the unspecified stack keeps Megatron's habits), only the validation's 24
  torchtitan cases (memory MAPE 64.1 -> 16.0%) and the estimates' accuracy notes do. The
  same regeneration adds the memory part ``gathered``. --fused-loss (the stack key) moves the
  two Trainy H200 memory cases only.
- torchtitan's async TP hides a fitted share (0.44) of the tensor-parallel traffic, not the
  whole window: torchtitan on NVIDIA refits 0.868 -> 0.907; again no sweep row moves, only
  the torchtitan validation cases and the estimates' accuracy notes.
- gradients reduced in fp32 for every precision but fp16 (Megatron-LM forces it for bf16;
  torchtitan's FSDP2 reduce dtype), SC21's runs read as the fp16 their scripts ran: the
  shared constants refit (scale-out efficiency 0.57 -> 0.96, scale-up 0.82 -> 0.75), so
  4,113 of the 4,176 valid sweep rows move (step time -40% to +78%, median +0.01%: the
  tensor-parallel-bound slower, the cross-node data-parallel-bound faster), with every
  estimate and validation figure; async TP's fitted share 0.44 -> 0.41.
- the attention core in 16 bits (issue 21): an fp8 run's Q K^T and weighted sum stay bf16
  (the fp8 recipes cast the linear layers only), and a fused kernel on a device with no
  attention measurement runs at the measured devices' median share of the matmul rate
  (assumptions.unmeasured_attention_matmul_fraction, 0.65) instead of the whole of it:
  2,451 of the 4,113 valid sweep rows move (step time -5.9% to +52%, median +1.6%), the
  unmeasured devices' rows and the fp8 materialized ones on measured NVIDIA devices (the
  few faster ones on Gaudi, where Megatron-DeepSpeed on Intel refits 1.151 -> 1.226 and
  MaxText on Google 1.660 -> 1.676); estimates 4-7, 11, 15 (TPU v5p, MI300X, Gaudi 2, V100,
  L40S, Trainium 2) with them, and the validation's non-NVIDIA cases.
- LoRA's frozen MLP keeps no inputs for weight gradients (TransformerEngine saves a linear
  layer's input only when its weight takes a gradient): no sweep row or estimate runs LoRA,
  so only the validation's B200 LoRA power case moves (its searched layout now fits with
  selective recompute and ZeRO-3 instead of full recompute: 1,170.5 -> 1,170.1 W).
- Megatron on AMD fitted (issue 21: MLPerf Training v5.0 and v5.1's Llama 2 70B LoRA on
  8 MI325X join LUMI's five MI250X runs, 7 runs in 3 documents; factor 0.849, where it
  borrowed the reference's 1): the 520 valid sweep rows on MI250X, MI300X and MI325X (their
  framework unstated, so the family's one fitted stack, as on TPUs and Gaudi) run 2.0%
  faster to 17.7% slower (median +14%), estimate[5] (MI300X) 4.08 -> 4.76 s, and the
  validation's AMD cases with them (plus the four new LoRA rows).
- MLPerf's NVIDIA LoRA runs with their step times (tracked_stats throughput, evaluations
  excluded), NeMo stated: Dell's 64 H100 (16-bit attention) joins the fp8 stage, which
  refits 0.8320 -> 0.8322; the four runs with FP8 attention (FP8_DPA=1) are model gaps. The
  1,314 valid fp8 sweep rows (and the frameworks' factors, a hair) move by at most 0.03%,
  with estimates 3, 5, 6 and 8 and the validation.
- a fused attention kernel without a measurement runs at 0.65 of the 16-bit matmul ceiling
  (MAMF), as the measured kernels' rates are of theirs (it was 0.65 of the in-model matmul
  rate, the ceiling times the fitted GEMM efficiency and the framework's factor), and
  MI300X's kernel is measured (AMD's AITER FAv3, forward + backward 460.9 TFLOP/s at 4,096
  keys a query row): 2,429 of the 4,113 valid sweep rows move (step time -33% to +11%,
  median -0.2%; MI300X's long sequences the most), Megatron on AMD refits 0.849 -> 0.805 and
  MaxText on Google 1.676 -> 1.687; estimates 4-7, 11 and 15 with them.
- --fp8-params and --fp8-activation-input (weights held in FP8; the MLP activation's input
  kept in FP8), set on MLPerf's LoRA rows as their configs set them: no sweep row sets
  them, so only the 520 valid MI250X/MI300X/MI325X rows move, by at most 0.05% (Megatron on
  AMD refits a hair: its LoRA rows' searched ZeRO stage is now 0, as they ran), with the
  validation's LoRA cases and the stack key's two new entries.
- MaxText's v5p rows with remat_policy 'minimal' (checkpoint_dots_with_no_batch_dims: the
  attention core and element-wise ops recomputed) read as selective recompute, where the
  search had chosen full: MaxText on Google refits 1.687 -> 1.486, so the 855 valid TPU
  sweep rows (their framework unstated, the family's one fitted stack) run up to 13% slower
  (median +9.4%), estimate[4] (TPU v5p) 0.994 -> 1.092 s, with the TPU validation cases.
- --recompute-fraction (full recompute of a share of the layers; 1, every layer, by
  default: no sweep row moves for it, and every estimate's stack gains the key), set on
  MLPerf's two MI300X LoRA rows (21 of 80 layers), which then join the fit; and
  Megatron-DeepSpeed as its own framework (LUMI's, Gaudi 2's, MT-NLG's, Frontier's and
  BLOOM's rows): Megatron on AMD is now fitted on MLPerf's four MI300X/MI325X LoRA runs
  alone and refits 0.805 -> 1.207, so the 520 valid MI250X/MI300X/MI325X sweep rows (their
  framework unstated, the family's one fitted stack) run up to 33% faster (median -25%),
  estimate[5] (MI300X) 4.570 -> 3.315 s, with the AMD validation cases.
- llm-foundry's campaign dates, IBM's fms-fsdp rows, --attention-kernel triton and
  --shard-group move no sweep row (no sweep row sets either knob; the frameworks they refit
  are named by no sweep row); MaxText's 32-slice v5e run joins the fit with --shard-group
  256: MaxText on Google refits 1.486 -> 1.496, so the 855 valid TPU sweep rows run up to
  0.66% faster (median -0.49%), estimate[4] (TPU v5p) with them.
- DeepSpeed's runs (the 2022 Azure post's 175B bars; DeepCompile's 2025 H100 ZeRO-3 and FSDP
  runs, model gaps) move no sweep row; the estimates' accuracy lines count the new A100 runs.
- memory beside torchtitan's measured peaks (issue 21): what the final norm and the output
  layer keep outside the blocks (memory.head_bytes; Megatron's default 4/t bytes per element
  of the micro-batch's b s h) raises 1,086 sweep rows' memory by up to 1.5% and the searched
  estimates' by 0.01-0.5 GiB; the in-flight cap (a stage holds at most the step's m
  micro-batches, memory.microbatches_in_flight) lowers the interleaved rows whose m falls
  short of min(m, p) (1 + (p - 1)/(p v)) by up to 30%; 5 more sweep rows fit. No step time moves; the estimates'
  accuracy lines follow the refit (torchtitan 0.917 -> 0.937).
- ZeRO-3's unsharded weights at what the all-gather delivers (1 B a parameter where it
  gathers fp8): no sweep row or searched estimate moves (none gathers fp8 under ZeRO-3);
  validate.json's torchtitan fp8-gather memory figures do.
- the estimates' accuracy line names what its second figure covers (the reference stack's
  runs) and adds the headline, leave-one-source-out over every fitted run (the 2026-12-02
  walk-through read "3.7% over all 67" against notebook 07's 170 runs): text only.
- eager element-wise work (issue 21: --elementwise; torchtitan, PyTorch FSDP, DeepSpeed and
  llm-foundry run eager unless a run states torch.compile): a Llama-style block's RMSNorm,
  rotary embedding and SwiGLU move more bytes, counted op by op. No sweep row or searched
  estimate moves (none names one of those frameworks); torchtitan refits 0.937 -> 0.955 and
  PyTorch FSDP 0.966 -> 1.051, with validate.json's PyTorch-stack cases and torchtitan's
  two new torch.compile rows, and the estimates' accuracy lines.
- torchtitan's H100 rows on the part they ran on, Meta's Grand Teton H100 (96GB HBM2e at
  2.4 TB/s; data/accelerators.csv h100-sxm5-96gb, after the contract's ids): no sweep row
  or searched estimate moves (the sweep's inputs were drawn before the row existed);
  torchtitan refits 0.955 -> 0.984, with validate.json's torchtitan cases (the two 8B
  long-context runs now fit) and the estimates' accuracy lines.
- a measured all-reduce fraction of the scale-up line rate (Intel's hccl_demo on a Gaudi 3
  box, 0.977, borrowed by Gaudi 2: same network at 100 Gb/s) scales the fitted scale-up
  efficiency by its ratio to A100's nccl-tests 0.767: the 374 valid Gaudi 2 and Gaudi 3
  sweep rows, and only they, move (step time -21% to +7.5%, median +0.7%: the tensor- and
  data-parallel-bound faster, the compute-bound slower as Megatron-DeepSpeed on Intel
  refits 1.226 -> 1.137), estimate[6] (Mixtral 8x7B on 64 Gaudi 2) 45.67 -> 47.39 s, with
  the validation's Gaudi cases.
- torchtitan's eight async-TP rows read overlap tp,dp (async TP adds to the FSDP prefetch
  torchtitan always runs; 'tp' alone had dropped it) and async TP's fitted share refits
  0.41 -> 0.34: no sweep row or searched estimate moves; torchtitan refits 0.984 -> 0.978,
  with validate.json's torchtitan cases (the 405B Float8 run on 128 H100 -24.3% -> -13.8%).
- torchtitan's op policy gathers each pass's sequence-parallel input again to recompute
  (its save list keeps reduce_scatter_tensor, not all_gather_into_tensor): half an
  all-reduce more per pass under selective recompute with the odd-matmuls policy. No sweep
  row or searched estimate moves (none runs that policy); async TP's share refits 0.34 ->
  0.32, torchtitan 0.978 -> 0.986, with validate.json's torchtitan cases.
- the output layer as the stacks run it (issue 21): in an fp8 run at the 16-bit rate
  (Megatron-Core's output layer is a plain ColumnParallelLinear outside TransformerEngine's
  autocast; torchtitan's float8 converter skips "output"), and on an even pipeline split
  whole on the last stage, whose pace a 1F1B pipeline runs at (it had been spread over the
  stages; a balanced split now evens the output layer's work out, max(L_stage, (L + out)/p)
  layers' work; DeepSeek-V3's row reads balanced, DualPipe's split). The shared constants
  refit (in-model GEMM share 0.730 -> 0.765, element-wise traffic 1.94 -> 2.35, fp8 share
  0.832 -> 0.850) and every framework factor with them, so all 4,113 valid sweep rows move
  (step time -36% to +105%, median +1.4%: the largest rises small models with large
  vocabularies on several stages, the falls balanced splits whose output layer outweighs a
  layer); no memory moves. Every estimate moves (DeepSeek-V3 on 2,048 H800, searched with
  an even split, 6.19 -> 8.26 s; the others -4.0% to +1.2%), with validate.json.
- Intel's 1.19.0 page rows (Llama 2 7B and 13B, Llama 3.1 8B and 70B on Gaudi 2) take the
  layouts of Habana's Megatron-DeepSpeed README for that release and join Megatron-DeepSpeed
  on Intel (10 runs, 5 documents; searched layouts before): the factor refits 1.110 ->
  1.041, so the 374 valid Gaudi 2 and Gaudi 3 sweep rows, and only they, run 0.6% faster to
  6.3% slower (median +4.0%), estimate[6] (Mixtral 8x7B on 64 Gaudi 2) 47.24 -> 49.11 s,
  with the validation's Gaudi cases.
- selective recompute that checkpoints the attention call whatever its kernel
  (data/frameworks.csv selective_recompute attention-call: Megatron-Core's Attention,
  Habana's FusedSDPA in Megatron-DeepSpeed), so a fused core's forward runs again in the
  backward: no sweep row names a framework (the unspecified stack keeps attention-core), so
  only Megatron-DeepSpeed on Intel's refit (1.041 -> 1.077) moves the 374 valid Gaudi 2
  and Gaudi 3 rows (-3.2% to +0.3%, median -2.1%), estimate[6] 49.11 -> 48.10 s, with the
  validation's Megatron and Gaudi cases.
- activation offload (recompute "offload", issue 21): the sweep and the estimates gain an
  output column each (offloaded_gib_per_device, 0 for every layout here: offload is never
  searched; the estimates' host_memory_gib_per_device); no number moves.
- torchtitan's 4D Llama 3.1 405B rows read as the caption states them (1F1B, local batch 8
  split into pipeline-degree micro-batches: vpp 1, micro-batch 1, global batch 64 and 8):
  the 32k row leaves the model gaps and joins torchtitan's fit (0.963 -> 0.965), so the
  validation's torchtitan cases move (about +0.2%) and an estimate's accuracy note (H100
  leave-one-out 4.66 -> 4.65%); no sweep row names torchtitan, none moves.
- MaxText's 128-GPU A3 run read as hybrid sharding (shard_group 8: FSDP inside each VM,
  data parallel across the 16): only its validation case moves (+43.8% -> +5.7%, full
  recompute chosen where selective no longer fits), with the throughput family's summary.
- twelve TPU v6e runs of Google's Trillium MaxText recipes (issue 21) give TPU v6e, which has
  no measured matmul ceiling, a MaxText factor of its own (maxtext on tpu-v6e 1.115; the
  family's stays 1.441): the 172 valid TPU v6e sweep rows, and only they, run 0.1-25.7%
  slower (median 16.4%); the validation gains the twelve cases and its summaries move, and
  so does each estimate's accuracy note (leave-one-source-out 6.6% over 31 documents ->
  7.4% over 33).
- NeMo's long-sequence page joins (17 rows; its H100 4K and 8K rows fitted, the other 15
  model gaps): the fp8 stage refits 0.84995 -> 0.84947, so the 1,314 sweep rows that run
  fp8 GEMMs or a framework refitted with it move by at most 0.055% (median -0.016%), with
  the estimates and the validation's summaries; each estimate's accuracy note reads 7.3%
  over 34 documents.
- NVIDIA's twelve Grok-1 314B benchmarks join as model gaps (a new preset, grok1-314b-nemo):
  no sweep row or estimate moves; the validation gains the cases and its model-gap summary
  moves. The MoE caveat now quotes them (estimate[3]'s text changes; no number moves).
- NVIDIA's twenty-two MaxText 70B benchmarks on H100 give MaxText on NVIDIA a factor of its
  own (1.28): no sweep row names a framework, none moves; the estimates' accuracy notes
  follow LOSO (7.5% over 37 documents) and H100's 16-bit leave-one-out (6.9% over 25 runs ->
  7.4% over 38, worst 27.6%, MaxText's A3 run), and the validation gains the cases.
- the interval pools take a step-time miss as the throughput miss it is (its log error's
  sign turned): no golden number moves (the tables hold no range of the model's error).
- validate's throughput summary averages a step time's miss as the rate's (+ where the model
  is fast): its two mean signed errors move (+1.10 -> +1.38%, model gaps +20.1 -> +28.1%),
  nothing else.
- NVIDIA's NeMo 25.04 Nemotron-4 runs on H100 join (the 15B's two fitted, the 340B's two model
  gaps): the shared constants refit (in-model matmul 0.7645 -> 0.7647, scale-up 0.760 ->
  0.751, scale-out 0.980 -> 0.993, element-wise traffic 2.350 -> 2.340, fp8 0.8495 -> 0.8511),
  so 4,113 of the 4,176 valid sweep rows move by at most 1.4% (median -0.05%), with the
  estimates and the validation.
- NeMo 24.07's performance summary joins (twelve H100 FP8 runs of NVIDIA's NeMo Launcher
  recipes, four new presets; the Nemotron-4 340B row a model gap with its DGX Cloud twins):
  the fp8 stage refits 0.8511 -> 0.8703 and the frameworks fitted with it follow, so the
  1,314 sweep rows that run fp8 GEMMs or such a framework move by -2.0% to +2.2% (median
  +0.6%), with the estimates and the validation; no bf16 constant moves.
- Megatron-Bridge's ten runs join (nine Llama FP8 runs on H100, B200 and GB200 fitted; a
  Qwen3-30B-A3B preset and run, a model gap), and the expert all-to-all sends each in-domain
  peer's share over the scale-up links and the rest over the rank's NIC, both at once
  (comm.all_to_all_link; before, every byte went over the NIC): the 1,353 sweep rows that
  run such a group or fp8 GEMMs move by -33.4% to +0.1% (median -0.05%; the MoE rows
  whose expert group spans domains with several ranks in each, by up to -33% where the
  scale-up link is PCIe), with the estimates and the validation (DeepSeek-V3's
  device-hours -2.0% -> -3.3%).
- --expert-tp joins the stack (default 0, tp): no sweep number moves; each estimate's stack
  gains the key, the MoE caveat quotes the Qwen3 runs, and the validation gains
  Megatron-Bridge's two Qwen3-235B-A22B runs at expert_tp 1 (model gaps).
- --recompute offload takes a share of the layers (--recompute-fraction), and Megatron-Bridge
  26.04.01's GB200 Llama 3 70B run (40 of 80 layers offloaded) joins the fp8 fit: the fp8
  share 0.8692 -> 0.8710 and five framework factors by under 0.3% move 1,314 sweep rows by
  -0.19% to +0.20%, with 7 estimates and the validation.
- A third Trillium recipe campaign (2025-03-21: Llama 2 70B on 256, Mistral 7B on 8 TPU v6e,
  with a mistral-7b preset) joins: MaxText's v6e factor 1.1147 -> 1.1180 moves the 172 TPU
  v6e sweep rows by -0.27% to 0.00%; every estimate's accuracy line (6.5% over 42
  documents) and the validation follow.
- The TPU family's MaxText factor pools every TPU's MaxText runs, those of devices with a
  factor of their own included, and tpu-recipes' v5p Llama 3.1 405B joins (v5p's own
  factor 1.41): the family's 1.442 -> 1.301 moves the TPU v3, v4 and v5e sweep rows by up
  to +10.4% (683 rows with v5p's), one TPU estimate's speed, every estimate's accuracy
  line and the validation.
- --attention-window joins the workload (no preset in the sweep has one: nothing moves by
  it); the Trillium recipes' Gemma 3 12B (a gemma3-12b preset) joins: the TPU family's
  factor 1.301 -> 1.295 and v6e's 1.118 -> 1.117 move the 663 TPU v3/v4/v5e/v6e sweep rows
  by under +0.42%, with the estimates' accuracy lines and the validation.
- MaxText's DeepSeek-V3 on 512 TPU v5p joins as a model gap: the validation gains the case,
  the MoE caveat quotes it (the estimates whose caveats name MoE change text only); so do
  its two Llama 4 Scout runs (a llama4-scout preset).
- MaxText's A3 runs take Google Cloud's A3 High links (published_runs' new scaleout_gbps,
  125 Gb/s a GPU) and the README's 2-8 VM rows join: MaxText on NVIDIA 1.267 -> 1.259;
  the sweep is content-identical (it runs no MaxText on NVIDIA); the estimates' H100
  16-bit accuracy lines and the validation move.
- MaxText's selective recompute is its 'minimal' policy (memory.SELECTIVE_POLICIES
  matmul-outputs: the weight matmuls' outputs kept, the attention call and element-wise
  ops rerun), the v5e/v5p README runs overlap their tensor-parallel collectives, the A3
  runs take minimal_flash and MaxText's own FLOP count, and JAX-Toolbox's MaxText 7B joins:
  the TPU family's factor 1.295 -> 1.259 and v5p's 1.412 -> 1.318 move 746 TPU sweep rows,
  the 683 with a step time by 0 to +6.7%, with the estimates' accuracy lines and the
  validation.
- The Trillium/v5p recipes' Llama 4 Maverick (a llama4-maverick preset) joins as a model
  gap: the validation gains the case and the MoE caveat quotes it; sweep content-identical.
- NVIDIA JAX-Toolbox's Paxml GPT-3 runs join under a new framework, paxml, which borrows
  the reference factor: validated, not fitted; the validation gains them, nothing else moves.
- MaxText's grouped expert GEMMs visit whole 512-row megablox tiles (frameworks.csv
  grouped_gemm_tile_rows): its four TPU MoE runs (kept out of the fit) predict slower, no
  fitted number moves, the sweep is content-identical (it runs no MaxText MoE) and the MoE
  caveat's text follows.
- A fused attention kernel runs at the in-model share the GEMMs keep of their isolated
  ceiling (in_model_matmul_fraction, now 0.771), since its measured rate is a kernel timed
  alone as MAMF is: the whole fit moves (scale-up efficiency 0.751 -> 0.691, fp8 share
  0.871 -> 0.902) and every one of the 4,113 sweep rows with a step time, -7.0% to +20.5%
  (median +1.0%), the long sequences most; the estimates and the validation with them.
- An interleaved pipeline (vpp > 1) needs at least pp micro-batches a replica (Megatron-Core's
  schedules.py; Megatron-LM's older schedule needed a multiple of pp): 200 sweep rows that
  interleaved fewer become invalid (190 had a step time); the searched estimates evaluate
  fewer layouts and pick the same ones; no published run moves.
- DeepSpeed's pipeline engine does not interleave (frameworks.csv vpp 1 for deepspeed and
  megatron-deepspeed): BLOOM-176B, searched at vpp 2 before, runs 1F1B (step +3.8%) and
  DeepSpeed's 1T Azure bar takes another layout; the validation moves with them, nothing
  fitted does and the sweep (no framework) is content-identical.
- OLMo-core's README throughput rows (ten, four versions) join under the olmo-core framework
  with presets of their own, predicted first (+10% to +60%): the framework gets a factor
  (0.72); the reference constants do not move; the estimates' accuracy lines (H100 16-bit
  43 -> 48 runs) and the validation follow; sweep content-identical.
- Communication hidden behind compute costs what it slows that compute by: compute runs
  18.9% slower beside a collective (assumptions.overlap_compute_slowdown, Lee et al. 2025),
  so hidden tensor-, context- and pipeline-parallel exchanges, ZeRO-3 gathers and overlapped
  gradient reductions add t s/(1 + s) of their time t. The whole fit moves (in-model share
  0.771 -> 0.792, scale-up efficiency 0.691 -> 0.592, fp8 share 0.902 -> 0.928) and every
  one of the 3,923 sweep rows with a step time, -5.1% to +39.7% (median +1.8%), the
  communication-heavy layouts most; the estimates and the validation with them.
- Frameworks that sync every micro-batch's gradients under ZeRO-3 (frameworks.csv
  grad_sync_every_microbatch: OLMo-core, torchtitan, llm-foundry's Composer, Megatron-FSDP,
  DeepSpeed) reduce-scatter in each backward pass, not once a step: their runs with several
  micro-batches move, the refit moves the shared constants a little (fp8 share 0.9280 ->
  0.9286) and with them 1,258 sweep rows by at most 0.07% (the sweep names no framework);
  the estimates and the validation follow.
- BigScience's tr11 layout sweep (ten rows, 2022-02-28) and BLOOM's reshaping log (seven,
  2022-07-05) join under megatron-deepspeed, predicted first (12.0% MAPE, all fast), with
  the cluster's Omni-Path network (scaleout_gbps 50) and the embedding-aware split that the
  bloom-176b row now records too; a balanced split may have layers + 2 stages (PP 72 over
  70 blocks). Megatron-DeepSpeed on NVIDIA gets a factor (0.857); the reference constants
  do not move; the estimates' accuracy lines (A100 80GB 16-bit 70 -> 87 runs, 49 -> 51
  documents) and the validation follow; sweep content-identical.
- The sweep's fp16 days (25 rows, 2022-02-25 and 02-26), predicted first (12.2%): the
  factor refits 0.857 -> 0.896 over 42 runs; the estimates' accuracy lines (A100 80GB
  16-bit 87 -> 112 runs, 51 -> 53 documents) and the validation follow; sweep
  content-identical.
- A framework's fixed time per layer per micro-batch (frameworks.csv layer_overhead; the
  new step part layer_overhead, a column the sweep gains), fitted with its factor where
  its host drives each layer (Megatron-DeepSpeed, torchtitan, OLMo-core, PyTorch FSDP,
  llm-foundry; not the reference, not XLA): the reference constants do not move; of the
  sweep only the 359 valid Gaudi 2 and Gaudi 3 rows change (their framework unstated, so
  Intel's one fitted stack, Megatron-DeepSpeed: factor 1.087 -> 1.282 and 1.3 ms a
  layer), 0.87x to 4.2x in step time, the small models at one sequence a micro-batch
  most; the estimates and the validation follow.
- PaLM 540B's two TPU v4 pods join as a published run over two sites (published_runs.csv
  sites, site_link_gbps, cross_site, read by validate.case_inputs and the calibration):
  the validation gains its row (predicted first, +5.9%), no fit moves (it has no framework
  of its own); the ZeRO-3 caveat counts a site's sharding group, not all the replicas;
  sweep and estimates content-identical.
- The Olmo 3 report's two pretraining runs (7B on 512 H100, 32B on 1,024; presets olmo3-7b,
  olmo3-32b), predicted first (-12.0% and -4.8%), join OLMo-core's fit (factor 1.281 ->
  1.344, past the ceiling that caps it either way; 7.1 -> 6.9 ms a layer): the estimates'
  accuracy lines (H100 16-bit 48 -> 50 runs, 53 -> 54 documents) and the validation follow;
  sweep content-identical.
- The framework caveat says a factor is capped where the model caps it
  (performance.framework_matmul_fraction: the measured ceiling, else the peak), no longer
  wherever factor x share passes 1: two searched estimates' caveat text changes (TPU v5p's
  no longer says capped); no number moves.
"""

from __future__ import annotations

import json
import math
import pathlib
import sys

import numpy as np
import pandas as pd
import pytest

GOLDEN = pathlib.Path(__file__).parent / "golden"
sys.path.insert(0, str(GOLDEN))
import make_golden  # noqa: E402

RTOL = 1e-9


def _same(path: str, want, got, bad: list) -> None:
    """Collect the paths where ``got`` differs from ``want`` (numbers to RTOL)."""
    if isinstance(want, dict):
        if not isinstance(got, dict):
            bad.append(f"{path}: {got!r} is not an object")
            return
        for k, v in want.items():
            if k not in got:
                bad.append(f"{path}.{k}: missing")
            else:
                _same(f"{path}.{k}", v, got[k], bad)
    elif isinstance(want, list):
        if not isinstance(got, list) or len(got) != len(want):
            bad.append(f"{path}: {got!r} is not a list of {len(want)}")
            return
        for i, (w, g) in enumerate(zip(want, got)):
            _same(f"{path}[{i}]", w, g, bad)
    elif isinstance(want, bool) or want is None or isinstance(want, str):
        if want != got:
            bad.append(f"{path}: {got!r} != {want!r}")
    elif isinstance(want, (int, float)):
        if not isinstance(got, (int, float)) or isinstance(got, bool):
            bad.append(f"{path}: {got!r} is not a number")
        elif math.isnan(want) != math.isnan(got) or not (
                math.isnan(want) or math.isclose(got, want, rel_tol=RTOL, abs_tol=1e-300)):
            bad.append(f"{path}: {got!r} != {want!r}")
    else:                                              # pragma: no cover - json has no others
        bad.append(f"{path}: unexpected {type(want)}")


def test_compare_catches_a_change():
    """The comparison itself can fail: a 1e-6 change and a missing key are both caught."""
    bad = []
    _same("x", {"a": 1.0, "b": [1, "s"], "c": True}, {"a": 1.000001, "b": [1, "t"]}, bad)
    assert bad == ["x.a: 1.000001 != 1.0", "x.b[1]: 't' != 's'", "x.c: missing"]


def test_sweep_matches_golden():
    import traincost
    want = pd.read_csv(GOLDEN / "sweep.csv.gz")
    table = make_golden.read_inputs()
    got = traincost.sweep(table)
    assert len(got) == len(want)
    for col in want.columns:
        assert col in got, f"column {col} missing"
        w, g = want[col], got[col]
        if w.dtype.kind == "f" or g.dtype.kind == "f":
            w = w.to_numpy(dtype=float)
            g = pd.to_numeric(g, errors="coerce").to_numpy(dtype=float)
            np.testing.assert_allclose(g, w, rtol=RTOL, atol=0, equal_nan=True,
                                       err_msg=f"column {col}")
        elif w.dtype == bool or g.dtype == bool:
            assert (w.astype(bool).to_numpy() == g.astype(bool).to_numpy()).all(), col
        elif w.dtype.kind in "iu":
            assert (w.to_numpy() == g.to_numpy()).all(), col
        else:
            ws = w.fillna("").astype(str).to_numpy()
            gs = g.fillna("").astype(str).replace({"nan": "", "None": ""}).to_numpy()
            assert (ws == gs).all(), f"column {col}: {ws[ws != gs][:3]} vs {gs[ws != gs][:3]}"


def test_searched_estimates_match_golden():
    want = json.loads((GOLDEN / "estimates.json").read_text())
    got = make_golden.estimates()
    bad = []
    for i, (w, g) in enumerate(zip(want, got)):
        _same(f"estimate[{i}]", w["result"], json.loads(json.dumps(g, default=str)), bad)
    assert not bad, "\n".join(bad[:20])


@pytest.mark.slow
def test_validation_matches_golden():
    want = json.loads((GOLDEN / "validate.json").read_text())
    got = make_golden.validate_json()
    bad = []
    _same("validate", want, got, bad)
    assert not bad, "\n".join(bad[:20])
