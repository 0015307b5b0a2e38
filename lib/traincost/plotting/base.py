"""What every chart of the suite shares: the palette, metric labels, short numbers and PNG
rendering.
"""

from __future__ import annotations

import math
import threading

from matplotlib.backends.backend_agg import FigureCanvasAgg, RendererAgg
from matplotlib.figure import Figure


#: Okabe & Ito (2008) colour-blind-safe palette, black left out (used for text).
#: Ordered so the first few are also distinct in greyscale; yellow comes late.
OKABE_ITO = ("#0072B2", "#E69F00", "#009E73", "#D55E00", "#56B4E9", "#CC79A7", "#F0E442",
             "#999999")

#: axis label (with unit) and short title of each metric :func:`traincost.compare` returns
METRIC_LABELS = {
    "train_time_days": ("Training time [days]", "Wall-clock time"),
    "device_hours": ("Device-hours [h]", "Device-hours"),
    "facility_energy_mwh": ("Energy at the plug [MWh]", "Facility energy (incl. PUE)"),
    "co2e_t": ("Operational emissions [tCO2e]", "Operational carbon"),
    "embodied_co2e_t": ("Embodied emissions [tCO2e]", "Embodied carbon (amortised)"),
    "cost_usd": ("Cost [USD]", "Cost"),
    "mfu": ("Model FLOP utilisation [-]", "MFU (higher is better)"),
    "avg_power_w_per_device": ("Average power per device [W]", "Power per device"),
}

DEFAULT_METRICS = ("train_time_days", "facility_energy_mwh", "co2e_t", "cost_usd")

_GAP_COLOUR = "#BBBBBB"


def _short_number(value: float, unit: str = "") -> str:
    """``value`` to 3 significant figures with a k/M/G suffix, e.g. ``'$704k'``. [-]"""
    if not math.isfinite(value):
        return "n/a"
    prefix = "$" if unit == "USD" else ""
    for scale, suffix in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if abs(value) >= scale:
            return f"{prefix}{value / scale:.3g}{suffix}"
    return f"{prefix}{value:.3g}"


def _unit_of(metric: str) -> str:
    label = METRIC_LABELS.get(metric, (metric, metric))[0]
    return label[label.rfind("[") + 1:label.rfind("]")] if "[" in label else ""


#: Agg renderers kept between draws, by (width [px], height [px], dpi): a widget redraws a
#: chart of the same size on every change, and matplotlib caches text metrics per renderer,
#: so a kept renderer measures each label once (issue 26). A handful of sizes at most.
_RENDERERS: dict = {}
_RENDERERS_MAX = 16
_RENDER_LOCK = threading.Lock()


class _KeptRendererCanvas(FigureCanvasAgg):
    """An Agg canvas whose renderer is shared by every figure of the same pixel size."""

    def get_renderer(self):
        w, h = self.get_width_height(physical=True)
        key = (w, h, self.figure.dpi)
        renderer = _RENDERERS.get(key)
        if renderer is None:
            if len(_RENDERERS) >= _RENDERERS_MAX:
                _RENDERERS.clear()
            renderer = _RENDERERS[key] = RendererAgg(w, h, self.figure.dpi)
        self.renderer, self._lastKey = renderer, key
        return renderer


def figure_png(fig: Figure, dpi: int = 100) -> bytes:
    """The figure rendered as PNG bytes (Agg; no GUI backend needed). [bytes]

    One Agg draw on a renderer kept for the figure's pixel size (its text metrics cached
    from the last chart of that size), encoded by Pillow at a light compression level:
    ``savefig`` draws a constrained-layout figure twice, and a widget redraws its charts on
    every change (issue 26: a widget answers in 0.5 s). The pixels are those ``savefig``
    writes; the renderer is cleared before each draw."""
    from io import BytesIO

    from PIL import Image

    with _RENDER_LOCK:                      # one figure on a kept renderer at a time
        canvas = _KeptRendererCanvas(fig)   # an Agg canvas whatever the figure had
        fig.set_dpi(dpi)
        canvas.draw()
        image = Image.frombuffer("RGBA", canvas.get_width_height(), canvas.buffer_rgba(),
                                 "raw", "RGBA", 0, 1).copy()
    buf = BytesIO()
    image.save(buf, format="png", compress_level=1)
    return buf.getvalue()


def column_lines(df, ax, figsize: tuple, *, linestyles=("-",), markers=(None,)):
    """One line per column of ``df`` against its index, in the palette's order, on ``ax``
    or a new figure of ``figsize`` [in]; returns (figure, axes). Each line's gid and label
    are its column name."""
    if ax is None:
        fig = Figure(figsize=figsize, layout="constrained")
        ax = fig.add_subplot()
    else:
        fig = ax.figure
    x = df.index.to_numpy(dtype=float)
    for i, col in enumerate(df.columns):
        ax.plot(x, df[col].to_numpy(dtype=float), color=OKABE_ITO[i % len(OKABE_ITO)],
                linestyle=linestyles[i % len(linestyles)], marker=markers[i % len(markers)],
                linewidth=2, label=str(col), gid=str(col))
    return fig, ax


def finish_lines(ax, title: str) -> None:
    """A line chart's common finish: the title on the left, a light grid, the legend, no
    top or right spine; the y axis from zero."""
    ax.set_ylim(bottom=0)
    ax.set_title(title, fontsize=11, fontweight="bold", loc="left")
    ax.grid(color="#DDDDDD", linewidth=0.6)
    ax.legend(fontsize=8)
    for side in ("top", "right"):
        ax.spines[side].set_visible(False)
