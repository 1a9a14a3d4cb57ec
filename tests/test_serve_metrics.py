"""``GET /v1/metrics``: read by Prometheus's reference parsers, equal to the log's own counts.

Every figure the route answers is checked against the log it was counted from
(``to_frame()``): the histogram's count is the log's start rows, its p50/p99 fall
within one bucket of the frame's, runs by result and decisions by case are the
frame's rows of those kinds. The real-process test runs the example service with a
token (401 without it) and compares a scrape with the log it spilled to disk.
"""

from __future__ import annotations

import bisect
import math
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

pytest.importorskip("starlette")
httpx = pytest.importorskip("httpx")
pytest.importorskip("prometheus_client")

from prometheus_client.openmetrics.parser import (  # noqa: E402
    text_string_to_metric_families as openmetrics_families,
)
from prometheus_client.parser import text_string_to_metric_families  # noqa: E402

from tempsched_lab import PastTimeError, Scheduler, VirtualClock  # noqa: E402
from tempsched_lab.serve import serve  # noqa: E402
from tempsched_lab.serve.metrics import BUCKETS, LogCounts  # noqa: E402
from tempsched_lab.serve.reader import LogReader  # noqa: E402
from tempsched_lab.serve.wire import row_to_json  # noqa: E402

TOKEN = "metrics-test-token-0123456789"
AUTH = {"Authorization": f"Bearer {TOKEN}"}


def samples(text: str, *, openmetrics: bool = False) -> dict[tuple[str, tuple], float]:
    """Every sample of an exposition, parsed by the reference parser: (name, labels) -> value."""
    parse = openmetrics_families if openmetrics else text_string_to_metric_families
    out: dict[tuple[str, tuple], float] = {}
    for family in parse(text):
        for s in family.samples:
            out[(s.name, tuple(sorted(s.labels.items())))] = s.value
    return out


def _ok() -> None:
    return None


def _fail() -> None:
    raise RuntimeError("on purpose")


def _overrun() -> None:
    threading.Event().wait(0.03)  # longer than its period: the next runs are missed


def varied_scheduler() -> Scheduler:
    """A real-clock scheduler whose log has every outcome: ok, failed, missed, cancelled,
    rejected (case 1), several cases, tasks dropped at shutdown."""
    s = Scheduler(name="metrics-test")
    for i in range(300):
        s.schedule(_ok, delay=0.002 * (i % 40), args=(), label="ok" if i % 3 else "ok3")
    for _ in range(7):
        s.schedule(_fail, delay=0.01)
    for i in range(5):
        victim = s.schedule(_ok, delay=60.0 + i)
        s.cancel(victim)
    with pytest.raises(PastTimeError):
        s.schedule(_ok, at=s.clock.now() - 10.0)
    # The periodic's runs are missed only once its first run has ended and re-armed: wait
    # for that row, not for a time (a loaded machine once ended the first run after the
    # 0.3 s event, so the log had no missed row and the test asserted one: a flake)
    missed = threading.Event()
    watch = s.log.subscribe(lambda row: missed.set(), kinds=["missed"])
    periodic = s.schedule(_overrun, period=0.01, label="overrun")
    done = threading.Event()
    s.schedule(done, delay=0.3)  # due after every one-shot run above: dispatched after them
    s.schedule(_ok, delay=3_600.0)  # still pending at shutdown: dropped
    assert done.wait(30.0) and missed.wait(30.0)
    watch.close()
    s.cancel(periodic)
    s.shutdown(wait=True)
    return s


@pytest.fixture(scope="module")
def varied() -> Iterator[tuple[Scheduler, Any]]:
    s = varied_scheduler()
    with serve(s, token=TOKEN) as server:
        yield s, server


def scrape(server: Any, accept: str | None = None) -> httpx.Response:
    headers = dict(AUTH)
    if accept is not None:
        headers["Accept"] = accept
    response = httpx.get(server.url + "/v1/metrics", headers=headers, timeout=30.0)
    assert response.status_code == 200, response.text
    return response


