"""`fuzz_guarded_in_sandbox`: which tools the guard blocks are fuzzed, for a run and for every
sender of stored calls (`Admission`), given whether the sandbox holds for the servers they go to."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from fuzzgate.config.model import Config, SandboxMode, TargetConfig, TargetKind
from fuzzgate.model.findings import Surface
from fuzzgate.plan.selection import NOT_CONTAINED, Admission, NotSelected, SelectionSettings, select
from fuzzgate.record.results import Status
from fuzzgate.sandbox.containment import NOT_STARTED, contain, unheld_of
from fuzzgate.sandbox.jail import sandbox_unavailable
from fuzzgate.target.discover import Inventory, ToolInfo

SCHEMA: dict[str, Any] = {"type": "object", "properties": {}}
TOOLS = (
    ToolInfo("list_notes", "", SCHEMA, None, None, True),
    ToolInfo("delete_note", "", SCHEMA, None, None, None),
    ToolInfo("write_file", "", SCHEMA, None, True, False),
)
INVENTORY = Inventory(TOOLS, (), (), ())
CONFIG = Config(target=TargetConfig(TargetKind.STDIO, command="server"))


def settings(opt_in: bool, unheld: str | None, **config: Any) -> SelectionSettings:
    return SelectionSettings.of(replace(CONFIG, fuzz_guarded_in_sandbox=opt_in, **config)).held_by(unheld)


def decided(selection: SelectionSettings) -> dict[str, tuple[Status, str | None]]:
    chosen = select(INVENTORY, selection, 0)
    out = {e.name: (e.status, e.reason) for e in chosen.entries}
    out |= {p.info.name: (Status.FUZZED, p.note) for p in chosen.plans}
    return out


def test_guarded_tools_are_fuzzed_only_with_the_opt_in_where_the_sandbox_holds() -> None:
    held = decided(settings(True, None))
    assert held["list_notes"] == (Status.FUZZED, None)
    for name, why in (("delete_note", "name contains the destructive keyword 'delete'"),
                      ("write_file", "annotated destructiveHint: true")):  # fmt: skip
        status, note = held[name]
        assert status is Status.FUZZED and note == f"guarded ({why}), fuzzed in the sandbox: fuzz_guarded_in_sandbox"
        Admission.of(settings(True, None), INVENTORY).check([(Surface.TOOL, name)])


@pytest.mark.parametrize("unheld", ['sandbox = "off"', "an HTTP target keeps the host network", NOT_CONTAINED])
def test_where_the_sandbox_does_not_hold_they_stay_blocked_and_the_reason_says_why(unheld: str) -> None:
    for name in ("delete_note", "write_file"):
        status, reason = decided(settings(True, unheld))[name]
        assert status is Status.BLOCKED
        assert reason is not None and reason.endswith(
            f"; fuzz_guarded_in_sandbox is on, but the sandbox does not hold for this server ({unheld})"
        )
        with pytest.raises(NotSelected, match="does not hold"):
            Admission.of(settings(True, unheld), INVENTORY).check([(Surface.TOOL, name)])


def test_without_the_opt_in_a_holding_sandbox_calls_nothing_and_the_reason_names_the_opt_in() -> None:
    status, reason = decided(settings(False, None))["delete_note"]
    assert status is Status.BLOCKED and reason is not None
    assert reason.endswith("allow it with [allow_destructive] tools, or fuzz it in the sandbox, which holds here,"
                           " with --fuzz-guarded-in-sandbox"), reason  # fmt: skip
    # Where the sandbox does not hold, the opt-in would not call it: the reason does not offer it.
    status, reason = decided(settings(False, 'sandbox = "off"'))["delete_note"]
    assert status is Status.BLOCKED and reason is not None and "sandbox" not in reason, reason
    # Settings no containment has held yet keep every guarded tool blocked.
    opted = SelectionSettings.of(replace(CONFIG, fuzz_guarded_in_sandbox=True))
    assert opted.unheld == NOT_CONTAINED and decided(opted)["delete_note"][0] is Status.BLOCKED


def test_include_and_exclude_still_apply_and_allowlisted_tools_need_no_note() -> None:
    assert decided(settings(True, None, exclude=("delete_*",)))["delete_note"][0] is Status.SKIPPED
    assert decided(settings(True, None, allow_destructive=("delete_note",)))["delete_note"] == (Status.FUZZED, None)


def test_the_containment_says_whether_the_sandbox_holds(tmp_path: Path) -> None:
    assert unheld_of(None) == NOT_STARTED
    off = contain(TargetConfig(TargetKind.STDIO, command="server", cwd=tmp_path, sandbox=SandboxMode.OFF), 1)
    assert off is not None
    try:
        assert off.unheld == 'sandbox = "off"' and off.listener is None
        assert "no SSRF listener" in off.summary
    finally:
        off.close()


@pytest.mark.skipif(sandbox_unavailable() is not None, reason="needs Linux namespaces")
def test_a_jail_holds_with_its_own_loopback_for_stdio_and_http_servers(tmp_path: Path) -> None:
    stdio = contain(TargetConfig(TargetKind.STDIO, command="server", cwd=tmp_path), 1)
    http = contain(TargetConfig(TargetKind.HTTP, command="server", url="http://127.0.0.1:9/mcp", cwd=tmp_path), 1)
    assert stdio is not None and http is not None
    try:
        assert stdio.unheld is None and stdio.listener is not None and stdio.relay_port is None
        # An HTTP server keeps its own loopback too: fuzzgate reaches its port through the relay.
        assert http.unheld is None and http.listener is not None and http.relay_port == 9
        assert "SSRF listener on its loopback" in http.summary and "SSRF listener on its loopback" in stdio.summary
    finally:
        stdio.close()
        http.close()
