"""`fuzzgate run` against servers whose bugs answer politely (tests/servers/polite.py,
surrogate_dropper.py), over real stdio, with the real containment: the bugs that show only outside
the server's scope, in another program or after a sequence of calls are found and confirmed, their
clean look-alikes are not reported, the user's files are never changed, and the containment line
says what contained the server (jail, copy without `unshare`, `sandbox = "off"`).

Each run works on a small "user" tree (the server's `--root` dir and fuzzgate's working directory,
which is also in the server's scope) and writes its outputs and workspace elsewhere, so the tree
can be hashed before and after the run.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import json
import os
import re
import shutil
import stat
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from xml.etree import ElementTree

import pytest
from jsonschema import Draft202012Validator

from tests.e2e.conftest import ROOT, CliRun, fuzzgate
from tests.validators import INSTALL_VALIDATORS, missing

pytestmark = pytest.mark.e2e

POLITE = ROOT / "tests" / "servers" / "polite.py"
DROPPER = ROOT / "tests" / "servers" / "surrogate_dropper.py"
MULTITOOL_DIR = ROOT / "tests" / ".tools" / "node_modules" / "@microsoft" / "sarif-multitool-linux"
JUNIT_XSD = ROOT / "tests" / "report" / "junit.xsd"
SEED = "7"
PROBE_NAMES = ("fzgprobe-", "fzginj-")


@dataclass(frozen=True)
class Planted:
    """What fuzzgate must report for one planted bug."""

    kind: str
    signature: list[str]
    """What the oracle saw and the argument that led there (docs/fingerprints.md)."""
    evidence: str
    """A regex on the message: the effect seen."""

    def matches(self, finding: dict[str, Any]) -> bool:
        return (
            finding["kind"] == self.kind
            and finding["signature"] == self.signature
            and re.search(self.evidence, finding["message"]) is not None
        )


BUGGY = {
    "read_note": Planted(
        "scope_escape", ["read", "path"], r"answered with the content of the \w+ canary planted outside"
    ),
    "init_project": Planted("scope_escape", ["write", "path"], r"created <outside>/fzgprobe-\w+, outside its scope"),
    "diff_files": Planted("injection", ["option", "target"], r"ran an injected option \(--output=\)"),
    "greet": Planted("injection", ["shell", "name"], r"ran an injected shell command"),
}
CLEAN = ("write_note", "echo", "read_note_safe", "create_item", "get_item")
STATEFUL = ("create_item", "delete_item", "get_item")


# --- the user's files -------------------------------------------------------------------------------


@dataclass(frozen=True)
class UserFiles:
    """The directories a user hands the server: its `--root` and the working directory fuzzgate
    (and so the server) starts in."""

    root: Path
    cwd: Path

    def digest(self) -> dict[str, str]:
        return {**_tree(self.root, "root"), **_tree(self.cwd, "cwd")}


def _tree(top: Path, label: str) -> dict[str, str]:
    """Every path under `top` (itself included) -> its type, mode, and content hash, link target or
    mtime; never following links."""
    out: dict[str, str] = {}
    for directory, dirs, files in os.walk(top, followlinks=False):
        for name in [".", *dirs, *files]:
            path = Path(directory) / name
            info = path.lstat()
            key = f"{label}/{path.relative_to(top)}"
            if stat.S_ISLNK(info.st_mode):
                out[key] = f"link -> {os.readlink(path)}"
            elif stat.S_ISREG(info.st_mode):
                digest = hashlib.sha256(path.read_bytes()).hexdigest()
                out[key] = f"file {oct(info.st_mode)} {info.st_mtime_ns} {digest}"
            else:
                out[key] = f"{stat.S_IFMT(info.st_mode):o} {oct(info.st_mode)} {info.st_mtime_ns}"
    return out


def _probe_named(*tops: Path) -> list[Path]:
    return [p for top in tops for p in top.rglob("*") if p.name.startswith(PROBE_NAMES)]


def make_user_files(base: Path) -> UserFiles:
    files = UserFiles(base / "root", base / "cwd")
    (files.root / "notes").mkdir(parents=True)
    (files.root / "notes" / "today.md").write_text("buy milk\n")
    (files.root / "template.md").write_text("# Title\n\nBody.\n")
    (files.root / ".hidden").write_text("keep\n")
    # No welcome.md: the server writes it at start, and that write must land in its own layer only.
    (files.cwd / "src").mkdir(parents=True)
    (files.cwd / "src" / "app.py").write_text("print('hello')\n")
    (files.cwd / "README.md").write_text("# project\n")
    return files


# --- running fuzzgate ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Contained:
    """One `fuzzgate run` on a user's tree, and that tree before and after it."""

    run: CliRun
    files: UserFiles
    workdir: Path
    """FUZZGATE_WORKDIR of the run: where its workspace was made (and must be gone from)."""
    before: dict[str, str]
    after: dict[str, str]


