"""Numbers as people read them: significant figures with thousands separators, one format
for the command line and the widgets alike (no ``3.756e+05`` beside ``2,877,873``).

>>> sig(704284.08), sig(33.4109), sig(0.44417), sig(375612.3, 4)
('704,000', '33.4', '0.444', '375,600')
"""

from __future__ import annotations

import math


def sig(value, digits: int = 3) -> str:
    """``value`` rounded to ``digits`` significant figures, with thousands separators;
    ``n/a`` for a missing or non-finite value.

    >>> sig(704284.08), sig(None), sig(float("nan"))
    ('704,000', 'n/a', 'n/a')
    """
    try:
        x = float(value)
    except (TypeError, ValueError):
        return "n/a"
    if not math.isfinite(x):
        return "n/a"
    rounded = float(f"{x:.{digits}g}")
    if abs(rounded) >= 10 ** (digits - 1):
        return f"{rounded:,.0f}"
    return f"{rounded:.{digits}g}"
