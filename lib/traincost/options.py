"""The one declarative table of user inputs.

Every input a user sets (a ``traincost estimate | compare | search`` flag, a keyword of
:func:`traincost.estimate`, :func:`traincost.search` and :func:`traincost.compare`, a column
of :func:`traincost.sweep`) is declared once in :data:`INPUTS`: its name, the container it
belongs to as the physics splits the inputs (the transformer, the job, the software stack,
the parallel layout, the site), its kind, unit, allowed values, default and help text. The CLI's
flags, the API's keyword lists and signatures, the parameter lists in their docstrings and
sweep's column groups are generated from it, so a new knob is one row here plus the physics
that uses it.

>>> [o.flag for o in INPUTS if o.container == "ParallelConfig"][:3]
['--micro-batch', '--tp', '--pp']
>>> option("grid_intensity").column
'grid_gco2e_per_kwh'
"""

from __future__ import annotations

import inspect
import math
import numbers
import textwrap
from dataclasses import dataclass

import numpy as np

from . import catalog
from .assumptions import DEFAULT
from .units import MEGA, MILLI, SECONDS_PER_HOUR, SECONDS_PER_MINUTE
from .inputs import (ATTENTION_KERNELS, CROSS_SITE_MODES, ELEMENTWISE_MODES, OPTIMIZER_STATES,
                     PRECISIONS, PRICE_MODELS, RECOMPUTE_MODES)

#: the containers, as the physics splits the inputs (Calculon's application / execution /
#: system split is the model): the transformer, the job that trains it, the software stack,
#: the parallel layout, the site (grid, PUE, prices)
CONTAINERS = ("Workload", "Job", "Stack", "ParallelConfig", "System", "Site")
#: the CLI's argument groups, in help order, with their headings
GROUPS = {
    "workload": "workload",
    "stack": "software stack",
    "layout": "parallel layout (omitted knobs are searched: fastest feasible)",
    "site": "site and price",
    "system": "system what-ifs (default: the accelerator's catalog row)",
    "sites": "sites (one run over several buildings or regions)",
}


@dataclass(frozen=True)
class Option:
    """One user input.

    Parameters
    ----------
    name : str
        Keyword name; the flag is ``--name`` with dashes. [-]
    group : str
        CLI argument group, a key of :data:`GROUPS`. [-]
    container : str
        Where the value lives, one of :data:`CONTAINERS`. [-]
    kind : str
        ``int``, ``float`` (finite, > 0 on the CLI), ``bool`` (a flag that turns it on),
        ``choice`` (one of ``choices``) or ``str``. [-]
    unit : str
        Unit of the value, ``-`` for none. [-]
    help : str
        One line of help (the CLI's and the docstring's). [-]
    choices : tuple
        Allowed values of a ``choice`` (or of an ``int`` with a closed set). [-]
    default : object
        The keyword's default; None means "the preset's, the catalog's or searched". [-]
    column : str
        The :func:`traincost.sweep` column, where it differs from ``name``. [-]
    metavar : str
        The CLI's placeholder for the value. [-]
    required : bool
        Required on the CLI. [-]
    minimum, maximum : float
        Allowed range of a number, both ends included (None: no bound). [unit]
    """

    name: str
    group: str
    container: str
    kind: str
    unit: str
    help: str
    choices: tuple = ()
    default: object = None
    column: str = ""
    metavar: str | None = None
    required: bool = False
    minimum: float | None = None
    maximum: float | None = None

    def __post_init__(self):
        if self.group not in GROUPS:
            raise ValueError(f"group: {self.group!r} is not one of {', '.join(GROUPS)}")
        if self.container not in CONTAINERS:
            raise ValueError(f"container: {self.container!r} is not one of "
                             f"{', '.join(CONTAINERS)}")
        if self.kind not in ("int", "float", "bool", "choice", "str"):
            raise ValueError(f"kind: {self.kind!r} is not int, float, bool, choice or str")
        if not self.column:
            object.__setattr__(self, "column", self.name)

    @property
    def flag(self) -> str:
        """The CLI flag, ``--name`` with dashes."""
        return "--" + self.name.replace("_", "-")


