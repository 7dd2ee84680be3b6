"""SIGINT and SIGTERM (Ctrl-C, a cancelled CI job): stop the servers, write nothing half, exit 130 / 143.

Why not asyncio's own Ctrl-C handling: it cancels the main task once, and a cancellation that
lands while an inner scope is finishing its own timeout can be absorbed, after which the run goes
on fuzzing. Here a signal cancels the whole run's anyio cancel scope, and an anyio cancellation is
level-triggered: every later checkpoint in the scope raises again until the run has unwound
(servers are stopped in shielded, bounded cleanup). Outside the event loop, SIGTERM raises
`Interrupted` like Ctrl-C raises `KeyboardInterrupt`, and while the outputs are written both
signals wait until the last file is in place.
"""

from __future__ import annotations

import signal
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from types import FrameType
from typing import TypeVar

import anyio

_T = TypeVar("_T")
_SIGNALS = (signal.SIGINT, signal.SIGTERM)


class Interrupted(BaseException):
    """The run was stopped by a signal. A BaseException, like KeyboardInterrupt, so that no
    `except Exception` on the way out takes it for an error."""

    def __init__(self, signum: int, *, outputs_written: bool = False) -> None:
        super().__init__(f"interrupted by {signal.Signals(signum).name}")
        self.signum = signum
        self.outputs_written = outputs_written

    @property
    def exit_code(self) -> int:
        """128 + the signal number, as shells report it: 130 for SIGINT, 143 for SIGTERM."""
        return 128 + self.signum


def _raise_interrupted(signum: int, _frame: FrameType | None) -> None:
    raise Interrupted(signum)


def install() -> None:
    """Outside the event loop, SIGTERM unwinds the program (cleanup runs) instead of killing it."""
    signal.signal(signal.SIGTERM, _raise_interrupted)


def run(function: Callable[[], Awaitable[_T]]) -> _T:
    """`anyio.run(function)`, stopped cleanly by SIGINT or SIGTERM (then raises `Interrupted`)."""
    received: list[int] = []
    result: list[_T] = []

    async def main() -> None:
        async with anyio.create_task_group() as tg:

            async def watch() -> None:
                with anyio.open_signal_receiver(*_SIGNALS) as signals:
                    async for signum in signals:
                        received.append(signum)
                        tg.cancel_scope.cancel()
                        return

            tg.start_soon(watch)
            result.append(await function())
            tg.cancel_scope.cancel()

    try:
        anyio.run(main)
    finally:
        # Leaving the loop puts the default handlers back; keep SIGTERM unwinding.
        install()
    if received:
        raise Interrupted(received[0])
    return result[0]


@contextmanager
def deferred() -> Iterator[None]:
    """Hold SIGINT and SIGTERM while files are written, then act on the first one received."""
    received: list[int] = []

    def hold(signum: int, _frame: FrameType | None) -> None:
        received.append(signum)

    previous = {sig: signal.signal(sig, hold) for sig in _SIGNALS}
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    if received:
        raise Interrupted(received[0], outputs_written=True)
