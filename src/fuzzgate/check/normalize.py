"""Payload taken out of what a server said, so that one bug keeps one signature whatever the
arguments that reached it. Part of the fingerprint contract (docs/fingerprints.md): a change here
changes fingerprints."""

from __future__ import annotations

import re
import sys
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from fuzzgate.check.traceback import Frame

_NORMALIZERS = (
    (re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}"), "<uuid>"),
    (re.compile(r"0x[0-9a-fA-F]+|\b[0-9a-fA-F]{8,}\b"), "<hex>"),
    (re.compile(r"(['\"`]).*?\1"), "<str>"),
    (re.compile(r"(?:[A-Za-z]:)?(?:[/\\][\w.@-]+)+"), "<path>"),
    (re.compile(r"[-+]?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?"), "<num>"),
    (re.compile(r"\s+"), " "),
)


def normalize_message(text: str, arguments: Any = None, *, request: Any = None) -> str:
    """An error message with the payload taken out: ids, quoted values, paths and numbers become
    placeholders, so the same bug reached with other arguments normalizes the same way. The string
    values of `arguments` (the request) are taken out too wherever they stand as whole words: a
    server that quotes them bare ("Invalid resourceType: NaN. Must be ...") would otherwise give one
    bug a fingerprint per value.

    Only the first line is kept: up to the first `\\n` or `\\r` that is not inside a value of
    `request` (default `arguments`) standing whole in the text. The other characters
    `str.splitlines` breaks at (form feed, `\\x0b`, `\\x1c`-`\\x1e`, `\\x85`, `\\u2028`, `\\u2029`) are
    white space here: a value holding one would otherwise be cut before it could be found."""
    asked = arguments if request is None else request
    values = request_strings(asked)
    long_values = _long_strings(asked)
    text = _first_line(text.strip(), values, long_values)
    for value in long_values:
        text = _take_out_whole(text, value)
    # Longest first, ties in a fixed order (a set's order varies with the interpreter's hash seed).
    for value in sorted(request_strings(arguments), key=lambda v: (-len(v), v)):
        text = re.sub(rf"(?<!\w){re.escape(value)}(?!\w)", "<arg>", text)
    for pattern, placeholder in _NORMALIZERS:
        text = pattern.sub(placeholder, text)
    return text[:200]


_LINE_BREAK = re.compile(r"[\r\n]")


def _first_line(text: str, values: set[str], long_values: Sequence[str] = ()) -> str:
    """`text` up to its first line break outside the `values` and `long_values` that stand whole in it."""
    inside = [
        match.span()
        for value in values
        if _LINE_BREAK.search(value)
        for match in re.finditer(rf"(?<!\w){re.escape(value)}(?!\w)", text)
    ]
    inside += [span for value in long_values if _LINE_BREAK.search(value) for span in _whole_spans(text, value)]
    for brk in _LINE_BREAK.finditer(text):
        if not any(start <= brk.start() < end for start, end in inside):
            return text[: brk.start()]
    return text


_PATTERN_LONGEST = 1000
"""The longest request value taken out of a message with a regular expression (`request_strings`):
compiling one costs time in its length (30 ms for 64 KiB), and fuzzing sends values that long."""
_WORD = re.compile(r"\w")


def _long_strings(arguments: Any) -> list[str]:
    """The request's string values too long for `request_strings`, longest first (ties in a fixed
    order). A server that echoes one whole ("Invalid resourceType: AAAA…") would otherwise leave
    its start in the signature, or a placeholder of its form (`<hex>`), and one bug would get a
    fingerprint per value (a correction within fingerprint scheme `fuzzgate/2`: docs/fingerprints.md)."""
    found = argument_strings(arguments, multiline=True, longest=sys.maxsize)
    return sorted((v for v in found if len(v) > _PATTERN_LONGEST), key=lambda v: (-len(v), v))


def _whole_spans(text: str, value: str) -> Iterator[tuple[int, int]]:
    """Where `value` stands whole in `text` (no word character on either side), left to right and
    not overlapping: what the pattern `normalize_message` builds for a shorter value finds, by plain
    search, whose cost does not grow with the value's length as a compiled pattern's does."""
    start = 0
    while (at := text.find(value, start)) >= 0:
        end = at + len(value)
        if (at and _WORD.match(text[at - 1])) or (end < len(text) and _WORD.match(text[end])):
            start = at + 1
            continue
        yield at, end
        start = end


def _take_out_whole(text: str, value: str) -> str:
    """`text` with each place `value` stands whole replaced by `<arg>`."""
    pieces: list[str] = []
    last = 0
    for at, end in _whole_spans(text, value):
        pieces += [text[last:at], "<arg>"]
        last = end
    return "".join(pieces) + text[last:] if pieces else text


_PLACEHOLDER = re.compile(r"<(?:uuid|hex|str|path|num|arg)>")