def _o(name, group, container, kind, unit, help, **kw) -> Option:
    if kind == "int" and "choices" not in kw:
        kw.setdefault("minimum", 1)
        kw.setdefault("maximum", MAX_COUNT)
    return Option(name, group, container, kind, unit, help, **kw)


#: the largest count an integer input may take unless its row says otherwise (devices, batch,
#: sequence, a parallel size): 2**24 = 16,777,216, beyond any cluster or context built (the
#: largest reported training clusters hold about 10**5 accelerators, the longest contexts
#: about 10**7 tokens)
MAX_COUNT = 2**24
#: bounds on the architecture, 16-32x beyond the largest published models (126 layers,
#: Llama 3.1 405B; hidden 18,432, Nemotron-4 340B; MLP 53,248, Llama 3.1 405B; 256
#: experts, DeepSeek-V3; 256,000 tokens of vocabulary, Nemotron-4), so that parameter
#: counts (up to experts x layers x 3 h f) stay exact in 64-bit integers
MAX_LAYERS, MAX_HIDDEN, MAX_FFN, MAX_EXPERTS, MAX_VOCAB = 2**12, 2**17, 2**19, 2**11, 2**22
#: the most training tokens a job may take: 10**17, a thousand times the largest corpora
#: reported (about 10**14 tokens)
MAX_TOKENS = 1e17


