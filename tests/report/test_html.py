"""The HTML report's renderer and command without a browser: the sums it plots, escaping of any
text, redaction, the empty page, reading a store, and the command's errors."""

from __future__ import annotations

import base64
import hashlib
import re
from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fuzzgate.check.secrets import Redactor
from fuzzgate.cli.report import read_store
from fuzzgate.model.commands import repro_command
from fuzzgate.model.errors import UsageError
from fuzzgate.report.html import render_html, visible_text
from fuzzgate.report.html_assets import CONTENT_SECURITY_POLICY, SCRIPT, STYLE
from fuzzgate.report.html_data import (
    SILENT_AFTER_S,
    StoreData,
    TargetData,
    environment_groups,
    subject_rows,
    target_series,
    worker_state,
)
from fuzzgate.report.timeline_svg import count_ticks, counted, step_path, summed, time_ticks
from fuzzgate.store.database import InMemoryDatabase
from fuzzgate.store.records import STATES
from fuzzgate.store.shared import (
    FindingRecord,
    SharedStore,
    StatsSnapshot,
    StoredFinding,
    TimelinePoint,
    ToolStats,
    WorkerInfo,
)
from tests.e2e.conftest import free_port, fuzzgate
from tests.redis_server import RedisServer
from tests.report.chromium import DomTree
from tests.report.store_factory import ENV, FINDINGS, HOSTILE_MESSAGE, OLD_ENV, T0, TARGET, TOKEN, fill, finding

# --- the plotted sums -----------------------------------------------------------------------------


def test_summed_steps_add_each_workers_last_value() -> None:
    one = [(10.0, 1), (30.0, 4)]
    two = [(20.0, 2), (30.0, 3), (40.0, 5)]
    assert summed([one, two]) == ((10.0, 1), (20.0, 3), (30.0, 7), (40.0, 9))


def test_summed_skips_points_that_change_nothing() -> None:
    assert summed([[(1.0, 0), (2.0, 0), (3.0, 2)]]) == ((1.0, 0), (3.0, 2))
    assert summed([]) == ()


timelines = st.lists(
    st.lists(st.tuples(st.integers(0, 50).map(float), st.integers(0, 1000)), max_size=8).map(sorted),
    max_size=5,
)


@given(timelines)
def test_summed_equals_the_sum_of_each_timeline_at_every_time(series: list[list[tuple[float, int]]]) -> None:
    def value_at(points: list[tuple[float, int]], at: float) -> int:
        values = [v for t, v in points if t <= at]
        return values[-1] if values else 0

    total = summed(series)
    times = sorted({t for points in series for t, _ in points})
    for at in times:
        expected = sum(value_at(points, at) for points in series)
        stepped = [v for t, v in total if t <= at]
        assert (stepped[-1] if stepped else 0) == expected
    assert [t for t, _ in total] == sorted({t for t, _ in total})


def test_counted_is_how_many_came_by_then() -> None:
    assert counted([5.0, 1.0, 5.0, 3.0]) == ((1.0, 1), (3.0, 2), (5.0, 4))


def test_ticks_are_round_and_cover_the_range() -> None:
    assert count_ticks(0) == (0, 1)
    assert count_ticks(7) == (0, 2, 4, 6, 8)
    assert count_ticks(95) == (0, 50, 100)
    ticks = time_ticks(1000.0, 1000.0 + 3600)
    assert len(ticks) <= 6 and all(t % 900 == 0 for t in ticks) and ticks[0] >= 1000.0 and ticks[-1] <= 4600.0


def test_step_path_draws_horizontal_then_vertical_moves() -> None:
    # Plot area 0..100 wide from x=10, 0..50 high from y=5 (frame 120x70, margins 10/10/5/15).
    from fuzzgate.report.timeline_svg import Frame

    frame = Frame(width=120, height=70, left=10, right=10, top=5, bottom=15)
    path = step_path(((0.0, 0), (50.0, 2), (75.0, 4)), 0.0, 100.0, 4, frame)
    assert path == "M10 55H60V30H85V5H110"


# --- the page -------------------------------------------------------------------------------------


def _data(store: SharedStore, now: float = T0 + 900) -> StoreData:
    return read_store(store, now=now)


