"""Notebook 03: sliders for a parallel layout and the software stack; the step-time
breakdown, MFU and memory of the layout chosen.
"""

from __future__ import annotations

import html

import ipywidgets as widgets

from .. import catalog, explore, plotting
from ..assumptions import DEFAULT
from ..estimate import attention_label
from ..inputs import (ATTENTION_KERNELS, ELEMENTWISE_MODES, OPTIMIZER_STATES, OVERLAP_KINDS,
                      parse_overlap)
from .kit import (MICRO_BATCH_CHOICES, STYLE, TP_CHOICES, accelerator_dropdown, cards,
                  caveats_html, check_choice, clears, int_text, model_dropdown, png,
                  recompute_buttons, recompute_words, Refresher, selection, sig, wide,
                  zero_buttons)


def derived_dp(devices, tp, pp) -> str:
    """The data-parallel size a layout leaves, dp = devices / (tp x pp), as a sentence."""
    if not devices or devices <= 0:
        return "dp: devices must be > 0"
    group = tp * pp
    if devices % group:
        return (f"dp = devices / (tp × pp) = {devices} / ({tp} × {pp}) = "
                f"{devices / group:.3g}: not a whole number")
    return f"dp = devices / (tp × pp) = {devices} / ({tp} × {pp}) = {devices // group}"


def layout_summary_html(result: dict) -> str:
    """Headline numbers of one layout (``Estimate.to_dict()``): step, MFU, memory, bubble."""
    p = result["parallel"]
    steps = result["breakdown"]["step_time_s"]
    total = result["step_time_s"]
    waiting = 1 - steps["compute"] / total if total else float("nan")
    cells = [("Step time", f"{sig(total)} s"),
             ("MFU", f"{sig(result['mfu'] * 100)} %"),
             ("Memory per device", f"{sig(result['memory_gib_per_device'])} of "
                                   f"{sig(result['hbm_gib_per_device'])} GiB"),
             ("Waiting share of the step", f"{sig(waiting * 100)} %"),
             ("Training time", f"{sig(result['train_time_days'])} days")]
    warn = "" if result["fits_in_memory"] else (
        "<p style='color:#D55E00'><b>Does not fit in memory</b>: the memory bar passes the "
        "dashed line. Try a higher ZeRO stage, more recompute or offload, a smaller "
        "micro-batch or more tp/pp.</p>")
    return (cards(cells) +
            f"<p style='font-size:90%;color:#333'>tp {p['tp']} × pp {p['pp']} × dp {p['dp']} "
            f"(vpp {p['vpp']}), micro-batch {p['micro_batch']}, {p['num_microbatches']} "
            f"micro-batches per step, ZeRO-{p['zero']}, "
            f"{recompute_words(p['recompute'], result['offloaded_gib_per_device'])}, "
            f"{attention_label(result['stack'])} attention; "
            f"{sig(result['tokens_per_s'])} tokens/s.</p>" + warn + caveats_html(result))


