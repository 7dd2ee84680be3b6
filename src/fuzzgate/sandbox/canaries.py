"""The canaries planted around a server's scope: a text file, a `.env` file and, when `git` is on
PATH, a git repository, each holding unique marker strings derived from the run's token (in their
content, never in their names), so that a reply or a log quoting one shows the server read outside
its scope. They are written once into a template that every layer copies.

The canaries at the scope's boundary (`boundary.py`: prefix siblings, the targets of links, the
watched directory's listing) are canary directories (`plant_canary_dir`): a file holding a marker
and a file *named* by a unique token (`Canary.names`), so that a reply naming that file (a listing,
a glob, a search) shows the server looked outside its scope even without reading anything."""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

MARKER_PREFIX = "fzgcanary"
"""Like the environment canaries of `check.secrets`: no built-in secret pattern matches it."""
_FILE_CANARY = "fuzzgate-canary.txt"
_ENV_CANARY = ".env"
_REPO_CANARY = "fuzzgate-canary-repo"
_GIT_TIMEOUT_S = 10.0


@dataclass(frozen=True, slots=True)
class Canary:
    kind: str
    """`file`, `env` or `repo` (a git repository)."""
    relpath: str
    """Where it is, relative to a layer's `outside` dir."""
    markers: tuple[str, ...]
    """Strings found only in its content (text, `.env` value, branch name, commit message, the
    name of an untracked file in the repository), never in `relpath`."""
    names: tuple[str, ...] = ()
    """Unique tokens (`MARKER_PREFIX` and a hash of the run's token) that are names of entries in
    it, or its own name: nothing fuzzgate sends holds one, so a reply naming one listed, globbed or
    searched outside the scope."""
    aliases: tuple[str, ...] = ()
    """The names of the symbolic links in the scope that lead to it (`boundary.py`), by which an
    argument reaches it without naming it."""


def _marker(token: str, name: str) -> str:
    return MARKER_PREFIX + hashlib.sha256(f"fuzzgate-canary:{token}:{name}".encode()).hexdigest()[:24]


CANARY_FILE = _FILE_CANARY
"""The file every canary directory holds, with a marker: what a probe through the boundary reads."""


def content_marker(token: str, key: str) -> str:
    """The marker of the canary `key` (unique among the run's canaries) planted at the boundary."""
    return _marker(token, f"{key}:content")


def name_token(token: str, key: str) -> str:
    """The unique name token of the canary `key` planted at the boundary."""
    return _marker(token, f"{key}:name")


def plant_canary_dir(directory: Path, token: str, key: str) -> None:
    """A canary directory at `directory` (made, with its parents): `CANARY_FILE` holding the
    marker of `key`, and a file named by its name token, holding the marker too."""
    directory.mkdir(parents=True)
    text, name = content_marker(token, key), name_token(token, key)
    (directory / CANARY_FILE).write_text(f"fuzzgate canary: {text}\n", encoding="utf-8")
    (directory / name).write_text(f"fuzzgate canary: {text}\n", encoding="utf-8")


def plant_canary_file(path: Path, token: str, key: str) -> None:
    """A canary file at `path` holding the marker of `key`."""
    path.write_text(f"fuzzgate canary: {content_marker(token, key)}\n", encoding="utf-8")


def plant_canaries(directory: Path, token: str) -> tuple[Canary, ...]:
    """Write the canaries once into `directory`, the template every layer copies."""
    directory.mkdir()
    text = _marker(token, "file")
    (directory / _FILE_CANARY).write_text(f"fuzzgate canary: {text}\n", encoding="utf-8")
    secret = _marker(token, "env")
    (directory / _ENV_CANARY).write_text(f"FUZZGATE_CANARY_SECRET={secret}\n", encoding="utf-8")
    canaries = [Canary("file", _FILE_CANARY, (text,)), Canary("env", _ENV_CANARY, (secret,))]
    git = shutil.which("git")
    if git is not None:
        canaries.append(_plant_repo(git, directory / _REPO_CANARY, token))
    return tuple(canaries)


def _plant_repo(git: str, repo: Path, token: str) -> Canary:
    """A repository on branch `fuzzgate-canary-<marker>` with one commit: a tracked file and a
    commit message holding markers, and an untracked file named by one. The user's git config,
    hooks and templates are kept out; fixed dates make the commit the same for the same token."""
    branch, content, message, untracked = (_marker(token, f"repo-{part}") for part in ("branch", "file", "msg", "new"))
    repo.mkdir()
    env = {key: value for key, value in os.environ.items() if not key.startswith("GIT_")}
    env.update(
        {
            "GIT_CONFIG_NOSYSTEM": "1",
            "GIT_CONFIG_GLOBAL": os.devnull,
            "HOME": str(repo),
            "GIT_AUTHOR_NAME": "fuzzgate",
            "GIT_AUTHOR_EMAIL": "canary@fuzzgate.invalid",
            "GIT_COMMITTER_NAME": "fuzzgate",
            "GIT_COMMITTER_EMAIL": "canary@fuzzgate.invalid",
            "GIT_AUTHOR_DATE": "2000-01-01T00:00:00+0000",
            "GIT_COMMITTER_DATE": "2000-01-01T00:00:00+0000",
            "GIT_TERMINAL_PROMPT": "0",
        }
    )
    options = ["-c", "core.hooksPath=/dev/null", "-c", "commit.gpgSign=false", "-c", "core.fsmonitor=false"]

    def git_run(*args: str) -> None:
        subprocess.run(
            [git, *options, *args],
            cwd=repo,
            env=env,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            check=True,
            timeout=_GIT_TIMEOUT_S,
        )

    git_run("init", "-q", "--template=")
    git_run("symbolic-ref", "HEAD", f"refs/heads/fuzzgate-canary-{branch}")
    (repo / "README.md").write_text(f"{content}\n", encoding="utf-8")
    git_run("add", "README.md")
    git_run("commit", "-q", "-m", message)
    (repo / untracked).write_text("untracked\n", encoding="utf-8")
    return Canary("repo", _REPO_CANARY, (branch, content, message, untracked))