@pytest.fixture
def store() -> SharedStore:
    filled = SharedStore(InMemoryDatabase(), "memory")
    fill(filled)
    return filled


def test_page_has_one_style_and_one_script_allowed_by_hash(store: SharedStore) -> None:
    page = render_html(_data(store))
    dom = DomTree(page)
    assert [e.text for e in dom.find("style")] == [STYLE]
    assert [e.text for e in dom.find("script")] == [SCRIPT]
    for text in (STYLE, SCRIPT):
        digest = base64.b64encode(hashlib.sha256(text.encode()).digest()).decode()
        assert f"'sha256-{digest}'" in CONTENT_SECURITY_POLICY
    (meta,) = [m for m in dom.find("meta") if m.attrs.get("http-equiv") == "Content-Security-Policy"]
    assert meta.attrs["content"] == CONTENT_SECURITY_POLICY
    assert CONTENT_SECURITY_POLICY.startswith("default-src 'none';")
    assert not re.search(r"(?:src|href)=\"(?!#)", page), "the page refers to nothing outside itself"


def test_store_text_is_escaped_and_redacted(store: SharedStore) -> None:
    page = render_html(_data(store))
    dom = DomTree(page)
    assert HOSTILE_MESSAGE in [e.text for e in dom.find("p", "message")]
    assert "<script>alert(1)" not in page and TOKEN not in page
    assert "prompt failed\\x00\\x1b[31m red" in [e.text for e in dom.find("p", "message")]
    # Every finding once, the one two workers found with both of them.
    assert len(dom.find("article", "finding")) == 5
    confirmed = [a for a in dom.find("article") if a.attrs.get("data-state") == "confirmed"]
    assert len(confirmed) == 2
    assert "w-two<script>" in [e.text for e in dom.find("code")]
    # The value that does not parse is listed with its reason, as text.
    assert any("not valid JSON" in e.text for e in dom.find("li"))


def test_user_patterns_redact_and_repros_stay_whole(store: SharedStore) -> None:
    page = render_html(_data(store), Redactor((), [r"divide"]))
    dom = DomTree(page)
    assert all("divide" not in e.text for e in dom.find("p", "message"))
    # The repro is fuzzgate's own request: a redacted one would no longer reproduce the bug.
    assert repro_command(FINDINGS["confirmed"]) in [e.text for e in dom.find("code", "command")]


@settings(max_examples=60, deadline=None)
@given(name=st.text(max_size=40), message=st.text(max_size=80), target=st.text(min_size=1, max_size=30))
def test_any_text_stays_text(name: str, message: str, target: str) -> None:
    found = StoredFinding(target, finding("ff00ff00ff00ff00", name, message), "confirmed", (name,), T0, T0)
    data = StoreData(
        location=target,
        generated=T0,
        targets=(TargetData(target, findings=(found,), corpus={name: 1}),),
        workers=(WorkerInfo(name, message, 1, T0, T0, (target,), message),),
    )
    dom = DomTree(render_html(data, Redactor(())))
    assert dom.tags() <= {
        *("html", "head", "meta", "title", "style", "body", "header", "h1", "h2", "h3", "h4", "p", "span"),
        *("code", "b", "div", "button", "nav", "a", "section", "table", "thead", "tbody", "tr", "th", "td"),
        *("figure", "figcaption", "svg", "line", "text", "path", "circle", "article", "dl", "dt", "dd"),
        *("pre", "details", "summary", "ul", "li", "script", "title"),
    }
    assert len(dom.find("script")) == 1
    assert len(dom.find("article")) == 1
    # The text itself arrives, as the reader would see it.
    assert [e.text for e in dom.find("p", "message")] == [visible_text(Redactor(()).text(message))]


def test_empty_store_says_there_is_nothing_yet() -> None:
    page = render_html(read_store(SharedStore(InMemoryDatabase(), "memory"), now=T0))
    dom = DomTree(page)
    assert [e.text.split(":")[0] for e in dom.find("p", "empty-page")] == ["Nothing in this store yet"]
    assert not dom.find("section", "target") and len(dom.find("script")) == 1


