"""The data tables: ``data/*.csv`` read from the installed package (shipped as package data
``traincost.data`` and read through :mod:`importlib.resources`, so an editable install and a
built wheel find the same files), every cell checked against ``data/schema.csv``.

Two readings of one file: :func:`records` and :func:`by_id`, rows as dicts read with the csv
module (the catalog's lookups, so an estimate needs no pandas), and :func:`read_table`, a
pandas DataFrame (imported there) for the tables a user or a notebook asks for.
"""

from __future__ import annotations

import csv
import functools
import math
from importlib import resources


def _read_text(name: str) -> tuple[list[str], list[list[str]]]:
    """``data/<name>.csv`` as its header and its rows, every cell as text (``''`` for
    empty; blank lines skipped). A file that is not well-formed CSV, or a row with more or
    fewer cells than the header, is a ValueError naming the file (and the line)."""
    where = f"data/{name}.csv"
    try:
        with resources.files("traincost.data").joinpath(f"{name}.csv").open(
                "r", encoding="utf-8-sig", newline="") as f:
            lines = [row for row in csv.reader(f, strict=True) if row]
    except (csv.Error, UnicodeDecodeError) as exc:
        raise ValueError(f"{where}: {exc}") from None
    if not lines:
        raise ValueError(f"{where}: empty, no header")
    header, rows = lines[0], lines[1:]
    for i, row in enumerate(rows):
        if len(row) != len(header):
            raise ValueError(f"{where} line {i + 2}: {len(row)} cells, the header has "
                             f"{len(header)}")
    return header, rows


@functools.cache
def _schema_text() -> tuple[list[str], list[list[str]]]:
    return _read_text("schema")


@functools.cache
def schema():
    """``data/schema.csv``: one row per column of each table (dtype, required, range,
    allowed values), every cell as text (a pandas DataFrame)."""
    import pandas as pd
    header, rows = _schema_text()
    return pd.DataFrame(rows, columns=header)


@functools.cache
def _schema_rows(name: str) -> tuple:
    header, rows = _schema_text()
    return tuple(r for r in (dict(zip(header, row)) for row in rows) if r["table"] == name)


def check_table(name: str, raw) -> None:
    """Check a table's cells (as text: a DataFrame, :func:`read_raw_table`) against
    ``data/schema.csv``.

    Raises ValueError for the first problem, naming the file, the row (its line in the
    file and its id) and the column: a missing or unknown column, an empty required cell,
    a number that is not one (``"312 TFLOPS"``), a whole number or 0/1 flag that is not,
    a value out of the stated range or not among the allowed ones, a duplicate id. A table
    the schema does not describe is not checked.

    >>> bad = read_raw_table("pue").assign(pue=lambda d: d["pue"].where(d.index > 0, "1,1"))
    >>> check_table("pue", bad)
    Traceback (most recent call last):
    ValueError: data/pue.csv line 2 (id 'google'), column pue: '1,1' is not a number
    """
    _check(name, [str(c) for c in raw.columns],
           [[str(v) for v in row] for row in raw.itertuples(index=False)])


def _check(name: str, header: list, rows: list) -> None:
    """:func:`check_table` on a header and rows of text cells."""
    spec = _schema_rows(name)
    if not spec:
        return
    where = f"data/{name}.csv"
    columns = [c["column"] for c in spec]
    missing = [c for c in columns if c not in header]
    extra = [c for c in header if c not in columns]
    if missing or extra:
        raise ValueError(f"{where}: column {(missing or extra)[0]!r} is "
                         f"{'missing' if missing else 'not in data/schema.csv'}")
    at = [header.index(c["column"]) for c in spec]
    ids = [row[header.index("id")].strip() for row in rows] if "id" in header else None
    for i, row in enumerate(rows):
        for c, j in zip(spec, at):
            problem = _cell_problem(row[j].strip(), c)
            if problem:
                ident = f" (id {ids[i]!r})" if ids else ""
                raise ValueError(f"{where} line {i + 2}{ident}, column {c['column']}: "
                                 f"{problem}")
    if ids:
        seen = set()
        for i, ident in enumerate(ids):
            if ident in seen:
                raise ValueError(f"{where} line {i + 2}: id {ident!r} appears twice")
            seen.add(ident)


def _cell_problem(cell: str, c: dict) -> str:
    """What is wrong with one cell (text) under its schema row, '' if nothing."""
    if not cell:
        return "required, but empty" if c["required"] == "1" else ""
    if c["dtype"] in ("int", "float", "bool"):
        try:
            x = float(cell)
        except ValueError:
            return f"{cell!r} is not a number"
        if not math.isfinite(x):
            return f"{cell!r} is not a finite number"
        if c["dtype"] in ("int", "bool") and x != round(x):
            return f"{cell!r} is not a whole number"
        if c["dtype"] == "bool" and x not in (0, 1):
            return f"{cell!r} is not 0 or 1"
        if c["min"] and x < float(c["min"]):
            return f"{cell} is below the minimum {c['min']}"
        if c["max"] and x > float(c["max"]):
            return f"{cell} is above the maximum {c['max']}"
    if c["allowed"] and cell not in c["allowed"].split("|"):
        return f"{cell!r} is not one of {c['allowed'].replace('|', ', ')}"
    return ""


def read_raw_table(name: str):
    """``data/<name>.csv`` with every cell as text ('' for empty), unchecked (a pandas
    DataFrame)."""
    import pandas as pd
    header, rows = _read_text(name)
    return pd.DataFrame(rows, columns=header)


def read_table(name: str):
    """Read ``data/<name>.csv`` from the installed package, checked against
    ``data/schema.csv`` first (:func:`check_table`), as a pandas DataFrame (empty cells
    NaN, numbers parsed). [-]"""
    import pandas as pd
    _check(name, *_read_text(name))
    with resources.files("traincost.data").joinpath(f"{name}.csv").open(
            "r", encoding="utf-8") as f:
        return pd.read_csv(f)


def _value(cell: str, dtype: str):
    """One cell as :func:`read_table` reads it: NaN when empty, a float or an int by the
    schema's dtype, else the text."""
    if cell == "":
        return math.nan
    if dtype == "float":
        return float(cell)
    if dtype in ("int", "bool"):
        return int(float(cell))
    return cell


@functools.cache
def records(name: str) -> tuple:
    """``data/<name>.csv`` checked against the schema, as one dict per row (column ->
    value, typed as :func:`_value` reads it): the catalog's lookups read these, so an
    estimate needs no pandas. [-]"""
    header, rows = _read_text(name)
    _check(name, header, rows)
    dtype = {c["column"]: c["dtype"] for c in _schema_rows(name)}
    return tuple({c: _value(cell, dtype.get(c, "str")) for c, cell in zip(header, row)}
                 for row in rows)


@functools.cache
def by_id(name: str) -> dict:
    """:func:`records` of a table with an ``id`` column, keyed by id (insertion order the
    file's). [-]"""
    return {r["id"]: r for r in records(name)}


def data_files() -> list[str]:
    """Names of the CSV files shipped with the package."""
    return sorted(p.name for p in resources.files("traincost.data").iterdir()
                  if p.name.endswith(".csv"))
