"""The one-line commands reports print so a user can reproduce or tidy up locally."""

from __future__ import annotations

import json
import shlex
from collections.abc import Sequence

from fuzzgate.model.findings import Finding, Surface

_MAX_INLINE_ARGUMENTS = 2000
"""Past this, the arguments do not fit a readable command line; the repro refers to the fingerprint."""


def subject_label(surface: Surface, name: str) -> str:
    """What a finding or an entry is on, in words: a tool's name as it is, a prompt or resource
    prefixed by its kind (a tool and a prompt may share a name)."""
    return name if surface in (Surface.TOOL, Surface.SERVER) else f"{surface.value} {name}"


def _config_flag(config_path: str | None, flags: Sequence[str] = ()) -> list[str]:
    """`--config PATH` when a file was named, then the run's own flags that still apply
    (`Config.follow_up_flags`): without them a run given its target by flags printed commands that
    found no configuration."""
    return (["--config", config_path] if config_path else []) + list(flags)


def repro_command(finding: Finding, config_path: str | None = None, flags: Sequence[str] = ()) -> str:
    """A command that sends the finding's exact request to the configured server again.

    Small arguments are inlined so the command works on any machine with the repository checked
    out; large ones are looked up by fingerprint in the baseline or the last report.
    """
    repro = finding.repro
    args = json.dumps(repro.arguments, sort_keys=True, ensure_ascii=True, separators=(",", ":"))
    words = ["fuzzgate", "replay"]
    # A sequence, or arguments naming this run's workspace (which a replay swaps for its own), can
    # only be replayed from the recorded finding.
    recorded_only = bool(repro.prefix) or (repro.workspace is not None and repro.workspace in args)
    if len(args) <= _MAX_INLINE_ARGUMENTS and finding.surface is Surface.TOOL and not recorded_only:
        words += ["--tool", finding.name, "--arguments", args]
    else:
        words.append(finding.fingerprint)
    words += _config_flag(config_path, flags)
    return shlex.join(words)


def store_repro_command(finding: Finding, store: str) -> str:
    """`repro_command` for a finding read from a shared store: a command that looks the finding up
    by fingerprint gets `--store STORE`, since no report or baseline beside the reader holds it."""
    command = repro_command(finding)
    if command.split()[2:3] == [finding.fingerprint]:
        return f"{command} --store {shlex.quote(store)}"
    return command


_STEP_CHARS = 80
_STEPS_SHOWN = 5


def sequence_text(finding: Finding) -> str | None:
    """The calls a sequence repro sends before the failing one, in one line (None for a single
    call): what a reader needs to see that the bug takes more than one request."""
    repro = finding.repro
    if not repro.prefix:
        return None
    shown = []
    for step in repro.prefix[:_STEPS_SHOWN]:
        args = json.dumps(step.arguments, sort_keys=True, ensure_ascii=True, separators=(",", ":"))
        label = step.tool if step.surface is Surface.TOOL else f"{step.surface.value} {step.tool}"
        shown.append(f"{label} {args if len(args) <= _STEP_CHARS else args[: _STEP_CHARS - 1] + '…'}")
    more = len(repro.prefix) - len(shown)
    tail = f"; and {more} more" if more > 0 else ""
    calls = "; ".join(shown)
    last = finding.tool if repro.surface is Surface.TOOL else f"{repro.surface.value} {finding.tool}"
    return f"after {len(repro.prefix)} earlier call(s) on the same server: {calls}{tail}; then {last}"


def prune_command(config_path: str | None = None, flags: Sequence[str] = ()) -> str:
    return shlex.join(["fuzzgate", "baseline", "prune", *_config_flag(config_path, flags)])


def accept_command(config_path: str | None = None, *, pre_existing: bool = False, flags: Sequence[str] = ()) -> str:
    only = ["--pre-existing"] if pre_existing else []
    return shlex.join(["fuzzgate", "baseline", "accept", *only, *_config_flag(config_path, flags)])
