"""The lab's workload generators: pure, seeded, statistically sane; workloads as files.

Statistical checks use exact bounds computed here (Poisson and binomial tails
summed in log space), at fixed seeds: a check fails only if a generator's
distribution is wrong, or with a probability stated next to it.
"""

from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tempsched_lab.lab import (
    Workload,
    WorkloadError,
    bursts,
    cron_fleet,
    exponential,
    fixed,
    lognormal,
    mix,
    pareto,
    periodic_fleet,
    poisson,
    read_workload,
    uniform,
)

# -- exact tail bounds ----------------------------------------------------------------------


def _poisson_logpmf(k: int, lam: float) -> float:
    return k * math.log(lam) - lam - math.lgamma(k + 1)


def poisson_interval(lam: float, tail: float) -> tuple[int, int]:
    """The smallest [lo, hi] with P(X < lo) <= tail and P(X > hi) <= tail, X ~ Poisson(lam)."""
    lo, cdf, k = 0, 0.0, 0
    while True:
        p = math.exp(_poisson_logpmf(k, lam))
        if cdf + p > tail:
            lo = k
            break
        cdf += p
        k += 1
    hi, sf, k = int(lam * 10 + 100), 0.0, int(lam * 10 + 100)
    while k > 0:
        p = math.exp(_poisson_logpmf(k, lam))
        if sf + p > tail:
            hi = k
            break
        sf += p
        k -= 1
    return lo, hi


def binomial_interval(n: int, p: float, tail: float) -> tuple[int, int]:
    def logpmf(k: int) -> float:
        return (
            math.lgamma(n + 1)
            - math.lgamma(k + 1)
            - math.lgamma(n - k + 1)
            + k * math.log(p)
            + (n - k) * math.log1p(-p)
        )

    cdf, lo = 0.0, 0
    for k in range(n + 1):
        if cdf + math.exp(logpmf(k)) > tail:
            lo = k
            break
        cdf += math.exp(logpmf(k))
    sf, hi = 0.0, n
    for k in range(n, -1, -1):
        if sf + math.exp(logpmf(k)) > tail:
            hi = k
            break
        sf += math.exp(logpmf(k))
    return lo, hi


def test_the_bounds_themselves_are_right():
    assert poisson_interval(1.0, 0.05) == (0, 3)  # P(X > 3) = 0.019, P(X > 2) = 0.080
    lo, hi = poisson_interval(1000.0, 0.0005)
    assert 890 < lo < 910 and 1090 < hi < 1110  # about 3.3 sigma either side
    assert binomial_interval(10, 0.5, 0.011) == (2, 8)  # P(X <= 1) = 0.0107


# -- purity ---------------------------------------------------------------------------------

GENERATORS = {
    "poisson": lambda seed: poisson(
        800,
        1.0,
        seed=seed,
        duration=exponential(0.001),
        lead=exponential(0.01),
        cancels=0.1,
        duplicates=0.05,
        failures=0.02,
    ),
    "bursts": lambda seed: bursts(
        50,
        0.1,
        1.0,
        seed=seed,
        duration=lognormal(0.001, 1.0),
        lead=uniform(0.0, 0.05),
        cancels=0.2,
        duplicates=0.1,
    ),
    "periodic": lambda seed: periodic_fleet(
        30, [0.01, 0.02, 0.05], 1.0, seed=seed, duration=pareto(2.5, 0.001), failures=0.1
    ),
    "mix": lambda seed: mix(
        poisson(300, 1.0, seed=seed, duplicates=0.1),
        bursts(20, 0.25, 1.0, seed=seed, duplicates=0.1),
        periodic_fleet(5, 0.1, 1.0, seed=seed),
    ),
}


@pytest.mark.parametrize("name", sorted(GENERATORS))
def test_same_seed_same_workload_different_seed_different(name):
    make = GENERATORS[name]
    a, b, c = make(11), make(11), make(12)
    assert a.equals(b)
    pd.testing.assert_frame_equal(a.frame, b.frame)
    assert not a.equals(c)
    assert not a.frame[["submit", "duration"]].equals(c.frame[["submit", "duration"]])


def test_a_generator_does_not_touch_the_global_random_state():
    np.random.seed(5)
    before = np.random.random()
    np.random.seed(5)
    poisson(100, 1.0, seed=1, duration=exponential(0.01))
    assert np.random.random() == before