def polite_target(root: Path, command: str = sys.executable) -> list[str]:
    return ["--command", command, f"--arg={POLITE}", "--arg=--root", f"--arg={root}"]


def includes(*tools: str) -> list[str]:
    return [arg for tool in tools for arg in ("--include", tool)]


def contained_run(base: Path, name: str, files: UserFiles, *args: str, env: dict[str, str] | None = None) -> Contained:
    workdir = base / f"workdir-{name}"
    workdir.mkdir()
    before = files.digest()
    run = fuzzgate(
        "run", *args, "--seed", SEED, "--baseline", str(base / f"baseline-{name}"),
        "--corpus", str(base / f"corpus-{name}"),
        cwd=files.cwd, out=base / f"out-{name}", env={"FUZZGATE_WORKDIR": str(workdir), **(env or {})},
    )  # fmt: skip
    return Contained(run, files, workdir, before, files.digest())


def assert_untouched(contained: Contained) -> None:
    assert contained.after == contained.before, "the user's files changed"
    assert _probe_named(contained.files.root, contained.files.cwd) == []
    assert not (contained.files.root / "welcome.md").exists()
    # The workspace (and the sandbox probe's scratch dir) is removed when the run ends.
    assert list(contained.workdir.iterdir()) == []


def confirmed(finding: dict[str, Any]) -> bool:
    return finding["reproduced"] > 0 and not finding["unconfirmed"] and not finding["flaky"]


def one_line(text: str) -> str:
    """Console text with Rich's wrapping undone."""
    return " ".join(text.split())


def _jail_works_here() -> bool:
    """Whether this machine can build the namespaces the jail needs (asked of util-linux, not of fuzzgate)."""
    unshare = shutil.which("unshare")
    if unshare is None or os.geteuid() != 0:
        return False
    done = subprocess.run(
        [unshare, "--mount", "--net", "--pid", "--fork", "true"], capture_output=True, timeout=30, check=False
    )
    return done.returncode == 0


# --- 1. the buggy tools, 3. the user's files ----------------------------------------------------------------


