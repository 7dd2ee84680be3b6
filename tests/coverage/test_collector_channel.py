"""The collector's parts without a server: the recorder over coverage.py's tracer data (and its
public-API fallback), the names measured files go by, and the side channel's protocol as
fuzzgate's `CoverageChannel` speaks it (stale answers, errors, silence, a closed pipe)."""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest

from fuzzgate.coverage.channel import NOT_LOADED, CallCoverage, Constant, CoverageChannel
from fuzzgate.coverage.collector import agent
from fuzzgate.coverage.plan import CollectorPlan


def _pack(first: int, second: int) -> int:
    """An arc as coverage.py's C tracer packs it."""
    return abs(first) | (abs(second) << 28) | (int(first < 0) << 56) | (int(second < 0) << 57)


class _Core:
    packed_arcs = True


class _Collector:
    def __init__(self) -> None:
        self.data: dict[str, set[int]] = {}
        self.core = _Core()


class _TracedCoverage:
    def __init__(self) -> None:
        self._collector = _Collector()

    def sys_info(self) -> list[tuple[str, Any]]:
        return [("core", "CTracer")]


class _Data:
    def __init__(self, arcs: dict[str, list[tuple[int, int]]]) -> None:
        self._arcs = arcs

    def measured_files(self) -> list[str]:
        return list(self._arcs)

    def arcs(self, filename: str) -> list[tuple[int, int]]:
        return self._arcs[filename]


class _PublicCoverage:
    """A coverage.py without the private attribute: only `get_data()`, which accumulates."""

    def __init__(self) -> None:
        self.arcs: dict[str, list[tuple[int, int]]] = {}

    def get_data(self) -> _Data:
        return _Data({name: list(arcs) for name, arcs in self.arcs.items()})

    def sys_info(self) -> list[tuple[str, Any]]:
        return [("core", "PyTracer")]


def test_arc_packing_round_trips() -> None:
    for arc in [(1, 2), (-1, 5), (7, -1), (-3, -4), (0xFFFFFFF, 1)]:
        assert agent._unpack(_pack(*arc)) == arc


def test_the_recorder_hands_over_each_calls_arcs_and_new_files_constants(tmp_path: Path) -> None:
    server = tmp_path / "server.py"
    server.write_text("def f(mode):\n    if mode == 'turbo':\n        return 1\n")
    cov = _TracedCoverage()
    recorder = agent.Recorder(agent.CoverageProbe(cov, "7.17.3"), agent.Roots([str(tmp_path)], []))
    assert recorder.hello()["per_call"] is True and recorder.hello()["core"] == "CTracer"
    data = cov._collector.data
    data[str(server)] = {_pack(-1, 2), _pack(2, -1)}
    first = recorder.take()
    lines = {"server.py": [2]}
    assert first == {"lines": lines, "arcs": {"server.py": [[-1, 2], [2, -1]]}, "constants": [["turbo", "mode", False]]}
    assert data[str(server)] == set(), "what was handed over is taken out of the tracer's sets"
    assert recorder.take() == {"lines": {}, "arcs": {}, "constants": []}
    data[str(server)].update({_pack(-1, 2), _pack(2, -1)})
    again = recorder.take()
    assert again == {"lines": lines, "arcs": {"server.py": [[-1, 2], [2, -1]]}, "constants": []}, "a per-call set"


def test_without_the_tracer_data_the_public_api_gives_only_new_arcs(tmp_path: Path) -> None:
    cov = _PublicCoverage()
    recorder = agent.Recorder(agent.CoverageProbe(cov, "7.17.3"), agent.Roots([str(tmp_path)], []))
    assert recorder.hello()["per_call"] is False
    name = str(tmp_path / "missing.py")
    cov.arcs[name] = [(-1, 2)]
    assert recorder.take()["arcs"] == {"missing.py": [[-1, 2]]}
    cov.arcs[name] = [(-1, 2), (2, -1)]
    assert recorder.take() == {"lines": {"missing.py": [2]}, "arcs": {"missing.py": [[2, -1]]}, "constants": []}


def test_measured_files_are_named_relative_to_their_root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    package = tmp_path / "lib" / "weatherpkg"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("")
    monkeypatch.syspath_prepend(str(tmp_path / "lib"))
    roots = agent.Roots([str(tmp_path / "srv")], ["weatherpkg", "no_such_package_anywhere"])
    assert roots.sources == [str(tmp_path / "srv"), str(package)]
    assert roots.unresolved == ["no_such_package_anywhere"]
    assert roots.name(str(tmp_path / "srv" / "tools" / "a.py")) == "tools/a.py"
    assert roots.name(str(package / "core.py")) == "weatherpkg/core.py"
    assert roots.name("/elsewhere/x.py") == "/elsewhere/x.py"
    assert roots.measures(str(tmp_path / "srv" / "tools" / "a.py"))
    assert roots.measures(str(package / "core.py"))
    assert not roots.measures(str(tmp_path / "srv" / ".venv" / "lib" / "site-packages" / "mcp" / "x.py"))
    assert not roots.measures("/elsewhere/x.py") and not roots.measures("<frozen os>")


