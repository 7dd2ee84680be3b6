"""A Hypothesis strategy of random *supported* input schemas, satisfiable by construction."""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

PATTERNS = ("^[a-z]+$", "^[0-9]{3}$", "^(foo|bar)-[0-9]+$", "^[A-Z][a-z]*$")
FORMATS = ("date-time", "date", "email", "uuid", "ipv4", "uri", "hostname")
NAMES = st.sampled_from(("a", "b", "name", "count", "mode", "when", "x-y", "tags", "内容"))
SCALARS = st.one_of(st.none(), st.booleans(), st.integers(-5, 5), st.sampled_from(("red", "green", "", "ß")))


@st.composite
def _bounds(draw: st.DrawFn, kind: str) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": kind}
    low = draw(st.none() | st.integers(-100, 100))
    span = draw(st.integers(0, 1000))
    if low is not None:
        schema["exclusiveMinimum" if draw(st.booleans()) and kind == "number" else "minimum"] = low
        if draw(st.booleans()):
            # Wide enough for a few distinct multiples, so that uniqueItems arrays stay satisfiable.
            schema["maximum"] = low + span + 20
    if draw(st.integers(0, 4)) == 0:
        schema["multipleOf"] = draw(st.sampled_from((2, 5) if kind == "integer" else (0.5, 0.25, 2)))
        schema.pop("exclusiveMinimum", None)
    return schema


@st.composite
def _string(draw: st.DrawFn) -> dict[str, Any]:
    choice = draw(st.integers(0, 2))
    if choice == 0:
        return {"type": "string", "pattern": draw(st.sampled_from(PATTERNS))}
    if choice == 1:
        return {"type": "string", "format": draw(st.sampled_from(FORMATS))}
    low = draw(st.integers(0, 5))
    schema: dict[str, Any] = {"type": "string", "minLength": low}
    if draw(st.booleans()):
        schema["maxLength"] = low + draw(st.integers(0, 20))
    return schema


def _leaves() -> st.SearchStrategy[dict[str, Any]]:
    return st.one_of(
        _bounds("integer"),
        _bounds("number"),
        _string(),
        st.just({"type": "boolean"}),
        st.just({"type": "null"}),
        st.lists(SCALARS, min_size=1, max_size=4, unique_by=repr).map(lambda v: {"enum": v}),
        SCALARS.map(lambda v: {"const": v}),
        st.just({}),
    )


def _extend(inner: st.SearchStrategy[dict[str, Any]]) -> st.SearchStrategy[dict[str, Any]]:
    arrays = st.builds(
        lambda items, low, unique: (
            {"type": "array", "items": items, "minItems": low, "maxItems": low + 3}
            | ({"uniqueItems": True} if unique and items.get("type") in ("integer", "string") else {})
        ),
        inner,
        st.integers(0, 2),
        st.booleans(),
    )
    nullable = inner.map(lambda schema: {"anyOf": [schema, {"type": "null"}], "default": None})
    return st.one_of(arrays, nullable, objects(inner))


def objects(values: st.SearchStrategy[dict[str, Any]]) -> st.SearchStrategy[dict[str, Any]]:
    @st.composite
    def build(draw: st.DrawFn) -> dict[str, Any]:
        properties = draw(st.dictionaries(NAMES, values, max_size=4))
        required = [name for name in properties if draw(st.booleans())]
        schema: dict[str, Any] = {"type": "object", "properties": properties, "required": required}
        if draw(st.booleans()):
            schema["additionalProperties"] = False
        return schema

    return build()


@st.composite
def input_schemas(draw: st.DrawFn) -> dict[str, Any]:
    """A tool input schema: an object, sometimes with one property moved to `$defs` behind a `$ref`."""
    values = st.recursive(_leaves(), _extend, max_leaves=6)
    schema = draw(objects(values))
    if schema["properties"] and draw(st.booleans()):
        name = next(iter(schema["properties"]))
        schema["$defs"] = {"Shared": schema["properties"][name]}
        schema["properties"][name] = {"$ref": "#/$defs/Shared", "description": "moved"}
    return schema
