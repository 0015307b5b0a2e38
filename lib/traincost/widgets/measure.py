"""Notebook 08: a measured run beside its estimate at an assumed utilisation and power.

The arithmetic is :mod:`traincost.measure`'s.
"""

from __future__ import annotations

import ipywidgets as widgets

from .kit import STYLE, wide, Refresher, cards, message_html, sig


def measured_vs_estimated(flop: float, flop_per_s: float, observed: dict, cpu_power_w: float,
                          host_power_w: float = 0.0, utilisation: float = 1.0) -> widgets.VBox:
    """Estimate a measured run at an assumed utilisation and power, beside the measurement.

    Parameters
    ----------
    flop : float
        Work of the run. [FLOP]
    flop_per_s : float
        Best achievable rate (the timed matmul). [FLOP/s]
    observed : dict
        Measured ``time_s`` [s], ``cpu_energy_j`` and ``energy_j`` [J].
    cpu_power_w, host_power_w : float
        Starting power figures (CodeCarbon's CPU and RAM power). [W]
    utilisation : float
        Starting share of ``flop_per_s`` the run is assumed to reach. [-]

    Returns
    -------
    ipywidgets.VBox
        ``controls`` (utilisation slider, CPU and host power), ``message``, ``summary``
        (HTML), ``table`` (HTML: :func:`traincost.measure.side_by_side`), ``result`` (that
        table), ``refresh()``.
    """
    from .. import measure

    controls = {
        "utilisation": widgets.FloatSlider(value=utilisation, min=0.02, max=1.0, step=0.01,
                                           description="utilisation [-]",
                                           continuous_update=False, style=STYLE,
                                           layout=wide()),
        "cpu_power": widgets.FloatText(value=round(cpu_power_w, 2), description="CPU power [W]",
                                       style=STYLE, layout=wide()),
        "host_power": widgets.FloatText(value=round(host_power_w, 2),
                                        description="host (RAM) power [W]", style=STYLE,
                                        layout=wide()),
    }
    message, summary, table = widgets.HTML(), widgets.HTML(), widgets.HTML()
    box = widgets.VBox([widgets.VBox(list(controls.values())), message, summary, table])
    box.controls, box.message, box.summary, box.table, box.result = \
        controls, message, summary, table, None
    matching = flop / observed["time_s"] / flop_per_s     # the run's own utilisation

    def update():
        u = controls["utilisation"].value
        est = measure.estimate_run(flop, flop_per_s * u, controls["cpu_power"].value,
                                   controls["host_power"].value)
        df = measure.side_by_side(observed, est)
        box.result = df
        message.value = ""
        summary.value = cards([
            ("Assumed utilisation", f"{sig(u)}"),
            ("Estimated time", f"{sig(est['time_s'])} s"),
            ("Measured time", f"{sig(observed['time_s'])} s"),
            ("Utilisation that matches", f"{sig(matching)}")])
        out = df.copy()
        for col in out.columns:
            out[col] = [sig(v) for v in out[col]]
        table.value = out.to_html(escape=True, border=0, classes="traincost-table")

    def on_error(text):
        box.result = None
        message.value = message_html(text)
        summary.value = table.value = ""

    return Refresher(update, on_error).attach(box, controls)
