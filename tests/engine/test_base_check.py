"""The base check of verification (`--base`), with replays faked: which new findings are
pre-existing, what is never checked, and the notes for what could not be."""

from __future__ import annotations

import math
from dataclasses import replace
from pathlib import Path
from typing import Any

import anyio
import pytest

from fuzzgate.check import Observation
from fuzzgate.config.model import Config, TargetConfig, TargetKind
from fuzzgate.config.views import ServerSettings
from fuzzgate.engine import verify
from fuzzgate.engine.base_check import BaseRevision
from fuzzgate.engine.settings import VerifySettings
from fuzzgate.engine.verify import Verification, Verifier
from fuzzgate.model.errors import TargetError
from fuzzgate.model.findings import DEFAULT_SEVERITY, Finding, Kind, Repro, Step, Surface

HEAD, BASE = Path("/repo/head"), Path("/repo/base")


def _finding(fp: str, arguments: dict[str, Any] | None = None) -> Finding:
    repro = Repro(seed=1, case_index=0, arguments=arguments or {}, transport="stdio")
    return Finding(Kind.CRASH, DEFAULT_SEVERITY[Kind.CRASH], Surface.TOOL, "t", "m", fp, repro)


def _verify(
    monkeypatch: pytest.MonkeyPatch,
    on_base: dict[str, bool | Exception],
    findings: list[Finding],
    known: frozenset[str] = frozenset(),
    replays: int = 1,
) -> tuple[Verification, list[str]]:
    """Every head replay fails again; a base replay answers `on_base[fingerprint]`. Returns the
    verification and the fingerprints replayed on the base, in order."""
    config = Config(target=TargetConfig(kind=TargetKind.STDIO, command="head-server"), replays=replays)
    base_server = replace(
        ServerSettings.of(config), target=TargetConfig(kind=TargetKind.STDIO, command="base-server")
    )
    on_base_calls: list[str] = []

    async def fake_replay(
        settings: VerifySettings, _oracles: Any, finding: Finding, *_: Any, **__: Any
    ) -> tuple[bool, list[Observation]]:
        if settings.target.command == "head-server":
            return True, []
        on_base_calls.append(finding.fingerprint)
        answer = on_base[finding.fingerprint]
        if isinstance(answer, Exception):
            raise answer
        return answer, []

    monkeypatch.setattr(verify, "replay_once", fake_replay)

    async def main() -> Verification:
        verifier = Verifier(
            VerifySettings.of(config), None, {}, base=BaseRevision(base_server, HEAD, BASE)  # type: ignore[arg-type]
        )
        verifier.known = known
        async with anyio.create_task_group() as tg:
            tg.start_soon(verifier.serve)
            result = await verifier.finish([(f, False) for f in findings], [], math.inf)
            tg.cancel_scope.cancel()
        return result

    return anyio.run(main), on_base_calls


def test_a_finding_failing_on_the_base_is_pre_existing_and_the_others_new(monkeypatch: pytest.MonkeyPatch) -> None:
    old, new, accepted = _finding("o" * 20), _finding("n" * 20), _finding("k" * 20)
    out, on_base = _verify(
        monkeypatch, {old.fingerprint: True, new.fingerprint: False}, [old, new, accepted], known=frozenset({"k" * 20})
    )
    assert out.pre_existing == {old.fingerprint}
    # The baseline's own finding is never sent to the base; a new one gets a second chance there.
    assert sorted(on_base) == sorted([old.fingerprint, new.fingerprint, new.fingerprint])
    assert "base revision: 1 of 2 new finding(s) fail there too (pre-existing)" in out.notes


def test_a_base_server_that_cannot_start_leaves_every_finding_new(monkeypatch: pytest.MonkeyPatch) -> None:
    findings = [_finding("a" * 20), _finding("b" * 20)]
    broken = TargetError("the server exited with status 2")
    out, _ = _verify(monkeypatch, {f.fingerprint: broken for f in findings}, findings)
    assert out.pre_existing == frozenset()
    assert any(
        "the base revision's server could not be started (the server exited with status 2)" in note
        and "2 findings not checked on the base stay new" in note
        for note in out.notes
    ), out.notes


def test_a_repro_sends_the_base_paths_in_place_of_the_heads() -> None:
    revision = BaseRevision(ServerSettings.of(Config(target=TargetConfig(kind=TargetKind.STDIO))), HEAD, BASE)
    step = Step("t", {"file": "/repo/head/data/x.txt"})
    finding = _finding("p" * 20, {"path": "/repo/head", "list": ["/repo/head/a", "/repo/headless", "/elsewhere"]})
    finding = replace(finding, repro=replace(finding.repro, prefix=(step,)))
    moved = revision.rebased(finding).repro
    assert moved.arguments == {"path": "/repo/base", "list": ["/repo/base/a", "/repo/headless", "/elsewhere"]}
    assert moved.prefix[0].arguments == {"file": "/repo/base/data/x.txt"}
