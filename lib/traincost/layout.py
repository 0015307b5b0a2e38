"""Which parallel layouts are valid, and the candidates a search enumerates.

The rules are written once as array predicates over layout columns; the
one-configuration check (:func:`check`) runs them on scalars and reports the first
broken rule by its CLI flag, the sweep (:func:`valid`) runs them on arrays.
"""

from __future__ import annotations

import numpy as np

from .comm import CODE_TO_CROSS_SITE, CROSS_SITE_CODES
from .workload import CODE_TO_RECOMPUTE, RECOMPUTE_CODES, pipeline_units

#: the knobs written as text at the edges and as integer codes in the model's columns
KNOB_CODES = {"recompute": RECOMPUTE_CODES, "cross_site": CROSS_SITE_CODES}
_KNOB_TEXT = {"recompute": CODE_TO_RECOMPUTE, "cross_site": CODE_TO_CROSS_SITE}


def knob_code(knob: str, value):
    """A layout knob's value as the model's columns hold it (text knobs as their code).

    >>> knob_code("recompute", "full"), knob_code("cross_site", "pp"), knob_code("tp", 4)
    (2, 1, 4)
    """
    return KNOB_CODES[knob][value] if knob in KNOB_CODES else int(value)


def knob_value(knob: str, code):
    """A layout knob's value as a user writes it (text knobs as their text).

    >>> knob_value("recompute", 0), knob_value("cross_site", 1.0), knob_value("pp", 8.0)
    ('none', 'pp', 8)
    """
    return _KNOB_TEXT[knob][int(code)] if knob in _KNOB_TEXT else int(code)

def knob_values(knob: str, codes) -> np.ndarray:
    """:func:`knob_value` of each of an array of codes (an object array of the texts for a
    text knob, whole numbers otherwise).

    >>> knob_values("recompute", np.array([2.0, 0.0])).tolist()
    ['full', 'none']
    """
    codes = np.asarray(codes).astype(np.int64)
    if knob not in _KNOB_TEXT:
        return codes
    texts = _KNOB_TEXT[knob]
    return np.array([texts.get(c) for c in range(max(texts) + 1)], dtype=object)[codes]


def _sites(c: dict):
    """The sites a layout's devices are split over (1 where the columns do not say)."""
    return c.get("sites", 1)


