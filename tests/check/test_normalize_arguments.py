"""Payload out of signatures: values a message quotes bare, and the frames of the server's own code."""

from __future__ import annotations

import re

import pytest

from fuzzgate.check.normalize import _take_out_whole, abstract_arguments, normalize_message, own_frames, package_of
from fuzzgate.check.traceback import Frame, Trace


@pytest.mark.parametrize("value", ["NaN", "R", "a", "/w/x/outside/fzgprobe-94f95f4c9317c092", "two words"])
def test_values_quoted_bare_are_taken_out_as_whole_words(value: str) -> None:
    text = f"Invalid resourceType: {value}. Must be Text or Blob."
    assert normalize_message(text, {"resourceType": value, "resourceId": "1"}) == (
        "Invalid resourceType: <arg>. Must be Text or Blob."
    )


def test_a_short_value_inside_a_word_stays() -> None:
    # "a" is a whole word nowhere here: "Invalid" and "Blob" keep their letters.
    assert normalize_message("Invalid type. Must be Blob.", {"t": "a"}) == "Invalid type. Must be Blob."


def test_without_arguments_the_normalization_is_as_it_was() -> None:
    assert normalize_message("Invalid resourceType: NaN.") == "Invalid resourceType: NaN."


def test_a_bare_value_of_a_tool_call_is_taken_out_after_the_normalizers() -> None:
    message = "Invalid resourceType: a. Must be Text or Blob."
    signatures = {
        abstract_arguments(normalize_message(message.replace(": a.", f": {value}.")), {"resourceType": value})
        for value in ("a", "NaN", "Text2", "two words")
    }
    assert signatures == {"Invalid resourceType: <arg>. Must be Text or Blob."}
    # A word that is no argument's value stays, and so does a placeholder.
    assert abstract_arguments("Unknown a: <num>", {"x": "b"}) == "Unknown a: <num>"
    assert abstract_arguments("Unknown <str>", {"x": "str"}) == "Unknown <str>"


BUG = "Invalid resourceType: {}. Must be Text or Blob."
ONE_SIGNATURE = "Invalid resourceType: <arg>. Must be Text or Blob."


LONG_VALUES = ["A" * 1024, "Z" * 65536, "two words " * 150, "line\n" * 300 + "end"]
"""Longer than the values taken out with a pattern: one of a real server (the reference `everything`
server's `resource-prompt`, which echoes its argument) gave a second finding under `<hex>`."""


@pytest.mark.parametrize(
    "value", ["a", "", " ", "\x15\f\x83R", "x\u2028y", "\x85", "x\x0by", "x\ny", "x\r\ny", *LONG_VALUES]
)
def test_one_bug_is_one_signature_whatever_the_value(value: str) -> None:
    # Values holding a character `str.splitlines` breaks at were cut before they could be found,
    # and an empty one could not be found at all: one bug of a real server got three findings.
    arguments = {"resourceType": value, "resourceId": 1}
    text = BUG.format(value)
    prompt = abstract_arguments(normalize_message(text, arguments), arguments)
    tool = abstract_arguments(normalize_message(text, request=arguments), arguments)
    assert prompt == tool == ONE_SIGNATURE


@pytest.mark.parametrize("value", ["A" * 1001, "x" * 1500, "a-b " * 400])
def test_a_long_value_is_found_where_the_pattern_finds_a_short_one(value: str) -> None:
    # The plain search for long values keeps the pattern's rule: whole words only, left to right.
    texts = [f"x{value}", f"{value}x", f"_{value}", f"{value} {value}", f"{value}{value}", f"-{value}.", value]
    for text in texts:
        by_pattern = re.sub(rf"(?<!\w){re.escape(value)}(?!\w)", "<arg>", text)
        assert _take_out_whole(text, value) == by_pattern


def test_the_first_line_ends_at_a_line_break_outside_the_values() -> None:
    assert normalize_message("bad value\fhere\nTraceback ...") == "bad value here"
    assert normalize_message("bad value\r\nTraceback ...") == "bad value"
    assert normalize_message("bad a\nb here\nmore", request={"x": "a\nb"}) == "bad a b here"
    # A value that does not stand whole in the text does not keep a line break.
    assert normalize_message("bad xa\nb here", request={"x": "a\nb"}) == "bad xa"


def test_an_empty_value_is_taken_out_only_where_its_argument_names_it() -> None:
    assert abstract_arguments("Unknown tool:", {"tool": ""}) == "Unknown tool: <arg>"
    assert abstract_arguments("bad mode=, expected r or w", {"mode": " "}) == "bad mode=<arg>, expected r or w"
    # An empty slot that names no empty argument is the server's text: it stays.
    assert abstract_arguments("Invalid resourceType: . Must be", {"other": ""}) == "Invalid resourceType: . Must be"
    assert abstract_arguments("Invalid resourceType: . Must be", {"resourceType": "a"}) == (
        "Invalid resourceType: . Must be"
    )
    assert abstract_arguments("Failed: . Retry", {"tool": ""}) == "Failed: . Retry"
    # The name followed by a value is not an empty slot.
    assert abstract_arguments("Unknown tool: x", {"tool": ""}) == "Unknown tool: x"


def _frame(path: str, func: str) -> Frame:
    return Frame(path, 1, func)


SITE = "/home/u/.cache/uv/archive-v0/x/lib/python3.12/site-packages"


def test_an_installed_servers_own_frames_are_its_package() -> None:
    frames = (
        _frame(f"{SITE}/mcp/server/lowlevel/server.py", "_handle_request"),
        _frame(f"{SITE}/anyio/to_thread.py", "run_sync"),
        _frame(f"{SITE}/mcp_server_docs/server.py", "read_doc"),
        _frame(f"{SITE}/mcp_server_docs/convert.py", "convert"),
        _frame(f"{SITE}/docx/api.py", "Document"),
        _frame("/usr/lib64/python3.12/zipfile/__init__.py", "_RealGetContents"),
    )
    assert [f.func for f in own_frames(frames)] == ["read_doc", "convert"]
    assert Trace("BadZipFile", "", frames).signature() == ("convert.py:convert",)


def test_code_outside_libraries_is_the_servers_own_first() -> None:
    frames = (
        _frame(f"{SITE}/mcp/server/lowlevel/server.py", "_handle_request"),
        _frame("/srv/app/server.py", "handler"),
        _frame(f"{SITE}/mcp_helpers/util.py", "helper"),
    )
    assert [f.func for f in own_frames(frames)] == ["handler"]
    # Only SDK, runtime and standard library frames: nothing is the server's.
    assert own_frames(frames[:1]) == ()


def test_package_of() -> None:
    assert package_of(f"{SITE}/docx/api.py") == "docx"
    assert package_of(f"{SITE}/six.py") == "six"
    assert package_of("/app/node_modules/@modelcontextprotocol/sdk/dist/cjs/server/index.js") == (
        "@modelcontextprotocol/sdk"
    )
    assert package_of("/app/node_modules/a/node_modules/pdf-parse/lib/pdf.js") == "pdf-parse"
    assert package_of("/usr/lib/python3.12/pathlib.py") is None
    assert package_of("node:internal/fs/utils") is None
