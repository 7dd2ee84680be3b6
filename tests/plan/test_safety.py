from __future__ import annotations

import pytest

from fuzzgate.plan.safety import DestructiveGuard, name_words


@pytest.mark.parametrize(
    ("name", "words"),
    [("deleteAll", ["delete", "all"]), ("drop_table", ["drop", "table"]), ("HTTPReset", ["http", "reset"]),
     ("fs.remove-file", ["fs", "remove", "file"])],
)  # fmt: skip
def test_name_words(name: str, words: list[str]) -> None:
    assert name_words(name) == words


@pytest.mark.parametrize(
    "name",
    [
        "delete_file",
        "deleteAll",
        "DropTable",
        "kill_process",
        "purgeCache",
        "reset",
        "wipe-disk",
        "rm.remove",
    ],
)
def test_builtin_keywords_block(name: str) -> None:
    guard = DestructiveGuard.from_settings((), ())
    assert guard.blocks(name, None, None) is not None


@pytest.mark.parametrize("name", ["skill_list", "echo", "search", "get_stock_level", "add", "preview_cleanup"])
def test_innocent_names_pass(name: str) -> None:
    assert DestructiveGuard.from_settings((), ()).blocks(name, None, None) is None


def test_annotation_blocks_unless_read_only() -> None:
    guard = DestructiveGuard.from_settings((), ())
    assert "destructiveHint" in (guard.blocks("archive_project", True, None) or "")
    assert guard.blocks("archive_project", True, False) is not None
    assert guard.blocks("preview", True, True) is None
    assert guard.blocks("preview", False, None) is None


def test_configured_patterns_and_replace_defaults() -> None:
    guard = DestructiveGuard.from_settings(("^send_",), (), replace_defaults=True)
    assert guard.blocks("send_email", None, None) is not None
    assert guard.blocks("delete_file", None, None) is None


def test_allowlist_is_a_full_match() -> None:
    guard = DestructiveGuard.from_settings((), ("delete_note",))
    assert guard.blocks("delete_note", None, None) is None
    assert guard.blocks("delete_notebook", None, None) is not None