# -- statistical sanity ---------------------------------------------------------------------


def test_poisson_counts_lie_within_exact_bounds_at_fixed_seeds():
    rate, horizon = 500.0, 2.0
    lam = rate * horizon
    counts = [len(poisson(rate, horizon, seed=seed)) for seed in range(40)]
    lo, hi = poisson_interval(lam, 0.0005)  # each outside with p <= 0.001
    assert all(lo <= n <= hi for n in counts), (lo, hi, counts)
    # the 40 counts together: their sum is Poisson(40 lam)
    lo, hi = poisson_interval(40 * lam, 0.0005)
    assert lo <= sum(counts) <= hi
    # a biased generator (rate x 1.05) would fall outside: the check can fail
    assert not lo <= sum(counts) * 1.05 <= hi


def test_poisson_arrivals_spread_evenly_over_the_horizon():
    w = poisson(2000.0, 5.0, seed=3)
    n = len(w)
    counts, _ = np.histogram(w.frame["submit"], bins=10, range=(0.0, 5.0))
    lo, hi = binomial_interval(n, 0.1, 0.00005)  # given n, each bin is Binomial(n, 1/10)
    assert all(lo <= c <= hi for c in counts), (lo, hi, counts.tolist())
    assert (np.diff(w.frame["submit"]) >= 0).all()  # made in time order


def test_exponential_durations_have_the_right_mean():
    mean = 0.004
    w = poisson(1000.0, 2.0, seed=9, duration=exponential(mean))
    total, n = float(w.frame["duration"].sum()), len(w)
    # sum of n exponentials is Gamma(n, mean): P(sum <= x) = P(Poisson(x / mean) >= n)
    # so sum / mean lies in the Poisson interval's mirror: within a few sqrt(n) of n
    lo, hi = poisson_interval(float(n), 0.0005)
    assert lo <= total / mean <= hi, (lo, total / mean, hi)


def test_lead_makes_due_times_later_than_submission():
    w = poisson(500.0, 1.0, seed=2, lead=exponential(0.05))
    lead = w.frame["due"] - w.frame["submit"]
    assert (lead >= 0).all()
    n = len(w)
    lo, hi = poisson_interval(float(n), 0.0005)
    assert lo <= lead.sum() / 0.05 <= hi


def test_fractions_of_cancels_duplicates_and_failures_are_binomial():
    w = poisson(
        3000.0, 1.0, seed=4, lead=exponential(0.01), cancels=0.2, duplicates=0.1, failures=0.05
    )
    frame = w.frame
    original = frame["dup_of"].isna()
    n = int(original.sum())
    for column, share in (("cancel_at", 0.2), ("fails", 0.05)):
        got = int(
            frame.loc[original, column].notna().sum()
            if column == "cancel_at"
            else frame.loc[original, column].sum()
        )
        lo, hi = binomial_interval(n, share, 0.0005)
        assert lo <= got <= hi, (column, lo, got, hi)
    # duplicates are drawn among the requests not cancelled
    not_cancelled = int((original & frame["cancel_at"].isna()).sum())
    lo, hi = binomial_interval(not_cancelled, 0.1, 0.0005)
    assert lo <= int((~original).sum()) <= hi
    cancelled = frame.dropna(subset=["cancel_at"])
    assert (cancelled["cancel_at"] >= cancelled["submit"]).all()
    assert (cancelled["cancel_at"] <= cancelled["due"]).all()


def test_a_duplicate_follows_its_original_at_once_and_repeats_it():
    w = poisson(1000.0, 1.0, seed=5, lead=exponential(0.02), duplicates=0.2)
    frame = w.frame
    dups = frame[frame["dup_of"].notna()]
    assert len(dups) > 100
    originals = frame.loc[dups["dup_of"].astype(int).to_numpy()]
    assert (dups["dup_of"].to_numpy() == dups["request"].to_numpy() - 1).all()
    for column in ("submit", "due", "duration", "label", "fails"):
        assert (dups[column].to_numpy() == originals[column].to_numpy()).all(), column