def test_the_counts_equal_the_logs(varied: tuple[Scheduler, Any]) -> None:
    s, server = varied
    response = scrape(server)
    assert response.headers["content-type"].startswith("text/plain; version=0.0.4")
    got = samples(response.text)
    frame = s.log.to_frame()
    kinds = frame["kind"].astype(str).value_counts().to_dict()
    assert got[("tempsched_log_counted_seq", ())] == s.log.next_seq == len(frame)
    for kind, n in kinds.items():
        assert got[("tempsched_log_rows_total", (("kind", kind),))] == n
    starts = frame[frame["kind"] == "start"]
    assert got[("tempsched_lateness_seconds_count", ())] == len(starts) > 300
    assert got[("tempsched_lateness_seconds_sum", ())] == pytest.approx(starts["lateness"].sum())
    assert got[("tempsched_runs_total", (("result", "ok"),))] == kinds["finish"]
    assert got[("tempsched_runs_total", (("result", "failed"),))] == kinds["error"] == 7
    missed = frame.loc[frame["kind"] == "missed", "missed"].sum()
    assert got[("tempsched_runs_total", (("result", "missed"),))] == missed > 0
    cancelled = frame[(frame["kind"] == "cancel") & frame["result"].isin(["cancelled", "running"])]
    assert got[("tempsched_runs_total", (("result", "cancelled"),))] == len(cancelled) >= 5
    dropped = frame[(frame["kind"] == "shutdown") & (frame["result"] == "dropped")]
    assert got[("tempsched_dropped_tasks_total", ())] == len(dropped) >= 1
    decided = frame[frame["kind"].isin(["schedule", "reject"])]
    for (kind, case), n in decided.groupby(["kind", "case"], observed=True).size().items():
        if n:
            decision = "scheduled" if kind == "schedule" else "rejected"
            key = ("tempsched_decisions_total", (("case", str(case)), ("decision", decision)))
            assert got[key] == n
    assert got[("tempsched_decisions_total", (("case", "1"), ("decision", "rejected")))] == 1
    last_size = frame["queue_size"].dropna().iloc[-1]
    assert got[("tempsched_pending_tasks", ())] == last_size


def _bucket_of(value: float) -> int:
    return bisect.bisect_left(BUCKETS, value)


def _histogram_quantile(got: dict[tuple[str, tuple], float], q: float) -> int:
    """The index of the bucket holding quantile ``q`` (what histogram_quantile interpolates in)."""
    total = got[("tempsched_lateness_seconds_count", ())]
    bounds = [*(repr(b) for b in BUCKETS), "+Inf"]
    for i, le in enumerate(bounds):
        if got[("tempsched_lateness_seconds_bucket", (("le", le),))] >= q * total:
            return i
    raise AssertionError("no bucket reaches the quantile")


@pytest.mark.parametrize("q", [0.5, 0.99])
def test_the_histograms_quantiles_agree_with_the_frames_within_a_bucket(
    varied: tuple[Scheduler, Any], q: float
) -> None:
    s, server = varied
    got = samples(scrape(server).text)
    lateness = s.log.to_frame().query("kind == 'start'")["lateness"]
    expected = _bucket_of(float(lateness.quantile(q)))
    assert abs(_histogram_quantile(got, q) - expected) <= 1


def test_openmetrics_when_the_accept_header_asks(varied: tuple[Scheduler, Any]) -> None:
    s, server = varied
    response = scrape(server, accept="application/openmetrics-text; version=1.0.0")
    assert response.headers["content-type"].startswith("application/openmetrics-text")
    assert response.text.endswith("# EOF\n")
    got = samples(response.text, openmetrics=True)
    starts = int((s.log.to_frame()["kind"] == "start").sum())
    assert got[("tempsched_lateness_seconds_count", ())] == starts
    assert got[("tempsched_log_next_seq", ())] == s.log.next_seq


def test_without_the_token_401(varied: tuple[Scheduler, Any]) -> None:
    _, server = varied
    response = httpx.get(server.url + "/v1/metrics", timeout=10.0)
    assert response.status_code == 401
    assert "tempsched" not in response.text
    wrong = {"Authorization": "Bearer " + "w" * 30}
    assert httpx.get(server.url + "/v1/metrics", headers=wrong, timeout=10.0).status_code == 401