# The side channel -------------------------------------------------------------------------------


class _ServerEnd:
    """The server's end of a channel, in this process: duplicates of the fds the server inherits."""

    def __init__(self, channel: CoverageChannel) -> None:
        request, reply = channel.pass_fds
        self.request = os.dup(request)
        self.reply = os.dup(reply)

    def say(self, message: dict[str, Any] | str) -> None:
        text = message if isinstance(message, str) else json.dumps(message)
        os.write(self.reply, (text + "\n").encode())

    def lines(self) -> Iterator[str]:
        pending = b""
        while True:
            chunk = os.read(self.request, 100)
            if not chunk:
                return
            pending += chunk
            while b"\n" in pending:
                line, _, pending = pending.partition(b"\n")
                yield line.decode()

    def requests(self) -> Iterator[int]:
        for line in self.lines():
            yield int(line)

    def serve(self, answer: Callable[[int], list[dict[str, Any]]], count: int) -> threading.Thread:
        """Answer `count` requests in a thread (join it before closing this end)."""

        def run() -> None:
            for served, sequence in enumerate(self.requests(), 1):
                for message in answer(sequence):
                    self.say(message)
                if served == count:
                    return

        thread = threading.Thread(target=run, daemon=True)
        thread.start()
        return thread

    def close(self) -> None:
        for fd in (self.request, self.reply):
            os.close(fd)


HELLO = {"hello": {"python": "3.11.7", "coverage": "7.17.3", "core": "CTracer", "per_call": True, "measured": []}}


def _channel(tmp_path: Path) -> tuple[CoverageChannel, _ServerEnd]:
    channel = CoverageChannel(CollectorPlan(True, "python runs s.py", directories=(tmp_path,)))
    return channel, _ServerEnd(channel)


def test_the_channel_describes_itself_in_the_servers_environment(tmp_path: Path) -> None:
    channel, side = _channel(tmp_path)
    try:
        env = channel.environment("/user/path")
        assert env["PYTHONPATH"].endswith(os.pathsep + "/user/path")
        settings = json.loads(env["FUZZGATE_COLLECTOR"])
        assert settings["pythonpath"] == "/user/path"
        assert (settings["request_fd"], settings["reply_fd"]) == channel.pass_fds
        assert settings["dirs"] == [str(tmp_path)]
    finally:
        channel.close()
        side.close()


def test_hello_then_collect_skips_stale_answers_and_drops_what_is_malformed(tmp_path: Path) -> None:
    channel, side = _channel(tmp_path)

    def answer(sequence: int) -> list[dict[str, Any]]:
        stale = {"seq": sequence - 1, "arcs": {"old.py": [[1, 2]]}, "constants": []}
        arcs = {"s.py": [[-1, 2], [2, -1], [3], ["x", 1]], "t.py": "nonsense"}
        lines = {"s.py": [7, "8", -1], "t.py": [1], "u.py": 5}
        constants = [["turbo", "mode", False], [3, "items", True], [True, "flag", False], ["short"]]
        return [stale, {"seq": sequence, "arcs": arcs, "lines": lines, "constants": constants}]

    async def body() -> tuple[Any, CallCoverage | None, CallCoverage | None]:
        side.say(HELLO)
        info = await channel.hello(5)
        thread = side.serve(answer, 2)
        answers = await channel.collect(5), await channel.collect(5)
        thread.join()
        return info, *answers

    try:
        info, first, second = anyio.run(body)
    finally:
        channel.close()
        side.close()
    assert info is not None and info.describe() == f"Python 3.11.7, coverage.py 7.17.3 C tracer, measuring {tmp_path}"
    expected = CallCoverage(
        frozenset({"s.py:-1:2", "s.py:2:-1"}),
        (Constant("turbo", "mode"), Constant(3, "items", True)),
        frozenset({"s.py:2", "s.py:7", "t.py:1"}),
    )
    assert first == expected and second == expected


