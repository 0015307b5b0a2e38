"""The widget kit: formatting, controls shared by the notebooks' UIs, error display and the
refresher every builder hangs its callback on.

Formatting helpers are pure (no widgets) and tested directly:

>>> sig(704284.08), sig(33.4109), sig(0.44417)
('704,000', '33.4', '0.444')

A builder's ``update()`` raises ``ValueError`` with a one-line message for input the
library rejects; :class:`Refresher` catches it and its ``on_error`` shows the message in
place (:func:`message_html`), so no exception leaves a callback.
"""

from __future__ import annotations

import html
import math
import os

import ipywidgets as widgets

from .. import catalog, explore, plotting
from ..choices import RECOMPUTE_MODES
from ..formatting import sig  # noqa: F401 - the kit's formatting, re-exported
from ..units import GIGA

#: a short, curated list of grid regions for the dropdowns (world first), spanning
#: low-carbon (hydro/nuclear) to coal-heavy grids and a few cloud regions
CURATED_REGIONS = ("world", "SWE", "FRA", "BRA", "GBR", "DEU", "USA", "USA:california",
                   "USA:virginia", "POL", "CHN", "IND", "JPN", "gcp:europe-west1",
                   "gcp:us-central1", "aws:us-east-1")

#: JupyterLab's class for rendered HTML (Markdown cells, HTML outputs): its table styling
RENDERED_HTML = "jp-RenderedHTMLCommon"

#: label width every builder uses
STYLE = {"description_width": "170px"}


def wide() -> widgets.Layout:
    """The control width every builder uses, a new Layout for each control: a Layout is a
    shared model in the browser, so hiding one control (``layout.display``) must not hide
    every control that shares it."""
    return widgets.Layout(width="480px")        # 310 px for a value: catalog names fit

#: slider and button choices of the layout knobs (notebooks 02 and 03)
TP_CHOICES = (1, 2, 4, 8, 16, 32, 64)
MICRO_BATCH_CHOICES = (1, 2, 4, 8, 16)
ZERO_CHOICES = (("0 (off)", 0), ("1 (optimizer)", 1), ("2 (+ gradients)", 2),
                ("3 (+ weights)", 3))
RECOMPUTE_CHOICES = RECOMPUTE_MODES      # offload: to host memory, in place of recompute


def recompute_words(mode: str, offloaded_gib: float = 0.0) -> str:
    """A recompute mode in a sentence: ``selective recompute``, or for ``offload`` the
    activations offloaded to host memory [GiB]."""
    if mode == "offload":
        return f"activations offloaded to host memory ({sig(offloaded_gib)} GiB per device)"
    return f"{mode} recompute"


# --------------------------------------------------------------------------------------
# formatting and parsing (no widgets)
# --------------------------------------------------------------------------------------
def region_options(region_ids=CURATED_REGIONS) -> list[tuple[str, str]]:
    """(label, id) pairs for a region dropdown; ids the catalog lacks are left out.

    The label shows the grid intensity, the number that matters here. [gCO2e/kWh]
    """
    table = catalog.regions()
    options = []
    for rid in region_ids:
        if rid not in table.index:
            continue
        row = table.loc[rid]
        name = str(row["name"])
        label = rid if ("nan" in name or name == rid) else f"{rid}: {name}"
        options.append((f"{label} ({row['grid_gco2e_per_kwh']:.0f} gCO2e/kWh)", rid))
    return options


def preset_tokens(model: str) -> float:
    """Training tokens of a model preset (reported figure, else library default). [tokens]"""
    return float(catalog.job(model).tokens)


def parse_price(text) -> float | None:
    """A price override typed as text: blank means "use the catalog price". [USD/h]

    Raises
    ------
    ValueError
        ``price-per-hour: ...`` when the text is not a number.
    """
    if text is None:
        return None
    if isinstance(text, (int, float)):
        return float(text)
    text = str(text).strip().lstrip("$")
    if not text:
        return None
    try:
        return float(text)
    except ValueError:
        raise ValueError(f"price-per-hour: {text!r} is not a number (USD per device-hour; "
                         "leave blank for the catalog price)") from None


def parse_optional_number(text, flag: str, what: str, minimum: float = 0.0) -> float | None:
    """A number typed as text; blank means "use the default". [same unit as ``what``]

    Raises
    ------
    ValueError
        ``<flag>: ...`` when the text is not a number or is below ``minimum``.

    >>> parse_optional_number(" 25000 ", "capex", "USD per device"), parse_optional_number("", "capex", "USD")
    (25000.0, None)
    """
    if text is None:
        return None
    raw = str(text).strip().lstrip("$").replace(",", "")
    if not raw:
        return None
    try:
        value = float(raw)
    except ValueError:
        raise ValueError(f"{flag}: {text!r} is not a number ({what}; leave blank for the "
                         "default)") from None
    if not math.isfinite(value) or value < minimum:
        raise ValueError(f"{flag}: {value:g} must be a number >= {minimum:g} ({what})")
    return value


