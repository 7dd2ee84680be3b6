"""A server start's layer is made and removed off the event loop: on a slow disk, copying or
removing a layer's tree blocked every call in flight for up to 0.3 s per server start. Made or
being removed when the run is cancelled, it is still removed."""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Any

import anyio
import pytest

from fuzzgate.config.model import Config, TargetConfig, TargetKind
from fuzzgate.config.views import ServerSettings
from fuzzgate.target import connection as connection_module
from fuzzgate.target.connection import open_connection
from fuzzgate.target.launch import PreparedStart, prepare_start

FAST = Path(__file__).resolve().parents[2] / "examples" / "servers" / "fast_server.py"
SLOW_S = 0.3


class _Slow(PreparedStart):
    """A prepared start whose removal blocks its thread, as a slow disk's does."""

    closed: list[tuple[float, float]]

    def close(self) -> None:
        began = time.monotonic()
        time.sleep(SLOW_S)
        super().close()
        self.closed.append((began, time.monotonic()))


@pytest.fixture
def windows(monkeypatch: pytest.MonkeyPatch) -> dict[str, list[tuple[float, float]]]:
    seen: dict[str, list[tuple[float, float]]] = {"prepared": [], "closed": []}

    def slow_prepare(*args: Any) -> PreparedStart:
        began = time.monotonic()
        time.sleep(SLOW_S)
        real = prepare_start(*args)
        slow = _Slow(real.plan, real.spec, real.layer, real.listener, real.channel)
        slow.closed = seen["closed"]
        seen["prepared"].append((began, time.monotonic()))
        return slow

    monkeypatch.setattr(connection_module, "prepare_start", slow_prepare)
    return seen


def _settings() -> ServerSettings:
    target = TargetConfig(kind=TargetKind.STDIO, command=sys.executable, args=(str(FAST),))
    return ServerSettings.of(Config(target=target, startup_timeout_ms=30_000))


def test_the_event_loop_runs_while_a_layer_is_made_and_removed(windows: dict[str, list[tuple[float, float]]]) -> None:
    ticks: list[float] = []

    async def ticker() -> None:
        while True:
            ticks.append(time.monotonic())
            await anyio.sleep(0.01)

    async def main() -> None:
        async with anyio.create_task_group() as tg:
            tg.start_soon(ticker)
            async with open_connection(_settings()):
                pass
            tg.cancel_scope.cancel()

    anyio.run(main)
    for name in ("prepared", "closed"):
        ((began, ended),) = windows[name]
        assert any(began < tick < ended for tick in ticks), f"no other task ran while the layer was {name}"


@pytest.mark.parametrize("during", ["prepared", "closed"])
def test_a_cancelled_start_still_removes_its_layer(windows: dict[str, list[tuple[float, float]]], during: str) -> None:
    async def main() -> None:
        with anyio.move_on_after(SLOW_S / 2 if during == "prepared" else 30) as scope:
            async with open_connection(_settings()):
                if during == "closed":
                    # The cancellation comes while the layer is being removed.
                    scope.deadline = anyio.current_time() + SLOW_S / 2

    anyio.run(main)
    assert len(windows["prepared"]) == 1 and len(windows["closed"]) == 1