#: every user input, in CLI help order
INPUTS = (
    # the transformer
    _o("model", "workload", "Workload", "str", "-",
       "model preset id (see `traincost catalog models`)"),
    _o("layers", "workload", "Workload", "int", "-", "transformer layers L",
       maximum=MAX_LAYERS),
    _o("hidden", "workload", "Workload", "int", "-", "hidden size h", maximum=MAX_HIDDEN),
    _o("heads", "workload", "Workload", "int", "-", "attention heads a", maximum=MAX_HIDDEN),
    _o("kv_heads", "workload", "Workload", "int", "-", "key/value heads (GQA); default = heads",
       maximum=MAX_HIDDEN),
    _o("head_dim", "workload", "Workload", "int", "-",
       "attention head size d where heads x d differs from hidden (Gemma, MaxText's "
       "synthetic models); default hidden / heads, or the preset's", maximum=MAX_HIDDEN),
    _o("attention_window", "workload", "Workload", "int", "tokens",
       "sliding-window attention: the keys before it a query attends to (Mistral 7B 4096, "
       "Gemma 3's local layers 1024); default 0, none, or the preset's", minimum=0,
       maximum=MAX_COUNT),
    _o("window_layers", "workload", "Workload", "int", "-",
       "how many layers attend within --attention-window (Gemma 3 12B: 40 of 48); default "
       "0, all of them", minimum=0, maximum=MAX_LAYERS),
    _o("ffn_hidden", "workload", "Workload", "int", "-", "MLP inner size; default 4h",
       maximum=MAX_FFN),
    _o("vocab", "workload", "Workload", "int", "-", "vocabulary size (default 51200)",
       maximum=MAX_VOCAB),
    _o("gated_mlp", "workload", "Workload", "bool", "-",
       "SwiGLU MLP (Llama-style, no biases, untied embeddings)"),
    _o("experts", "workload", "Workload", "int", "-", "routed experts (MoE; 0: dense)",
       minimum=0, maximum=MAX_EXPERTS),
    _o("top_k", "workload", "Workload", "int", "-", "experts per token (MoE)", minimum=0,
       maximum=MAX_EXPERTS),
    # the job
    _o("seq_len", "workload", "Job", "int", "tokens",
       "sequence length s (default: the preset's)"),
    _o("global_batch", "workload", "Job", "int", "sequences", "sequences per optimizer step B",
       required=True),
    _o("tokens", "workload", "Job", "float", "tokens",
       "training tokens (default: the preset's reported count, else 300e9)", minimum=1,
       maximum=MAX_TOKENS),
    _o("start", "site", "Job", "str", "date",
       "date the training starts, YYYY-MM-DD: the grid's carbon intensity follows the "
       "months the run spans (Ember's monthly shape for the region's country, on its annual "
       "figure); default: the annual average", metavar="YYYY-MM-DD"),
    # the software stack
    _o("attention_kernel", "stack", "Stack", "choice", "-",
       "auto (default): the faster fused kernel measured on the device, as TransformerEngine "
       "picks it (cuDNN on Hopper and Blackwell, flash elsewhere); flash (FlashAttention-2); "
       "cuDNN's fused attention; triton (the 2022-2023 Triton FlashAttention, llm-foundry's "
       "attn_impl triton: 0.43 of FlashAttention-2's rate); or the materialized softmax of "
       "2019-2021 stacks",
       choices=ATTENTION_KERNELS),
    _o("parallel_block", "stack", "Stack", "bool", "-",
       "parallel attention + MLP block (GPT-J, PaLM, MegaScale)"),
    _o("overlap", "stack", "Stack", "str", "-",
       "communication overlapped with compute: comma-separated subset of tp,pp,dp,ep, or "
       "none; it names every kind overlapped, replacing the framework's default (the FSDP "
       "and ZeRO-3 frameworks: dp; async TP in torchtitan: tp,dp); default: the "
       "framework's, else none", metavar="KINDS"),
    _o("fp8_activations", "stack", "Stack", "bool", "-",
       "DeepSeek-V3's FP8 activation recipe (with --precision fp8): norm outputs and MLA "
       "up-projections recomputed, FP8 GEMM inputs cached in FP8, the MoE SwiGLU output "
       "recomputed"),
    _o("balanced_pipeline", "stack", "Stack", "bool", "-",
       "count the embedding and the loss as one layer each in the pipeline split (Llama 3; "
       "Megatron-Core --account-for-*-in-pipeline-split), so the stages share the output "
       "layer's work; without it the last stage computes the output layer beside its layers"),
    _o("optimizer_state", "stack", "Stack", "choice", "-",
       "Adam state: fp32 (default: fp32 master weights, momentum and variance, "
       f"{DEFAULT.optimizer_bytes_per_param:g} B/param) or bf16 (bf16 momentum and variance, "
       f"no fp32 master, {DEFAULT.optimizer_bf16_bytes_per_param:g} B/param; NeMo "
       "distributed_fused_adam with dtype bf16)", choices=OPTIMIZER_STATES),
    _o("lora", "stack", "Stack", "bool", "-",
       "LoRA fine-tuning: the base weights frozen (no weight gradients, gradient exchange "
       "or optimizer state for them), only low-rank adapters train (their own small work "
       "left out)"),
    _o("fused_loss", "stack", "Stack", "bool", "-",
       "the loss as fused or compiled kernels over the 16-bit logits (torch.compile of the "
       "loss, Megatron-Core's cross-entropy fusion): "
       f"{DEFAULT.fused_loss_bytes_per_logit:g} B a logit at its peak instead of the "
       "framework's (torchtitan's eager fp32 loss: 12)"),
    _o("elementwise", "stack", "Stack", "choice", "-",
       "how norms, activations and rotary embeddings run: auto (default), the framework's "
       "way (torchtitan, PyTorch FSDP, DeepSpeed, llm-foundry: eager; the others fused); "
       "fused (torch.compile, XLA, Megatron/TransformerEngine kernels) or eager (PyTorch "
       "without a compiler: a Llama-style block's RMSNorms, rotary embedding and SwiGLU "
       "move their intermediates through memory, counted op by op)",
       choices=ELEMENTWISE_MODES),
    _o("fp8_param_gather", "stack", "Stack", "bool", "-",
       "ZeRO-3/FSDP all-gathers the weights in FP8, 1 B a parameter instead of 2 (with "
       "--precision fp8: torchtitan's enable_fsdp_float8_all_gather, Megatron-Core's "
       "--fp8-param-gather)"),
    _o("fp8_params", "stack", "Stack", "bool", "-",
       "the weights held in FP8, 1 B a parameter instead of 2, and gathered so (with "
       "--precision fp8: TransformerEngine's fp8_model_init, NeMo's fp8_params; a trained "
       "weight keeps its fp32 master in the optimizer state)"),
    _o("fp8_activation_input", "stack", "Stack", "bool", "-",
       "the MLP's activation function keeps its input in FP8 for the backward pass (with "
       "--precision fp8: Megatron-Core's activation_func_fp8_input_store)"),
    _o("recompute_fraction", "stack", "Stack", "float", "-",
       "the share of each pipeline stage's layers that full recompute covers, the others "
       "recomputing nothing (Megatron-Core --recompute-method block --recompute-num-layers "
       "k: k / (L/p); checkpointing every n-th block: 1/n), or with --recompute offload the "
       "share whose activations go to host memory (Megatron-Core cpu_offloading_num_layers "
       "k: k / L); default 1, every layer; with --recompute full, offload or searched",
       maximum=1, metavar="F"),
    _o("shard_group", "stack", "Stack", "int", "devices",
       "hybrid sharding: the data-parallel ranks that shard weights, gradients and optimizer "
       "together (ZeRO 1-3), the groups all-reducing gradient shards across (PyTorch FSDP "
       "HYBRID_SHARD: 8, a node; MaxText: a TPU slice); default 0, all ranks in one group",
       minimum=0, metavar="G"),
    _o("expert_tp", "stack", "Stack", "int", "-",
       "tensor-parallel width of the routed experts (Megatron-Core "
       "--expert-tensor-parallel-size): below tp, the expert group folds over the tensor-"
       "parallel ranks the experts are not split over, so ep may exceed the data-parallel "
       "size (NVIDIA's DeepSeek-V3 and Qwen3 recipes: 1); default 0, tp", minimum=0,
       metavar="E"),
    _o("framework", "stack", "Stack", "choice", "-",
       "training framework (see `traincost catalog frameworks`): its efficiency factor, "
       "fitted on its published runs, and the defaults it implies (attention kernel, "
       "overlaps, sharding) where not given; unspecified (default): the Megatron-Core/NeMo "
       "calibration's", choices=tuple(catalog.by_id("frameworks"))),
    # the parallel layout (None: searched)
    _o("micro_batch", "layout", "ParallelConfig", "int", "sequences",
       "sequences per micro-batch b"),
    _o("tp", "layout", "ParallelConfig", "int", "-", "tensor parallel"),
    _o("pp", "layout", "ParallelConfig", "int", "-", "pipeline parallel"),
    _o("cp", "layout", "ParallelConfig", "int", "-", "context parallel"),
    _o("ep", "layout", "ParallelConfig", "int", "-",
       "expert parallel (carved out of data parallel)"),
    _o("vpp", "layout", "ParallelConfig", "int", "-", "virtual pipeline stages per device"),
    _o("zero", "layout", "ParallelConfig", "int", "-", "ZeRO stage", choices=(0, 1, 2, 3)),
    _o("recompute", "layout", "ParallelConfig", "choice", "-",
       "activation recomputation, or offload (none recomputed, activations moved to host "
       "memory and back over the host link; asked for, never searched)",
       choices=RECOMPUTE_MODES),
    _o("precision", "layout", "Stack", "choice", "-",
       "precision of the peak MFU is measured against (default bf16/fp16)",
       choices=PRECISIONS[:4]),
    # the site
    _o("region", "site", "Site", "str", "-",
       "grid region id (see `traincost catalog regions`)"),
    _o("grid_intensity", "site", "Site", "float", "gCO2e/kWh",
       "gCO2e/kWh instead of --region", column="grid_gco2e_per_kwh", minimum=0),
    _o("pue", "site", "Site", "float", "-", "power usage effectiveness (>= 1)", minimum=1),
    _o("wue", "site", "Site", "float", "L/kWh",
       "on-site water usage effectiveness, litres evaporated per kWh of IT energy (default: "
       "the operator's, data/water.csv)", column="wue_l_per_kwh", metavar="L_PER_KWH",
       minimum=0),
    _o("price_per_hour", "site", "Site", "float", "USD/h", "USD per device-hour",
       column="price_usd_per_h", minimum=0),
    _o("power_cap", "site", "System", "float", "W",
       "power limit on every device (nvidia-smi -pl), above its idle draw and at most its "
       f"TDP; slows matmuls as (cap/TDP)^{DEFAULT.power_cap_clock_exponent:g} (default: none)",
       column="power_cap_w", metavar="W", minimum=0),
    # the system's network tiers (default: the accelerator's row)
    _o("scale_up_domain", "system", "System", "int", "devices",
       "devices joined by the scale-up links (8: an HGX board, 72: an NVL72 rack, a TPU "
       "slice)", column="scaleup_domain_devices", metavar="N"),
    _o("scale_up_gbps", "system", "System", "float", "Gb/s",
       "scale-up bandwidth per device, each direction (NVLink 4: 3600)",
       column="scaleup_gbps", metavar="GBPS", minimum=0),
    _o("scale_out_gbps", "system", "System", "float", "Gb/s",
       "scale-out bandwidth per device, each direction (one 400G NIC per GPU: 400)",
       column="scaleout_gbps", metavar="GBPS", minimum=0),
    _o("oversubscription", "system", "System", "float", "-",
       "oversubscription R of the scale-out fabric, R:1 (default 1, non-blocking; Llama 3 "
       "joined the pods of a building at 7)", column="scaleout_oversubscription", metavar="R",
       minimum=1),
    # the job's reliability (default: Llama 3's, Dubey et al. 2024 Sec. 3.3.4)
    _o("interruption_rate", "system", "System", "float", "per 1e6 device-h",
       "job interruptions per million device-hours (default "
       f"{DEFAULT.interruption_rate_per_device_s * MEGA * SECONDS_PER_HOUR:.3g}, Llama 3's "
       "466 in 54 days on 16,384 H100s; OPT-175B's first run: about 134)",
       metavar="R", minimum=0),
    _o("interruption_minutes", "system", "System", "float", "min",
       "wall clock each interruption costs: restart, reload, steps redone (default "
       f"{DEFAULT.interruption_lost_s / SECONDS_PER_MINUTE:.3g}, which gives Llama 3's "
       "90 percent; OPT-175B's manual restarts: about 310)", metavar="MIN", minimum=0),
    # one run over several sites
    _o("sites", "sites", "System", "int", "-",
       "buildings or regions the devices are split over, evenly (default 1)", metavar="N"),
    _o("site_link_gbps", "sites", "System", "float", "Gb/s",
       "bandwidth between two sites, each direction, shared by a site's devices (default: "
       "buildings of one campus, a site's devices x their scale-out bandwidth / "
       f"{DEFAULT.site_link_oversubscription:g}, Meta's Llama 4 mesh)", metavar="GBPS",
       minimum=0),
    _o("site_link_latency_ms", "sites", "System", "float", "ms",
       f"one-way latency between two sites (default {DEFAULT.site_link_latency_s / MILLI:g}, "
       "across buildings; light in fibre adds about 5 per 1000 km)",
       metavar="MS", minimum=0),
    _o("site_regions", "sites", "Site", "str", "-",
       "grid region of each site, comma-separated, one per site (instead of --region)",
       metavar="R1,R2"),
    _o("cross_site", "layout", "ParallelConfig", "choice", "-",
       "with --sites: the dimension that crosses the sites, dp (the sites exchange "
       "gradients) or pp (activations cross between stages); auto (default): searched",
       choices=(*CROSS_SITE_MODES, "auto")),
    _o("sync_every", "sites", "Stack", "int", "steps",
       "relaxed synchrony (DiLoCo): the sites exchange updates every H steps, not every "
       "step (default 1); with --cross-site dp", metavar="H"),
    _o("price_model", "site", "Site", "choice", "-",
       "rental (device-hours x price, default) or ownership (amortised purchase + "
       "electricity)", choices=PRICE_MODELS, default="rental"),
)

