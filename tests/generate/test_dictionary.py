"""The per-target dictionary: values from replies, typed by their keys and shapes, offered back to
the fields that take them (fuzzgate.generate.dictionary)."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from fuzzgate.generate.dictionary import Dictionary, held_values, reply_held, reply_values
from fuzzgate.generate.fields import fields_of
from fuzzgate.generate.value_class import ValueClass, key_class, shape_class

NOTE = "6f1c2a8e-1234-4abc-8def-0123456789ab"
OTHER = "0b7e4d2c-9999-4abc-8def-fedcba987654"


def tool_result(structured: Any = None, text: str | None = None) -> dict[str, Any]:
    """A tools/call result as `CallOutcome.payload` holds it (parsed)."""
    result: dict[str, Any] = {"content": [], "isError": False}
    if text is not None:
        result["content"].append({"type": "text", "text": text})
    if structured is not None:
        result["structuredContent"] = structured
    return result


def schema(**properties: Any) -> dict[str, Any]:
    return {"type": "object", "properties": properties}


def values(d: Dictionary) -> list[tuple[Any, ValueClass | None]]:
    return [(e.value, e.value_class) for e in d.entries()]


def test_classes_from_keys_and_shapes() -> None:
    assert [key_class(k) for k in ("id", "note_id", "noteId", "ID", "uuid")] == [ValueClass.ID] * 5
    assert [key_class(k) for k in ("path", "file", "dir", "filePath", "file_name")] == [ValueClass.PATH] * 5
    assert [key_class(k) for k in ("uri", "url", "resourceUri", "href")] == [ValueClass.URI] * 4
    assert [key_class(k) for k in ("name", "title", "display_name")] == [ValueClass.NAME] * 3
    assert [key_class(k) for k in ("text", "count", "identity", "")] == [None] * 4
    assert shape_class(NOTE) is ValueClass.ID
    assert shape_class("notes://a/1") is ValueClass.URI
    assert shape_class("/srv/data/x.md") is ValueClass.PATH
    assert [shape_class(v) for v in ("/", "hello", "a/b", "12")] == [None] * 4


def test_a_created_id_is_offered_to_the_field_that_takes_it() -> None:
    d = Dictionary()
    reply = tool_result({"id": NOTE}, json.dumps({"id": NOTE}))
    assert d.learn("create_note", reply) == 1
    assert values(d) == [(NOTE, ValueClass.ID)]
    assert d.learn("create_note", reply) == 0, "a value seen again is not new"
    offered = d.offer(schema(note_id={"type": "string"}, text={"type": "string"}), {"text": "x"}, 0, "get_note")
    assert offered == ({"note_id": NOTE, "text": "x"}, "dictionary:/properties/note_id")


def test_plain_text_tokens() -> None:
    d = Dictionary()
    text = "Created note with id 42 at /srv/notes/42.md (see notes://all/42). Owner: bob, token: s3cr3t9"
    d.learn("create_note", tool_result(text=text))
    assert values(d) == [
        ("42", ValueClass.ID),
        ("notes://all/42", ValueClass.URI),
        ("/srv/notes/42.md", ValueClass.PATH),
    ]
    # An identifier goes to an integer field as a number, to a string field as text.
    ints = d.offer(schema(note_id={"type": "integer"}), {}, 0, "get_note")
    assert ints == ({"note_id": 42}, "dictionary:/properties/note_id")


def test_values_go_only_where_their_class_and_type_fit() -> None:
    d = Dictionary()
    d.learn("list_files", tool_result({"files": [{"path": "/srv/a.txt", "id": 7, "url": "https://example.org/a"}]}))
    assert values(d) == [("/srv/a.txt", ValueClass.PATH), (7, ValueClass.ID), ("https://example.org/a", ValueClass.URI)]
    tool = schema(path={"type": "string"}, file_id={"type": "string"}, link={"type": "string", "format": "uri"})
    # Fields in turn: each gets the one value of its class.
    assert d.offer(tool, {}, 0, "read_file") == ({"path": "/srv/a.txt"}, "dictionary:/properties/path")
    assert d.offer(tool, {}, 1, "read_file") == ({"file_id": "7"}, "dictionary:/properties/file_id")
    assert d.offer(tool, {}, 2, "read_file") == ({"link": "https://example.org/a"}, "dictionary:/properties/link")
    # No value for an enum, a boolean, or a free text field.
    closed = schema(mode={"type": "string", "enum": ["a", "b"]}, flag={"type": "boolean"}, text={"type": "string"})
    assert d.offer(closed, {}, 0, "x") is None


def test_the_entity_named_by_the_field_wins() -> None:
    d = Dictionary()
    d.learn("list_users", tool_result({"users": [{"id": OTHER}]}))
    d.learn("create_note", tool_result({"id": NOTE}))
    note_id = schema(note_id={"type": "string"})
    # Both are ids; the note's is the note field's (the user's only every 4th turn, as any id).
    picks = [d.offer(note_id, {}, k, "archive")[0]["note_id"] for k in range(8)]  # type: ignore[index]
    assert picks[:3] == [NOTE, NOTE, NOTE] and OTHER in picks[3::4]
    # A bare `id` takes the tool's entity: get_user's id is a user's.
    assert d.offer(schema(id={"type": "string"}), {}, 0, "get_user") == ({"id": OTHER}, "dictionary:/properties/id")


def test_secrets_and_echoed_values_are_not_learned() -> None:
    d = Dictionary()
    reply = tool_result(
        {"api_key": "k-123", "session_token": "t-1", "auth": {"id": "u1"}, "url": "https://user:pw@example.org/x"}
    )
    assert d.learn("whoami", reply) == 0
    # A reply echoing the request's own value (`no note abc1`) does not make it the server's.
    assert d.learn("get_note", tool_result(text="no note with id abc1"), sent=["abc1"]) == 0
    assert d.learn("get_note", tool_result(text="no note with id abc1")) == 1


def test_resource_uris_and_file_roots() -> None:
    d = Dictionary()
    assert d.learn_uris("resources", ["notes://1", "file:///srv/project"]) == 3
    assert values(d) == [
        ("notes://1", ValueClass.URI),
        ("file:///srv/project", ValueClass.URI),
        ("/srv/project", ValueClass.PATH),
    ]


def test_bounded_per_class_oldest_first_out() -> None:
    d = Dictionary(per_class=3)
    for n in range(5):
        d.learn("create", tool_result({"id": f"n-{n}", "name": f"note {n}"}))
    ids = [e.value for e in d.entries() if e.value_class is ValueClass.ID]
    names = [e.value for e in d.entries() if e.value_class is ValueClass.NAME]
    assert ids == ["n-2", "n-3", "n-4"] and names == ["note 2", "note 3", "note 4"]


def test_nested_fields() -> None:
    d = Dictionary()
    d.learn("create_note", tool_result({"id": NOTE}))
    tool = schema(filter={"type": "object", "properties": {"note_id": {"type": "string"}}}, limit={"type": "integer"})
    assert [f.pointer for f in fields_of(tool, {"filter": {}})] == [
        "/properties/filter/properties/note_id",
        "/properties/limit",
    ]
    offered = d.offer(tool, {"filter": {"note_id": "x"}, "limit": 3}, 0)
    assert offered == ({"filter": {"note_id": NOTE}, "limit": 3}, "dictionary:/properties/filter/properties/note_id")


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=30),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=12), inner, max_size=4),
    max_leaves=30,
)


@settings(max_examples=200, deadline=None)
@given(json_values, st.dictionaries(st.sampled_from(["id", "note_id", "path", "text"]), st.text(max_size=8)))
def test_learning_any_reply_is_safe_and_offers_change_one_field(reply: Any, arguments: dict[str, Any]) -> None:
    d = Dictionary(per_class=8)
    d.learn("tool", reply)
    d.learn("tool", {"structuredContent": reply, "content": [{"type": "text", "text": json.dumps(reply)}]})
    assert all(len(str(e.value)) <= 512 for e in d.entries())
    tool = schema(id={"type": "string"}, note_id={"type": "integer"}, path={"type": "string"}, text={"type": "string"})
    for k in range(4):
        first = d.offer(tool, arguments, k)
        assert first == d.offer(tool, arguments, k), "deterministic in k"
        if first is not None:
            changed = {key for key in {*first[0], *arguments} if first[0].get(key) != arguments.get(key)}
            assert len(changed) <= 1 and first[1].startswith("dictionary:/properties/")


def test_parts_of_the_request_echoed_back_are_not_learned() -> None:
    d = Dictionary()
    probe = "/var/tmp/fuzzgate-x1/s1/outside/fzgprobe-1582eae0"
    reply = tool_result(text=f"created {probe} in /var/tmp/fuzzgate-x1/s1/outside, next to /srv/notes")
    assert d.learn("init_project", reply, sent=[probe]) == 1
    assert values(d) == [("/srv/notes", ValueClass.PATH)]
    # Short values only match whole: a request's "a" does not hide an id holding an "a".
    assert d.learn("create_note", tool_result({"id": "abc-123"}), sent=["a"]) == 1


def test_a_reply_walked_once_feeds_the_dictionary_and_the_steps_values_alike() -> None:
    reply = tool_result(
        structured={"note": {"id": NOTE, "path": "/srv/notes/a.txt"}, "related": [{"id": OTHER}]},
        text=f"Created note 7 (id: 42) at /tmp/n, see file:///srv/x and {NOTE}",
    )
    payload = json.dumps(reply)
    walked, parsed = Dictionary(), Dictionary()
    found = reply_held("create_note", payload)
    assert walked.keep_held("create_note", found, sent=["7"]) == parsed.learn("create_note", reply, sent=["7"])
    assert walked.entries() == parsed.entries() and walked.fresh == parsed.fresh
    assert held_values("create_note", found) == reply_values("create_note", payload)
    assert NOTE in reply_values("create_note", payload)
    assert reply_held("create_note", "not json") == () and reply_values("create_note", "") == ()