def test_rows_no_longer_anywhere_are_counted_as_a_gap_never_as_rows() -> None:
    s = Scheduler(VirtualClock(), max_log_rows=1024)
    counts = LogCounts(LogReader(s.log))
    for i in range(3_000):
        s.schedule(_ok, delay=1.0 + i)
    counts.update()
    rows = sum(counts.kinds.values())
    assert counts.gap_rows == s.log.next_seq - len(s.log) > 0
    assert rows == len(s.log)
    assert counts.gap_rows + rows == counts.cursor == s.log.next_seq
    assert counts.decisions[(4, "scheduled")] == len(s.log.to_frame().query("case == 4"))


def test_rows_spilled_out_of_memory_are_counted_from_their_segments(tmp_path: Path) -> None:
    from tempsched_lab import read_log

    s = Scheduler(VirtualClock(), max_log_rows=4_096, log_spill=tmp_path / "spill")
    for i in range(20_000):
        s.schedule(_ok if i % 7 else _fail, delay=1.0 + i * 0.5)
    s.clock.advance(2_000.0)
    s.shutdown(wait=True)
    assert s.log.first_seq > 0  # most rows are on disk only
    counts = LogCounts(LogReader(s.log))
    while counts.update():
        pass
    frame = read_log(tmp_path / "spill")
    assert counts.cursor == len(frame) == s.log.next_seq and counts.gap_rows == 0
    assert counts.kinds == frame["kind"].astype(str).value_counts().to_dict()
    assert counts.runs["failed"] == int((frame["kind"] == "error").sum()) > 0
    assert counts.lateness_count == int((frame["kind"] == "start").sum())


def test_a_scrape_stops_at_its_row_budget_and_the_next_goes_on() -> None:
    s = Scheduler(VirtualClock())
    for i in range(2_000):
        s.schedule(_ok, delay=1.0 + i)
    counts = LogCounts(LogReader(s.log, batch=100, catch_up=100))
    assert counts.update(most=500) == 500
    assert counts.cursor == 500
    assert counts.update() == 1_500
    assert counts.kinds == {"schedule": 2_000}


ops = st.lists(
    st.one_of(
        st.tuples(st.just("schedule"), st.integers(0, 20), st.booleans()),
        st.tuples(st.just("past"), st.integers(1, 5), st.booleans()),
        st.tuples(st.just("cancel"), st.integers(0, 30), st.booleans()),
        st.tuples(st.just("advance"), st.integers(0, 10), st.booleans()),
    ),
    max_size=60,
)


def take_step(s: Scheduler, ids: list[int], op: str, n: int) -> None:
    """One step of a generated run on a virtual clock (``ids``: the tasks scheduled)."""
    if op == "schedule":
        ids.append(s.schedule(_fail if n % 5 == 0 else _ok, delay=float(n)))
    elif op == "past":
        with pytest.raises(PastTimeError):
            s.schedule(_ok, at=s.clock.now() - n)
    elif op == "cancel" and ids:
        s.cancel(ids[n % len(ids)])
    elif op == "advance":
        s.clock.advance(float(n))
    elif op == "periodic":
        ids.append(s.schedule(_ok, delay=1.0, period=float(n)))


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(ops)
def test_counts_updated_at_any_points_equal_counts_of_the_whole_log(steps: list[Any]) -> None:
    s = Scheduler(VirtualClock(start=100.0))
    counts = LogCounts(LogReader(s.log, batch=7, catch_up=7))
    ids: list[int] = []
    for op, n, scrape_now in steps:
        take_step(s, ids, op, n)
        if scrape_now:
            counts.update()
    counts.update()
    whole = LogCounts(LogReader(s.log))
    whole.update()
    assert counts.cursor == whole.cursor == s.log.next_seq
    assert (counts.kinds, counts.runs, counts.decisions) == (
        whole.kinds,
        whole.runs,
        whole.decisions,
    )
    assert counts.buckets == whole.buckets
    by_rows = LogCounts(LogReader(s.log))  # the path of rows read from disk: row objects
    by_rows._count([row_to_json(r, s.log.time_origin) for r in s.log.rows()])
    assert (by_rows.kinds, by_rows.runs, by_rows.decisions, by_rows.buckets) == (
        whole.kinds,
        whole.runs,
        whole.decisions,
        whole.buckets,
    )
    assert (by_rows.pending, by_rows.dropped) == (whole.pending, whole.dropped)
    frame = s.log.to_frame()
    assert counts.lateness_count == int((frame["kind"] == "start").sum())
    assert counts.runs["failed"] == int((frame["kind"] == "error").sum())
    assert sum(counts.kinds.values()) == len(frame)
    assert math.isclose(
        counts.lateness_sum, float(frame.query("kind == 'start'")["lateness"].sum()), abs_tol=1e-9
    )