#: the system's inputs, which estimate, search and compare take as positional arguments
#: (and the CLI declares with each subcommand's own help): checked like the others
SYSTEM = (
    _o("accelerator", "layout", "System", "str", "-", "accelerator id (see `traincost "
       "catalog accelerators`)"),
    _o("devices", "layout", "System", "int", "-", "number of devices"),
)

_BY_NAME = {o.name: o for o in INPUTS}
_CHECKED = {**_BY_NAME, **{o.name: o for o in SYSTEM}}

#: the spellings a yes/no input accepts (any case), and what they mean
BOOL_SPELLINGS = {"true": True, "yes": True, "on": True, "1": True,
                  "false": False, "no": False, "off": False, "0": False}


def parse_bool(label: str, value) -> bool:
    """A yes/no value: a bool, 0 or 1, or one of :data:`BOOL_SPELLINGS`; ValueError else.

    >>> parse_bool("gated-mlp", "No"), parse_bool("gated-mlp", 1)
    (False, True)
    """
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, numbers.Real) and not isinstance(value, bool) and value in (0, 1):
        return bool(value)
    if isinstance(value, str) and value.strip().lower() in BOOL_SPELLINGS:
        return BOOL_SPELLINGS[value.strip().lower()]
    raise ValueError(f"{label}: {value!r} is not yes or no (true/false, yes/no, on/off, 1/0)")


