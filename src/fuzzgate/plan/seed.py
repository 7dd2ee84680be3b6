"""Where the master seed comes from, so that a pull request is fuzzed the same way on every rerun.

On `pull_request` events `GITHUB_SHA` is a merge commit that changes whenever the base branch
moves, so the head SHA from the event file comes first.
"""

from __future__ import annotations

import re
import subprocess
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from fuzzgate.model.errors import UsageError
from fuzzgate.model.files import read_regular
from fuzzgate.model.json_fields import parse_json

_HEX_SHA = re.compile(r"^[0-9a-fA-F]{7,64}$")
SEED_BITS = 64


@dataclass(frozen=True, slots=True)
class SeedChoice:
    seed: int
    source: str
    """Human-readable: `--seed`, `$FUZZGATE_SEED`, `config`, `pull request head <sha>`, ..."""
    warning: str | None = None


def parse_seed(text: str, *, what: str) -> int:
    """A decimal number, `0x`-prefixed hex, or a commit SHA (its first 64 bits)."""
    value = text.strip()
    try:
        if value.lower().startswith("0x"):
            return int(value, 16) % (1 << SEED_BITS)
        if value.isdigit():
            return int(value) % (1 << SEED_BITS)
    except ValueError:
        pass
    if _HEX_SHA.match(value):
        return sha_to_seed(value)
    raise UsageError(f"{what}: expected a number or a commit SHA, got {text!r}")


def sha_to_seed(sha: str) -> int:
    return int(sha[:16], 16)


def _pull_request_head(environ: Mapping[str, str]) -> str | None:
    path = environ.get("GITHUB_EVENT_PATH")
    if not path:
        return None
    try:
        event = parse_json(read_regular(Path(path)))
    except (OSError, ValueError):
        return None
    # The event file is the runner's, but read as any file is: of any shape, nested any depth.
    pull_request = event.get("pull_request") if isinstance(event, dict) else None
    head = pull_request.get("head") if isinstance(pull_request, dict) else None
    sha = head.get("sha") if isinstance(head, dict) else None
    return sha if isinstance(sha, str) and _HEX_SHA.match(sha) else None


def _git_head(cwd: Path) -> str | None:
    try:
        out = subprocess.run(
            ["git", "rev-parse", "HEAD"], cwd=cwd, capture_output=True, text=True, timeout=10, check=False
        )
    except (OSError, subprocess.SubprocessError):
        return None
    sha = out.stdout.strip()
    return sha if out.returncode == 0 and _HEX_SHA.match(sha) else None


def choose_seed(flag: str | None, config_seed: int | None, environ: Mapping[str, str], cwd: Path) -> SeedChoice:
    """`--seed`, `$FUZZGATE_SEED`, the config file, the PR head SHA, `$GITHUB_SHA`, `git rev-parse HEAD`, 0."""
    if flag is not None:
        return SeedChoice(parse_seed(flag, what="--seed"), "--seed")
    if env_seed := environ.get("FUZZGATE_SEED"):
        return SeedChoice(parse_seed(env_seed, what="$FUZZGATE_SEED"), "$FUZZGATE_SEED")
    if config_seed is not None:
        return SeedChoice(config_seed, "config file")
    if head := _pull_request_head(environ):
        return SeedChoice(sha_to_seed(head), f"pull request head {head[:12]}")
    if (sha := environ.get("GITHUB_SHA")) and _HEX_SHA.match(sha):
        return SeedChoice(sha_to_seed(sha), f"$GITHUB_SHA {sha[:12]}")
    if head := _git_head(cwd):
        return SeedChoice(sha_to_seed(head), f"git HEAD {head[:12]}")
    return SeedChoice(0, "default", warning="no seed given and no git commit found: using seed 0")
