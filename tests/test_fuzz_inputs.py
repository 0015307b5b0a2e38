"""A bounded fuzz over the declared inputs (issue 25): any value, hostile or not, gives
either a result with finite, non-negative figures or one ValueError line naming the input.

Values are drawn per declared kind from sensible and hostile ones alike (huge and negative
integers, NaN and infinities, text, booleans where numbers belong, unknown choices); the
layout is searched where a knob is left open, as a user's would be.
"""

from __future__ import annotations

import math

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import traincost
from traincost import options

HOSTILE = st.one_of(st.none(), st.booleans(), st.text(max_size=6),
                    st.integers(min_value=-10**30, max_value=10**30),
                    st.floats(allow_nan=True, allow_infinity=True))


def _values(o: options.Option):
    """Sensible values of an input's kind, mixed with hostile ones."""
    if o.kind == "int":
        good = st.sampled_from(o.choices) if o.choices else st.integers(1, 16)
    elif o.kind == "float":
        good = st.floats(min_value=max(o.minimum or 0.0, 1.0), max_value=3.0)
    elif o.kind == "bool":
        good = st.booleans()
    elif o.kind == "choice":
        good = st.sampled_from(o.choices)
    else:
        good = st.none()
    return st.one_of(good, good, HOSTILE)


#: the inputs fuzzed: all but the model and region ids (drawn from the catalog's own)
FUZZED = [o for o in options.INPUTS if o.name not in ("model", "region", "global_batch")]


@settings(max_examples=150, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_estimate_gives_a_result_or_one_line(data):
    o = data.draw(st.sampled_from(FUZZED))
    value = data.draw(_values(o))
    kw = dict(accelerator="h100-sxm5-80gb", devices=data.draw(st.sampled_from([8, 64])),
              model=data.draw(st.sampled_from(["llama2-7b", "mixtral-8x7b"])),
              global_batch=data.draw(st.sampled_from([64, 512])), tp=2, pp=1,
              micro_batch=1, recompute="selective", zero=1)
    kw[o.name] = value
    try:
        d = traincost.estimate(**kw).to_dict()
    except ValueError as exc:
        message = str(exc)
        assert message and "\n" not in message.strip(), message
        return
    for key in ("step_time_s", "tokens_per_s", "train_time_days", "device_hours",
                "facility_energy_mwh", "co2e_t", "memory_gib_per_device"):
        assert d[key] is not None and math.isfinite(d[key]) and d[key] >= 0, (key, o.name,
                                                                            value)


@pytest.mark.parametrize("o", FUZZED, ids=lambda o: o.name)
def test_nan_is_never_taken_as_the_default(o):
    """NaN is refused for every number, or for anything else as not of its kind: never
    quietly read as 'not given'."""
    with pytest.raises(ValueError, match=o.name.replace("_", "-")):
        traincost.estimate(accelerator="h100-sxm5-80gb", devices=8, model="llama2-7b",
                           global_batch=64, **{o.name: float("nan")})


TEXT = st.one_of(st.sampled_from(["nan", "inf", "-1", "0", "1e400", "99999999999999999999",
                                  "2.5", "", " ", "--", "abc", "1e3", "8", "true"]),
                 st.text(alphabet="0123456789.-eE", min_size=1, max_size=8))


@settings(max_examples=60, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_cli_exits_0_with_a_result_or_2_with_one_line(data):
    """The CLI on a hostile value for one flag: exit 0 and a finite, non-negative JSON
    result, or exit 2, one line on stderr and nothing on stdout. Never a traceback."""
    import contextlib
    import io
    import json

    from traincost import cli
    o = data.draw(st.sampled_from([o for o in FUZZED if o.kind != "bool"]))
    argv = ["estimate", "--accelerator", "h100-sxm5-80gb", "--devices", "64", "--model",
            "llama2-7b", "--global-batch", "512", "--tp", "2", "--pp", "1", "--micro-batch",
            "1", "--recompute", "selective", "--zero", "1", "--json"]
    argv += [o.flag, data.draw(TEXT)]
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            rc = cli.main(argv)
        except SystemExit as exc:                    # argparse's own refusals
            rc = exc.code
    if rc == 2:
        assert out.getvalue() == "" and err.getvalue().count("\n") == 1, err.getvalue()
        assert err.getvalue().startswith("traincost: error: ")
        return
    assert rc == 0, (argv, err.getvalue())
    d = json.loads(out.getvalue())
    for key in ("step_time_s", "train_time_days", "facility_energy_mwh", "co2e_t"):
        assert d[key] is not None and math.isfinite(d[key]) and d[key] >= 0, (key, argv)
