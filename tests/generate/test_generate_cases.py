"""The case stream: verdicts that can be trusted, modes that keep their promise, determinism."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import threading
from functools import cache
from pathlib import Path
from typing import Any

import anyio
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from jsonschema import Draft7Validator, Draft202012Validator

from fuzzgate.config.model import GenerationMode
from fuzzgate.generate import Case, CaseGenerator, UnsupportedSchema
from fuzzgate.generate._formats import format_checker
from fuzzgate.generate.cases import CHUNK_SIZE, slot, stream_position
from tests.generate.sample_schemas import SCHEMAS
from tests.generate.schema_strategies import input_schemas

CONFORM, ADVERSARIAL, MIXED = GenerationMode.CONFORM, GenerationMode.ADVERSARIAL, GenerationMode.MIXED
OPEN_SCHEMAS = {"no_properties", "empty_properties"}
"""Schemas that no JSON object violates."""


@cache
def generator(name: str, mode: GenerationMode, seed: int = 1, max_string: int = 65536) -> CaseGenerator:
    return CaseGenerator(SCHEMAS[name], master_seed=seed, name=name, mode=mode, max_string=max_string)


@cache
def cases(name: str, mode: GenerationMode, count: int = 60) -> tuple[Case, ...]:
    made = generator(name, mode)
    return tuple(made.case(k) for k in range(count))


def independent_validator(schema: dict[str, Any]) -> Any:
    cls = Draft7Validator if "draft-07" in schema.get("$schema", "") else Draft202012Validator
    return cls(schema, format_checker=format_checker(cls))


def fingerprint(made: list[Case]) -> str:
    text = json.dumps([[c.index, c.arguments, c.schema_valid, c.origin] for c in made], sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()


def strings_in(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, list):
        return [s for item in value for s in strings_in(item)]
    if isinstance(value, dict):
        return [s for key, item in value.items() for s in [key, *strings_in(item)]]
    return []


@pytest.mark.parametrize("name", sorted(SCHEMAS))
def test_conform_cases_all_validate(name: str) -> None:
    validator = independent_validator(SCHEMAS[name])
    for case in cases(name, CONFORM):
        assert case.schema_valid, case
        assert validator.is_valid(case.arguments), case


@pytest.mark.parametrize("name", sorted(set(SCHEMAS) - OPEN_SCHEMAS))
def test_adversarial_cases_never_validate_and_stay_objects(name: str) -> None:
    validator = independent_validator(SCHEMAS[name])
    for case in cases(name, ADVERSARIAL):
        assert not case.schema_valid, case
        assert not validator.is_valid(case.arguments), case
        assert isinstance(case.arguments, dict)


@pytest.mark.parametrize("name", sorted(SCHEMAS))
def test_mixed_verdicts_are_the_validators(name: str) -> None:
    validator = independent_validator(SCHEMAS[name])
    made = cases(name, MIXED)
    for case in made:
        assert case.schema_valid == validator.is_valid(case.arguments), case
        json.dumps(case.arguments)
    if name not in OPEN_SCHEMAS:
        valid = [case.index % 3 != 2 for case in made]
        assert valid == [case.schema_valid for case in made]


@settings(max_examples=10, deadline=None, database=None, suppress_health_check=list(HealthCheck))
@given(input_schemas(), st.sampled_from(list(GenerationMode)))
def test_verdicts_hold_for_random_schemas(schema: dict[str, Any], mode: GenerationMode) -> None:
    # fuzzgate's own format checks (jsonschema's FormatChecker checks `date-time` only with an
    # optional package installed, and would call "" a valid date-time).
    validator = Draft202012Validator(schema, format_checker=format_checker(Draft202012Validator))
    made = CaseGenerator(schema, master_seed=5, name="random", mode=mode)
    for k in range(20):
        case = made.case(k)
        assert case.schema_valid == validator.is_valid(case.arguments), (schema, case)
        if mode is CONFORM:
            assert case.schema_valid


def test_a_tool_without_properties_gets_the_empty_object_then_extras() -> None:
    assert {json.dumps(c.arguments) for c in cases("no_properties", CONFORM)} == {"{}"}
    extras = cases("no_properties", ADVERSARIAL)
    assert all(c.arguments for c in extras)
    assert all(c.schema_valid for c in extras), "no object violates {'type': 'object'}; the verdict must say so"


def test_closed_empty_object_gets_violations() -> None:
    schema = {"type": "object", "properties": {}, "additionalProperties": False}
    made = CaseGenerator(schema, master_seed=1, name="closed", mode=ADVERSARIAL)
    origins = {made.case(k).origin for k in range(10)}
    assert all(not made.case(k).schema_valid for k in range(10))
    assert any("extra_property" in origin for origin in origins)


def test_same_inputs_give_the_same_cases_in_any_order() -> None:
    schema = SCHEMAS["pydantic_model"]
    first = CaseGenerator(schema, master_seed=9, name="tool", mode=MIXED)
    second = CaseGenerator(dict(reversed(list(schema.items()))), master_seed=9, name="tool", mode=MIXED)
    forward = [first.case(k) for k in range(120)]
    backward = [second.case(k) for k in reversed(range(120))][::-1]
    assert forward == backward
    assert second.case(500) == first.case(500)


def test_cases_do_not_depend_on_the_process_or_its_hash_seed(tmp_path: Path) -> None:
    script = (
        "import hashlib, json, sys\n"
        "sys.path.insert(0, sys.argv[1])\n"
        "from tests.generate.sample_schemas import SCHEMAS\n"
        "from fuzzgate.generate import CaseGenerator\n"
        "from fuzzgate.config.model import GenerationMode\n"
        "made = CaseGenerator(SCHEMAS['strings'], master_seed=9, name='tool', mode=GenerationMode.MIXED)\n"
        "cases = [made.case(k) for k in range(200)]\n"
        "text = json.dumps([[c.index, c.arguments, c.schema_valid, c.origin] for c in cases], sort_keys=True)\n"
        "print(hashlib.sha256(text.encode()).hexdigest())\n"
    )
    env = {**os.environ, "PYTHONHASHSEED": "12345"}
    here = str(Path(__file__).parents[2])
    done = subprocess.run(
        [sys.executable, "-c", script, here], capture_output=True, text=True, env=env, cwd=tmp_path, timeout=120
    )
    assert done.returncode == 0, done.stderr
    made = CaseGenerator(SCHEMAS["strings"], master_seed=9, name="tool", mode=MIXED)
    assert done.stdout.strip() == fingerprint([made.case(k) for k in range(200)])


def test_seeds_and_tool_names_select_different_streams() -> None:
    streams = []
    for seed, name in ((1, "a"), (2, "a"), (1, "b")):
        made = CaseGenerator(SCHEMAS["one_string"], master_seed=seed, name=name, mode=MIXED)
        streams.append(fingerprint([made.case(k) for k in range(40)]))
    assert len(set(streams)) == 3


def test_schema_offered_and_boundary_values_come_early() -> None:
    made = [case.arguments for case in cases("examples_and_enum", MIXED, 30)]
    assert made[0] == {"mode": "read", "token": "s3cr3t-magic", "level": 3}
    assert {"read", "write", "append", "purge"} <= {args.get("mode") for args in made}
    valid = {case.arguments.get("level") for case in cases("examples_and_enum", CONFORM, 30)}
    invalid = cases("examples_and_enum", ADVERSARIAL, 60)
    assert {0, 9} <= valid
    assert any(c.arguments.get("level") == -1 for c in invalid[:30])
    assert any(c.arguments.get("level") == 10 for c in invalid)
    assert any(c.origin.startswith("mutation:missing_required") for c in invalid[:30])


def test_an_enum_value_meets_an_example_value_early() -> None:
    # A bug behind "mode == purge AND token == the documented example" must be one step from the base.
    for mode in (CONFORM, MIXED):
        made = cases("examples_and_enum", mode, 30)
        assert any(c.arguments.get("mode") == "purge" and c.arguments.get("token") == "s3cr3t-magic" for c in made)


def test_classic_boundaries_and_hostile_strings_are_tried() -> None:
    made = [case.arguments for case in cases("one_integer", MIXED, 240)]
    numbers = {args.get("n") for args in made if isinstance(args.get("n"), int)}
    assert {0, -1, 1, 2**31 - 1, 2**31, -(2**31), 2**53, 2**53 + 1, 2**63} <= numbers
    texts = {c.arguments.get("s") for c in cases("one_string", MIXED, 240) if isinstance(c.arguments.get("s"), str)}
    assert {"", "\x00", "\ud800", "😀", "A" * 65536} <= texts
    assert any(isinstance(t, str) and t.startswith("\u202e") for t in texts)


@pytest.mark.parametrize("key", ["path", "file_path", "targetDir"])
def test_a_field_named_as_a_path_gets_traversals_among_its_first_cases(key: str) -> None:
    schema = {"type": "object", "properties": {key: {"type": "string", "maxLength": 500}}, "required": [key]}

    def first(name: str) -> set[str]:
        named = schema if name == key else _renamed(schema, key, name)
        made = CaseGenerator(named, master_seed=3, name="read", mode=MIXED)
        values = (made.case(k).arguments.get(name) for k in range(24))
        return {value for value in values if isinstance(value, str)}

    assert {"..", "../", "../../../../etc/passwd"} <= first(key)
    # A field not named as a path gets them later, with the other hostile strings.
    assert ".." not in first("query")


def _renamed(schema: dict[str, Any], old: str, new: str) -> dict[str, Any]:
    return {**schema, "properties": {new: schema["properties"][old]}, "required": [new]}


def test_strings_respect_max_string_everywhere() -> None:
    made = generator("pydantic_model", MIXED, max_string=64)
    for k in range(200):
        assert all(len(s) <= 64 for s in strings_in(made.case(k).arguments))


@pytest.mark.parametrize(
    ("schema", "reason"),
    [
        ({"type": "string"}, "does not describe a JSON object"),
        ({"type": "object", "properties": {"x": {"not": {}}}}, "uses 'not' at /properties/x"),
        ({"type": "object", "properties": {"x": {"type": "string", "minLength": 9}}, "required": ["x"]}, "admits no"),
    ],
)
def test_unsupported_schemas_raise_at_construction(schema: dict[str, Any], reason: str) -> None:
    with pytest.raises(UnsupportedSchema, match=reason):
        CaseGenerator(schema, master_seed=1, name="t", mode=CONFORM, max_string=8)


def test_works_from_threads_and_event_loops_without_printing(capfd: pytest.CaptureFixture[str]) -> None:
    expected = [generator("recursive_tree", MIXED).case(k) for k in range(30)]
    found: list[list[Case]] = []

    def run() -> None:
        made = CaseGenerator(SCHEMAS["recursive_tree"], master_seed=1, name="recursive_tree", mode=MIXED)
        found.append([made.case(k) for k in range(30)])

    threads = [threading.Thread(target=run) for _ in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    async def in_loop() -> None:
        run()

    anyio.run(in_loop)
    assert found == [expected] * 4
    out, _ = capfd.readouterr()
    assert out == ""


@settings(max_examples=200, database=None)
@given(st.integers(0, 50), st.integers(0, 2000))
def test_slots_use_every_fixed_candidate_early_and_every_random_index_once(fixed: int, length: int) -> None:
    slots = [slot(j, fixed) for j in range(length)]
    randoms = [index for is_fixed, index in slots if not is_fixed]
    assert randoms == list(range(len(randoms)))
    early = [index for is_fixed, index in slots[: 3 * fixed] if is_fixed]
    assert early == list(range(min(fixed, -(-length // 3))))
    assert all(index < fixed for is_fixed, index in slots if is_fixed)


def test_mixed_mode_splits_two_to_one() -> None:
    streams = [stream_position(MIXED, k) for k in range(9)]
    assert [s for s, _ in streams].count("adversarial") == 3
    assert [j for s, j in streams if s == "conform"] == list(range(6))
    assert [j for s, j in streams if s == "adversarial"] == list(range(3))


def _first_index_of_chunk(made: CaseGenerator, chunk: int) -> int:
    """The first case number whose random draw is the first of `chunk` (a conform-only stream)."""
    fixed = len(made._fixed["conform"])
    return next(k for k in range(10_000) if slot(k, fixed) == (False, chunk * CHUNK_SIZE))


def test_a_stream_past_its_first_chunk_has_the_next_drawn_from_the_start_of_each_chunk() -> None:
    # A tool that drops most draws as repeats goes through a chunk about as fast as the worker draws
    # one: half a chunk's lead left the engine waiting on the worker at every chunk's end.
    made = CaseGenerator(SCHEMAS["one_integer"], master_seed=5, name="ahead", mode=CONFORM)
    start_of_first, start_of_second = _first_index_of_chunk(made, 0), _first_index_of_chunk(made, 1)
    made.case(start_of_first)
    # The first chunk of every tool is drawn, the next only once the stream is halfway through it.
    assert ("conform", 1) not in made._announced | set(made._chunks)
    assert not made.ready(start_of_second)
    made.case(start_of_second)
    assert ("conform", 2) in made._announced | set(made._chunks)
    assert made.ready(start_of_second + 1)


def test_drawing_ahead_changes_no_case() -> None:
    ahead = CaseGenerator(SCHEMAS["one_integer"], master_seed=6, name="same", mode=MIXED)
    late = CaseGenerator(SCHEMAS["one_integer"], master_seed=6, name="same", mode=MIXED)
    numbers = range(3 * CHUNK_SIZE * 3)
    # One generator goes in order (drawing ahead); the other is asked from the end backwards.
    in_order = [ahead.case(k).arguments for k in numbers]
    backwards = {k: late.case(k).arguments for k in reversed(numbers)}
    assert in_order == [backwards[k] for k in numbers]
