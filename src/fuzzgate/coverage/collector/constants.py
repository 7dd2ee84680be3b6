"""The string and number constants a module's code compares against, mined from its source.

A bug behind `if mode == "turbo"` waits for a random draw to hit one string; libFuzzer's comparison
tracing and Hypothesis's local-constant mining hand the fuzzer such operands instead. This finds
them in the syntax tree (no tracing: a comparison that never ran is still worth offering), with the
name the code compares them with where there is one: a variable, an attribute, a subscript key or
`.get()` key, or, for `len(items) == 3`, the sized value (`length`).

Runs inside the server's interpreter (see the package docstring): standard library only, and
nothing newer than Python 3.10 (`ast.Match` arrived then; it is looked up, not assumed).
"""

from __future__ import annotations

import ast
import math
from collections.abc import Iterator

Mined = tuple[object, "str | None", bool]
"""(value, name, length): a constant, the name it is compared with (or None), and whether it is
compared with that value's length rather than the value itself."""

PER_FILE = 200
MAX_STRING_CHARS = 256
_AFFIXES = frozenset({"startswith", "endswith"})
_NAMING_CALLS = frozenset({"get", "getenv", "pop", "getlist"})
"""`x.get("key") == value`: the compared value is the one stored under "key"."""


def mine(source: str, limit: int = PER_FILE) -> list[Mined]:
    """The constants `source` compares against, in source order, without duplicates, at most
    `limit`. Source that does not parse gives none."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return []
    found: list[Mined] = []
    seen: set[tuple[str, object, str | None, bool]] = set()
    for value, name, length in _walk(tree):
        if not _usable(value) or (name is not None and name.startswith("__") and name.endswith("__")):
            continue
        key = (type(value).__name__, value, name, length)
        if key in seen:
            continue
        seen.add(key)
        found.append((value, name, length))
        if len(found) >= limit:
            break
    return found


def _usable(value: object) -> bool:
    if isinstance(value, bool):
        return False
    if isinstance(value, str):
        return 0 < len(value) <= MAX_STRING_CHARS
    if isinstance(value, int):
        return True
    return isinstance(value, float) and math.isfinite(value)


def _walk(tree: ast.AST) -> Iterator[Mined]:
    nodes = [node for node in ast.walk(tree) if isinstance(node, ast.Compare | ast.Call) or _is_match(node)]
    nodes.sort(key=lambda node: (getattr(node, "lineno", 0), getattr(node, "col_offset", 0)))
    for node in nodes:
        if isinstance(node, ast.Compare):
            yield from _compare(node)
        elif isinstance(node, ast.Call):
            yield from _affix(node)
        else:
            subject = _name_of(node.subject)  # type: ignore[attr-defined]
            for case in node.cases:  # type: ignore[attr-defined]
                yield from _pattern(case.pattern, subject[0], subject[1])


def _is_match(node: ast.AST) -> bool:
    match = getattr(ast, "Match", None)
    return match is not None and isinstance(node, match)


def _compare(node: ast.Compare) -> Iterator[Mined]:
    operands = [node.left, *node.comparators]
    for op, left, right in zip(node.ops, operands, operands[1:], strict=False):
        for constant_side, other in ((right, left), (left, right)):
            name, length = _name_of(other)
            values = _constants(constant_side)
            if values is None and isinstance(op, ast.In | ast.NotIn) and constant_side is right:
                values = _collection(right)
            if values is None or _constants(other) is not None:
                continue
            for value in values:
                yield value, name, length


def _affix(node: ast.Call) -> Iterator[Mined]:
    func = node.func
    if not isinstance(func, ast.Attribute) or func.attr not in _AFFIXES or not node.args:
        return
    name, _length = _name_of(func.value)
    values = _constants(node.args[0])
    if values is None:
        values = _collection(node.args[0])
    for value in values or ():
        if isinstance(value, str):
            yield value, name, False


def _pattern(pattern: ast.AST, name: str | None, length: bool) -> Iterator[Mined]:
    """Literals of a `case` pattern: values compared with the subject (or, inside a mapping
    pattern, with the value under the key)."""
    kind = type(pattern).__name__
    if kind == "MatchValue":
        for value in _constants(pattern.value) or ():  # type: ignore[attr-defined]
            yield value, name, length
    elif kind in ("MatchOr", "MatchSequence"):
        for inner in pattern.patterns:  # type: ignore[attr-defined]
            yield from _pattern(inner, name, False if kind == "MatchSequence" else length)
    elif kind == "MatchAs" and pattern.pattern is not None:  # type: ignore[attr-defined]
        yield from _pattern(pattern.pattern, name, length)  # type: ignore[attr-defined]
    elif kind == "MatchMapping":
        for key, inner in zip(pattern.keys, pattern.patterns, strict=False):  # type: ignore[attr-defined]
            keys = _constants(key)
            key_name = keys[0] if keys and isinstance(keys[0], str) else None
            yield from _pattern(inner, key_name, False)
    elif kind == "MatchClass":
        for inner in (*pattern.patterns, *pattern.kwd_patterns):  # type: ignore[attr-defined]
            yield from _pattern(inner, None, False)


def _constants(node: ast.AST) -> list[object] | None:
    """The value of a literal (a negative number included), or None when `node` is not one."""
    if isinstance(node, ast.Constant):
        return [node.value]
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub) and isinstance(node.operand, ast.Constant):
        value = node.operand.value
        if isinstance(value, int | float) and not isinstance(value, bool):
            return [-value]
    return None


def _collection(node: ast.AST) -> list[object] | None:
    """The literals of a tuple, list or set display (`x in ("a", "b")`), or None."""
    if not isinstance(node, ast.Tuple | ast.List | ast.Set):
        return None
    values: list[object] = []
    for element in node.elts:
        constant = _constants(element)
        if constant is not None:
            values.extend(constant)
    return values


def _name_of(node: ast.AST) -> tuple[str | None, bool]:
    """The name a compared expression goes by, and whether it is the length of that name."""
    if isinstance(node, ast.Name):
        return node.id, False
    if isinstance(node, ast.Attribute):
        return node.attr, False
    if isinstance(node, ast.Subscript):
        key = _constants(node.slice)
        if key and isinstance(key[0], str):
            return key[0], False
        return _name_of(node.value)[0], False
    if isinstance(node, ast.Call):
        func = node.func
        if isinstance(func, ast.Name) and func.id == "len" and len(node.args) == 1:
            return _name_of(node.args[0])[0], True
        if isinstance(func, ast.Attribute):
            if func.attr in _NAMING_CALLS and node.args:
                key = _constants(node.args[0])
                if key and isinstance(key[0], str):
                    return key[0], False
            # `mode.lower() == "wait"`, `str(n) == "7"`: still the value of `mode`, of `n`.
            return _name_of(func.value)
        if isinstance(func, ast.Name) and len(node.args) == 1:
            return _name_of(node.args[0])[0], False
    return None, False