@pytest.mark.slow
def test_a_real_service_scraped_then_stopped_counts_what_it_spilled(tmp_path: Path) -> None:
    from test_serve_process import start_service

    from tempsched_lab import read_log

    svc = start_service(tmp_path, "--spill", str(tmp_path / "runs"), "--burst-every", "0.5")
    try:
        assert httpx.get(svc.url + "/v1/metrics", timeout=20.0).status_code == 401
        got: dict[tuple[str, tuple], float] = {}
        for _ in range(200):  # until the service has run a burst (bounded: ~20 s)
            response = httpx.get(svc.url + "/v1/metrics", headers=svc.headers, timeout=20.0)
            assert response.status_code == 200
            got = samples(response.text)
            if got.get(("tempsched_runs_total", (("result", "ok"),)), 0) >= 60:
                break
            threading.Event().wait(0.1)
        assert svc.stop() == 0
        counted = int(got[("tempsched_log_counted_seq", ())])
        assert svc.spill is not None
        frame = read_log(svc.spill).iloc[:counted]
        assert len(frame) == counted and int(frame["seq"].iloc[-1]) == counted - 1
        kinds = frame["kind"].astype(str).value_counts().to_dict()
        assert got[("tempsched_lateness_seconds_count", ())] == kinds["start"]
        assert got[("tempsched_runs_total", (("result", "ok"),))] == kinds["finish"] >= 60
        for kind, n in kinds.items():
            assert got[("tempsched_log_rows_total", (("kind", kind),))] == n
        late = frame.query("kind == 'start'")["lateness"]
        for q in (0.5, 0.99):
            assert abs(_histogram_quantile(got, q) - _bucket_of(float(late.quantile(q)))) <= 1
    finally:
        if svc.process.poll() is None:
            svc.process.kill()
            svc.process.wait(10)


PROMETHEUS_ACCEPT = (
    "application/openmetrics-text;version=1.0.0;escaping=underscores;q=0.5,"
    "text/plain;version=1.0.0;escaping=underscores;q=0.4,text/plain;version=0.0.4;q=0.3,*/*;q=0.1"
)


@pytest.mark.slow
def test_the_docs_scrape_config_scrapes_the_readmes_service(tmp_path: Path) -> None:
    """docs/serving.md's Prometheus config, as written (the port filled in), does what
    Prometheus does with it: the path, the bearer token from its file, Prometheus's Accept."""
    import re

    import yaml
    from test_serve_process import start_service

    page = (Path(__file__).resolve().parents[1] / "docs" / "serving.md").read_text()
    blocks = re.findall(r"cat > prometheus.yml <<'EOF'\n(.*?)\nEOF\n", page, flags=re.S)
    assert len(blocks) == 1
    svc = start_service(tmp_path)
    try:
        port = svc.url.split(":")[2].split("/")[0]
        (tmp_path / "token.txt").write_text((tmp_path / "token").read_text())
        config = yaml.safe_load(blocks[0].replace("8765", port))
        (job,) = config["scrape_configs"]
        auth = job["authorization"]
        assert auth["type"] == "Bearer"
        credentials = (tmp_path / auth["credentials_file"]).read_text().strip()
        (target,) = job["static_configs"][0]["targets"]
        url = f"http://{target}{job['metrics_path']}"
        response = httpx.get(
            url,
            headers={"Authorization": f"Bearer {credentials}", "Accept": PROMETHEUS_ACCEPT},
            timeout=20.0,
        )
        assert response.status_code == 200
        assert response.headers["content-type"].startswith("application/openmetrics-text")
        got = samples(response.text, openmetrics=True)
        assert got[("tempsched_log_counted_seq", ())] > 0
        assert httpx.get(url, timeout=20.0).status_code == 401
    finally:
        svc.stop()