def test_bursts_are_due_at_one_instant_each():
    w = bursts(size=7, every=0.3, horizon=1.0, seed=0, first=0.1, lead=uniform(0.0, 0.05))
    dues = w.frame.groupby("due").size()
    assert sorted(dues.index.round(9).tolist()) == [0.1, 0.4, 0.7]
    assert dues.tolist() == [7, 7, 7]
    lead = w.frame["due"] - w.frame["submit"]
    assert ((lead >= 0) & (lead < 0.05 + 1e-12)).all()
    assert (np.diff(w.frame["submit"]) >= 0).all()


def test_periodic_fleet_phases_stay_within_the_jitter():
    w = periodic_fleet(200, [0.1, 0.4], 2.0, seed=8, jitter=0.5)
    frame = w.frame
    assert set(frame["period"].unique()) == {0.1, 0.4}
    assert ((frame["due"] >= 0) & (frame["due"] < 0.5 * frame["period"])).all()
    lo, hi = binomial_interval(200, 0.5, 0.0005)
    assert lo <= int((frame["period"] == 0.1).sum()) <= hi
    aligned = periodic_fleet(5, 0.1, 1.0, seed=8, jitter=0.0)
    assert (aligned.frame["due"] == 0.0).all()


def test_cron_fleet_checks_its_rules_before_any_run():
    pytest.importorskip("cronsim")
    w = cron_fleet(4, 3600.0, seed=1, rules=["*/5 * * * *", "0 * * * *"], tz="Europe/Paris")
    assert set(w.frame["cron"]) <= {"*/5 * * * *", "0 * * * *"}
    assert w.tz == "Europe/Paris" and w.frame["due"].isna().all()
    with pytest.raises(ValueError, match="25"):
        cron_fleet(1, 60.0, seed=1, rules=["0 25 * * *"])


def test_mix_merges_in_submission_order_and_keeps_duplicates_pointing_right():
    a = poisson(400.0, 1.0, seed=1, duplicates=0.2, label="a")
    b = bursts(30, 0.5, 1.0, seed=2, duplicates=0.2, label="b")
    w = mix(a, b)
    frame = w.frame
    assert len(w) == len(a) + len(b)
    assert (np.diff(frame["submit"]) >= 0).all()
    dups = frame[frame["dup_of"].notna()]
    originals = frame.loc[dups["dup_of"].astype(int).to_numpy()]
    assert (dups["label"].to_numpy() == originals["label"].to_numpy()).all()
    assert (dups["due"].to_numpy() == originals["due"].to_numpy()).all()
    assert w.counts()["a"] + w.counts()["b"] + w.counts()["duplicates"] == len(w)


# -- bad input ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: poisson(-1, 1.0, seed=0), "rate=-1"),
        (lambda: poisson(10, 0, seed=0), "horizon=0"),
        (lambda: poisson(10, 1.0, seed=None), "seed=None"),
        (lambda: poisson(10, 1.0, seed=-3), "seed=-3"),
        (lambda: poisson(10, 1.0, seed=0, cancels=1.5), "cancels=1.5"),
        (lambda: poisson(10, 1.0, seed=0, duration="slow"), "duration='slow'"),
        (lambda: bursts(0, 1.0, 1.0, seed=0), "size=0"),
        (lambda: periodic_fleet(2, [], 1.0, seed=0), r"period=\[\]"),
        (lambda: periodic_fleet(2, 0.0, 1.0, seed=0), "period=0.0"),
        (lambda: exponential(0), "mean=0"),
        (lambda: fixed(-1), "seconds=-1"),
        (lambda: pareto(0, 0.1), "alpha=0"),
    ],
)
def test_bad_generator_arguments_name_the_argument(call, message):
    with pytest.raises((ValueError, TypeError), match=message):
        call()