def abstract_arguments(normalized: str, arguments: Any) -> str:
    """`normalized` (a `normalize_message` result) with the request's string values that still stand
    in it as whole words replaced by `<arg>`: a server that puts a value in its message bare
    ("Invalid resourceType: a. Must be Text or Blob.") would otherwise give one bug a fingerprint
    per value. A value is looked for as sent and as the normalizers write it ("v2" as "v<num>"); a
    value they abstract entirely is already a placeholder.

    An empty (or blank) value cannot be found, only where it stands: right after its own argument's
    name and `:` or `=` ("Invalid resourceType: . Must be ..."), before a punctuation mark or the
    end, it becomes `<arg>` as any other value would. Nowhere else: an empty slot that names no
    argument may be the server's own text, and abstracting it because some argument of the call
    was empty would split that bug in two.

    Applied after the normalizers (fingerprint scheme `fuzzgate/2`), so that a signature recorded
    under `fuzzgate/1` is carried over exactly by applying it to the recorded text with the
    recorded repro's arguments (`triage.fingerprint`)."""
    forms: set[str] = set()
    for value in request_strings(arguments):
        for form in (value.strip(), _normalized(value)):
            if form and _PLACEHOLDER.sub("", form).strip():
                forms.add(form)
    # Longest first, ties in a fixed order (a set's order varies with the interpreter's hash seed).
    for form in sorted(forms, key=lambda v: (-len(v), v)):
        normalized = re.sub(rf"(?<![\w<]){re.escape(form)}(?![\w>])", "<arg>", normalized)
    for name in sorted(_blank_value_names(arguments)):
        for label in sorted({name, _normalized(name)}):
            normalized = re.sub(
                rf"(?<![\w<])({re.escape(label)}(?::|=)) ?(?=[.,;)\]]|$)",
                lambda m: m.group(1) + (" <arg>" if m.group(1).endswith(":") else "<arg>"),
                normalized,
                flags=re.IGNORECASE,
            )
    return normalized


def _normalized(value: str) -> str:
    for pattern, placeholder in _NORMALIZERS:
        value = pattern.sub(placeholder, value)
    return value.strip()


SDK_PACKAGES = frozenset({"mcp", "fastmcp", "@modelcontextprotocol/sdk"})
"""The MCP SDKs' packages: their frames are never the server's own code."""
_RUNTIME_PACKAGES = frozenset(
    {"anyio", "starlette", "uvicorn", "sse_starlette", "pydantic", "pydantic_core", "express", "zod", "typer", "click"}
)
"""Packages an SDK runs a server's handler through (its event loop, web framework, argument
validation): the package a server's handler is in is the first other one."""
_STANDARD_LIBRARY = re.compile(r"[\\/]lib(?:64|32)?[\\/]python\d[\d.]*[\\/]|[\\/]Lib[\\/]|python\d+\.zip[\\/]")
"""A runtime's standard library where `Frame.in_library` (fuzzgate/1's rule, kept as it was) does
not see one: `/usr/lib64/python3.12/`, Windows' `Lib\\`, a zipped standard library."""
_PACKAGE_DIRS = re.compile(r"(?:site-packages|dist-packages|node_modules)/")


def package_of(path: str) -> str | None:
    """The installed package a frame's file belongs to (`site-packages/NAME/...`,
    `node_modules/NAME/...` or `node_modules/@scope/NAME/...`, the innermost one), or None for a
    file in no installed package (the server's checkout, the standard library, `<frozen ...>`)."""
    parts = _PACKAGE_DIRS.split(path.replace("\\", "/"))
    if len(parts) < 2:
        return None
    names = parts[-1].split("/")
    if names[0].startswith("@") and len(names) > 2:
        return f"{names[0]}/{names[1]}"
    return names[0].removesuffix(".py") if len(names) > 1 or names[0].endswith(".py") else None


def own_frames(frames: Sequence[Frame]) -> tuple[Frame, ...]:
    """The frames of the server's own code, outermost first (fingerprint scheme `fuzzgate/2`).

    The frames outside any library, when there are some (a server run from its checkout). A server
    installed as a package (`uvx`, `npx`, `pip install`) runs from `site-packages` or
    `node_modules` like its libraries: its code is then the package of the handler the SDK called,
    the first frame in a package that is neither an SDK nor what it runs handlers through, and its
    frames are that package's. Empty when neither is found. The standard library is never the
    server's code, wherever the runtime keeps it."""
    outside = tuple(f for f in frames if not f.in_library and not _STANDARD_LIBRARY.search(f.path))
    if outside:
        return outside
    packages = [package_of(f.path) for f in frames]
    server = next((p for p in packages if p is not None and p not in SDK_PACKAGES | _RUNTIME_PACKAGES), None)
    return tuple(f for f, p in zip(frames, packages, strict=True) if server is not None and p == server)


def normalize_schema_path(path: str | None) -> str:
    """`properties/items/items/3/type` → `properties/items/items/*/type`: the failing keyword, not the index."""
    return re.sub(r"(?<=/)\d+(?=/|$)", "*", path or "")


_MAX_ARGUMENT_STRINGS = 64


def argument_strings(value: Any, *, multiline: bool = False, longest: int = 1000) -> set[str]:
    """The non-blank string values in a request's arguments (the first few dozen, of at most
    `longest` characters; one line each unless `multiline`)."""
    found: set[str] = set()
    stack = [value]
    while stack and len(found) < _MAX_ARGUMENT_STRINGS:
        item = stack.pop()
        if isinstance(item, dict):
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
        elif isinstance(item, str) and item.strip() and (multiline or "\n" not in item) and len(item) <= longest:
            found.add(item)
    return found


def request_strings(arguments: Any) -> set[str]:
    """The string values `normalize_message` and `abstract_arguments` take out of a message:
    `argument_strings`, and those of them that hold a line break (a message's first line is no
    longer cut inside them)."""
    return argument_strings(arguments) | {v for v in argument_strings(arguments, multiline=True) if "\n" in v}


def _blank_value_names(arguments: Any) -> set[str]:
    """The names of the arguments (at any depth) whose value is an empty or blank string."""
    names: set[str] = set()
    stack = [arguments]
    while stack and len(names) < _MAX_ARGUMENT_STRINGS:
        item = stack.pop()
        if isinstance(item, dict):
            names.update(str(k) for k, v in item.items() if isinstance(v, str) and not v.strip() and str(k).strip())
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return names
