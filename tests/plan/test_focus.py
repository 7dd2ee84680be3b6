"""Where the change is: which tools get most of the budget (`fuzzgate.plan.focus`)."""

from __future__ import annotations

from pathlib import Path

import pytest

from fuzzgate.model.errors import UsageError
from fuzzgate.plan.focus import FAVOURED_SHARE, Changes, compare_checkouts, focus, matches, read_changes

TOOLS = [(("tool", "a"), "a"), (("tool", "b"), "b"), (("tool", "c"), "c"), (("tool", "d"), "d")]


def test_a_name_measured_under_a_package_root_matches_the_repository_path() -> None:
    assert matches("pkg/mod.py", "src/pkg/mod.py")
    assert matches("src/pkg/mod.py", "pkg/mod.py")
    assert matches("server.py", "server.py")
    assert not matches("mod.py", "src/pkg/othermod.py")
    assert not matches("pkg/mod.py", "src/xpkg/mod.py")


def test_tools_reaching_a_changed_file_and_tools_without_data_share_most_of_the_time() -> None:
    reached = {
        ("tool", "a"): {"pkg/changed.py", "pkg/util.py"},
        ("tool", "b"): {"pkg/util.py"},
        ("tool", "c"): {"x.py"},
    }
    decided = focus(TOOLS, reached, Changes(("src/pkg/changed.py",), "changed_files c.txt"))
    assert set(decided.weights) == {("tool", "a"), ("tool", "d")}
    weight = decided.weights[("tool", "a")]
    # Two favoured of four, weighted so that they get FAVOURED_SHARE of the time together.
    assert 2 * weight / (2 * weight + 2) == pytest.approx(FAVOURED_SHARE)
    assert decided.note is not None
    assert "2 of 4 tools favoured" in decided.note
    assert "a (reaches pkg/changed.py)" in decided.note and "d (no coverage data)" in decided.note


@pytest.mark.parametrize(
    ("changes", "said"),
    [
        (Changes(("docs/readme.md",), "changed_files c.txt"), "no tool's calls reached a changed file"),
        (Changes((), "changed_files c.txt"), "no file changed"),
        (Changes(unknown="too many"), "the changed files are not known: too many"),
    ],
)
def test_when_nothing_matches_every_tool_gets_its_share(changes: Changes, said: str) -> None:
    reached = {key: {"pkg/mod.py"} for key, _ in TOOLS}
    decided = focus(TOOLS, reached, changes)
    assert decided.weights == {}
    assert decided.note is not None and said in decided.note


def test_the_list_file_skips_blanks_and_comments_and_a_missing_one_is_a_usage_error(tmp_path: Path) -> None:
    listing = tmp_path / "changed.txt"
    listing.write_text("# from git diff\n./src/a.py\n\nsrc/b.py\n")
    assert read_changes(listing).paths == ("src/a.py", "src/b.py")
    with pytest.raises(UsageError, match="--changed-files: cannot read"):
        read_changes(tmp_path / "missing.txt")


def test_comparing_checkouts_finds_added_removed_and_changed_files_and_skips_the_nested_one(tmp_path: Path) -> None:
    head = tmp_path / "ws"
    base = head / "base"
    for root in (head, base):
        (root / "src").mkdir(parents=True)
        (root / "src" / "same.py").write_text("x = 1\n")
        (root / "node_modules").mkdir()
        (root / "node_modules" / "dep.js").write_text(str(root))
    (head / "src" / "edited.py").write_text("new\n")
    (base / "src" / "edited.py").write_text("old\n")
    (head / "src" / "added.py").write_text("a\n")
    (base / "src" / "removed.py").write_text("r\n")
    assert compare_checkouts(head, base).paths == ("src/added.py", "src/edited.py", "src/removed.py")
