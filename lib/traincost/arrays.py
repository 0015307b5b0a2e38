"""Small helpers for code that takes a scalar or a numpy array alike."""

from __future__ import annotations

import numpy as np


def any_true(x) -> bool:
    """Whether any element of a scalar or array is true (cheaper than np.any on scalars).

    The formulas use it to skip a term that is zero for every row (speed only: the
    result is the same either way).

    >>> any_true(0), any_true(np.array([0, 2])), any_true(np.array([], dtype=bool))
    (False, True, False)
    """
    return bool(x.any()) if isinstance(x, np.ndarray) else bool(x)