def test_tables_count_the_current_environment_only(store: SharedStore) -> None:
    data = _data(store)
    (target,) = [t for t in data.targets if t.name == TARGET]
    groups = environment_groups(target.stats)
    assert [env for env, _ in groups] == [ENV, OLD_ENV]
    rows = {row.subject: row for row in subject_rows(target, groups[0][1])}
    assert rows["divide"].calls == 240  # two workers of 120; the older environment's 999 left out
    assert rows["divide"].corpus == 4 and rows["prompt summarize"].corpus == 1
    assert rows["divide"].findings == {"confirmed": 1}
    assert rows["prompt summarize"].findings == {"unconfirmed": 1}
    assert rows["make_then_use"].findings == {"seen": 1}
    assert set(STATES) == {"confirmed", "flaky", "unconfirmed", "seen"}


def test_read_store_folds_workers_and_filters_a_target(store: SharedStore) -> None:
    data = read_store(store, TARGET, now=T0)
    assert [t.name for t in data.targets] == [TARGET]
    (found,) = [f for f in data.targets[0].findings if f.finding.fingerprint == FINDINGS["confirmed"].fingerprint]
    assert found.workers == ("w-one", "w-two<script>") and found.state == "confirmed"
    assert {w.id for w in data.workers} == {"w-one", "w-two<script>"}
    with pytest.raises(UsageError, match="no target 'nope' in memory"):
        read_store(store, "nope")


def test_read_store_never_writes() -> None:
    db = InMemoryDatabase()
    store = SharedStore(db, "memory")
    fill(store)
    before = {key: set(db.fetch(key)) for key in db.keys()}  # noqa: SIM118
    render_html(read_store(SharedStore(db, "memory"), now=T0))
    assert {key: set(db.fetch(key)) for key in db.keys()} == before  # noqa: SIM118


# --- the command ----------------------------------------------------------------------------------


def test_missing_directory_is_one_line_exit_2_and_no_file(tmp_path: Path) -> None:
    out = tmp_path / "out" / "report.html"
    run = fuzzgate("report", "--store", str(tmp_path / "nowhere"), "--out", str(out), cwd=tmp_path)
    assert run.code == 2
    assert run.stderr.strip().splitlines() == [
        f"fuzzgate: store error: {tmp_path / 'nowhere'}: no store here (not a directory)"
    ]
    assert not out.exists() and not (tmp_path / "nowhere").exists()


def test_unreachable_redis_is_one_line_exit_2_and_no_file(tmp_path: Path) -> None:
    out = tmp_path / "report.html"
    url = f"redis://127.0.0.1:{free_port()}/0"
    run = fuzzgate("report", "--store", url, "--out", str(out), cwd=tmp_path, timeout=60)
    assert run.code == 2, run.stderr
    lines = run.stderr.strip().splitlines()
    # One line saying what failed (the project's errors may add a hint line), no traceback.
    assert lines[0].startswith(f"fuzzgate: store error: {url}: cannot connect")
    assert all(line.startswith("hint:") for line in lines[1:]) and len(lines) <= 2
    assert not out.exists()


def test_unknown_target_names_the_ones_there(tmp_path: Path) -> None:
    from fuzzgate.store.set_directory import SetDirectoryDatabase

    root = tmp_path / "store"
    SharedStore(SetDirectoryDatabase(root), str(root)).record_findings(
        [FindingRecord("alpha", finding("ab" * 8, "t", "m"), "seen", "w", ENV, T0, T0)]
    )
    out = tmp_path / "report.html"
    run = fuzzgate("report", "--store", str(root), "--target", "beta", "--out", str(out), cwd=tmp_path)
    assert run.code == 2
    assert "no target 'beta'" in run.stderr and "(it holds: alpha)" in run.stderr
    assert not out.exists()
    run = fuzzgate("report", "--store", str(root), "--target", "alpha", cwd=tmp_path)
    assert run.code == 0, run.stderr
    assert (tmp_path / ".fuzzgate" / "report.html").is_file()