def check(name: str, value):
    """One given input checked against its declaration, returned as its kind (None: not
    given, kept). Raises ValueError naming the input, the value and what is allowed.

    Numbers must be numbers (not text, not booleans) and finite, whole for ``int`` inputs,
    and inside ``[minimum, maximum]``; choices one of ``choices``; yes/no inputs as
    :func:`parse_bool` reads them.

    >>> check("tp", 8.0), check("gated_mlp", "false"), check("tokens", 2e12)
    (8, False, 2000000000000.0)
    >>> check("tp", 10**20)
    Traceback (most recent call last):
    ValueError: tp: 100000000000000000000 must be at most 16,777,216
    """
    if value is None:
        return None
    o = _CHECKED[name]
    label = name.replace("_", "-")
    if o.kind == "bool":
        return parse_bool(label, value)
    if o.kind in ("int", "float"):
        return _check_number(o, label, value)
    if o.kind == "choice" and value not in o.choices:
        raise ValueError(f"{label}: {value!r} is not one of {', '.join(map(str, o.choices))}")
    if o.kind == "str" and not isinstance(value, str):
        raise ValueError(f"{label}: {value!r} is not text")
    return value


def _check_number(o: Option, label: str, value):
    whole = o.kind == "int"
    what = "a whole number" if whole else "a number"
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
        raise ValueError(f"{label}: {value!r} is not {what}")
    if not math.isfinite(value):
        raise ValueError(f"{label}: {value!r} is not a finite number")
    if whole:
        if value != int(value):
            raise ValueError(f"{label}: {value!r} is not a whole number")
        value = int(value)
    else:
        value = float(value)
    if o.choices and value not in o.choices:
        raise ValueError(f"{label}: {value!r} is not one of {', '.join(map(str, o.choices))}")
    if o.minimum is not None and value < o.minimum:
        raise ValueError(f"{label}: {value!r} must be at least {o.minimum:g}")
    if o.maximum is not None and value > o.maximum:
        raise ValueError(f"{label}: {value!r} must be at most {o.maximum:,.0f}")
    return value


