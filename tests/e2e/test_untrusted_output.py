"""A server's text, through the real CLI: no piece of a secret it prints reaches any output, and under
GitHub Actions none of its words becomes a workflow command."""

from __future__ import annotations

import base64
import re
import secrets
import sys
from pathlib import Path

import pytest

from tests.e2e.conftest import ROOT, CliRun, fuzzgate

pytestmark = pytest.mark.e2e

TEST_SERVERS = ROOT / "tests" / "servers"
_LINE_BREAK = re.compile(r"\r\n|\r|\n")
_ANNOTATION = re.compile(r"::error (?P<props>[^:]*)::(?P<data>[^\r\n]*)")


def write_config(path: Path, server: str, *args: str, env: str = "") -> Path:
    arg_list = ", ".join(f'"{a}"' for a in (str(TEST_SERVERS / server), *args))
    path.write_text(
        f'[target]\ncommand = "{sys.executable}"\nargs = [{arg_list}]\n{env}\n'
        '[fuzzgate]\nreplays = 1\nbudget = "60s"\ncases = 2\nseed = 11\n'
    )
    return path


# --------------------------------------------------------------------------------------- secrets


class SecretRuns:
    def __init__(self, work: Path, secret: str, runs: dict[str, CliRun]) -> None:
        self.work, self.secret, self.runs = work, secret, runs

    def outputs(self) -> dict[str, str]:
        """Everything the runs printed and wrote, by name."""
        texts = {
            f"{name} {stream}": getattr(run, stream)
            for name, run in self.runs.items()
            for stream in ("stdout", "stderr")
        }
        for path in [*(self.work / "out").iterdir(), *(self.work / "baseline").iterdir()]:
            texts[str(path.relative_to(self.work))] = path.read_text(encoding="utf-8")
        for name in ("trace.jsonl", "step-summary.md"):
            texts[name] = (self.work / name).read_text(encoding="utf-8")
        return texts


@pytest.fixture(scope="module")
def secret_runs(tmp_path_factory: pytest.TempPathFactory) -> SecretRuns:
    work = tmp_path_factory.mktemp("secret")
    secret = "Lk" + secrets.token_urlsafe(18)
    # The secret reaches the server through `${VAR}` expansion, in its env and on its command line.
    env_line = 'env = { LEAKY_TOKEN = "${LEAKY_SECRET}" }'
    config = write_config(work / "fuzzgate.toml", "secret_printer.py", "--token=${LEAKY_SECRET}", env=env_line)
    dying = write_config(
        work / "dying.toml", "secret_printer.py", "--token=${LEAKY_SECRET}", "--die-at-start", env=env_line
    )
    env = {"LEAKY_SECRET": secret, "GITHUB_ACTIONS": "true", "GITHUB_STEP_SUMMARY": str(work / "step-summary.md")}
    where = ("--config", str(config), "--out", str(work / "out"), "--baseline", str(work / "baseline"))
    runs = {"run": fuzzgate("run", *where, "--trace", str(work / "trace.jsonl"), cwd=work, env=env)}
    runs["accept"] = fuzzgate("baseline", "accept", *where, cwd=work, env=env)
    runs["list"] = fuzzgate("baseline", "list", *where, cwd=work, env=env)
    runs["dying"] = fuzzgate("run", "--config", str(dying), "--out", str(work / "dying-out"), cwd=work, env=env)
    return SecretRuns(work, secret, runs)


def test_the_leaks_were_found_so_the_outputs_hold_their_evidence(secret_runs: SecretRuns) -> None:
    run = secret_runs.runs["run"]
    assert run.code == 1, run.stderr
    kinds = {(f["kind"], f["name"]) for f in run.report["findings"]}
    expected = {
        ("internal_error", "raise_error"),
        ("internal_error", "rpc_error"),
        ("protocol_error", "stdout_line"),
        ("crash", "crash"),
        ("secret_leak", "reply"),
    }
    assert expected <= kinds, kinds
    messages = " ".join(f["message"] for f in run.report["findings"])
    assert "[REDACTED]" in messages and "loaded settings for the primary region" in messages
    assert "--token=[REDACTED]" in run.report["target"]["args"]
    assert secret_runs.runs["accept"].code == 0 and secret_runs.runs["list"].code == 0