def test_report_over_a_real_redis_never_shows_its_password(tmp_path: Path) -> None:
    password = "pw-0f9e8d7c6b5a"
    with RedisServer(tmp_path / "redis", password=password) as server:
        filled = SharedStore.open(server.url)
        fill(filled)
        filled.close()
        out = tmp_path / "report.html"
        run = fuzzgate("report", "--store", server.url, "--out", str(out), cwd=tmp_path)
    assert run.code == 0, run.stderr
    assert "2 target(s), 5 finding(s), 2 worker(s); 1 value(s) in the store could not be read" in run.stdout
    page = out.read_text()
    assert password not in page and password not in run.stdout
    dom = DomTree(page)
    assert len(dom.find("article", "finding")) == 5
    assert f"redis://:***@127.0.0.1:{server.port}/0" in [e.text for e in dom.find("code")]


def test_a_worker_counted_nothing_when_it_started() -> None:
    # A run writes one timeline point, at its end: the plot rises from its start, not a flat line.
    snapshot = StatsSnapshot("w", "t", ENV, 1, T0 + 60, {}, (TimelinePoint(T0 + 60, 10, 7, 3, 1),))
    target = TargetData("t", stats=(snapshot,))
    series = target_series(target, [snapshot], {"w": T0})
    assert series["behaviours"] == ((T0, 0), (T0 + 60, 7))
    assert series["corpus"] == ((T0, 0), (T0 + 60, 3))
    assert target_series(target, [snapshot])["behaviours"] == ((T0 + 60, 7),)


def test_long_evidence_is_cut_after_redaction() -> None:
    long_stderr = "x" * 5000 + f" token {TOKEN} " + "tail"
    found = finding("ee" * 8, "t", "m")
    found = replace(found, details=replace(found.details, stderr=long_stderr, frames=tuple(f"f{i}" for i in range(50))))
    data = StoreData("memory", T0, (TargetData("t", findings=(StoredFinding("t", found, "seen", ("w",), T0, T0),)),))
    (evidence,) = DomTree(render_html(data)).find("pre")[1:]
    assert TOKEN not in evidence.text and "[REDACTED] tail" in evidence.text
    assert "earlier characters cut" in evidence.text and "10 more frames cut" in evidence.text
    assert len(evidence.text) < 4000


def test_a_running_worker_without_heartbeats_is_silent(store: SharedStore) -> None:
    worker = WorkerInfo("w", "h", 1, T0, T0 + 100, ("t",), "running")
    assert worker_state(worker, T0 + 130) == "running"
    assert worker_state(worker, T0 + 100 + SILENT_AFTER_S + 1) == "silent"
    assert worker_state(replace(worker, state="stopped"), T0 + 9999) == "stopped"
    dom = DomTree(render_html(read_store(store, now=T0 + 2000)))
    assert "silent " in [e.text for e in dom.find("td")]
    (overview,) = [
        p
        for p in re.findall(r'<p class="facts">.*?</p>', render_html(read_store(store, now=T0 + 2000)))
        if "worker(s)" in p
    ]
    assert "<b>2</b> worker(s), 0 running, 1 silent" in overview
    assert "<b>5</b> finding(s): 2 confirmed, 1 flaky, 1 unconfirmed, 1 seen" in overview
    assert [e.text for e in dom.find("button", "filter")] == [
        "All (5)",
        "confirmed (2)",
        "flaky (1)",
        "unconfirmed (1)",
        "seen (1)",
    ]


@pytest.mark.parametrize("bad", [float("nan"), float("inf"), -float("inf"), 1e300, -1.0])
def test_times_no_worker_could_write_do_not_break_the_page(bad: float) -> None:
    # Python's json reads NaN and Infinity, and a store holds whatever was written to it.
    point = TimelinePoint(bad, 1, 1, 1, 1)
    snapshot = StatsSnapshot(
        "w", "t", ENV, 1, bad, {"x": ToolStats(calls=1, last_new=bad)}, (point, replace(point, at=T0))
    )
    found = StoredFinding("t", finding("ab" * 8, "x", "m"), "seen", ("w",), bad, bad)
    data = StoreData(
        "memory",
        T0,
        (TargetData("t", findings=(found,), stats=(snapshot,)),),
        (WorkerInfo("w", "h", 1, bad, bad, ("t",), "running"),),
    )
    dom = DomTree(render_html(data))
    assert "(no valid time)" in [e.text for e in dom.find("td")]
    assert len(dom.find("article")) == 1
    assert target_series(data.targets[0], [snapshot], {"w": bad})["behaviours"] == ((T0, 1),)