def parse_device_counts(text) -> tuple[int, ...]:
    """Device counts typed as ``"64, 128, 256"``: whole numbers > 0, sorted, unique.

    >>> parse_device_counts("256, 64,128 64")
    (64, 128, 256)
    """
    parts = [p for p in str(text or "").replace(";", ",").replace(",", " ").split() if p]
    if not parts:
        raise ValueError("devices: give at least one device count, e.g. 64, 128, 256")
    counts = []
    for p in parts:
        try:
            n = int(p)
        except ValueError:
            raise ValueError(f"devices: {p!r} is not a whole number of devices") from None
        if n <= 0:
            raise ValueError(f"devices: {n} must be > 0")
        counts.append(n)
    return tuple(sorted(set(counts)))


def cards(cells) -> str:
    """Headline numbers as bordered boxes (label, value) in one row."""
    return "<div style='display:flex;flex-wrap:wrap'>" + "".join(
        f"<div style='padding:6px 14px;border-left:3px solid #0072B2;margin-right:8px'>"
        f"<div style='font-size:85%;color:#555'>{html.escape(k)}</div>"
        f"<div style='font-size:140%;font-weight:bold'>{html.escape(v)}</div></div>"
        for k, v in cells) + "</div>"


def caveats_html(result: dict) -> str:
    """``Estimate.accuracy_note`` and ``Estimate.caveats`` as muted notes under a summary."""
    notes = [("Accuracy", result["accuracy"])] if result.get("accuracy") else []
    notes += [("Caveat", c) for c in result.get("caveats", [])]
    return "".join(f"<p style='font-size:90%;color:#555'><b>{label}:</b> {html.escape(c)}</p>"
                   for label, c in notes)


def message_html(text: str) -> str:
    if not text:
        return ""
    lines = "<br>".join(html.escape(line) for line in text.splitlines())
    return f"<div style='color:#D55E00'><b>⚠</b> {lines}</div>"


# --------------------------------------------------------------------------------------
# controls
# --------------------------------------------------------------------------------------
def region_choices(given, candidates) -> list:
    """The region ids a region selector offers: ``given`` first, then ``candidates``, those
    the catalog has; ValueError (naming ``region``) for a given id it lacks."""
    offered = [rid for _, rid in region_options(tuple(dict.fromkeys(
        list(given) + list(candidates))))]
    for r in given:
        check_choice("region", r, offered)
    return offered


def check_choice(kind: str, value, allowed) -> None:
    if value not in allowed:
        raise ValueError(f"{kind}: unknown {value!r}; allowed: {', '.join(map(str, allowed))}")


def model_dropdown(model: str) -> widgets.Dropdown:
    models = catalog.models()
    check_choice("model", model, list(models.index))
    return widgets.Dropdown(options=[(f"{row['name']} ({mid})", mid)
                                     for mid, row in models.iterrows()],
                            value=model, description="model preset", style=STYLE, layout=wide())


def region_dropdown(region: str) -> widgets.Dropdown:
    options = region_options()
    ids = [rid for _, rid in options]
    if region not in ids:                      # a region outside the short list: add it
        options = region_options((region,)) + options
        check_choice("region", region, [rid for _, rid in options])
    return widgets.Dropdown(options=options, value=region, description="grid region",
                            style=STYLE, layout=wide())


def tokens_text(model: str, tokens) -> widgets.FloatText:
    value = preset_tokens(model) if tokens is None else float(tokens)
    return widgets.FloatText(value=value / GIGA, description="tokens [billions]",
                             style=STYLE, layout=wide())


def accelerator_dropdown(accelerator: str, description: str = "accelerator") -> widgets.Dropdown:
    accs = catalog.accelerators()
    check_choice("accelerator", accelerator, list(accs.index))
    return widgets.Dropdown(options=[(f"{row['name']} ({aid})", aid)
                                     for aid, row in accs.iterrows()],
                            value=accelerator, description=description, style=STYLE,
                            layout=wide())


def accelerator_select(ids, selected) -> widgets.SelectMultiple:
    """A list of accelerator ids to pick several from (Ctrl/Cmd-click), every one in view:
    a selected id scrolled out of a shorter list looked unselected (the 2026-12-02
    walk-through: TPU v5p, the 19th of 23, below a list of 10 rows)."""
    ids = list(ids)
    return widgets.SelectMultiple(options=ids, value=tuple(selected), rows=len(ids),
                                  description="accelerators",
                                  style={"description_width": "90px"},
                                  layout=widgets.Layout(width="300px"))