def option(name: str) -> Option:
    """The declared input called ``name`` (KeyError if there is none)."""
    return _BY_NAME[name]


def names(*containers: str) -> tuple:
    """Names of the inputs in these containers (all of them when none is named), in order.

    >>> names("Job")
    ('seq_len', 'global_batch', 'tokens', 'start')
    """
    return tuple(o.name for o in INPUTS if not containers or o.container in containers)


#: the inputs that describe the job (architecture, job, stack but precision, site; not the
#: system's power cap):
#: what :func:`traincost.assemble.job_inputs` takes
JOB_INPUTS = tuple(n for n in names("Workload", "Job", "Stack", "Site") if n != "precision")
#: the layout knobs (None: searched)
LAYOUT_INPUTS = names("ParallelConfig")
#: the system's keyword inputs (the accelerator and device count are positional)
SYSTEM_INPUTS = names("System")


def defaults(selected=None) -> dict:
    """Each input's keyword default (None: the preset's, the catalog's or searched)."""
    return {o.name: o.default for o in INPUTS if selected is None or o.name in selected}


def bind(function_name: str, given: dict, allowed=None) -> dict:
    """The inputs a function was called with, every declared one present (defaults filled).

    Raises TypeError for a keyword that is not a declared input, as Python does for an
    unexpected keyword argument, and ValueError for a value its declaration does not allow
    (:func:`check`).

    >>> bind("f", {"tp": 2})["tp"], bind("f", {})["price_model"]
    (2, 'rental')
    """
    allowed = _BY_NAME if allowed is None else allowed
    unknown = [k for k in given if k not in allowed]
    if unknown:
        raise TypeError(f"{function_name}() got an unexpected keyword argument {unknown[0]!r}")
    out = defaults(allowed)
    out.update({k: check(k, v) for k, v in given.items()})
    return out