def _site_dp(c: dict):
    """The data-parallel ranks of one site: all of them, or a share where the replicas are
    split over the sites."""
    dp = c["devices"] // (c["tp"] * c["pp"] * c["cp"])
    across = (_sites(c) > 1) & (c.get("cross_site", 0) == CROSS_SITE_CODES["dp"])
    return np.where(across, dp // _sites(c), dp)


# (field, predicate that must hold, message) - evaluated in order; messages are formatted
# with the layout's values, so each names the field, its value and what is allowed, and
# with a word for each field ({F_tp}, ...): the CLI's flag (:data:`FLAGS`), or a caller's
# own words (:meth:`LayoutError.in_words`).
RULES = (
    ("tp", lambda c: c["heads"] % c["tp"] == 0,
     "{F_tp} {tp} must divide the number of attention heads {heads}"),
    ("tp", lambda c: (c["kv_heads"] % c["tp"] == 0) | (c["tp"] % c["kv_heads"] == 0),
     "{F_tp} {tp} must divide, or be a multiple of, the key/value heads {kv_heads}"),
    ("cp", lambda c: c["seq_len"] % c["cp"] == 0,
     "{F_cp} {cp} must divide {F_seq_len} {seq_len}"),
    ("devices", lambda c: c["devices"] % (c["tp"] * c["pp"] * c["cp"]) == 0,
     "{F_devices} {devices} must be a multiple of tp*pp*cp = {tp}*{pp}*{cp}"),
    ("pp", lambda c: c["pp"] <= pipeline_units(c["layers"], c["balanced_pipeline"]),
     "{F_pp} {pp} must not exceed the number of layers {layers} (layers + 2 in a balanced "
     "split, whose embedding and loss take a stage's place each)"),
    ("vpp", lambda c: (c["vpp"] == 1) | ((c["pp"] > 1)
                                         & (c["pp"] * c["vpp"]
                                            <= pipeline_units(c["layers"],
                                                              c["balanced_pipeline"]))),
     "{F_vpp} {vpp} needs {F_pp} > 1 and at least one layer per chunk (pp*vpp <= layers "
     "{layers}, or layers + 2 in a balanced split; pp {pp})"),
    ("ep", lambda c: np.where(c["experts"] > 0, c["experts"] % c["ep"] == 0, c["ep"] == 1),
     "{F_ep} {ep} must divide the number of experts {experts} (and be 1 for a dense model)"),
    ("expert-tp", lambda c: (c.get("expert_tp", 0) == 0)
     | (c["tp"] % np.maximum(c.get("expert_tp", 0), 1) == 0),
     "{F_expert_tp} {expert_tp} must divide tp {tp} (0: tp)"),
    ("ep", lambda c: (_expert_fold(c) > 1)
     | ((c["devices"] // (c["tp"] * c["pp"] * c["cp"])) % c["ep"] == 0),
     "{F_ep} {ep} must divide the data-parallel size devices/(tp*pp*cp)"),
    ("ep", lambda c: (_expert_fold(c) == 1)
     | (((c["devices"] // (c["tp"] * c["pp"] * c["cp"])) * _expert_fold(c)) % c["ep"] == 0),
     "{F_ep} {ep} must divide devices/(tp*pp*cp) times tp/expert-tp ({tp}/{expert_tp}), the "
     "tensor-parallel ranks the expert group folds over"),
    ("global-batch", lambda c: c["global_batch"] % ((c["devices"] // (c["tp"] * c["pp"] * c["cp"]))
                                                  * c["micro_batch"]) == 0,
     "{F_global_batch} {global_batch} must be a multiple of dp*micro-batch "
     "(dp = devices/(tp*pp*cp) = {devices}/({tp}*{pp}*{cp}), micro-batch {micro_batch})"),
    # an interleaved schedule runs its micro-batches in groups of at least pp (Megatron-Core
    # schedules.py: microbatch_group_size_per_vp_stage within [PP, M], pp by default; before
    # it, Megatron-LM's 'number of microbatches is not divisible by pipeline-parallel size')
    ("vpp", lambda c: (c["vpp"] == 1) | (c["global_batch"] >= c["pp"] * c["micro_batch"] * (
        c["devices"] // (c["tp"] * c["pp"] * c["cp"]))),
     "{F_vpp} {vpp} interleaves the pipeline, which needs at least {F_pp} {pp} micro-batches "
     "a replica: {F_global_batch} {global_batch} must be at least pp*dp*micro-batch (dp = "
     "devices/(tp*pp*cp) = {devices}/({tp}*{pp}*{cp}), micro-batch {micro_batch})"),
    # hybrid sharding: the shard groups tile a site's data-parallel ranks, and shard (ZeRO)
    ("shard-group", lambda c: (c.get("shard_group", 0) == 0)
     | (_site_dp(c) % np.maximum(c.get("shard_group", 0), 1) == 0),
     "{F_shard_group} {shard_group} must divide the data-parallel ranks of a site, "
     "devices/(tp*pp*cp) = {devices}/({tp}*{pp}*{cp}) over the sites {sites}"),
    ("shard-group", lambda c: (c.get("shard_group", 0) == 0) | (c.get("zero", 1) >= 1),
     "{F_shard_group} {shard_group} shards the model states within its group: it needs "
     "ZeRO 1-3, not {zero}"),
    # a run over several sites splits the devices, and the crossing dimension, evenly (a
    # layout without ``sites`` is on one site)
    ("sites", lambda c: c["devices"] % _sites(c) == 0,
     "{F_sites} {sites} must divide {F_devices} {devices} (each site holds the same number)"),
    ("cross-site", lambda c: (_sites(c) == 1) | (c.get("cross_site", 0) != CROSS_SITE_CODES["dp"])
     | ((c["devices"] // (c["tp"] * c["pp"] * c["cp"] * c["ep"])) % _sites(c) == 0),
     "{F_cross_site} dp splits the data-parallel replicas over the {sites} sites, so "
     "devices/(tp*pp*cp*ep) = {devices}/({tp}*{pp}*{cp}*{ep}) must be a multiple of {sites}"),
    ("cross-site", lambda c: (_sites(c) == 1) | (c.get("cross_site", 0) != CROSS_SITE_CODES["pp"])
     | (c["pp"] % _sites(c) == 0),
     "{F_cross_site} pp splits the pipeline's stages over the {sites} sites, so {F_pp} {pp} "
     "must be a multiple of {sites}"),
)


def arch_columns(spec, devices, sites=1) -> dict:
    """The model, job, stack, device-count and site-count columns the layout rules read
    (``spec``: a :class:`traincost.assemble.Inputs` or anything with its ``workload``,
    ``job`` and ``stack``)."""
    wl, job = spec.workload, spec.job
    return {"heads": wl.heads, "kv_heads": wl.kv_heads_effective,
            "layers": wl.layers, "seq_len": job.seq_len, "experts": wl.experts,
            "devices": devices, "global_batch": job.global_batch,
            "balanced_pipeline": bool(spec.stack.balanced_pipeline), "sites": sites,
            "shard_group": spec.stack.shard_group, "expert_tp": spec.stack.expert_tp}


def _expert_fold(c: dict):
    """The tensor-parallel ranks an expert group folds over: tp / expert_tp (1 where
    expert_tp is 0, tp, or does not divide tp, a rule of its own)."""
    etp = np.asarray(c.get("expert_tp", 0))
    ok = (etp > 0) & (c["tp"] % np.maximum(etp, 1) == 0)
    return np.where(ok, c["tp"] // np.maximum(etp, 1), 1)


def valid(c: dict) -> np.ndarray:
    """Boolean mask: which rows of layout columns ``c`` satisfy every rule."""
    ok = np.ones(np.broadcast(*[np.asarray(v) for v in c.values()]).shape, dtype=bool)
    for _, rule, _ in RULES:
        with np.errstate(divide="ignore", invalid="ignore"):
            ok &= np.asarray(rule(c), dtype=bool)
    return ok


#: checked only where a configuration states dp (elsewhere dp is derived, so it always
#: holds); a blank (NaN) dp is not checked
DP_RULE = ("dp", lambda c: np.isnan(c["dp"]) | (c["dp"] == c["devices"] // (c["tp"] * c["pp"]
                                                                          * c["cp"])),
           "{F_dp} {dp:g} must equal devices/(tp*pp*cp) = {devices}/({tp}*{pp}*{cp})")

#: the fields the rules' messages name, and the CLI's flag for each
FLAGS = {k: "--" + k.replace("_", "-") for k in ("tp", "pp", "cp", "ep", "vpp", "dp",
                                                 "devices", "seq_len", "global_batch",
                                                 "cross_site", "sites", "shard_group",
                                                 "expert_tp")}


class LayoutError(ValueError):
    """The first layout rule a configuration breaks.

    ``str()`` is the message with the CLI's flags (``--tp 7 must divide ...``);
    :meth:`in_words` renders it with other words for the fields, as a widget labels them.
    ``field`` is the rule's field.

    >>> err = LayoutError("tp", "{F_tp} {tp} must divide the heads {heads}", {"tp": 7, "heads": 32})
    >>> str(err), err.in_words({"tp": "tensor parallel"})
    ('--tp 7 must divide the heads 32', 'tensor parallel 7 must divide the heads 32')
    """

    def __init__(self, field: str, template: str, values: dict):
        self.field, self.template, self.values = field, template, dict(values)
        super().__init__(self.in_words(FLAGS))

    def in_words(self, words: dict) -> str:
        """The message with ``words[field]`` for each field (the bare name where absent)."""
        names = {f"F_{k}": words.get(k, k.replace("_", " ")) for k in FLAGS}
        return self.template.format(**self.values, **names)


_FLAG_WORDS = {f"F_{k}": v for k, v in FLAGS.items()}


def first_broken(c: dict, rules=RULES) -> np.ndarray:
    """Index into ``rules`` of the first rule each row of ``c`` breaks, -1 where none.

    Parameters
    ----------
    c : dict
        Layout and architecture columns (scalars or equal-length arrays), as for
        :func:`valid`. [-]
    rules : sequence
        The rules to apply, in order; :data:`RULES` by default (add :data:`DP_RULE`
        where dp is given). [-]

    Returns
    -------
    numpy.ndarray of int, the broadcast shape of ``c``.

    Examples
    --------
    >>> arch = {"heads": 96, "kv_heads": 96, "layers": 80, "seq_len": 2048, "experts": 0,
    ...         "devices": 64, "global_batch": 512, "balanced_pipeline": False, "cp": 1,
    ...         "ep": 1, "vpp": 1, "micro_batch": 1, "pp": 1}
    >>> first_broken({**arch, "tp": np.array([8, 7, 64])}).tolist()   # 7 and 64 break rule 0
    [-1, 0, 0]
    """
    first = np.full(np.broadcast(*[np.asarray(v) for v in c.values()]).shape, -1, dtype=np.int64)
    for i, (_, rule, _) in enumerate(rules):
        with np.errstate(divide="ignore", invalid="ignore"):
            broken = ~np.asarray(rule(c), dtype=bool)
        first[(first < 0) & broken] = i
    return first


def broken_messages(c: dict, first: np.ndarray, rules=RULES) -> np.ndarray:
    """Each row's first broken rule as its message ('' where none), formatted with its values.

    ``first`` is :func:`first_broken`'s answer for the same columns and rules.
    """
    first = np.asarray(first)
    out = np.full(first.shape, "", dtype=object)
    for r in np.flatnonzero(first.reshape(-1) >= 0):
        row = {k: (np.asarray(v).reshape(-1)[r] if np.ndim(v) else v) for k, v in c.items()}
        out.reshape(-1)[r] = rules[int(first.reshape(-1)[r])][2].format(**row, **_FLAG_WORDS)
    return out


def check(c: dict) -> None:
    """Raise :class:`LayoutError` (a ValueError) for the first rule a single layout breaks."""
    for field, rule, message in RULES:
        if not bool(rule(c)):
            raise LayoutError(field.replace("-", "_"), message, c)


def divisors(n: int) -> list[int]:
    """Positive divisors of n, ascending, found in O(sqrt(n)) steps.

    Each divisor d <= sqrt(n) pairs with n // d, so the walk stops at the square root
    (a huge layer or head count no longer walks every integer below it).

    >>> divisors(96), divisors(1), divisors(49)
    ([1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 96], [1], [1, 7, 49])
    """
    n = int(n)
    small, large = [], []
    d = 1
    while d * d <= n:
        if n % d == 0:
            small.append(d)
            if d != n // d:
                large.append(n // d)
        d += 1
    return small + large[::-1]


def powers_of_two_upto(n: int) -> list[int]:
    """1, 2, 4, ... up to n."""
    out, x = [], 1
    while x <= n:
        out.append(x)
        x *= 2
    return out


#: choices a search explores for each layout knob that the user leaves open (micro_batch
#: and cp are widened by :data:`SEARCH_BOUNDS` when the workload's batch and sequence are known)
SEARCH_SPACE = {
    "micro_batch": (1, 2, 4, 8),
    # offload is asked for, not searched: whether a stack moves activations to the host is
    # a choice its recipe states (Megatron-Core's --cpu-offloading), and a search free to
    # pick it would credit every run with a host link it may not use
    "recompute": tuple(RECOMPUTE_CODES[k] for k in ("none", "selective", "full")),
    "zero": (0, 1, 2, 3),
    "vpp": (1, 2, 4),
    "cp": (1,),
    "cross_site": tuple(CROSS_SITE_CODES.values()),
}

#: how far the workload-dependent choices reach
SEARCH_BOUNDS = {
    # micro-batches b dividing the global batch with b * seq_len up to this many tokens are
    # tried too (b = 16 at s = 2048). Judgement: beyond that a larger b adds activation
    # memory for little GEMM efficiency (Narayanan et al. SC21 Sec. 3.5 on the b trade-off)
    "max_micro_batch_tokens": 32768,
    # context parallelism (powers of two) is tried while each rank keeps at least this many
    # tokens (Llama 3, arXiv:2407.21783 Table 4: cp 16 at 131,072 tokens = 8,192 per rank)
    "min_cp_tokens_per_rank": 4096,
    # virtual stages: besides 1, 2, 4 the divisors of the layer count up to this many are
    # tried, so a stage of 3 or 5 layers can interleave one layer per chunk (Megatron-LM
    # needs the layers per stage divisible by vpp; SC21's 105-layer 529.6B model on 35
    # stages has 3). Llama 3 ran 8 (arXiv:2407.21783 Sec. 3.3.2)
    "max_vpp": 8,
}


def candidate_space(fixed: dict, *, heads: int, layers: int, experts: int, devices: int,
                    domain: int, global_batch: int | None = None,
                    seq_len: int | None = None, sites: int = 1) -> dict:
    """The choices of every layout knob, in enumeration order (see :func:`candidates`).

    Parameters
    ----------
    fixed : dict
        Knobs the user set (tp, pp, cp, ep, vpp, zero, micro_batch, recompute code);
        missing or None ones are searched. [-]
    heads, layers, experts, devices, domain : int
        What bounds the choices: tp is a power of two or a divisor of the heads, up to
        min(heads, domain, devices); pp a divisor of the layers or a power of two up to them;
        vpp 1, 2, 4 or a divisor of the layers up to ``SEARCH_BOUNDS["max_vpp"]``; ep
        divides the experts. [-]
        When given, micro-batches dividing the global batch up to
        ``SEARCH_BOUNDS["max_micro_batch_tokens"]`` tokens and context-parallel sizes
        leaving ``SEARCH_BOUNDS["min_cp_tokens_per_rank"]`` tokens per rank are added. [-]

    Returns
    -------
    dict of lists, knob -> ascending choices.
    """
    tp_max = min(heads, max(domain, 1), devices)
    space = {
        "tp": sorted(set(powers_of_two_upto(tp_max)) | {t for t in divisors(heads) if t <= tp_max}),
        # divisors give even stages; powers of two are what clusters are built from
        "pp": sorted({p for p in divisors(layers) + powers_of_two_upto(layers)
                      if p <= devices}),
        "ep": divisors(experts) if experts else [1],
        **{k: list(v) for k, v in SEARCH_SPACE.items()},
    }
    space["vpp"] = sorted(set(space["vpp"]) | {
        v for v in divisors(layers) if v <= SEARCH_BOUNDS["max_vpp"]})
    if global_batch is not None and seq_len is not None:
        b_max = SEARCH_BOUNDS["max_micro_batch_tokens"] // seq_len
        space["micro_batch"] = sorted(set(space["micro_batch"]) | {
            b for b in range(1, min(b_max, global_batch) + 1) if global_batch % b == 0})
    if seq_len is not None:
        space["cp"] = sorted(set(space["cp"]) | {
            c for c in powers_of_two_upto(min(seq_len, devices))
            if c > 1 and seq_len % c == 0
            and seq_len // c >= SEARCH_BOUNDS["min_cp_tokens_per_rank"]})
    if sites == 1:
        space["cross_site"] = [CROSS_SITE_CODES["dp"]]
    return {k: ([fixed[k]] if fixed.get(k) is not None else v) for k, v in space.items()}


def space_size(space: dict) -> int:
    """How many layouts :func:`candidate_chunk` enumerates over ``space``. [-]"""
    n = 1
    for choices in space.values():
        n *= len(choices)
    return n


def candidate_chunk(space: dict, start: int, stop: int) -> dict:
    """Layouts ``start`` to ``stop - 1`` of the product of ``space``'s choices.

    The order is ``itertools.product``'s (the last knob varies fastest), decoded from the
    flat index, so a search can walk any number of layouts a chunk at a time.

    Examples
    --------
    >>> candidate_chunk({"tp": [1, 2], "pp": [1, 3, 5]}, 2, 5)
    {'tp': array([1, 2, 2]), 'pp': array([5, 1, 3])}
    """
    idx = np.arange(start, stop, dtype=np.int64)
    digits = {}
    for k in reversed(list(space)):
        choices = np.asarray(space[k], dtype=np.int64)
        digits[k] = choices[idx % len(choices)]
        idx //= len(choices)
    return {k: digits[k] for k in space}


#: what :func:`valid_chunk` keeps: the last few chunks, at most this many valid layouts in all
#: (10 int64 columns: 5 MiB, a fraction of one search chunk's outputs) [-]
_VALID_KEPT_LAYOUTS = 1 << 16
#: and at most this many chunks [-]
_VALID_KEPT_CHUNKS = 16
_VALID_CHUNKS: dict = {}


def valid_chunk(space: dict, start: int, stop: int, arch: dict) -> tuple[np.ndarray, dict]:
    """The valid layouts among layouts ``start`` to ``stop - 1`` of ``space``.

    Parameters
    ----------
    space : dict
        Knob -> choices (:func:`candidate_space`). [-]
    start, stop : int
        The chunk of :func:`candidate_chunk`. [-]
    arch : dict
        The architecture columns (:func:`arch_columns`) the rules of :func:`valid` read. [-]

    Returns
    -------
    (numpy.ndarray, dict)
        The valid layouts' positions counted from ``start``, and their knob columns; both
        read-only.

    Neither depends on the accelerator, only on the space (the scale-up domain bounds its tp
    choices), the chunk and the architecture, so the last few are kept: an estimate on each
    of several accelerators at one device count (:func:`traincost.compare`, the deadline
    widget's candidates) walks the same layouts on every accelerator of one domain size
    (issue 26).
    """
    key = (tuple((k, tuple(v)) for k, v in space.items()), start, stop, tuple(arch.items()))
    kept = _VALID_CHUNKS.get(key)
    if kept is None:
        lay = candidate_chunk(space, start, stop)
        pos = np.flatnonzero(valid({**arch, **lay}))
        lay = {k: v[pos] for k, v in lay.items()}
        for v in (pos, *lay.values()):
            v.flags.writeable = False
        kept = (pos, lay)
        if len(pos) <= _VALID_KEPT_LAYOUTS:               # a larger chunk is not kept
            while _VALID_CHUNKS and (
                    len(_VALID_CHUNKS) >= _VALID_KEPT_CHUNKS
                    or len(pos) + sum(len(p) for p, _ in _VALID_CHUNKS.values())
                    > _VALID_KEPT_LAYOUTS):
                _VALID_CHUNKS.pop(next(iter(_VALID_CHUNKS)))          # the oldest first
            _VALID_CHUNKS[key] = kept
    return kept


def candidates(fixed: dict, *, heads: int, layers: int, experts: int, devices: int,
               domain: int, global_batch: int | None = None, seq_len: int | None = None) -> dict:
    """Enumerate layout columns: every combination of the open knobs.

    Parameters are those of :func:`candidate_space`.

    Returns
    -------
    dict of equal-length arrays, one entry per knob (before validity filtering).
    """
    space = candidate_space(fixed, heads=heads, layers=layers, experts=experts, devices=devices,
                            domain=domain, global_batch=global_batch, seq_len=seq_len)
    return candidate_chunk(space, 0, space_size(space))