@pytest.mark.slow
@pytest.mark.skipif(
    __import__("shutil").which("prometheus") is None,
    reason="no prometheus binary on PATH (Debian: apt-get install prometheus); not in CI",
)
def test_a_real_prometheus_scrapes_the_readmes_service_with_the_docs_config(
    tmp_path: Path,
) -> None:
    """docs/serving.md's prometheus.yml, as written (its port replaced by the service's), read
    by a real Prometheus server: the target is up and its series are stored."""
    import re
    import socket
    import subprocess

    from test_serve_process import start_service

    page = (Path(__file__).resolve().parents[1] / "docs" / "serving.md").read_text()
    (config,) = re.findall(r"cat > prometheus.yml <<'EOF'\n(.*?)\nEOF\n", page, flags=re.S)
    svc = start_service(tmp_path)
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        prom_port = s.getsockname()[1]
    prometheus = None
    try:
        port = svc.url.split(":")[2].split("/")[0]
        (tmp_path / "token.txt").write_text((tmp_path / "token").read_text())
        (tmp_path / "prometheus.yml").write_text(config.replace("8765", port))
        with (tmp_path / "prometheus.err").open("w") as err:
            prometheus = subprocess.Popen(
                [
                    "prometheus",
                    "--config.file=prometheus.yml",
                    "--storage.tsdb.path=prometheus-data/",
                    f"--web.listen-address=127.0.0.1:{prom_port}",
                ],
                cwd=tmp_path,
                stdout=err,
                stderr=err,
            )
        api = f"http://127.0.0.1:{prom_port}/api/v1/query"
        found: list[Any] = []
        for _ in range(600):  # the first scrape comes within one interval (15 s): ~60 s at most
            try:
                answer = httpx.get(api, params={"query": "tempsched_log_next_seq"}, timeout=5.0)
                found = answer.json()["data"]["result"] if answer.status_code == 200 else []
            except httpx.TransportError:
                found = []
            if found:
                break
            threading.Event().wait(0.1)
        assert found, (tmp_path / "prometheus.err").read_text()[-3000:]
        (series,) = found
        assert series["metric"]["job"] == "tempsched"
        assert series["metric"]["service"] == "example"
        assert float(series["value"][1]) > 0
        up = httpx.get(api, params={"query": 'up{job="tempsched"}'}, timeout=5.0).json()
        assert up["data"]["result"][0]["value"][1] == "1"
    finally:
        if prometheus is not None:
            prometheus.terminate()
            prometheus.wait(30)
        svc.stop()


def test_the_counts_go_on_across_a_restart_on_the_lineage(tmp_path: Path) -> None:
    """docs/serving.md: the counters cover the log's whole lineage, so Prometheus sees no
    reset when a service restarts on its spill root; its first run's rows are counted once."""
    from tempsched_lab import read_log
    from tempsched_lab.restarts import continuing_scheduler

    first = continuing_scheduler(tmp_path / "runs", VirtualClock())
    for i in range(300):
        first.schedule(_ok if i % 5 else _fail, delay=1.0 + i * 0.01)
    first.clock.advance(10.0)
    first.shutdown(wait=True)
    before = LogCounts(LogReader(first.log))
    before.update()
    second = continuing_scheduler(tmp_path / "runs", VirtualClock())
    for i in range(200):
        second.schedule(_ok, delay=1.0 + i * 0.01)
    second.clock.advance(10.0)
    second.log.flush()
    from tempsched_lab.log.files.lineage import Lineage

    # the reader the feed makes (serve/app.py): it reads the earlier runs through the lineage
    lineage = Lineage.of_run(second.log.spill_directory)
    after = LogCounts(LogReader(second.log, lineage=lineage))
    while after.update():
        pass
    assert after.gap_rows == 0 and after.cursor == second.log.next_seq > first.log.next_seq
    for result, value in before.runs.items():
        assert after.runs[result] >= value  # a counter never goes back
    assert after.runs["ok"] == before.runs["ok"] + 200
    assert after.runs["failed"] == before.runs["failed"] == 60
    assert after.lateness_count == before.lateness_count + 200 == 500
    run1 = read_log(tmp_path / "runs" / "run-001")
    assert before.kinds == run1["kind"].astype(str).value_counts().to_dict()
    second.shutdown(wait=True)
