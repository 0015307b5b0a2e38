"""Many fully specified configurations at once: one table row in, one row of results out.

:func:`sweep` turns a table of configurations into the columns of the one orchestrator,
:func:`traincost.model.evaluate`, and returns every output column of the JSON contract
(:func:`traincost.model.report_units`) beside the input, with ``valid`` and ``problem``
(the first layout rule a row breaks, from :data:`traincost.layout.RULES`).

Input columns (one row per configuration):

========================  ==================================================================
``accelerator``           catalog id (required)
``devices``               device count (required)
``model``                 preset id; architecture columns given too override it per row
``layers`` ``hidden``     architecture (``heads``, ``kv_heads``, ``ffn_hidden``, ``vocab``,
                          ``gated_mlp``, ``experts``, ``top_k``): blank cells keep the preset's
``seq_len``               sequence length (default: the preset's)
``global_batch``          sequences per step (required)
``tokens``                training tokens (default: the preset's reported figure, else 300e9)
``tp`` ``pp`` ``cp``      the layout; ``ep``, ``vpp``, ``zero``, ``micro_batch`` and
                          ``recompute`` (none / selective / full) too. A layout column left out
                          takes :data:`traincost.inputs.DEFAULT_LAYOUT`'s value
``dp``                    optional; checked against devices / (tp * pp * cp)
``attention_kernel``      the software stack: auto / flash / cudnn / materialized, ``parallel_block``,
                          ``overlap`` (e.g. "tp,pp,dp"), ``balanced_pipeline``,
                          ``fp8_activations`` (fp8 rows only), ``optimizer_state``
                          (fp32 / bf16); blank cells keep :class:`traincost.Stack`'s
                          defaults
``precision``             bf16 / fp16 / fp8 / tf32 (default bf16, fp16 where there is no bf16)
``region``                grid region id (default: world average), or ``grid_gco2e_per_kwh``
``pue``                   default: the cloud provider's, else the industry average;
                          ``wue_l_per_kwh`` likewise (data/water.csv)
``price_usd_per_h``       default: the catalog's price; ``price_model`` rental / ownership
``power_cap_w``           per-device power limit [W] (default: none, the device's TDP);
                          ``scaleup_domain_devices``, ``scaleup_gbps``, ``scaleout_gbps``,
                          ``scaleout_oversubscription``: network tiers other than the
                          accelerator's [devices, Gb/s, R:1]; ``sites``,
                          ``site_link_gbps``, ``site_link_latency_ms``, ``cross_site``
                          (dp / pp): a run over several sites
========================  ==================================================================

Columns the sweep does not read pass through (a run's name, a note); one named as a
:func:`traincost.estimate` keyword whose column is another (``grid_intensity``,
``power_cap``, ``price_per_hour``, ...) is refused, naming the column to use.

Rows are grouped by their accelerator, power cap, workload, job, stack and site: each
distinct one is built once
with the same constructors :func:`traincost.estimate` uses (so the same defaults and the
same validation), then broadcast to its rows with vectorised look-ups; the layouts are
evaluated a chunk of rows at a time. A pandas DataFrame returns a DataFrame; a dask
DataFrame returns a dask DataFrame (``map_partitions`` with an explicit ``meta``).

Examples
--------
>>> import pandas as pd, traincost
>>> table = pd.DataFrame({"accelerator": ["h100-sxm5-80gb", "h100-sxm5-80gb"],
...                       "devices": [64, 64], "model": "llama2-7b", "global_batch": 512,
...                       "tp": [1, 7], "pp": 1, "micro_batch": 1})
>>> out = traincost.sweep(table)
>>> out["valid"].tolist()
[True, False]
>>> out.loc[1, "problem"]
'--tp 7 must divide the number of attention heads 32'
"""

from __future__ import annotations

import math
import numbers
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:                       # pandas is imported where a table is read
    import pandas as pd

from . import catalog, layout, options
from .assumptions import DEFAULT, Assumptions
from .assemble import (ARCHITECTURE_INPUTS, STACK_INPUTS, Inputs, build_job, build_stack,
                       build_workload, columns, system)
from .inputs import DEFAULT_LAYOUT, PRECISIONS, PRICE_MODELS
from .model import evaluate, report_units

