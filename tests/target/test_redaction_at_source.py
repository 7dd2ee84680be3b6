"""What the target stage must redact itself, because only it sees the whole text: a stderr line too
long to keep, and the start-up error (command line, stderr tail) shown on exit 3."""

from __future__ import annotations

import sys

import anyio
import pytest

from fuzzgate.check.secrets import Redactor
from fuzzgate.config.model import Config, TargetConfig, TargetKind
from fuzzgate.config.views import ServerSettings
from fuzzgate.model.errors import TargetError
from fuzzgate.target.connection import open_connection
from fuzzgate.target.stdio import STDERR_LINE_BYTES, ServerProcess, StdioSpec, child_environment

SECRET = "Qw7eRt9yUi1oPa3s"


def pieces(text: str) -> list[str]:
    return [p for p in (SECRET[i : i + 6] for i in range(len(SECRET) - 5)) if p in text]


def stderr_of(code: str) -> list[str]:
    process = ServerProcess(StdioSpec(sys.executable, ("-c", code), child_environment({}), None), Redactor([SECRET]))

    async def body() -> None:
        await process.start()
        await process.pump_stderr()
        await process.stop()

    anyio.run(body)
    return process.stderr.tail(10)


@pytest.mark.parametrize("into", [1, 5, 15])
@pytest.mark.parametrize("ends", ["newline", "eof"])
def test_a_secret_cut_where_an_over_long_stderr_line_is_dropped_is_redacted(into: int, ends: str) -> None:
    # The secret straddles the end of what is kept of the line, `into` characters of it kept.
    tail = "\nnext line\n" if ends == "newline" else ""
    line = f"'.' * {STDERR_LINE_BYTES - into} + {SECRET!r} + '.' * 100 + {tail!r}"
    lines = stderr_of(f"import sys; sys.stderr.write({line})")
    assert not pieces("\n".join(lines))
    assert lines[0].endswith("more bytes of this line dropped]") and "[REDACTED]" in lines[0]
    assert lines[1:] == (["next line"] if ends == "newline" else [])


def test_a_short_stderr_line_is_kept_as_written() -> None:
    assert stderr_of(f"import sys; sys.stderr.write('key {SECRET}\\n')") == [f"key {SECRET}"]


def test_the_start_up_error_redacts_command_line_reason_and_stderr() -> None:
    code = (
        f"import sys; print('x' * 110 + {SECRET!r}, file=sys.stderr);"
        f"print('Traceback: KeyError ' + {SECRET!r}, file=sys.stderr); sys.exit(3)"
    )
    config = Config(
        target=TargetConfig(
            kind=TargetKind.STDIO, command=sys.executable, args=("-c", code, f"--token={SECRET}"), env={"T": SECRET}
        ),
        startup_timeout_ms=20_000,
    )

    async def body() -> None:
        async with open_connection(ServerSettings.of(config)):
            pass

    with pytest.raises(TargetError) as caught:
        anyio.run(body)
    error = caught.value
    assert error.detail is not None and "x" * 110 in error.detail
    assert not pieces(error.message) and not pieces(error.detail)
    assert "[REDACTED]" in error.message and "[REDACTED]" in error.detail
