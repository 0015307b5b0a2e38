"""Notebook 02: where the FLOP go and what fits in memory, as the layout knobs change.

The arithmetic is :mod:`traincost.explore`'s; the builder reads the controls and draws.
"""

from __future__ import annotations

import html

import ipywidgets as widgets

from .. import explore, plotting
from ..units import GIGA
from .kit import (MICRO_BATCH_CHOICES, TP_CHOICES, accelerator_dropdown, cards, int_text,
                  message_html, model_dropdown, png, recompute_buttons, recompute_words,
                  Refresher, selection, sig, zero_buttons)


def memory_summary_html(est, smallest: int | None, flop_parts: dict) -> str:
    """Headline numbers of the memory widget: total vs HBM, smallest fitting count, FLOP."""
    d = est.to_dict()
    total, hbm = d["memory_gib_per_device"], d["hbm_gib_per_device"]
    model_flop = sum(v for k, v in flop_parts.items() if k != "recompute")
    extra = flop_parts["recompute"] / model_flop if model_flop else 0.0
    cells = [("Memory per device", f"{sig(total)} GiB"),
             ("Device memory", f"{sig(hbm)} GiB"),
             ("Fits?", "yes" if d["fits_in_memory"] else "no"),
             ("Fewest devices that fit", "none scanned" if smallest is None else str(smallest)),
             ("FLOP per token", f"{sig(sum(flop_parts.values()) / GIGA)} G"),
             ]
    p = d["parallel"]
    return (cards(cells) +
            f"<p style='font-size:90%;color:#333'>{html.escape(d['workload'])} on "
            f"{d['devices']} × {html.escape(d['accelerator'])}: tp {p['tp']} × pp {p['pp']} × "
            f"dp {p['dp']}, micro-batch {p['micro_batch']}, ZeRO-{p['zero']}, "
            f"{recompute_words(p['recompute'], d['offloaded_gib_per_device'])}. Recompute "
            f"adds {sig(100 * extra)} % to the model's "
            "FLOP per token. <i>Fewest devices that fit</i>: the same ZeRO stage, recompute "
            "and micro-batch, with tp and pp chosen for each count (powers of two up to "
            f"{explore.DEVICE_COUNTS[-1]}).</p>")


def flops_and_memory(model: str = "llama2-13b", accelerator: str = "a100-sxm4-80gb",
                     devices: int = 8, global_batch: int = 1024, tp: int = 1, pp: int = 1,
                     zero: int = 0, recompute: str = "none",
                     micro_batch: int = 1) -> widgets.VBox:
    """Memory per device, stacked by part, as ZeRO, recompute, tp/pp and micro-batch change.

    Parameters
    ----------
    model, accelerator : str
        Preset and accelerator ids.
    devices : int
        Devices. [-]
    global_batch : int
        Sequences per optimizer step. [sequences]
    tp, pp : int
        Tensor- and pipeline-parallel sizes. [-]
    zero : int
        ZeRO stage 0-3. [-]
    recompute : str
        ``none``, ``selective`` or ``full``. [-]
    micro_batch : int
        Sequences per micro-batch. [sequences]

    Returns
    -------
    ipywidgets.VBox
        ``controls``, ``message``, ``summary`` (HTML), ``chart`` (Image: the chosen
        layout beside the plain data-parallel one), ``result`` (the Estimate) and
        ``smallest`` (fewest scanned devices that fit with this ZeRO stage, recompute
        mode and micro-batch, or None), ``refresh()``.
    """
    controls = {
        "model": model_dropdown(model),
        "accelerator": accelerator_dropdown(accelerator),
        "devices": int_text(devices, "devices"),
        "tp": selection(TP_CHOICES, tp, "tensor parallel tp"),
        "pp": selection((1, 2, 4, 5, 8, 10, 16, 20, 32), pp, "pipeline parallel pp"),
        "micro_batch": selection(MICRO_BATCH_CHOICES, micro_batch, "micro-batch [seq]"),
        "zero": zero_buttons(zero),
        "recompute": recompute_buttons(recompute),
    }
    message, summary = widgets.HTML(), widgets.HTML()
    chart = widgets.Image(format="png", layout=widgets.Layout(max_width="900px"))
    left = widgets.VBox([controls[k] for k in ("model", "accelerator", "devices")])
    right = widgets.VBox([controls[k] for k in ("tp", "pp", "micro_batch")])
    box = widgets.VBox([widgets.HBox([left, right]), controls["zero"], controls["recompute"],
                        message, summary, chart])
    box.controls, box.message, box.summary, box.chart = controls, message, summary, chart
    box.result, box.smallest = None, None

    def params():
        return {"accelerator": controls["accelerator"].value, "model": controls["model"].value,
                "devices": controls["devices"].value, "global_batch": global_batch,
                "tp": controls["tp"].value, "pp": controls["pp"].value, "vpp": 1,
                "zero": controls["zero"].value, "recompute": controls["recompute"].value,
                "micro_batch": controls["micro_batch"].value}

    def update():
        p = params()
        est = explore.layout_estimate(p)
        rows = {}
        if (p["tp"], p["pp"], p["zero"], p["recompute"]) != (1, 1, 0, "none"):
            try:
                reference = explore.layout_estimate({**p, "tp": 1, "pp": 1, "zero": 0,
                                                     "recompute": "none"})
            except ValueError:               # no data-parallel-only bar for this job
                pass
            else:
                rows["data parallel only\n(ZeRO-0, no recompute)"] = \
                    reference.memory_breakdown_gib()
        rows[f"your layout\n(tp {p['tp']}, pp {p['pp']}, ZeRO-{p['zero']}, "
             f"{p['recompute']})"] = est.memory_breakdown_gib()
        scan = explore.device_scan({k: p[k] for k in ("accelerator", "model", "global_batch",
                                                      "zero", "recompute", "micro_batch")})
        box.result, box.smallest = est, explore.smallest_fitting_devices(scan)
        message.value = ""
        summary.value = memory_summary_html(est, box.smallest, explore.flop_per_token_parts(
            p["model"], p["recompute"]))
        chart.value = png(plotting.memory_bars(rows, est.to_dict()["hbm_gib_per_device"]))
        chart.layout.display = None

    def on_error(text):
        box.result, box.smallest = None, None
        message.value = message_html(text)
        summary.value = ""
        chart.value = b""
        chart.layout.display = "none"

    return Refresher(update, on_error).attach(box, controls)