#: rows evaluated at once: bounds the temporaries of evaluate() (~35 MiB per chunk)
DEFAULT_CHUNK_SIZE = 1 << 16
#: the layout columns and their defaults (:data:`traincost.inputs.DEFAULT_LAYOUT`)
LAYOUT_DEFAULTS = dict(DEFAULT_LAYOUT)
#: architecture columns that override a preset row by row
ARCH_COLUMNS = ARCHITECTURE_INPUTS
#: software-stack columns (see :class:`traincost.Stack`); blank cells keep the defaults
STACK_COLUMNS = STACK_INPUTS
_WORKLOAD_COLUMNS = ("model", *ARCH_COLUMNS, *options.names("Job"), *STACK_COLUMNS)
#: a row is one site's grid (a run over several regions is an estimate's, site_regions)
_SITE_COLUMNS = tuple(options.option(n).column for n in options.names("Site")
                      if n != "site_regions")
_SYSTEM_COLUMNS = tuple(options.option(n).column for n in options.SYSTEM_INPUTS)
#: stack columns read as lower-case text
_TEXT_COLUMNS = tuple(n for n in STACK_COLUMNS if options.option(n).kind in ("choice", "str"))


class _Zeros(dict):
    def __missing__(self, key):
        return 0.0


#: the output columns, in report order (report_units' keys)
REPORT_COLUMNS = tuple(report_units(_Zeros()))
_BOOL_COLUMNS = ("fits_in_memory",)


def _is_dask(obj) -> bool:
    return type(obj).__module__.split(".")[0] in ("dask", "dask_expr")


def _blank(x) -> bool:
    import pandas as pd
    return x is None or (isinstance(x, float) and math.isnan(x)) or x is pd.NA


def _cell(x):
    """A table cell as a plain Python value (None for blank)."""
    if _blank(x):
        return None
    return x.item() if isinstance(x, np.generic) else x


def _unknown_ids(df: pd.DataFrame, column: str, allowed) -> None:
    import pandas as pd
    values = pd.unique(df[column].dropna())
    bad = [v for v in values if str(v).strip().lower() not in set(allowed)]
    if bad:
        rows = list(df.index[df[column].isin(bad[:1]).to_numpy()][:5])
        raise ValueError(f"{column}: unknown {bad[0]!r} (row {', '.join(map(str, rows))}); "
                         f"allowed: {', '.join(map(str, allowed))}")


def _int_column(df: pd.DataFrame, column: str, minimum: int, default=None,
                blank_ok: bool = False) -> np.ndarray:
    """A layout column as int64, every cell checked (ValueError naming the column).

    With ``blank_ok`` blank cells stay NaN and the column is float.
    """
    import pandas as pd
    if column not in df:
        return np.full(len(df), default, dtype=np.int64)
    cells = df[column]
    # a number, not text or a yes/no; at most the declared maximum (options.MAX_COUNT)
    typed = cells.map(lambda x: isinstance(x, numbers.Real)
                      and not isinstance(x, (bool, np.bool_)))
    raw = pd.to_numeric(cells.where(typed), errors="coerce")
    vals = raw.to_numpy(dtype=float, na_value=np.nan)
    limit = options.MAX_COUNT
    wrong = (vals != np.round(vals)) | (vals < minimum) | (vals > limit)
    if blank_ok:
        given = cells.notna().to_numpy()
        bad = given & (~np.isfinite(vals) | wrong)
        if not bad.any():
            return vals
    else:
        bad = ~np.isfinite(vals) | wrong
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise ValueError(f"{column.replace('_', '-')}: {_cell(cells.iloc[i])!r} (row "
                         f"{df.index[i]}) must be a whole number from {minimum} to {limit:,}")
    return vals.astype(np.int64)


def _code_column(df: pd.DataFrame, knob: str) -> np.ndarray:
    """A text layout column (``recompute``, ``cross_site``) as the model's codes
    (:data:`traincost.layout.KNOB_CODES`): names or their integer codes, blank cells
    taking :data:`LAYOUT_DEFAULTS`'s."""
    import pandas as pd
    names = layout.KNOB_CODES[knob]
    if knob not in df:
        return np.full(len(df), names[LAYOUT_DEFAULTS[knob]], dtype=np.int64)
    codes, uniques = pd.factorize(df[knob], use_na_sentinel=False)
    table = []
    for x in uniques:                   # mode names, or their integer codes
        code = names.get(str(x).strip().lower())
        if code is None and not _blank(x) and x in names.values():
            code = int(x)
        if code is None and knob == "cross_site" and _blank(x):
            code = names[LAYOUT_DEFAULTS[knob]]      # moot on one site
        if code is None:
            row = df.index[np.flatnonzero(codes == len(table))[0]]
            raise ValueError(f"{knob.replace('_', '-')}: {x!r} (row {row}) is not one of "
                             f"{', '.join(names)}")
        table.append(code)
    return np.asarray(table, dtype=np.int64)[codes]