def test_no_hello_means_no_coverage_and_closed_pipes(tmp_path: Path) -> None:
    channel, side = _channel(tmp_path)

    async def body() -> tuple[Any, Any]:
        return await channel.hello(0.2), await channel.collect(1)

    try:
        assert anyio.run(body) == (None, None)
    finally:
        side.close()
    assert channel.failure == NOT_LOADED
    with pytest.raises(OSError):
        os.fstat(channel._reply_read)


def test_an_error_from_the_collector_ends_the_channel_with_its_reason(tmp_path: Path) -> None:
    channel, side = _channel(tmp_path)

    async def body() -> tuple[Any, Any]:
        side.say(HELLO)
        await channel.hello(5)
        thread = side.serve(lambda sequence: [{"error": "RuntimeError: boom"}], 1)
        answers = await channel.collect(5), await channel.collect(5)
        thread.join()
        return answers

    try:
        assert anyio.run(body) == (None, None)
    finally:
        channel.close()
        side.close()
    assert channel.failure == "the collector failed: RuntimeError: boom"


def test_a_late_answer_is_skipped_and_a_closed_pipe_gives_none(tmp_path: Path) -> None:
    channel, side = _channel(tmp_path)
    release = threading.Event()

    def answer(sequence: int) -> list[dict[str, Any]]:
        if sequence == 1:
            release.wait(10)
        return [{"seq": sequence, "arcs": {"s.py": [[sequence, sequence + 1]]}, "constants": []}]

    async def body() -> tuple[Any, Any, Any]:
        side.say(HELLO)
        await channel.hello(5)
        thread = side.serve(answer, 2)
        late = await channel.collect(0.2)
        release.set()
        on_time = await channel.collect(5)
        thread.join()
        side.close()
        return late, on_time, await channel.collect(5)

    try:
        late, on_time, closed = anyio.run(body)
    finally:
        channel.close()
    assert late is None
    assert on_time == CallCoverage(frozenset({"s.py:2:3"}), lines=frozenset({"s.py:2", "s.py:3"}))
    assert closed is None
    assert channel.failure is not None and "closed" in channel.failure


def test_the_agent_never_raises_into_the_server() -> None:
    """Settings it cannot use: nothing to say on without fds; an error line when it has them."""
    agent.start({})
    request_read, request_write = os.pipe()
    reply_read, reply_write = os.pipe()
    agent.start({"request_fd": request_read, "reply_fd": reply_write})
    with os.fdopen(reply_read, "rb") as reply:
        message = json.loads(reply.readline())
        assert reply.read() == b"", "the agent hung up"
    os.close(request_write)
    assert message == {"error": "KeyError: 'coverage'"}


def _switching(tmp_path: Path, hello: dict[str, Any], steps: list[bool]) -> tuple[list[str], list[Any]]:
    """`measure(on)` for each step, and a collect after each measured one: the request lines the
    collector got, and what each collect gave."""
    channel, side = _channel(tmp_path)
    received: list[str] = []

    def run() -> None:
        for line in side.lines():
            received.append(line)
            sequence, _, verb = line.partition(" ")
            if verb:
                side.say({"seq": int(sequence), "measuring": verb == "resume"})
            else:
                constants = [["k" + sequence, "name", False]]
                side.say({"seq": int(sequence), "arcs": {"s.py": [[1, int(sequence)]]}, "constants": constants})

    async def body() -> list[Any]:
        side.say(hello)
        await channel.hello(5)
        collected = []
        for on in steps:
            await channel.measure(on, 5)
            assert channel.measuring is on
            if on:
                collected.append(await channel.collect(5))
        return collected

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    try:
        collected = anyio.run(body)
    finally:
        channel.close()
        thread.join(5)
        side.close()
    return received, collected


def test_a_collector_that_can_pause_is_switched_off_and_on_only_when_it_changes(tmp_path: Path) -> None:
    hello = {"hello": {**HELLO["hello"], "pause": True}}
    received, collected = _switching(tmp_path, hello, [True, False, False, True, True])
    assert received == ["1", "2 pause", "3 resume", "4", "5"]
    assert [c.arcs for c in collected] == [frozenset({"s.py:1:1"}), frozenset({"s.py:1:4"}), frozenset({"s.py:1:5"})]


def test_without_pause_what_unmeasured_calls_ran_is_set_aside_with_its_constants_kept(tmp_path: Path) -> None:
    received, collected = _switching(tmp_path, HELLO, [True, False, False, True])
    # Nothing is sent to switch off; switching on collects what ran meanwhile, set aside.
    assert received == ["1", "2", "3"]
    assert [c.arcs for c in collected] == [frozenset({"s.py:1:1"}), frozenset({"s.py:1:3"})]
    assert collected[1].constants == (Constant("k2", "name"), Constant("k3", "name"))