@pytest.mark.parametrize(
    ("columns", "message"),
    [
        ({"label": ["a"], "submit": [0.0], "due": [-1.0], "duration": [0.0]}, "request 0: due"),
        ({"label": ["a"], "submit": [0.0], "due": [1.0], "duration": [-2.0]}, "duration=-2.0"),
        ({"label": [""], "submit": [0.0], "due": [1.0], "duration": [0.0]}, "label"),
        (
            {
                "label": ["a", "a"],
                "submit": [0.0, 0.0],
                "due": [1.0, 2.0],
                "duration": [0.0, 0.0],
                "dup_of": [None, 0],
            },
            "request 1: dup_of",
        ),
        (
            {"label": ["a"], "submit": [0.0], "due": [1.0], "duration": [0.0], "cancel_at": [-1.0]},
            "cancel_at",
        ),
        ({"label": ["a"], "submit": [0.0], "due": [1.0], "duration": [0.0], "speed": [1]}, "speed"),
        ({"label": ["a"], "due": [1.0], "duration": [0.0]}, "'submit' is missing"),
        (
            {"label": ["a", "b"], "submit": [0.0, "soon"], "due": [1.0, 1.0], "duration": [0, 0]},
            "request 1: submit='soon': expected a number",
        ),
        (
            {"label": ["a"], "submit": [0.0], "due": [1.0], "duration": [0.0], "fails": ["no"]},
            "request 0: fails='no': expected True or False",
        ),
        ({"label": ["a"], "submit": [0.0], "due": [2e9], "duration": [0.0]}, "due=2000000000.0"),
        (
            {"label": ["a"], "submit": [0.0], "cron": ["* * * *"], "duration": [0.0]},
            "request 0: cron='\\* \\* \\* \\*': expected 5 fields",
        ),
    ],
)
def test_a_hand_made_table_that_cannot_run_is_refused_naming_the_cell(columns, message):
    with pytest.raises(WorkloadError, match=message):
        Workload(pd.DataFrame(columns), horizon=1.0)


# -- files ----------------------------------------------------------------------------------


@pytest.mark.parametrize("suffix", [".csv", ".parquet"])
@pytest.mark.parametrize("name", sorted(GENERATORS))
def test_a_saved_workload_reads_back_identically(tmp_path, name, suffix):
    if suffix == ".parquet":
        pytest.importorskip("pyarrow")
    w = GENERATORS[name](3)
    path = w.save(tmp_path / f"w{suffix}")
    back = read_workload(path)
    assert back.equals(w)
    pd.testing.assert_frame_equal(back.frame, w.frame)
    assert (back.frame["submit"].to_numpy() == w.frame["submit"].to_numpy()).all()  # exact
    expected = [path.name] + ([path.name + ".meta.json"] if suffix == ".csv" else [])
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(expected)  # no temporary left


def test_a_workload_csv_is_plain_csv_with_its_metadata_beside_it(tmp_path):
    w = bursts(3, 0.5, 1.0, seed=0, duration=0.25)
    path = w.save(tmp_path / "w.csv")
    table = pd.read_csv(path)  # what a user's own tools see: the table, nothing else
    assert list(table.columns) == list(w.frame.columns)
    assert table["duration"].tolist() == [0.25] * 6
    assert table["due"].tolist() == w.frame["due"].tolist()
    meta = json.loads((tmp_path / "w.csv.meta.json").read_text())
    assert meta["seed"] == 0 and meta["horizon"] == 1.0 and meta["rows"] == 6


def test_a_workload_csv_of_the_first_layout_still_reads(tmp_path):
    from tempsched_lab.lab.workload import CSV_MAGIC

    w = poisson(50.0, 1.0, seed=3, duplicates=0.2)
    old = tmp_path / "old.csv"
    with open(old, "w", encoding="utf-8", newline="") as fh:  # the layout saved before
        fh.write(CSV_MAGIC + json.dumps(w.metadata(), sort_keys=True) + "\n")
        w.frame.to_csv(fh, index=False, lineterminator="\n")
    assert read_workload(old).equals(w)


def test_a_workload_csv_without_its_metadata_file_says_so(tmp_path):
    w = bursts(2, 0.5, 1.0, seed=0)
    path = w.save(tmp_path / "w.csv")
    (tmp_path / "w.csv.meta.json").unlink()
    with pytest.raises(WorkloadError, match=r"w\.csv\.meta\.json.*missing"):
        read_workload(path)
    path.with_name("w.csv.meta.json").write_text("[1, 2]")
    with pytest.raises(WorkloadError, match="not workload metadata"):
        read_workload(path)