def _entities(df: pd.DataFrame, assumptions: Assumptions):
    """Group rows by accelerator, precision, workload and site; one columns() dict each.

    Returns (codes per row, list of column dicts per distinct configuration, precision per
    row).
    """
    accs = catalog.accelerators()
    _unknown_ids(df, "accelerator", accs.index)
    if "model" in df:
        _unknown_ids(df, "model", catalog.models().index)
    if "precision" in df:
        _unknown_ids(df, "precision", PRECISIONS)
    if "price_model" in df:
        _unknown_ids(df, "price_model", PRICE_MODELS)
    key_cols = [c for c in ("accelerator", "precision", *_SYSTEM_COLUMNS, *_WORKLOAD_COLUMNS,
                            *_SITE_COLUMNS) if c in df]
    codes = df.groupby(key_cols, sort=False, dropna=False).ngroup().to_numpy()
    _, first = np.unique(codes, return_index=True)
    acc_cache, wl_cache, site_cache, out, precisions = {}, {}, {}, [], []
    for u, pos in enumerate(first):
        row = {c: _cell(df[c].iloc[pos]) for c in key_cols}
        label = df.index[pos]
        try:
            acc_id = str(row["accelerator"]).strip().lower()
            acc = acc_cache.get(acc_id) or acc_cache.setdefault(acc_id,
                                                                catalog.accelerator(acc_id))
            precision = row.get("precision")
            if precision is None:
                precision = acc.default_precision
            precision = str(precision).strip().lower()
            acc.peak_flop_per_s(precision)          # raises for a missing precision
            wkey = tuple(row.get(c) for c in _WORKLOAD_COLUMNS)
            if wkey not in wl_cache:
                # numbers and yes/no cells are checked (and 'false' read as False) by the
                # declared inputs, in build_workload
                kw = {c: row.get(c) for c in _WORKLOAD_COLUMNS}
                for c in _TEXT_COLUMNS:
                    if kw[c] is not None:
                        kw[c] = str(kw[c]).strip().lower()
                model = kw.pop("model")
                model = None if model is None else str(model)
                wl_cache[wkey] = (
                    build_workload(model, **{c: kw[c] for c in ARCH_COLUMNS}),
                    build_job(model, **{c: kw[c] for c in options.names("Job")}),
                    build_stack(**{c: kw[c] for c in STACK_COLUMNS}))
            wl, job, stack = wl_cache[wkey]
            skey = tuple(row.get(c) for c in _SITE_COLUMNS)
            if skey not in site_cache:
                for name in options.names("Site"):
                    if name != "site_regions":
                        options.check(name, row.get(options.option(name).column))
                price = row.get("price_usd_per_h")
                site_cache[skey] = catalog.site(
                    row.get("region"), grid_intensity_g=row.get("grid_gco2e_per_kwh"),
                    pue_value=row.get("pue"), wue_value=row.get("wue_l_per_kwh"),
                    price_usd_per_h=math.nan if price is None else float(price),
                    price_model=row.get("price_model") or "rental", assumptions=assumptions)
            site = site_cache[skey]
            knobs = {n: options.check(n, row.get(options.option(n).column))
                     for n in options.SYSTEM_INPUTS}
            # one device per site stands for the rows' counts, which replace it below
            cols = columns(system(acc, knobs["sites"] or 1, **knobs),
                           Inputs(wl, job, stack, site), precision, {}, assumptions)
        except ValueError as exc:
            raise ValueError(f"{exc} (row {label})") from None
        del cols["devices"]
        out.append(cols)
        precisions.append(precision)
    return codes, out, np.asarray(precisions, dtype=object)[codes]


def _per_row(entities: list, codes: np.ndarray) -> dict:
    """Entity columns broadcast to rows: a scalar where every row shares the value."""
    cols = {}
    for key in entities[0]:
        vals = np.asarray([e[key] for e in entities])
        if len(vals) == 1 or (vals.dtype != object and np.all(vals == vals[0])):
            cols[key] = vals[0]
        else:
            cols[key] = vals[codes]
    return cols