def test_the_start_up_failure_shows_the_stderr_but_not_the_secret(secret_runs: SecretRuns) -> None:
    dying = secret_runs.runs["dying"]
    assert dying.code == 3, dying.stderr
    assert "fatal: cannot reach the database with loaded settings" in dying.stderr
    assert "--token=[REDACTED]" in dying.stderr


def test_no_piece_of_the_secret_in_any_output(secret_runs: SecretRuns) -> None:
    secret = secret_runs.secret
    forms = [secret, base64.b64encode(secret.encode()).decode().rstrip("=")]
    outputs = secret_runs.outputs()
    assert len([name for name in outputs if name.startswith("baseline")]) >= 4
    for form in forms:
        for name, text in outputs.items():
            leaked = [form[i : i + 6] for i in range(len(form) - 5) if form[i : i + 6] in text]
            assert not leaked, f"{name} holds {leaked[:3]}"


# ----------------------------------------------------------------------------- workflow commands


@pytest.fixture(scope="module")
def injected_runs(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, CliRun]]:
    work = tmp_path_factory.mktemp("inject")
    config = write_config(work / "fuzzgate.toml", "command_injector.py")
    dying = write_config(work / "dying.toml", "command_injector.py", "--die-at-start")
    env = {"GITHUB_ACTIONS": "true", "GITHUB_STEP_SUMMARY": str(work / "step-summary.md")}
    where = ("--config", str(config), "--out", str(work / "out"), "--baseline", str(work / "baseline"))
    runs = {"run": fuzzgate("run", *where, cwd=work, env=env)}
    runs["accept"] = fuzzgate("baseline", "accept", *where, cwd=work, env=env)
    runs["list"] = fuzzgate("baseline", "list", *where, cwd=work, env=env)
    runs["tools"] = fuzzgate("tools", *where, cwd=work, env=env)
    runs["dying"] = fuzzgate("run", "--config", str(dying), "--out", str(work / "dying-out"), cwd=work, env=env)
    return work, runs


def test_the_injecting_server_was_fuzzed_and_its_text_printed(injected_runs: tuple[Path, dict[str, CliRun]]) -> None:
    _, runs = injected_runs
    run = runs["run"]
    assert run.code == 1, run.stderr
    names = {f["name"] for f in run.report["findings"]}
    assert {"::error title=pwned::name", "##[error]rpc", "stderr_trace", "wrapped", "stdout_line", "crash"} <= names
    # The server's words did reach the console, neutralized.
    assert "\N{REPLACEMENT CHARACTER}" in run.stdout
    assert runs["dying"].code == 3 and "fatal" in runs["dying"].stderr
    assert "\N{REPLACEMENT CHARACTER}" in runs["dying"].stderr


def test_no_console_line_is_a_command_but_fuzzgate_own_annotations(
    injected_runs: tuple[Path, dict[str, CliRun]],
) -> None:
    _, runs = injected_runs
    annotations: list[str] = []
    for name, run in runs.items():
        for stream, text in (("stdout", run.stdout), ("stderr", run.stderr)):
            assert "##[" not in text, f"{name} {stream}: {text}"
            for line in _LINE_BREAK.split(text):
                if line.lstrip().startswith("::"):
                    assert (name, stream) == ("run", "stdout") and line.startswith("::error file="), line
                    annotations.append(line)
    gating = [f for f in runs["run"].report["findings"] if f["baseline_state"] == "new" and not f["flaky"]]
    assert len(annotations) == len(gating) >= 6


def test_fuzzgate_annotations_are_well_formed(injected_runs: tuple[Path, dict[str, CliRun]]) -> None:
    _, runs = injected_runs
    lines = [line for line in runs["run"].stdout.splitlines() if line.startswith("::error ")]
    assert lines
    for line in lines:
        match = _ANNOTATION.fullmatch(line)
        assert match, line
        props = dict(prop.split("=", 1) for prop in match["props"].split(","))
        assert set(props) == {"file", "line", "title"} and props["line"].isdigit()
        assert props["title"].startswith("fuzzgate%3A ")
        assert "Reproduce%3A" not in match["data"] and "%0AReproduce: fuzzgate replay" in match["data"]