def test_a_damaged_workload_file_is_refused(tmp_path):
    w = poisson(100.0, 1.0, seed=1)
    path = w.save(tmp_path / "w.csv")
    lines = path.read_text().splitlines(keepends=True)
    cut = tmp_path / "cut.csv"
    cut.write_text("".join(lines[:-5]))
    (tmp_path / "cut.csv.meta.json").write_text((tmp_path / "w.csv.meta.json").read_text())
    with pytest.raises(WorkloadError, match="rows"):
        read_workload(cut)
    other = tmp_path / "other.csv"
    other.write_text("a,b\n1,2\n")
    (tmp_path / "other.csv.meta.json").write_text((tmp_path / "w.csv.meta.json").read_text())
    with pytest.raises(WorkloadError, match="not a workload table"):
        read_workload(other)
    with pytest.raises(ValueError, match=r"\.txt"):
        w.save(tmp_path / "w.txt")


def edited_csv(tmp_path, edit, name="edited.csv"):
    """A valid saved workload (one-shot, periodic and cron requests), one cell edited by hand."""
    w = mix(
        poisson(40.0, 1.0, seed=1, cancels=0.2, duplicates=0.2, failures=0.1),
        periodic_fleet(2, 0.25, 1.0, seed=2),
        cron_fleet(2, 1.0, seed=3, rules=["*/5 * * * *"]),
    )
    saved = w.save(tmp_path / "w.csv")
    path = tmp_path / name
    path.write_bytes(edit(saved.read_bytes()))
    path.with_name(name + ".meta.json").write_text(saved.with_name("w.csv.meta.json").read_text())
    return w, path


def cell(request, column, value):
    """An edit putting ``value`` in one cell (request = row) of a workload CSV."""

    def edit(data):
        lines = data.decode().split("\n")
        header = lines[0].split(",")
        fields = lines[request + 1].split(",")
        fields[header.index(column)] = value
        lines[request + 1] = ",".join(fields)
        return "\n".join(lines).encode()

    return edit


@pytest.mark.parametrize(
    ("request_", "column", "value", "message"),
    [
        (2, "fails", "maybe", r"request 2 \(line 4\): fails='maybe': expected True or False"),
        (6, "submit", "abc", r"request 6 \(line 8\): submit='abc': expected a number"),
        (6, "request", "x", r"request 6 \(line 8\): request='x': expected a whole number"),
        (9, "dup_of", "1.5", r"request 9 \(line 11\): dup_of='1.5': expected a whole number"),
        (3, "cron", "61 * * * *", r"request 3: cron='61 \* \* \* \*': bad minute field"),
        (3, "cron", "0 0 30 2 *", r"request 3: cron='0 0 30 2 \*': bad day-of-month"),
        (6, "due", "1e300", r"request 6: due=1e\+300: expected at most 1e\+09 s"),
        (0, "period", "2e9", r"request 0: period=2000000000.0: expected at most 1e\+09 s"),
        (6, "duration", "inf", r"request 6: duration=inf: expected a finite duration"),
        (6, "cancel_at", "-1", r"request 6: cancel_at=-1.0"),
        (6, "label", "", r"request 6: label=.*expected a non-empty label"),
    ],
)
def test_a_hand_edited_workload_csv_is_refused_naming_file_request_column_and_value(
    tmp_path, request_, column, value, message
):
    """Issue 32, finding 9. Before: a bare TypeError (dup_of=1.5), a WorkloadError naming
    "column 7" and no request (fails=maybe), no file name (submit=abc), and a bad cron
    rule or due=1e300 read without error, to fail only when the run started."""
    _, path = edited_csv(tmp_path, cell(request_, column, value))
    with pytest.raises(WorkloadError, match=message) as caught:
        read_workload(path)
    assert str(caught.value).startswith(repr(str(path)) + ": ")


def test_a_workload_file_damaged_outside_its_cells_names_the_file_and_the_place(tmp_path):
    _, path = edited_csv(tmp_path, lambda data: data.replace(b"poisson", b"pois\xe9on", 1))
    with pytest.raises(WorkloadError, match=r"edited.csv': line \d+: byte b'\\xe9' is not UTF-8"):
        read_workload(path)

    def extra_field(data):
        lines = data.split(b"\n")
        lines[5] += b",1"
        return b"\n".join(lines)

    _, path = edited_csv(tmp_path, extra_field)
    with pytest.raises(
        WorkloadError, match=r"request 4 \(line 6\): 11 fields, the header names 10"
    ):
        read_workload(path)
    _, path = edited_csv(tmp_path, lambda data: data)
    meta = path.with_name("edited.csv.meta.json")
    for key, value, message in [
        ("horizon", "x", r"the metadata's horizon='x': expected a number"),
        ("horizon", 1e300, r"the metadata's horizon=1e\+300: expected at most 1e\+09"),
        ("tz", "Mars/Olympus", r"meta.json': the metadata's tz='Mars/Olympus': unknown time zone"),
    ]:
        data = json.loads(meta.read_text())
        meta.write_text(json.dumps({**data, key: value}))
        with pytest.raises(WorkloadError, match=message):
            read_workload(path)
        meta.write_text(json.dumps(data))
    data = json.loads(meta.read_text())
    del data["start"]
    meta.write_text(json.dumps(data))
    with pytest.raises(WorkloadError, match=r"edited.csv.meta.json': the metadata has no 'start'"):
        read_workload(path)