def sweep(table, *, chunk_size: int = DEFAULT_CHUNK_SIZE, progress=None,
          assumptions: Assumptions = DEFAULT):
    """Evaluate every row of a table of fully specified configurations.

    Parameters
    ----------
    table : pandas.DataFrame or dask.dataframe.DataFrame
        One configuration per row (columns in the module docstring).
    chunk_size : int
        Rows evaluated at once; bounds the memory of the temporaries. [-]
    progress : callable, optional
        Called as ``progress(done, total)`` with rows evaluated so far (pandas only). [-]
    assumptions : Assumptions
        Modelling defaults. [-]

    Returns
    -------
    The input columns plus ``precision`` (as used), every column of
    :func:`traincost.model.report_units` (``dp`` as derived, replacing an input ``dp``),
    ``valid`` and ``problem``. Rows that break a layout rule have ``valid = False``,
    their first broken rule in ``problem`` and NaN results.

    Raises
    ------
    ValueError
        An unknown id or a bad value, naming the column, the value and what is allowed.
    """
    import pandas as pd
    if _is_dask(table):
        meta = sweep(table._meta, chunk_size=chunk_size, assumptions=assumptions)
        return table.map_partitions(sweep, chunk_size=chunk_size, assumptions=assumptions,
                                    meta=meta)
    if int(chunk_size) < 1:
        raise ValueError(f"chunk-size: {chunk_size!r} must be >= 1")
    df = table
    for c in ("accelerator", "devices", "global_batch"):
        if c not in df:
            raise ValueError(f"{c.replace('_', '-')}: column required")
    if "model" not in df and not {"layers", "hidden", "heads", "seq_len"} <= set(df):
        raise ValueError("model: column required unless layers, hidden, heads and seq_len "
                         "columns are given")
    # an estimate keyword whose sweep column has another name would be passed through unread
    for o in options.INPUTS:
        if o.column != o.name and o.name in df:
            raise ValueError(f"{o.name.replace('_', '-')}: the sweep's column is {o.column} "
                             f"(traincost.estimate's keyword {o.name} is not read here)")
    if "site_regions" in df:
        raise ValueError("site-regions: not a sweep column (a row has one grid: region or "
                         "grid_gco2e_per_kwh; traincost.estimate takes a region per site)")
    n = len(df)
    lay = {k: _int_column(df, k, 0 if k == "zero" else 1, LAYOUT_DEFAULTS[k])
           for k in ("tp", "pp", "cp", "ep", "vpp", "zero", "micro_batch")}
    if (lay["zero"] > 3).any():
        i = int(np.flatnonzero(lay["zero"] > 3)[0])
        raise ValueError(f"zero: {lay['zero'][i]} (row {df.index[i]}) is not one of 0, 1, 2, 3")
    lay.update({k: _code_column(df, k) for k in layout.KNOB_CODES})
    devices = _int_column(df, "devices", 1)
    result = {"precision": np.zeros(n, dtype=object)}
    result.update({k: np.full(n, np.nan) for k in REPORT_COLUMNS})
    for k in _BOOL_COLUMNS:
        result[k] = np.zeros(n, dtype=bool)
    valid = np.zeros(n, dtype=bool)
    problem = np.full(n, "", dtype=object)
    if n:
        codes, entities, precision = _entities(df, assumptions)
        result["precision"] = precision
        ent = _per_row(entities, codes)
        arch = {"heads": ent["heads"], "kv_heads": ent["kv_heads"], "layers": ent["layers"],
                "seq_len": ent["seq_len"], "experts": ent["experts"], "devices": devices,
                "global_batch": ent["global_batch"],
                "balanced_pipeline": ent["balanced_pipeline"], "sites": ent["sites"]}
        rules = layout.RULES
        checked = {**arch, **lay}
        if "dp" in df:
            checked["dp"] = _int_column(df, "dp", 1, blank_ok=True)
            rules = (*layout.RULES, layout.DP_RULE)
        first = layout.first_broken(checked, rules)
        valid = first < 0
        problem = layout.broken_messages(checked, first, rules)
        rows = np.flatnonzero(valid)
        for start in range(0, len(rows), int(chunk_size)):
            take = rows[start:start + int(chunk_size)]
            cols = {k: (v[take] if np.ndim(v) else v) for k, v in ent.items()}
            cols.update({k: v[take] for k, v in lay.items()})
            cols["devices"] = devices[take]
            with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
                rep = report_units(evaluate(cols, assumptions))
            for k in REPORT_COLUMNS:
                result[k][take] = rep[k]
            if progress is not None:
                progress(min(start + int(chunk_size), len(rows)), len(rows))
        if progress is not None and not len(rows):
            progress(0, 0)
    result["valid"] = valid
    result["problem"] = problem
    new = pd.DataFrame(result, index=df.index, copy=False)
    new = new.astype({"precision": object, "problem": object})
    kept = df.drop(columns=[c for c in new.columns if c in df])
    return pd.concat([kept, new], axis=1)