def int_text(value: int, description: str) -> widgets.IntText:
    return widgets.IntText(value=value, description=description, style=STYLE, layout=wide())


def selection(options, value, description: str) -> widgets.SelectionSlider:
    options = list(options)
    if value not in options:
        options = sorted(set(options) | {value})
    return widgets.SelectionSlider(options=options, value=value, description=description,
                                   continuous_update=False, style=STYLE, layout=wide())


def zero_buttons(zero: int) -> widgets.ToggleButtons:
    check_choice("zero", zero, [v for _, v in ZERO_CHOICES])
    return widgets.ToggleButtons(options=ZERO_CHOICES, value=zero, description="ZeRO stage",
                                 style={**STYLE, "button_width": "110px"})


def recompute_buttons(recompute: str) -> widgets.ToggleButtons:
    check_choice("recompute", recompute, RECOMPUTE_CHOICES)
    return widgets.ToggleButtons(options=RECOMPUTE_CHOICES, value=recompute,
                                 description="recompute", style={**STYLE, "button_width": "90px"})


def in_voila() -> bool:
    """Whether this kernel serves a Voila page: Voila puts ``VOILA_*`` variables (its base,
    server and request URLs) in its kernels' environment (voila/handler.py, 0.5)."""
    return any(key.startswith("VOILA_") for key in os.environ)


def lab_only(obj):
    """``obj`` where the code shows (JupyterLab, an executed or exported copy); None in Voila,
    where the code is hidden and the widget beside it draws the same chart: one copy of
    each chart on a page (issue 26)."""
    return None if in_voila() else obj


# --------------------------------------------------------------------------------------
# outputs and callbacks
# --------------------------------------------------------------------------------------
def png(fig) -> bytes:
    return plotting.figure_png(fig)


def clears(box, message, texts=(), images=()):
    """An ``on_error`` for :class:`Refresher`: no result, the message shown in place, the
    HTML ``texts`` emptied and the ``images`` emptied and hidden."""
    def on_error(text):
        box.result = None
        message.value = message_html(text)
        for t in texts:
            t.value = ""
        for im in images:
            im.value = b""
            im.layout.display = "none"
    return on_error


def style_outputs(box) -> None:
    """Give every HTML output of ``box`` JupyterLab's rendered-HTML styling (the class
    Markdown and outputs carry: padded, ruled tables), which an HTML widget lacks, so a
    table's headers no longer run together; JupyterLab and Voila load the same CSS."""
    stack = [box]
    while stack:
        w = stack.pop()
        if isinstance(w, widgets.HTML) and not isinstance(w, widgets.HTMLMath):
            w.add_class(RENDERED_HTML)
        stack.extend(getattr(w, "children", ()))


class Refresher:
    """Recompute on any watched control; never let an exception out of a callback.

    ``update()`` does the work and raises ``ValueError`` with a one-line message for
    input the library rejects; ``on_error(text)`` clears the outputs and shows it.
    """

    def __init__(self, update, on_error):
        self.update, self.on_error, self.busy = update, on_error, False

    def __call__(self, *_):
        if self.busy:
            return
        self.busy = True
        try:
            self.update()
        except ValueError as exc:            # input the library rejects: one line, in
            self.on_error(explore.plain_reason(exc))     # words, not the CLI's flags
        except Exception as exc:             # noqa: BLE001 - a widget must not traceback
            self.on_error(f"unexpected error ({type(exc).__name__}): {exc}")
        finally:
            self.busy = False

    def watch(self, *controls):
        for c in controls:
            c.observe(self, names="value")

    def attach(self, box, controls: dict):
        """Watch every control, attach the refresher to ``box``, style its tables
        (:func:`style_outputs`), compute once, return box."""
        self.watch(*controls.values())
        style_outputs(box)
        box.refresh = self
        self()
        return box

    def start(self, box, controls: dict):
        """As :meth:`attach`, but a new model preset also resets ``tokens`` to its figure."""
        def on_model(change):
            self.set_quietly(controls["tokens"], preset_tokens(change["new"]) / GIGA)
            self()

        controls["model"].observe(on_model, names="value")
        return self.attach(box, {k: c for k, c in controls.items() if k != "model"})

    def set_quietly(self, control, value):
        """Change a control without triggering a recompute."""
        self.busy = True
        try:
            control.value = value
        finally:
            self.busy = False