def _stack_controls(attention_kernel: str, parallel_block: bool, overlap: str,
                    balanced_pipeline: bool = False, optimizer_state: str = "fp32",
                    framework: str = "unspecified", elementwise: str = "auto") -> dict:
    """Software-stack controls: attention kernel, parallel block, one box per overlap kind,
    balanced pipeline split, Adam state precision, training framework, eager or fused
    element-wise work."""
    check_choice("attention kernel", attention_kernel, ATTENTION_KERNELS)
    check_choice("element-wise ops", elementwise, ELEMENTWISE_MODES)
    check_choice("optimizer state", optimizer_state, OPTIMIZER_STATES)
    check_choice("framework", framework, tuple(catalog.frameworks().index))
    chosen = parse_overlap(overlap)
    out = {"attention_kernel": widgets.ToggleButtons(
               options=ATTENTION_KERNELS, value=attention_kernel, description="attention",
               style={**STYLE, "button_width": "100px"}),
           "parallel_block": widgets.Checkbox(value=bool(parallel_block),
                                              description="parallel attention + MLP block",
                                              indent=False)}
    for kind in OVERLAP_KINDS:
        out[f"overlap_{kind}"] = widgets.Checkbox(value=kind in chosen, indent=False,
                                                  description=f"overlap {kind} comm.")
    out["balanced_pipeline"] = widgets.Checkbox(
        value=bool(balanced_pipeline), indent=False,
        description="embedding and loss count as pipeline layers",
        layout=widgets.Layout(width="auto"))            # the whole label, not cut
    out["optimizer_state"] = widgets.ToggleButtons(
        options=OPTIMIZER_STATES, value=optimizer_state, description="Adam state",
        tooltips=["fp32 master weights, momentum and variance: "
                  f"{DEFAULT.optimizer_bytes_per_param:g} bytes per parameter",
                  "bf16 momentum and variance, no fp32 master: "
                  f"{DEFAULT.optimizer_bf16_bytes_per_param:g} bytes per parameter"],
        style={**STYLE, "button_width": "70px"})
    out["framework"] = widgets.Dropdown(
        options=list(catalog.frameworks().index), value=framework, description="framework",
        style=STYLE)
    out["elementwise"] = widgets.ToggleButtons(
        options=ELEMENTWISE_MODES, value=elementwise, description="element-wise ops",
        tooltips=["the framework's way (torchtitan, plain PyTorch FSDP, DeepSpeed, "
                  "llm-foundry: eager; the others fused)",
                  "fused kernels: torch.compile, XLA, Megatron/TransformerEngine",
                  "eager PyTorch, one kernel an operator: a Llama-style block's norms, "
                  "rotary embedding and SwiGLU move more bytes"],
        style={**STYLE, "button_width": "70px"})
    return out


def _stack_values(controls: dict) -> dict:
    """The stack keywords of :func:`traincost.estimate` from :func:`_stack_controls`."""
    return {"attention_kernel": controls["attention_kernel"].value,
            "parallel_block": controls["parallel_block"].value,
            "overlap": ",".join(k for k in OVERLAP_KINDS if controls[f"overlap_{k}"].value),
            "balanced_pipeline": controls["balanced_pipeline"].value,
            "optimizer_state": controls["optimizer_state"].value,
            "framework": controls["framework"].value,
            "elementwise": controls["elementwise"].value}


