"""Constant mining: the literals a module's code compares against, with the name compared."""

from __future__ import annotations

import textwrap

from hypothesis import given
from hypothesis import strategies as st

from fuzzgate.coverage.collector.constants import mine


def _mined(source: str, limit: int = 200) -> list[tuple[object, str | None, bool]]:
    return mine(textwrap.dedent(source), limit)


def test_comparisons_give_their_constant_and_the_name_compared() -> None:
    found = _mined(
        """
        def handle(mode, n, items, request, self):
            if mode == "magic":
                pass
            if n > 7 or 0.5 <= n:
                pass
            if len(items) == 3:
                pass
            if request["kind"] != "upload":
                pass
            if self.level < -2:
                pass
            if mode in ("a", "b"):
                pass
            if "needle" in mode:
                pass
        """
    )
    assert found == [
        ("magic", "mode", False),
        (7, "n", False),
        (0.5, "n", False),
        (3, "items", True),
        ("upload", "kind", False),
        (-2, "level", False),
        ("a", "mode", False),
        ("b", "mode", False),
        ("needle", "mode", False),
    ]


def test_prefixes_suffixes_and_get_keys_name_what_is_compared() -> None:
    found = _mined(
        """
        if path.startswith("/etc") or name.endswith((".py", ".pyc")):
            pass
        if args.get("mode") == "wait":
            pass
        value = settings.get("timeout", 30)
        """
    )
    assert found == [("/etc", "path", False), (".py", "name", False), (".pyc", "name", False), ("wait", "mode", False)]


def test_dict_get_keys_and_plain_literals_are_not_comparisons() -> None:
    found = _mined(
        """
        value = options.get("key")
        label = "not compared"
        numbers = [1, 2, 3]
        if __name__ == "__main__":
            main()
        if flag is True or value is None:
            pass
        if "a" == "b":
            pass
        """
    )
    assert found == []


def test_match_cases_give_their_literals() -> None:
    found = _mined(
        """
        match command:
            case "start" | "stop":
                pass
            case 42:
                pass
            case {"action": "delete"}:
                pass
            case [1, _]:
                pass
            case None:
                pass
        """
    )
    assert found == [
        ("start", "command", False),
        ("stop", "command", False),
        (42, "command", False),
        ("delete", "action", False),
        (1, "command", False),
    ]


def test_duplicates_are_dropped_and_the_cap_holds() -> None:
    source = "\n".join(f"if x == {i} or x == {i}: pass" for i in range(50))
    found = _mined(source, limit=10)
    assert found == [(i, "x", False) for i in range(10)]


def test_unusable_values_are_skipped() -> None:
    found = _mined(
        """
        if s == "" or s == "%s" or t == float("inf") or b == True:
            pass
        """.replace("%s", "x" * 300)
    )
    assert found == []


@given(st.text(max_size=200))
def test_any_text_mines_without_raising(source: str) -> None:
    assert isinstance(mine(source), list)