@pytest.fixture(scope="module")
def base(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("polite")


@pytest.fixture(scope="module")
def user_files(base: Path) -> UserFiles:
    return make_user_files(base / "user")


@pytest.fixture(scope="module")
def buggy_run(base: Path, user_files: UserFiles) -> Contained:
    return contained_run(
        base, "buggy", user_files, *polite_target(user_files.root), *includes(*BUGGY),
        "--cases", "40", "--replays", "2", "--shrink-tries", "0", "--budget", "90s",
    )  # fmt: skip


@pytest.fixture(scope="module")
def clean_run(base: Path, user_files: UserFiles) -> Contained:
    return contained_run(
        base, "clean", user_files, *polite_target(user_files.root), *includes(*CLEAN),
        "--cases", "110", "--replays", "2", "--budget", "90s", "--trace", str(base / "clean-trace.jsonl"),
    )  # fmt: skip


def test_buggy_tools_are_found_confirmed_and_fail_the_gate(buggy_run: Contained) -> None:
    run = buggy_run.run
    assert run.code == 1, run.stdout + run.stderr
    assert run.report["verdict"] == "fail"
    for tool, planted in BUGGY.items():
        # One finding per planted bug, whichever probes reached it (canary file, .env, new path):
        # diff_files stays inside its scope (no scope_escape), greet only echoes paths.
        found = [f for f in run.findings(name=tool) if f["kind"] != "slow"]
        assert len(found) == 1 and planted.matches(found[0]), (tool, found)
        f = found[0]
        assert f["surface"] == "tool" and f["severity"] == "critical" and f["baseline_state"] == "new", f
        assert confirmed(f), f


def test_containment_is_reported(buggy_run: Contained) -> None:
    run, files = buggy_run.run, buggy_run.files
    line = run.report["containment"]
    assert f"scope {files.cwd.resolve()}, {files.root.resolve()}" in line
    if _jail_works_here():
        assert line.startswith("sandboxed: "), line
    else:
        assert line.startswith("not sandboxed ("), line
    assert f"containment: {line}" in one_line(run.stdout)
    assert line in (run.out / "summary.md").read_text()


def test_buggy_findings_in_sarif(buggy_run: Contained) -> None:
    run = buggy_run.run
    path = run.out / "fuzzgate.sarif"
    sarif = json.loads(path.read_text())
    schema_path = MULTITOOL_DIR / "sarif-2.1.0.json"
    if not schema_path.is_file():
        missing(f"SARIF schema not found at {schema_path}", INSTALL_VALIDATORS)
    validator = Draft202012Validator(
        json.loads(schema_path.read_text()), format_checker=Draft202012Validator.FORMAT_CHECKER
    )
    assert [f"{list(e.absolute_path)}: {e.message}" for e in validator.iter_errors(sarif)] == []
    done = subprocess.run(
        [str(MULTITOOL_DIR / "Sarif.Multitool"), "validate", str(path), "--rule-kind", "Gh;Sarif"],
        capture_output=True, text=True, timeout=120, check=False,
        env={**os.environ, "DOTNET_SYSTEM_GLOBALIZATION_INVARIANT": "1"},
    )  # fmt: skip
    output = done.stdout + done.stderr
    # Its exit code is 0 even when it reports errors, so read what it prints.
    assert "Done. 1 files scanned." in output, output
    assert [line for line in output.splitlines() if re.search(r"\berror\b", line)] == []

    sarif_run = sarif["runs"][0]
    assert {"scope_escape", "injection"} <= {rule["id"] for rule in sarif_run["tool"]["driver"]["rules"]}
    results = {r["fingerprints"]["fuzzgate/v1"]: r for r in sarif_run["results"]}
    for tool, planted in BUGGY.items():
        kind = planted.kind
        for f in run.findings(name=tool, kind=kind):
            result = results[f["fingerprint"]]
            assert result["ruleId"] == kind and result["level"] == "error", result
            assert result["properties"]["name"] == tool and result["baselineState"] == "new", result


def test_buggy_findings_in_junit(buggy_run: Contained) -> None:
    import xmlschema

    path = buggy_run.run.out / "junit.xml"
    xmlschema.XMLSchema(str(JUNIT_XSD)).validate(str(path))
    cases = {case.get("name"): case for case in ElementTree.parse(path).getroot().iter("testcase")}
    for tool, planted in BUGGY.items():
        kind = planted.kind
        failure = cases[tool].find("failure")
        assert failure is not None, tool
        assert f"{kind} (critical)" in f"{failure.get('message')}", failure.get("message")


def test_clean_look_alikes_are_not_reported(clean_run: Contained) -> None:
    run = clean_run.run
    entries = {e["name"]: e["status"] for e in run.report["entries"]}
    assert {tool: entries[tool] for tool in CLEAN} == dict.fromkeys(CLEAN, "fuzzed")
    assert entries["delete_item"] != "fuzzed"
    tool_findings = [f for f in run.report["findings"] if f["surface"] == "tool"]
    noisy = [f for f in tool_findings if f["kind"] in ("scope_escape", "injection", "protocol_error", "crash")]
    assert noisy == []
    # Exactly one server-wide finding: the SDK's own. mcp 2.x servers drop a request whose JSON holds
    # a lone surrogate escape (`"\ud800"`, a boundary value fuzzgate sends to every string field)
    # without a reply, and answer the next one; that is a bug of the SDK's transport, not of a tool,
    # so it is reported once, on surface `server`, whichever tool the request was for, as the SDK's.
    server = [f for f in run.report["findings"] if f["surface"] != "tool"]
    assert [(f["surface"], f["name"], f["kind"], f["signature"]) for f in server] == [
        ("server", "transport", "protocol_error", ["unanswered", "lone-surrogate"])
    ]
    assert "went on answering others" in server[0]["message"] and confirmed(server[0]), server[0]
    # ... and the request was sent: the trace holds one whose arguments carry a lone surrogate.
    sent = [json.loads(line)["arguments"] for line in (clean_run.run.out.parent / "clean-trace.jsonl").open()]
    assert any(re.search("[\ud800-\udfff]", json.dumps(a, ensure_ascii=False)) for a in sent)
    # The server's process shows it runs on the Python SDK: the finding names it and its version
    # (read from the SDK's metadata where the server imports it from), is low, and fails no gate.
    version = importlib.metadata.version("mcp")
    assert server[0]["cause"] == "sdk" and server[0]["severity"] == "low", server[0]
    assert f"the Python MCP SDK (mcp {version})" in server[0]["message"], server[0]["message"]
    assert "upgrading does not help yet" in server[0]["message"]
    assert run.code == 0 and run.report["verdict"] == "pass", run.stdout + run.stderr


def test_users_files_are_never_changed(buggy_run: Contained, clean_run: Contained) -> None:
    assert buggy_run.run.report["cases_per_tool"]["init_project"] > 0
    for contained in (buggy_run, clean_run):
        assert_untouched(contained)
    # write_note really wrote (in the server's layer): what must not reach the user's files happened.
    trace = [json.loads(line) for line in (clean_run.run.out.parent / "clean-trace.jsonl").open()]
    wrote = [r for r in trace if r["tool"] == "write_note" and r["status"] == "ok"]
    assert any(str(r.get("text", "")).startswith("wrote ") for r in wrote), wrote[:3]


# --- 4. a bug that needs a sequence -------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def stateful_run(base: Path) -> tuple[Contained, Path]:
    files = make_user_files(base / "stateful-user")
    config = base / "stateful.toml"
    config.write_text('[allow_destructive]\ntools = ["delete_item"]\n')
    # The sequences start at each tool's first case (create, read, delete, delete again; read after
    # delete with the second create, at create_item's fifth case): 8 cases a tool reach both crashes.
    # More would only add crashes (a server restart each) and longer sequences to shrink (a fresh
    # server per try); tests/triage/test_sequence.py covers the shrinking itself.
    contained = contained_run(
        base, "stateful", files, "--config", str(config), *polite_target(files.root), *includes(*STATEFUL),
        "--cases", "8", "--replays", "2", "--shrink-tries", "24", "--budget", "90s",
    )  # fmt: skip
    return contained, config


def test_use_after_delete_is_confirmed_with_a_short_prefix_and_replays(
    stateful_run: tuple[Contained, Path], base: Path
) -> None:
    contained, config = stateful_run
    run = contained.run
    assert run.code == 1, run.stdout + run.stderr
    entries = {e["name"]: e["status"] for e in run.report["entries"]}
    assert entries["delete_item"] == "fuzzed"
    crashes = [f for f in run.findings(kind="crash") if f["name"] in ("delete_item", "get_item")]
    assert crashes, run.report["findings"]
    for f in crashes:
        assert "exit status 70" in f["message"], f
        if confirmed(f):
            # Neither call fails on a fresh server: only the sequence reproduces it.
            assert f["repro"]["prefix"], f
    short = [f for f in crashes if confirmed(f) and 1 <= len(f["repro"]["prefix"]) <= 3]
    assert short, [(f["name"], f["reproduced"], len(f["repro"]["prefix"])) for f in crashes]
    finding = short[0]
    steps = [step["tool"] for step in finding["repro"]["prefix"]]
    assert "delete_item" in steps and set(steps) <= {"create_item", "delete_item"}, steps
    assert_untouched(contained)

    # `fuzzgate replay` reads the finding from report.json and sends its whole sequence to a fresh
    # server (the failing call alone would find nothing to crash on).
    workdir = base / "workdir-replay"
    workdir.mkdir()
    again = fuzzgate(
        "replay", finding["fingerprint"], "--config", str(config), "--out", str(run.out),
        "--baseline", str(base / "baseline-stateful"), *polite_target(contained.files.root),
        cwd=contained.files.cwd, env={"FUZZGATE_WORKDIR": str(workdir)},
    )  # fmt: skip
    assert again.code == 1, again.stdout + again.stderr
    assert f"still fails: crash in {finding['name']} ({finding['fingerprint']})" in one_line(again.stdout)
    assert list(workdir.iterdir()) == []


# --- 5. a request never answered --------------------------------------------------------------------------------


def _dropper_run(base: Path, name: str, *args: str) -> Contained:
    files = make_user_files(base / f"{name}-user")
    return contained_run(
        base, name, files, "--command", sys.executable, f"--arg={DROPPER}", *args,
        "--cases", "80", "--replays", "2", "--budget", "60s",
    )  # fmt: skip


def _the_dropped_request(contained: Contained) -> dict[str, Any]:
    """The run's one finding: on the server, caused by the request that was never answered; not a
    crash of whichever call came next (each replay's next request differs), nor one per tool. That
    the server dies of it makes it a crash; a server that only drops the request (mcp 2.x, the
    clean run above) is a protocol_error."""
    run = contained.run
    findings = run.report["findings"]
    assert [(f["kind"], f["surface"], f["name"], f["signature"]) for f in findings] == [
        ("crash", "server", "transport", ["unanswered-then-died", "lone-surrogate"])
    ], run.stdout
    finding = findings[0]
    assert confirmed(finding), finding
    assert "never answered a request holding a lone surrogate" in finding["message"]
    assert "died on the next request" in finding["message"] and "UnicodeEncodeError" in finding["message"]
    assert re.search("[\ud800-\udfff]", json.dumps(finding["repro"]["arguments"], ensure_ascii=False))
    # The server writes title.txt in its working directory: the copy's, never the user's.
    assert not (contained.files.cwd / "title.txt").exists()
    assert_untouched(contained)
    return finding


def test_dropped_surrogate_request_is_one_server_finding(base: Path) -> None:
    # The planted server models an old SDK release: the traceback it dies with is the SDK's writer
    # and anyio, no frame of the server's own. The SDK's bug: low, named, and no gate fails on it...
    quiet = _dropper_run(base, "dropper")
    finding = _the_dropped_request(quiet)
    assert quiet.run.code == 0, quiet.run.stdout + quiet.run.stderr
    assert (finding["cause"], finding["severity"]) == ("sdk", "low"), finding
    assert "it died in the Python MCP SDK (mcp" in finding["message"]
    # ... unless the user asks: the same finding then fails it.
    asked = _dropper_run(base, "dropper-fail-on-sdk", "--fail-on-sdk")
    assert asked.run.code == 1, asked.run.stdout + asked.run.stderr
    assert _the_dropped_request(asked)["fingerprint"] == finding["fingerprint"]


def test_a_death_through_the_servers_own_code_stays_the_servers(base: Path) -> None:
    # The same death, its traceback through a frame of the server's own file: the server's bug,
    # at the crash's severity, failing the gate; the rule cannot silence it.
    own = _dropper_run(base, "dropper-own-writer", "--arg=--own-writer")
    finding = _the_dropped_request(own)
    assert own.run.code == 1, own.run.stdout + own.run.stderr
    assert (finding["cause"], finding["severity"]) == ("server", "critical"), finding
    assert "SDK" not in finding["message"]


# --- 6. without `unshare`, 7. sandbox off -----------------------------------------------------------------------


@pytest.fixture(scope="module")
def no_unshare_path(base: Path) -> str:
    """A PATH holding python and git, and no unshare."""
    bin_dir = base / "bin-without-unshare"
    bin_dir.mkdir()
    git = shutil.which("git")
    assert git is not None, "git is needed for the canary repository and diff_files"
    for name, target in (("python", sys.executable), ("python3", sys.executable), ("git", git)):
        (bin_dir / name).symlink_to(target)
    assert shutil.which("unshare", path=str(bin_dir)) is None
    return str(bin_dir)


def test_without_unshare_the_scope_oracles_still_work(base: Path, no_unshare_path: str) -> None:
    files = make_user_files(base / "fallback-user")
    contained = contained_run(
        base, "fallback", files, *polite_target(files.root), *includes("read_note", "init_project"),
        "--sandbox", "auto", "--cases", "40", "--replays", "2", "--budget", "60s",
        env={"PATH": no_unshare_path},
    )  # fmt: skip
    run = contained.run
    assert run.code == 1, run.stdout + run.stderr
    assert run.report["containment"].startswith("not sandboxed (unshare not found"), run.report["containment"]
    for tool in ("read_note", "init_project"):
        found = [f for f in run.findings(name=tool) if BUGGY[tool].matches(f)]
        assert len(found) == 1 and confirmed(found[0]), run.report["findings"]
    assert_untouched(contained)


def test_sandbox_required_without_unshare_is_a_target_error(base: Path, no_unshare_path: str) -> None:
    files = make_user_files(base / "required-user")
    contained = contained_run(
        base, "required", files, *polite_target(files.root), "--sandbox", "required", "--budget", "30s",
        env={"PATH": no_unshare_path},
    )  # fmt: skip
    run = contained.run
    assert run.code == 3, run.stdout + run.stderr
    assert not run.out.exists()
    reasons = [line for line in run.stderr.splitlines() if "unshare not found" in line]
    assert len(reasons) == 1 and 'sandbox = "required"' in reasons[0], run.stderr
    assert "Traceback" not in run.stderr
    assert_untouched(contained)


def test_sandbox_off_is_said(base: Path) -> None:
    files = make_user_files(base / "off-user")
    contained = contained_run(
        base, "off", files, *polite_target(files.root), *includes("echo"),
        "--sandbox", "off", "--cases", "3", "--budget", "30s",
    )  # fmt: skip
    run = contained.run
    assert run.code == 0, run.stdout + run.stderr
    line = run.report["containment"]
    assert line.startswith('not sandboxed (sandbox = "off"): scope '), line
    assert f"containment: {line}" in one_line(run.stdout)
    assert line in (run.out / "summary.md").read_text()
    assert_untouched(contained)