#: what a hand edit may put in a cell: text of any kind, and the values that look like numbers
CELLS = st.one_of(
    st.text(max_size=12),
    st.sampled_from(
        ["", "nan", "NaN", "inf", "-inf", "-1", "0", "1e9", "1e300", "-0.0", "True", "False",
         "1.5", "3", "99999", '"', ",", "* * * * *", "@daily", "0 0 30 2 *", "é"]
    ),
    st.floats().map(repr),
    st.integers(-(2**70), 2**70).map(str),
)  # fmt: skip


@pytest.mark.filterwarnings("error::RuntimeWarning")  # a warning instead of an error: a failure
@settings(max_examples=150, deadline=None)
@given(data=st.data())
def test_any_hand_edit_of_a_workload_csv_reads_back_or_names_the_file(tmp_path_factory, data):
    """Whatever a hand edit does to a saved workload CSV (a cell replaced, a line dropped
    or doubled, the file cut, bytes overwritten), reading gives a workload or a
    WorkloadError that names the file: never a bare pandas, numpy or decoding error."""
    kind = data.draw(st.sampled_from(["cell", "line", "cut", "bytes"]), label="edit")
    if kind == "cell":
        request_ = data.draw(st.integers(0, 20), label="request")
        column = data.draw(st.sampled_from(list(COLUMNS_OF_A_FILE)), label="column")
        edit = cell(request_, column, data.draw(CELLS, label="value"))
    elif kind == "line":
        at, double = data.draw(st.integers(0, 25)), data.draw(st.booleans())

        def edit(raw):
            lines = raw.split(b"\n")
            lines[at : at + 1] = [lines[at]] * 2 if double else []
            return b"\n".join(lines)

    elif kind == "cut":
        keep = data.draw(st.integers(0, 3000), label="keep")

        def edit(raw):
            return raw[:keep]

    else:
        at = data.draw(st.integers(0, 3000), label="at")
        new = data.draw(st.binary(min_size=1, max_size=4), label="bytes")

        def edit(raw):
            return raw[:at] + new + raw[at + len(new) :]

    _, path = edited_csv(tmp_path_factory.mktemp("edit"), edit)
    try:
        w = read_workload(path)
    except WorkloadError as exc:
        assert str(exc).startswith(repr(str(path))), exc
    else:
        assert isinstance(w, Workload)


COLUMNS_OF_A_FILE = (
    "request", "label", "submit", "due", "period", "cron", "duration", "fails", "cancel_at",
    "dup_of",
)  # fmt: skip


def test_a_workload_shows_itself():
    w = poisson(100.0, 1.0, seed=1, duplicates=0.1)
    assert repr(w).startswith("<Workload poisson: ") and "duplicates" in repr(w)
    html = w._repr_html_()
    assert "<table" in html and "seed 1" in html


@settings(max_examples=25, deadline=None)
@given(
    rate=st.floats(1.0, 2000.0),
    seed=st.integers(0, 2**32),
    cancels=st.floats(0.0, 1.0),
    duplicates=st.floats(0.0, 1.0),
)
def test_any_generated_workload_is_valid_and_round_trips(
    tmp_path_factory, rate, seed, cancels, duplicates
):
    w = poisson(
        rate, 0.5, seed=seed, lead=exponential(0.01), cancels=cancels, duplicates=duplicates
    )
    again = Workload(w.frame, horizon=w.horizon, name=w.name, seed=w.seed, params=w.params)
    assert again.equals(w)
    path = w.save(tmp_path_factory.mktemp("w") / "w.csv")
    assert read_workload(path).equals(w)