def parallelism_explorer(model: str = "llama2-70b", accelerator: str = "h100-sxm5-80gb",
                         devices: int = 64, global_batch: int = 1024, tp: int = 8,
                         pp: int = 4, vpp: int = 1, micro_batch: int = 1,
                         recompute: str = "selective", zero: int = 1,
                         attention_kernel: str = "auto", parallel_block: bool = False,
                         overlap: str = "", balanced_pipeline: bool = False,
                         optimizer_state: str = "fp32",
                         framework: str = "unspecified",
                         elementwise: str = "auto") -> widgets.VBox:
    """Sliders for a parallel layout; shows the step-time breakdown, MFU and memory.

    Parameters
    ----------
    model, accelerator : str
        Preset and accelerator ids.
    devices : int
        Devices; dp is derived as devices / (tp x pp). [-]
    global_batch : int
        Sequences per optimizer step. [sequences]
    tp, pp, vpp, micro_batch, zero : int
        Layout knobs. [-]
    recompute : str
        ``none``, ``selective`` or ``full``. [-]
    attention_kernel, parallel_block, overlap, balanced_pipeline : str, bool, str, bool
        The software stack (:class:`traincost.Stack`): ``auto`` (the device's faster
        measured fused kernel), ``flash``, ``cudnn`` or ``materialized``;
        a parallel attention + MLP block; overlapped communication, e.g. ``"tp,dp"``;
        embedding and loss counted as pipeline layers. [-]
    optimizer_state : str
        Adam state: ``fp32`` (master weights, momentum and variance, 12 bytes per
        parameter) or ``bf16`` (bf16 momentum and variance, no master copy, 4 bytes). [-]
    framework : str
        Training framework (``traincost catalog frameworks``): its fitted efficiency factor,
        or the reference's where it has too few published runs (the summary says which);
        the attention and overlap controls stay as set. [-]
    elementwise : str
        ``auto`` (the framework's way), ``fused`` or ``eager`` element-wise work
        (:class:`traincost.Stack`). [-]

    Returns
    -------
    ipywidgets.VBox
        ``controls``, ``dp`` (HTML: the derived data-parallel size), ``message`` (why a
        layout cannot run, in plain words), ``summary`` (HTML), ``chart`` (Image: step
        time and memory bars), ``result`` (``Estimate.to_dict()``), ``refresh()``.
        A layout that does not fit in memory is a result: its memory bar passes the
        HBM line and ``summary`` says so.
    """
    controls = {
        "model": model_dropdown(model),
        "accelerator": accelerator_dropdown(accelerator),
        "devices": int_text(devices, "devices"),
        "tp": selection(TP_CHOICES, tp, "tensor parallel tp"),
        "pp": widgets.IntSlider(value=pp, min=1, max=32, description="pipeline parallel pp",
                                continuous_update=False, style=STYLE, layout=wide()),
        "vpp": widgets.IntSlider(value=vpp, min=1, max=8, description="interleaving vpp",
                                 continuous_update=False, style=STYLE, layout=wide()),
        "micro_batch": selection(MICRO_BATCH_CHOICES, micro_batch, "micro-batch [seq]"),
        "zero": zero_buttons(zero),
        "recompute": recompute_buttons(recompute),
        **_stack_controls(attention_kernel, parallel_block, overlap, balanced_pipeline,
                          optimizer_state, framework, elementwise),
    }
    dp, message, summary = widgets.HTML(), widgets.HTML(), widgets.HTML()
    chart = widgets.Image(format="png", layout=widgets.Layout(max_width="900px"))
    left = widgets.VBox([controls[k] for k in ("model", "accelerator", "devices")] + [dp])
    right = widgets.VBox([controls[k] for k in ("tp", "pp", "vpp", "micro_batch")])
    stack = widgets.HBox([controls["parallel_block"]]
                         + [controls[f"overlap_{k}"] for k in OVERLAP_KINDS]
                         + [controls["balanced_pipeline"]])
    box = widgets.VBox([widgets.HBox([left, right]), controls["zero"], controls["recompute"],
                        controls["attention_kernel"], stack,
                        widgets.HBox([controls["optimizer_state"], controls["framework"]]),
                        controls["elementwise"],
                        message, summary, chart])
    box.controls, box.dp, box.message, box.summary, box.chart, box.result = \
        controls, dp, message, summary, chart, None

    def update():
        p = {"accelerator": controls["accelerator"].value, "model": controls["model"].value,
             "devices": controls["devices"].value, "global_batch": global_batch,
             **{k: controls[k].value for k in ("tp", "pp", "vpp", "micro_batch", "zero",
                                               "recompute")},
             **_stack_values(controls)}
        dp.value = html.escape(derived_dp(p["devices"], p["tp"], p["pp"]))
        try:
            est = explore.layout_estimate(p)
        except ValueError as exc:
            raise ValueError(f"This layout cannot run: {exc}") from None
        result = est.to_dict()
        box.result = result
        message.value = ""
        summary.value = layout_summary_html(result)
        chart.value = png(plotting.layout_bars(
            est.step_breakdown_s(), est.memory_breakdown_gib(), result["hbm_gib_per_device"],
            label=f"tp{p['tp']} pp{p['pp']} dp{result['parallel']['dp']}"))
        chart.layout.display = None

    on_error = clears(box, message, [summary], [chart])

    return Refresher(update, on_error).attach(box, controls)
