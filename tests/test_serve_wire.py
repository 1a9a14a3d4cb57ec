"""The wire format both ends share (``tempsched_lab.serve.wire``): JSON there and back.

Property tests over random scenarios on each queue design: a moment survives
``moment_to_json -> json -> moment_from_json`` unchanged; the rows made one at a time
(``row_to_json``) and a column at a time (``frame_to_json``) are the same objects; and
``rows_from_json`` gives back the frame ``EventLog.to_frame()`` gives.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tempsched_lab import RealClock, Scheduler, VirtualClock
from tempsched_lab.serve.wire import (
    COLUMN_NAMES,
    frame_to_json,
    moment_from_json,
    moment_to_json,
    row_to_json,
    rows_from_json,
)


def _job(i: int) -> int:
    if i % 11 == 5:
        raise ValueError(f"job {i} fails")
    return i


steps = st.lists(
    st.tuples(
        st.sampled_from(["schedule", "periodic", "cancel", "advance"]),
        st.integers(0, 40),
        st.floats(0.01, 5.0, allow_nan=False),  # (a wheel ticks every 10 ms)
    ),
    min_size=1,
    max_size=30,
)


def _play(design: str, start: float, program: list[tuple[str, int, float]]) -> Scheduler:
    s = Scheduler(VirtualClock(start=start), queue=design)
    ids: list[int] = []
    for op, i, x in program:
        if op == "schedule":
            ids.append(s.schedule(_job, delay=x, args=(i,)))
        elif op == "periodic":
            ids.append(s.schedule(_job, period=x, args=(i * 2,)))
        elif op == "cancel" and ids:
            s.cancel(ids[i % len(ids)])
        else:
            s.clock.advance(x)
    return s


def _through_json(data: object) -> object:
    return json.loads(json.dumps(data, allow_nan=False))


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(design=st.sampled_from(["sorteddict", "heap", "wheel"]), program=steps)
def test_a_moment_survives_the_wire(design: str, program: list[tuple[str, int, float]]) -> None:
    s = _play(design, 0.0, program)
    moment = s.moment()
    data = _through_json(moment_to_json(moment, name="x", first_seq=0, log_id="id"))
    assert moment_from_json(data) == moment  # type: ignore[arg-type]
    s.shutdown()


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(program=steps, start=st.sampled_from([0.0, 1_000.0, 1_796_000_000.25]))
def test_rows_one_at_a_time_and_by_columns_agree_and_come_back_as_the_frame(
    program: list[tuple[str, int, float]], start: float
) -> None:
    s = _play("sorteddict", start, program)
    s.shutdown()
    origin = s.log.time_origin
    one_by_one = [row_to_json(r, origin) for r in s.log.rows()]
    by_columns = frame_to_json(s.log.to_frame(), origin)
    assert one_by_one == by_columns
    assert all(list(r) == list(COLUMN_NAMES) for r in one_by_one)
    rows = _through_json(one_by_one)
    frame = rows_from_json(rows, origin)  # type: ignore[arg-type]
    expected = s.log.to_frame()
    if start == 1_000.0:  # (v - o) + o is exact for epoch-sized values and o = 0 only
        pd.testing.assert_frame_equal(frame, expected, check_exact=False, rtol=0, atol=1e-9)
    else:
        pd.testing.assert_frame_equal(frame, expected)


def test_a_real_clock_moment_is_exact_and_shows_no_epoch_times() -> None:
    s = Scheduler(RealClock())
    s.schedule(_job, delay=30, args=(1,))
    moment = s.moment()
    data = moment_to_json(moment)
    assert moment_from_json(_through_json(data)) == moment  # type: ignore[arg-type]
    assert 29 < data["queue"]["head_time"] < 31  # seconds since the start, not 1.8e9
    assert data["time_origin"]["origin"] == s.time_origin
    s.shutdown()


def test_missing_values_are_null_never_nan() -> None:
    s = _play("sorteddict", 0.0, [("schedule", 1, 0.5), ("advance", 0, 1.0)])
    text = json.dumps(frame_to_json(s.log.to_frame(), 0.0), allow_nan=False)
    assert "NaN" not in text and "null" in text
    s.shutdown()


def test_the_wire_module_imports_no_server_stack() -> None:
    code = (
        "import sys, tempsched_lab.serve.wire\n"
        "stack = ('starlette', 'uvicorn', 'sse_starlette', 'httpx')\n"
        "bad = [m for m in stack if m in sys.modules]\n"
        "print(bad)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


@pytest.mark.parametrize("bad", [{}, {"time_origin": {"origin": 0.0}}, {"queue": None}])
def test_moment_from_json_refuses_another_shape(bad: dict) -> None:
    with pytest.raises((KeyError, TypeError, ValueError)):
        moment_from_json(bad)


def test_dumps_rows_writes_what_the_standard_encoder_writes() -> None:
    from tempsched_lab.serve.wire import dumps_rows

    s = _play("heap", 1_796_000_000.25, [("schedule", 3, 0.25), ("periodic", 5, 0.5)])
    s.clock.advance(3.0)
    s.cancel(2**70)  # an ID no task can have: recorded as asked, beyond 64 bits
    s.shutdown()
    rows = frame_to_json(s.log.to_frame(), s.log.time_origin)[:-3]
    standard = json.dumps(rows, separators=(",", ":"), allow_nan=False)
    assert dumps_rows(rows) == standard
    huge = [row_to_json(r, s.log.time_origin) for r in s.log.rows()]
    assert any(r["task_id"] == 2**70 for r in huge)
    assert json.loads(dumps_rows(huge)) == huge  # (orjson refuses it: the fallback writes it)
