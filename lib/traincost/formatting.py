"""Numbers as people read them: significant figures with thousands separators, one format
for the command line and the widgets alike (no ``3.756e+05`` beside ``2,877,873``).

>>> sig(704284.08), sig(33.4109), sig(0.44417), sig(375612.3, 4)
('704,000', '33.4', '0.444', '375,600')
"""

from __future__ import annotations

import math
import numbers


def _finite(value) -> float | None:
    """``value`` as a finite float, or None (missing, not a number, NaN or infinite)."""
    try:
        x = float(value)
    except (TypeError, ValueError):
        return None
    return x if math.isfinite(x) else None


def sig(value, digits: int = 3) -> str:
    """``value`` rounded to ``digits`` significant figures, with thousands separators;
    ``n/a`` for a missing or non-finite value.

    >>> sig(704284.08), sig(None), sig(float("nan"))
    ('704,000', 'n/a', 'n/a')
    """
    x = _finite(value)
    if x is None:
        return "n/a"
    rounded = float(f"{x:.{digits}g}")
    if abs(rounded) >= 10 ** (digits - 1):
        return f"{rounded:,.0f}"
    return f"{rounded:.{digits}g}"


#: the width the command line's tables fit by default [characters] (wider: ``--wide`` or
#: ``--json``)
TABLE_WIDTH = 100


def cell(value, kind: str = "sig") -> str:
    """One table cell as text: ``sig`` (3 significant figures, thousands separators),
    ``usd`` (4), ``int``, ``pct`` (a fraction as a percentage, 1 decimal), ``signed``
    (a signed percentage, 1 decimal), ``bool`` (yes/no) or ``text``; ``n/a`` or blank for
    a missing value (blank for text).

    >>> cell(366012.7, "usd"), cell(0.54071, "pct"), cell(-3.4582, "signed"), cell(True, "bool")
    ('366,000', '54.1%', '-3.5%', 'yes')
    >>> cell(float("nan"), "bool"), cell(None, "bool")      # a row with no estimate
    ('n/a', 'n/a')
    """
    if kind == "text":
        return "" if value is None or (isinstance(value, float) and math.isnan(value)) \
            else str(value)
    if kind == "bool":
        if value is None or (isinstance(value, float) and math.isnan(value)):
            return "n/a"
        return "yes" if bool(value) else "no"
    if kind == "int":
        try:
            return f"{int(value):,}"
        except (TypeError, ValueError):
            return "n/a"
    if kind in ("pct", "signed"):
        x = _finite(value)
        if x is None:
            return "n/a"
        return f"{100 * x:.1f}%" if kind == "pct" else f"{x:+.1f}%"
    return sig(value, 4 if kind == "usd" else 3)


def wide_cell(value, usd: bool = False) -> str:
    """One cell of a ``--wide`` table, whatever its column holds: yes/no, a whole number
    with separators, a number as :func:`sig` writes it (dollars to 4 figures), ``n/a`` for a
    missing value, else the text.

    >>> wide_cell(True), wide_cell(64), wide_cell(968712.4, usd=True), wide_cell(None)
    ('yes', '64', '968,700', 'n/a')
    """
    if isinstance(value, bool) or type(value).__name__ == "bool_":
        return "yes" if value else "no"
    if value is None or type(value).__name__ == "NAType":
        return "n/a"
    if isinstance(value, numbers.Integral):
        return f"{int(value):,}"
    if isinstance(value, numbers.Real):
        return sig(value, 4 if usd else 3)
    return str(value)


def wide_text(df, index: bool = True) -> str:
    """A table as ``--wide`` prints it: every column, each cell as :func:`wide_cell` writes
    it, the main tables' number format (significant figures with thousands separators,
    never an exponent: issue 26's one number format), columns named ``*usd*`` in dollars
    to 4 figures."""
    shown = df.copy().astype(object)
    for col in shown.columns:
        usd = "usd" in str(col)
        shown[col] = [wide_cell(v, usd) for v in df[col].tolist()]
    return shown.to_string(index=index)


def text_table(rows, columns, width: int = TABLE_WIDTH, squeeze=None) -> str:
    """Rows as a plain-text table that fits ``width`` characters: numbers right-aligned,
    text left-aligned, two spaces between columns. Where the table would be wider, the
    ``squeeze`` columns, in order, are cut short (ending in ``~``), each dropped when no
    more than 4 characters of it would fit.

    Parameters
    ----------
    rows : sequence of mappings
        One mapping per row (column name -> value), e.g. ``df.reset_index().to_dict("records")``.
    columns : sequence of (name, header, kind)
        The columns shown, in order; ``kind`` as for :func:`cell`.
    width : int
        The widest line. [characters]
    squeeze : str or sequence of str, optional
        The text columns cut to fit, first cut first (default: the last text column). [-]

    >>> print(text_table([{"id": "a", "x": 1234.5}, {"id": "bb", "x": 2.0}],
    ...                  [("id", "id", "text"), ("x", "x [s]", "sig")]))
    id  x [s]
    a   1,230
    bb      2
    >>> print(text_table([{"id": "a", "name": "a long name", "note": "a longer note"}],
    ...                  [("id", "id", "text"), ("name", "name", "text"),
    ...                   ("note", "note", "text")], width=20, squeeze=("note", "name")))
    id  name
    a   a long name
    """
    columns = list(columns)
    if squeeze is None:
        squeeze = [name for name, _, kind in columns if kind == "text"][-1:]
    elif isinstance(squeeze, str):
        squeeze = [squeeze]
    heads = [head for _, head, _ in columns]
    body = [[cell(r.get(name), kind) for name, _, kind in columns] for r in rows]
    widths = [max([len(h)] + [len(b[j]) for b in body]) for j, h in enumerate(heads)]
    for name in squeeze:
        total = sum(widths) + 2 * (len(widths) - 1)
        names = [c[0] for c in columns]
        if total <= width or name not in names:
            continue
        j = names.index(name)
        room = widths[j] - (total - width)
        if room <= 4:
            for seq in (columns, heads, widths):
                del seq[j]
            for b in body:
                del b[j]
            continue
        widths[j] = room
        heads[j] = heads[j][:room]
        for b in body:
            b[j] = b[j] if len(b[j]) <= room else b[j][:room - 1] + "~"
    kinds = [kind for _, _, kind in columns]

    def line(cells):
        return "  ".join(c.ljust(w) if k == "text" else c.rjust(w)
                         for c, w, k in zip(cells, widths, kinds)).rstrip()
    return "\n".join([line(heads)] + [line(b) for b in body])
