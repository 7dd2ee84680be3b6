"""A server that asks for roots gets the scope fuzzgate gives it: the throwaway layer's paths,
never the user's directories."""

from __future__ import annotations

import sys
from pathlib import Path

import anyio

from fuzzgate.config.model import Config, ProtocolMode, SandboxMode, TargetConfig, TargetKind
from fuzzgate.config.views import ServerSettings
from fuzzgate.model.outcome import OutcomeStatus
from fuzzgate.sandbox.containment import contain
from fuzzgate.target.call import call_tool
from fuzzgate.target.connection import open_connection

ROOTS_READER = Path(__file__).resolve().parents[1] / "servers" / "roots_reader.py"


def _roots(tmp_path: Path, sandbox: SandboxMode) -> tuple[str, list[str], Path]:
    work = tmp_path / "work"
    work.mkdir()
    target = TargetConfig(
        kind=TargetKind.STDIO, command=sys.executable, args=(str(ROOTS_READER),), cwd=work, sandbox=sandbox
    )
    # roots/list is a handshake-era request (deprecated by 2026-07-28): negotiate that era.
    config = Config(target=target, protocol=ProtocolMode.LEGACY)
    containment = contain(config.target, 1)
    assert containment is not None

    async def body() -> tuple[str, list[str], Path]:
        async with open_connection(ServerSettings.of(config), containment=containment) as connection:
            outcome = await call_tool(connection, "roots", {}, 10)
            assert outcome.status is OutcomeStatus.OK, outcome
            assert connection.layer is not None
            return outcome.text, connection.layer.roots(), connection.layer.outside

    try:
        return anyio.run(body)
    finally:
        containment.close()


def test_the_roots_are_the_scope_as_the_server_sees_it(tmp_path: Path) -> None:
    for sandbox in (SandboxMode.AUTO, SandboxMode.OFF):
        base = tmp_path / sandbox.value
        base.mkdir()
        text, roots, outside = _roots(base, sandbox)
        assert text.splitlines() == roots
        [root] = roots
        assert root.startswith(outside.as_uri() + "/scope/")
        assert str(tmp_path) not in root
