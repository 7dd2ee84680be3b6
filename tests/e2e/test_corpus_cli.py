"""The corpus commands through the real CLI over real corpus files. `list`: every target without a
config, only the configured one with a config or target flags, a missing or broken corpus is no
error. `merge`, `minimize` and `cleanse` on the buggy example server: what they keep reaches every
feature, a server that cannot start is exit 3, and an interrupt leaves the corpus whole."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from fuzzgate.model.corpus import CorpusEntry
from fuzzgate.model.findings import Surface
from fuzzgate.store.corpus_store import CorpusStore
from tests.e2e.conftest import fuzzgate, stdio_target

pytestmark = pytest.mark.e2e


@pytest.fixture
def repository(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    (root / ".git").mkdir(parents=True)  # the config lookup stops here
    (root / "sub").mkdir()
    return root


def write_entry(directory: Path, name: str, data: dict[str, object]) -> None:
    directory.mkdir(parents=True, exist_ok=True)
    (directory / name).write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")


def fill(corpus: Path) -> None:
    """Two targets: buggy_server (3 echo calls, a prompt, a broken file) and time (one call)."""
    for text in ("", "a", "bb"):
        write_entry(
            corpus / "buggy_server",
            f"echo-{len(text)}.json",
            {
                "format": 1,
                "tool": "echo",
                "arguments": {"text": text},
                "origin": "conform",
                "feedback": {"signal": "coverage", "features": 3},
                "environment": {"fuzzgate": "0.9.0", "server": "buggy 1.0"},
            },
        )
    store = CorpusStore(corpus, "buggy_server")
    store.add(
        CorpusEntry(
            "greet", {"name": "x"}, surface=Surface.PROMPT, environment={"fuzzgate": "0.8.0", "server": "buggy 0.9"}
        )
    )
    (corpus / "buggy_server" / "half.json").write_text('{"format": 1, "tool"', encoding="utf-8")
    CorpusStore(corpus, "time").add(CorpusEntry("get_current_time", {"timezone": "UTC"}))


ECHO_SIZE = sum(CorpusEntry("echo", {"text": text}).size for text in ("", "a", "bb"))
PROMPT_SIZE = CorpusEntry("greet", {"name": "x"}).size
TIME_SIZE = CorpusEntry("get_current_time", {"timezone": "UTC"}).size
BUGGY = f"buggy_server: 4 entries, {ECHO_SIZE + PROMPT_SIZE} bytes of input"


def rows(stdout: str) -> dict[str, list[str]]:
    """Table rows by their first cell."""
    found = {}
    for line in stdout.splitlines():
        cells = [cell.strip() for cell in line.strip("│┃ ").split("│")]
        if len(cells) == 6:
            found[cells[0]] = cells[1:]
    return found


def test_a_missing_corpus_is_listed_as_empty(repository: Path) -> None:
    result = fuzzgate("corpus", "list", cwd=repository)
    assert result.code == 0, result.stderr
    assert result.stdout.strip() == "the corpus at .fuzzgate/corpus is empty"
    assert not (repository / ".fuzzgate").exists()


def test_without_a_config_every_target_is_listed_tool_by_tool(repository: Path) -> None:
    fill(repository / ".fuzzgate" / "corpus")
    result = fuzzgate("corpus", "list", cwd=repository)
    assert result.code == 0, result.stderr
    lines = result.stdout.splitlines()
    assert f"{BUGGY} (.fuzzgate/corpus/buggy_server)" in lines
    assert f"time: 1 entry, {TIME_SIZE} bytes of input (.fuzzgate/corpus/time)" in lines
    assert any(line.startswith("  skipped .fuzzgate/corpus/buggy_server/half.json: not valid JSON") for line in lines)
    table = rows(result.stdout)
    assert table["echo"] == ["3", str(ECHO_SIZE), "coverage 3", "0.9.0", "buggy 1.0"]
    assert table["prompt greet"] == ["1", str(PROMPT_SIZE), "behaviour 1", "0.8.0", "buggy 0.9"]
    assert table["get_current_time"] == ["1", str(TIME_SIZE), "behaviour 1", "-", "-"]
    # Tools of a target come before its prompts; targets in name order.
    assert result.stdout.index("│ echo") < result.stdout.index("│ prompt greet") < result.stdout.index("time:")


def test_corpus_flag_names_another_directory(repository: Path) -> None:
    fill(repository / "elsewhere")
    result = fuzzgate("corpus", "list", "--corpus", "elsewhere", cwd=repository)
    assert result.code == 0, result.stderr
    assert "time: 1 entry" in result.stdout
    assert "buggy_server: 4 entries" in result.stdout


def test_with_a_config_only_its_target_is_listed_from_the_corpus_beside_it(repository: Path) -> None:
    (repository / "fuzzgate.toml").write_text(
        f'[target]\ncommand = {json.dumps(sys.executable)}\nargs = ["buggy_server.py"]\n', encoding="utf-8"
    )
    fill(repository / ".fuzzgate" / "corpus")
    result = fuzzgate("corpus", "list", cwd=repository / "sub")
    assert result.code == 0, result.stderr
    assert f"{BUGGY} ({repository / '.fuzzgate' / 'corpus' / 'buggy_server'})" in result.stdout.splitlines()
    assert "time:" not in result.stdout
    every = fuzzgate("corpus", "list", "--all", cwd=repository / "sub")
    assert every.code == 0, every.stderr
    assert "time: 1 entry" in every.stdout and "buggy_server: 4 entries" in every.stdout


def test_target_flags_name_the_target(repository: Path) -> None:
    fill(repository / ".fuzzgate" / "corpus")
    result = fuzzgate("corpus", "list", *stdio_target("buggy_server.py"), cwd=repository)
    assert result.code == 0, result.stderr
    assert "buggy_server: 4 entries" in result.stdout
    assert "time:" not in result.stdout
    other = fuzzgate("corpus", "list", "--command", "node", "--arg", "other.js", cwd=repository)
    assert other.code == 0, other.stderr
    assert other.stdout.splitlines() == [
        "other: 0 entries, 0 bytes of input (.fuzzgate/corpus/other)",
        "  no corpus at .fuzzgate/corpus/other yet",
    ]


def test_a_file_in_place_of_the_corpus_is_reported_not_an_error(repository: Path) -> None:
    (repository / ".fuzzgate").mkdir()
    (repository / ".fuzzgate" / "corpus").write_text("oops", encoding="utf-8")
    result = fuzzgate("corpus", "list", "--name", "srv", "--command", "python", cwd=repository)
    assert result.code == 0, result.stderr
    assert result.stdout.splitlines() == [
        "srv: 0 entries, 0 bytes of input (.fuzzgate/corpus/srv)",
        "  .fuzzgate/corpus is a file, not a directory (the corpus is to be at .fuzzgate/corpus/srv)",
    ]


def test_merge_needs_a_directory(repository: Path) -> None:
    result = fuzzgate("corpus", "merge", cwd=repository)
    assert result.code == 2
    assert "DIR" in result.stderr


# --- merge, minimize and cleanse on the buggy example server ---------------------------------------

TOOLS = ("--seed", "7", "--budget", "60s", *stdio_target("buggy_server.py"))


def corpus_of(root: Path) -> dict[str, CorpusEntry]:
    load = CorpusStore(root, "buggy_server").load()
    assert load.skipped == ()
    return {entry.key: entry for entry in load.entries}


def test_merge_keeps_a_smallest_set_with_every_feature(repository: Path) -> None:
    corpus = repository / ".fuzzgate" / "corpus"
    CorpusStore(corpus, "buggy_server").add(CorpusEntry("add", {"a": 2, "b": 40}))
    shard = CorpusStore(repository / "shard", "buggy_server")
    for entry in (
        CorpusEntry("add", {"a": 1, "b": 1}),
        CorpusEntry("add", {"a": -5, "b": 1000}),
        CorpusEntry("split_bill", {"total_cents": 100, "people": 0}),
    ):
        shard.add(entry)
    result = fuzzgate("corpus", "merge", "shard", *TOOLS, cwd=repository)
    assert result.code == 0, result.stdout + result.stderr
    # Every add call reaches the same lines and behaviour: the smallest one stays.
    kept = corpus_of(corpus)
    assert sorted((e.tool, e.arguments) for e in kept.values()) == [
        ("add", {"a": 1, "b": 1}),
        ("split_bill", {"total_cents": 100, "people": 0}),
    ]
    assert "merged 4 entries from 2 corpora into 2 (" in result.stdout
    assert "2 written, 1 deleted" in result.stdout
    assert "feedback: coverage" in result.stdout
    assert len(corpus_of(repository / "shard")) == 3  # the other corpora are only read


def test_minimize_shrinks_each_entry_and_keeps_what_it_reaches(repository: Path) -> None:
    corpus = repository / ".fuzzgate" / "corpus"
    store = CorpusStore(corpus, "buggy_server")
    plain = CorpusEntry("get_stock_level", {"sku": "SKU-1001-LONG", "warehouse": "lyon"})
    archive = CorpusEntry("get_stock_level", {"sku": "SKU-2002-LONG", "warehouse": "archive"})
    store.add(plain)
    store.add(archive)
    result = fuzzgate("corpus", "minimize", *TOOLS, cwd=repository)
    assert result.code == 0, result.stdout + result.stderr
    kept = sorted(corpus_of(corpus).values(), key=lambda e: e.arguments.get("warehouse", ""))
    # The default warehouse goes, the archive one (other code) stays; the SKUs shrink to one character.
    assert [sorted(e.arguments) for e in kept] == [["sku"], ["sku", "warehouse"]]
    assert kept[1].arguments["warehouse"] == "archive"
    assert all(len(e.arguments["sku"]) == 1 for e in kept)
    assert f"{plain.key} -> {kept[0].key}" in result.stdout
    assert "minimized 2 of 2 entries" in result.stdout


def test_cleanse_replaces_parts_with_the_simplest_values_keeping_what_it_reaches(repository: Path) -> None:
    corpus = repository / ".fuzzgate" / "corpus"
    original = CorpusEntry("get_stock_level", {"sku": "SKU-1001", "warehouse": "archive"})
    CorpusStore(corpus, "buggy_server").add(original)
    result = fuzzgate("corpus", "cleanse", *TOOLS, cwd=repository)
    assert result.code == 0, result.stdout + result.stderr
    (entry,) = corpus_of(corpus).values()
    assert entry.arguments["warehouse"] == "archive"
    assert entry.arguments["sku"] != "SKU-1001"
    assert len(entry.arguments["sku"]) == 1
    assert "cleansed 1 of 1 entry" in result.stdout


def test_a_server_that_cannot_start_is_exit_3_and_the_corpus_is_untouched(repository: Path) -> None:
    corpus = repository / ".fuzzgate" / "corpus"
    CorpusStore(corpus, "buggy_server").add(CorpusEntry("add", {"a": 2, "b": 40}))
    before = sorted(p.read_bytes() for p in (corpus / "buggy_server").iterdir())
    for action in ("minimize", "cleanse"):
        result = fuzzgate(
            "corpus", action, "--name", "buggy_server", "--command", str(repository / "missing"), cwd=repository
        )
        assert result.code == 3, result.stdout + result.stderr
        assert "could not start the stdio server" in result.stderr
        assert len([line for line in result.stderr.splitlines() if line.startswith("fuzzgate:")]) == 1
    assert sorted(p.read_bytes() for p in (corpus / "buggy_server").iterdir()) == before


def test_an_interrupted_minimize_leaves_the_corpus_whole(repository: Path) -> None:
    corpus = repository / ".fuzzgate" / "corpus"
    store = CorpusStore(corpus, "buggy_server")
    originals = [CorpusEntry("echo", {"text": f"{i:03d}" + "x" * 200, "uppercase": False}) for i in range(40)]
    for entry in originals:
        store.add(entry)
    command = [sys.executable, "-m", "fuzzgate", "corpus", "minimize", *TOOLS]
    proc = subprocess.Popen(command, cwd=repository, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    lines = []
    for line in proc.stdout:
        lines.append(line.rstrip("\n"))
        if " -> " in line or " unchanged " in line:
            proc.send_signal(signal.SIGINT)
            break
    rest, stderr = proc.communicate(timeout=120)
    lines += rest.splitlines()
    assert proc.returncode == 130, "\n".join(lines) + stderr
    assert "interrupted: the other entries are unchanged" in "\n".join(lines)
    moved = dict(line.split(" (", 1)[0].split(" -> ") for line in lines if " -> " in line)
    on_disk = corpus_of(corpus)
    assert not [p for p in (corpus / "buggy_server").iterdir() if p.name.startswith(".")]
    for entry in originals:
        # Each entry is there, or its finished replacement is.
        assert entry.key in on_disk or moved.get(entry.key) in on_disk
    assert len(moved) < len(originals)