def signature(function, selected=None) -> inspect.Signature:
    """``function``'s signature with its ``**inputs`` replaced by the declared keywords.

    So ``help()``, IDEs and :func:`inspect.signature` show every keyword, each with its
    default, though the function takes them as ``**inputs``.
    """
    sig = inspect.signature(function)
    params = [p for p in sig.parameters.values() if p.kind is not inspect.Parameter.VAR_KEYWORD]
    taken = {p.name for p in params}
    declared = [inspect.Parameter(o.name, inspect.Parameter.KEYWORD_ONLY, default=o.default)
                for o in INPUTS if (selected is None or o.name in selected)
                and o.name not in taken]
    before = [p for p in params if p.kind is not inspect.Parameter.KEYWORD_ONLY]
    after = [p for p in params if p.kind is inspect.Parameter.KEYWORD_ONLY]
    return sig.replace(parameters=[*before, *declared, *after])


def parameters_doc(selected=None) -> str:
    """A numpydoc ``Parameters`` block for the declared inputs, from the table.

    >>> print(parameters_doc(["tp"]).strip())
    tp : int, optional
        tensor parallel. [-]
    """
    lines = []
    for o in INPUTS:
        if selected is not None and o.name not in selected:
            continue
        kind = {"choice": "str", "str": "str"}.get(o.kind, o.kind)
        allowed = f" One of {', '.join(map(str, o.choices))}." if o.choices else ""
        lines.append(f"{o.name} : {kind}, optional")
        lines.append(textwrap.fill(f"{o.help}.{allowed} [{o.unit}]", width=88,
                                   initial_indent="    ", subsequent_indent="    "))
    return "\n".join(lines) + "\n"


def declare(function, selected=None, after: str = "Returns"):
    """Give ``function`` (which takes ``**inputs``) the declared keywords' signature, and
    insert their parameter list into its docstring before its ``after`` section."""
    function.__signature__ = signature(function, selected)
    doc = inspect.getdoc(function) or ""
    marker = f"\n{after}\n"
    block = parameters_doc(selected)
    if marker in doc:
        head, tail = doc.split(marker, 1)
        doc = f"{head}{block}{marker}{tail}"
    function.__doc__ = doc
    return function
