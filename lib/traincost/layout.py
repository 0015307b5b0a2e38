"""Which parallel layouts are valid, and the candidates a search enumerates.

The rules are written once as array predicates over layout columns; the
one-configuration check (:func:`check`) runs them on scalars and reports the first
broken rule by its CLI flag, the sweep (:func:`valid`) runs them on arrays.
"""

from __future__ import annotations

import itertools

import numpy as np

from .workload import RECOMPUTE_CODES

# (flag, predicate that must hold, message) - evaluated in order; messages are formatted
# with the layout's values, so each names the flag, its value and what is allowed.
RULES = (
    ("tp", lambda c: c["heads"] % c["tp"] == 0,
     "--tp {tp} must divide the number of attention heads {heads}"),
    ("tp", lambda c: (c["kv_heads"] % c["tp"] == 0) | (c["tp"] % c["kv_heads"] == 0),
     "--tp {tp} must divide, or be a multiple of, the key/value heads {kv_heads}"),
    ("cp", lambda c: c["seq_len"] % c["cp"] == 0,
     "--cp {cp} must divide --seq-len {seq_len}"),
    ("devices", lambda c: c["devices"] % (c["tp"] * c["pp"] * c["cp"]) == 0,
     "--devices {devices} must be a multiple of tp*pp*cp = {tp}*{pp}*{cp}"),
    ("pp", lambda c: c["layers"] % c["pp"] == 0,
     "--pp {pp} must divide the number of layers {layers}"),
    ("vpp", lambda c: (c["vpp"] == 1) | ((c["pp"] > 1) & (c["layers"] % (c["pp"] * c["vpp"]) == 0)),
     "--vpp {vpp} needs --pp > 1 and pp*vpp dividing the layers {layers} (pp {pp})"),
    ("ep", lambda c: np.where(c["experts"] > 0, c["experts"] % c["ep"] == 0, c["ep"] == 1),
     "--ep {ep} must divide the number of experts {experts} (and be 1 for a dense model)"),
    ("ep", lambda c: (c["devices"] // (c["tp"] * c["pp"] * c["cp"])) % c["ep"] == 0,
     "--ep {ep} must divide the data-parallel size devices/(tp*pp*cp)"),
    ("global-batch", lambda c: c["global_batch"] % ((c["devices"] // (c["tp"] * c["pp"] * c["cp"]))
                                                  * c["micro_batch"]) == 0,
     "--global-batch {global_batch} must be a multiple of dp*micro-batch "
     "(dp = devices/(tp*pp*cp) = {devices}/({tp}*{pp}*{cp}), micro-batch {micro_batch})"),
)


def valid(c: dict) -> np.ndarray:
    """Boolean mask: which rows of layout columns ``c`` satisfy every rule."""
    ok = np.ones(np.broadcast(*[np.asarray(v) for v in c.values()]).shape, dtype=bool)
    for _, rule, _ in RULES:
        with np.errstate(divide="ignore", invalid="ignore"):
            ok &= np.asarray(rule(c), dtype=bool)
    return ok


def check(c: dict) -> None:
    """Raise ``ValueError`` naming the flag of the first rule a single layout breaks."""
    for flag, rule, message in RULES:
        if not bool(rule(c)):
            raise ValueError(message.format(**c))


def divisors(n: int) -> list[int]:
    """Positive divisors of n, ascending."""
    return [d for d in range(1, int(n) + 1) if n % d == 0]


def powers_of_two_upto(n: int) -> list[int]:
    """1, 2, 4, ... up to n."""
    out, x = [], 1
    while x <= n:
        out.append(x)
        x *= 2
    return out


#: choices a search explores for each layout knob that the user leaves open
SEARCH_SPACE = {
    "micro_batch": (1, 2, 4, 8),
    "recompute": tuple(RECOMPUTE_CODES.values()),
    "zero": (0, 1, 2, 3),
    "vpp": (1, 2, 4),
    "cp": (1,),
}


def candidates(fixed: dict, *, heads: int, layers: int, experts: int, devices: int,
               domain: int) -> dict:
    """Enumerate layout columns: every combination of the open knobs.

    Parameters
    ----------
    fixed : dict
        Knobs the user set (tp, pp, cp, ep, vpp, zero, micro_batch, recompute code);
        missing or None ones are searched. [-]
    heads, layers, experts, devices, domain : int
        What bounds the choices: tp is a power of two up to min(heads, domain); pp
        divides the layers; ep divides the experts. [-]

    Returns
    -------
    dict of equal-length arrays, one entry per knob (before validity filtering).
    """
    space = {
        "tp": powers_of_two_upto(min(heads, max(domain, 1), devices)),
        "pp": [p for p in divisors(layers) if p <= devices],
        "ep": divisors(experts) if experts else [1],
        **SEARCH_SPACE,
    }
    choices = {k: ([fixed[k]] if fixed.get(k) is not None else list(v)) for k, v in space.items()}
    keys = list(choices)
    grid = np.array(list(itertools.product(*[choices[k] for k in keys])), dtype=np.int64)
    return {k: grid[:, i] for i, k in enumerate(keys)}
