"""The case stream of one tool: case k as a pure function of (seed, tool, k, schema, mode, max_string).

Layout of the stream:

- `mixed` sends cases k % 3 in {0, 1} to the conform sub-stream and k % 3 == 2 to the adversarial
  one; `conform` and `adversarial` use a single sub-stream.
- In each sub-stream, every 3rd case takes the next fixed candidate (the base object, then
  schema-offered and boundary values, one location at a time) until all were used; after that every
  8th case cycles through them again. The other cases are random draws.
- Random draws come in chunks of `CHUNK_SIZE`, drawn in the generation worker process (`_worker`
  says why there): conform chunk n from one seeded Hypothesis run, adversarial chunk n by breaking
  one location of each value of conform chunk n. The chunk seed hashes (seed, tool, sub-stream,
  chunk, schema, mode, max_string), so a chunk never depends on which chunks were asked for before.
- Of every `ANCHOR_EVERY` random conform draws, all but the last are anchored (`_anchor`): every
  field whose schema has `examples` takes one of them, the others keep their drawn values (origin
  "random+examples"), so that most draws get past the tool's own checks; the last stays wholly
  random, for the bugs behind odd values. A field takes its examples, then its pool, each once per
  round in an order hashed from (seed, tool, field, round), so anchoring too is a pure function of
  the case index.

Every candidate has its hosts confined to reserved ones (`reserved`), then is checked with
jsonschema here, in the caller; `Case.schema_valid` is that verdict. A
conform draw that fails the check is replaced by a fixed valid candidate, an adversarial draw that
passes it by a fixed invalid one, so each sub-stream keeps its promise whenever the schema allows it.
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections import OrderedDict
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

from fuzzgate.config.model import GenerationMode
from fuzzgate.generate._anchor import Anchors
from fuzzgate.generate._keywords import build_validator
from fuzzgate.generate._model import Stream, UnsupportedSchema, canonical_json
from fuzzgate.generate._worker import DEFAULT_TIMEOUT_S, WORKER
from fuzzgate.generate.reserved import Confinement

CHUNK_SIZE: Final = 64
EARLY_EVERY: Final = 3
LATE_EVERY: Final = 8
ANCHOR_EVERY: Final = 3
ANCHORED_ORIGIN: Final = "random+examples"
_CACHED_CHUNKS: Final = 32


@dataclass(frozen=True, slots=True)
class Case:
    """One set of tool arguments to send, and what the generator knows about it."""

    index: int
    arguments: dict[str, Any]
    """JSON-serializable tool arguments; always a JSON object."""
    schema_valid: bool
    """Whether `arguments` validate against the input schema, as checked by jsonschema."""
    origin: str
    """How the case was made: "example", "boundary:/properties/n=2147483648", "random",
    "random+examples", "mutation:wrong_type:/properties/x=\"1\"", "random-mutation:missing_required:", ..."""


@dataclass(frozen=True, slots=True)
class _Entry:
    text: str
    origin: str
    valid: bool


def chunk_seed(
    *, master_seed: int, name: str, stream: Stream, chunk: int, schema: str, mode: str, max_string: int
) -> int:
    """A stable 64-bit seed (hashlib, so it does not vary with PYTHONHASHSEED)."""
    material = json.dumps([master_seed, name, stream, chunk, schema, mode, max_string], ensure_ascii=True)
    return int.from_bytes(hashlib.sha256(material.encode("ascii")).digest()[:8], "big")


def stream_position(mode: GenerationMode, k: int) -> tuple[Stream, int]:
    """Which sub-stream case k belongs to, and its index there."""
    if mode is GenerationMode.CONFORM:
        return "conform", k
    if mode is GenerationMode.ADVERSARIAL:
        return "adversarial", k
    block, position = divmod(k, 3)
    if position == 2:
        return "adversarial", block
    return "conform", 2 * block + position


def slot(j: int, fixed: int) -> tuple[bool, int]:
    """(True, i) when index j of a sub-stream takes fixed candidate i, else (False, random index)."""
    if fixed == 0:
        return False, j
    early = EARLY_EVERY * fixed
    if j < early:
        if j % EARLY_EVERY == 0:
            return True, j // EARLY_EVERY
        return False, j - j // EARLY_EVERY - 1
    late = j - early
    if late % LATE_EVERY == 0:
        return True, (late // LATE_EVERY) % fixed
    return False, (EARLY_EVERY - 1) * fixed + late - late // LATE_EVERY - 1


def _draws_ahead(chunk: int, position: int) -> bool:
    """Whether the worker is told to draw chunk + 1 of a stream now that it is at `position` of
    `chunk`: from halfway through the first chunk, and from the start of every later one. A stream
    past its first chunk is one the engine keeps drawing from (a tool with few distinct inputs drops
    most draws as repeats, and so goes through a chunk in about the time the worker takes to draw
    one, beside the server); half a chunk's lead left the next request waiting on the worker's draw.
    Not sooner for the first: every generator is built before fuzzing, and most tools of a
    many-tool server never get that far. Which chunks are drawn when changes no case: each chunk
    has its own seed (`chunk_seed`)."""
    return chunk > 0 or position >= CHUNK_SIZE // 2


class CaseGenerator:
    """Deterministic test cases for one tool's input schema.

    `case(k)` depends only on (master_seed, name, k, schema, mode, max_string): not on call order,
    timing, other tools or the process. Raises `UnsupportedSchema` when the schema uses keywords
    the generator cannot honour, is not a valid JSON Schema, does not describe an object, or (in
    conform mode) admits no arguments that can be generated.
    """

    def __init__(
        self,
        schema: Mapping[str, Any],
        *,
        master_seed: int,
        name: str,
        mode: GenerationMode,
        max_string: int = 65536,
        timeout_s: float = DEFAULT_TIMEOUT_S,
    ) -> None:
        if max_string < 0:
            raise ValueError("max_string must not be negative")
        try:
            self._canonical = canonical_json(schema)
        except (TypeError, ValueError) as exc:
            raise UnsupportedSchema(f"is not plain JSON ({exc}) at /") from None
        self._schema: Any = json.loads(self._canonical)
        self._validator = build_validator(self._schema, bounded_patterns=True)
        self._confinement = Confinement.of(self._schema)
        self._timeout_s = timeout_s
        self._mode = GenerationMode(mode)
        self._master_seed = master_seed
        self._name = name
        self._max_string = max_string
        self._lock = threading.Lock()
        self._chunks: OrderedDict[tuple[Stream, int], list[_Entry]] = OrderedDict()
        # Chunks the worker is told to draw ahead of need (`_draws_ahead`).
        self._announced: set[tuple[Stream, int]] = set()
        self._anchors = Anchors(
            self._schema,
            self._validator,
            max_string=max_string,
            salt=json.dumps([master_seed, name], ensure_ascii=True),
        )
        fixed = [self._entry(*found) for found in self._request({"op": "fixed"})]
        self._fixed: dict[Stream, list[_Entry]] = {
            "conform": [entry for entry in fixed if entry.valid],
            "adversarial": [entry for entry in fixed if not entry.valid],
        }
        if self._mode is GenerationMode.CONFORM and not self._valid_fallback():
            raise UnsupportedSchema("admits no arguments that could be generated (is it satisfiable?) at /")

    def is_valid(self, arguments: Mapping[str, Any]) -> bool:
        """Whether `arguments` validate against the tool's input schema (as `Case.schema_valid`)."""
        from fuzzgate.model.untrusted_regex import PatternTimeout

        try:
            return bool(self._validator.is_valid(arguments))
        except PatternTimeout:
            return False

    def offered(self) -> dict[tuple[str, ...], list[Any]]:
        """The values the schema offers each anchored field (its examples, those the descriptions
        name, its pool), by the field's path in the arguments: values a tool most likely accepts."""
        return {field.path: [json.loads(text) for text in field.examples] for field in self._anchors.fields}

    def case(self, k: int) -> Case:
        """Case number k (k >= 0) of the stream."""
        if k < 0:
            raise ValueError("case index must not be negative")
        stream, j = stream_position(self._mode, k)
        fixed = self._fixed[stream]
        is_fixed, index = slot(j, len(fixed))
        entry = fixed[index] if is_fixed else self._random(stream, index)
        return Case(index=k, arguments=json.loads(entry.text), schema_valid=entry.valid, origin=entry.origin)

    def ready(self, k: int) -> bool:
        """Whether `case(k)` can be answered from what is already here, without an exchange with
        the generation worker: the engine then takes it on the event loop, sparing a thread hop per
        call (most cases are; a chunk holds 64 and the next is drawn ahead)."""
        stream, j = stream_position(self._mode, k)
        is_fixed, index = slot(j, len(self._fixed[stream]))
        if is_fixed:
            return True
        number, position = divmod(index, CHUNK_SIZE)
        following = (stream, number + 1)
        with self._lock:
            if (stream, number) not in self._chunks:
                return False
            if _draws_ahead(number, position) and following not in self._announced and following not in self._chunks:
                return False
            # A draw with the wrong verdict falls back on the fixed candidates, or on chunk 0.
            return bool(self._fixed[stream]) or ("conform", 0) in self._chunks

    def _random(self, stream: Stream, index: int) -> _Entry:
        number, position = divmod(index, CHUNK_SIZE)
        chunk = self._chunk(stream, number)
        if _draws_ahead(number, position):
            self._announce((stream, number + 1))
        wanted = stream == "conform"
        if chunk:
            entry = chunk[index % CHUNK_SIZE % len(chunk)]
            if entry.valid == wanted:
                return self._anchored(entry, index) if wanted else entry
        replacements = self._fixed[stream] or [e for e in chunk if e.valid == wanted]
        if not replacements and wanted:
            replacements = self._valid_fallback()
        if replacements:
            return replacements[index % len(replacements)]
        # No candidate with the wanted verdict exists (say, no object violates `{"type": "object"}`):
        # send what there is, labelled honestly.
        spare = chunk or self._fixed["conform"] or self._fixed["adversarial"]
        return spare[index % len(spare)] if spare else self._entry({}, "base")

    def _anchored(self, entry: _Entry, draw: int) -> _Entry:
        """Random conform draw number `draw`, anchored unless it is the last of its group."""
        if draw % ANCHOR_EVERY == ANCHOR_EVERY - 1 or not self._anchors.fields:
            return entry
        found = self._anchors.anchor(json.loads(entry.text), draw, self.is_valid)
        if found is None:
            return entry
        # `anchor` returns only arguments `is_valid` accepted: the verdict is still jsonschema's.
        return _Entry(json.dumps(found, ensure_ascii=True, allow_nan=False), ANCHORED_ORIGIN, True)

    def _valid_fallback(self) -> list[_Entry]:
        if self._fixed["conform"]:
            return self._fixed["conform"]
        return [entry for entry in self._chunk("conform", 0) if entry.valid]

    def _chunk(self, stream: Stream, chunk: int) -> list[_Entry]:
        key = (stream, chunk)
        with self._lock:
            found = self._chunks.get(key)
            if found is None:
                self._announced.discard(key)
                drawn = self._request({"op": "draw", **self._chunk_request(stream, chunk)})
                found = [self._entry(*candidate) for candidate in drawn]
                self._store(key, found)
            return found

    def _chunk_request(self, stream: Stream, chunk: int) -> dict[str, Any]:
        request: dict[str, Any] = {"stream": stream, "seed": self._seed(stream, chunk)}
        if stream == "adversarial":
            request["base_seed"] = self._seed("conform", chunk)
        return request

    def _seed(self, stream: Stream, chunk: int) -> int:
        return chunk_seed(
            master_seed=self._master_seed,
            name=self._name,
            stream=stream,
            chunk=chunk,
            schema=self._canonical,
            mode=self._mode.value,
            max_string=self._max_string,
        )

    def _announce(self, key: tuple[Stream, int]) -> None:
        """Have the worker draw chunk `key` ahead, without waiting: it may be busy drawing another.
        The chunk comes back with a later exchange (`_request`), or as that exchange's own draw."""
        with self._lock:
            if key in self._announced or key in self._chunks:
                return
            self._announced.add(key)
            ahead = [self._chunk_request(*key)]
            WORKER.post({"op": "prefetch", **self._common(), "prefetch": ahead}, owner=self._name)

    def _request(self, payload: dict[str, Any]) -> Any:
        """One exchange with the worker; announced chunks it has ready come back with it."""
        pending = {self._seed(*key): key for key in sorted(self._announced) if key not in self._chunks}
        announced = [self._chunk_request(*key) for key in pending.values()]
        result, ready = WORKER.request(
            {**payload, **self._common(), "prefetch": announced}, timeout_s=self._timeout_s, owner=self._name
        )
        for _, seed, drawn in ready:
            key = pending[seed]
            self._announced.discard(key)
            self._store(key, [self._entry(*found) for found in drawn])
        return result

    def _common(self) -> dict[str, Any]:
        """What every request to the worker about this tool's schema carries."""
        return {"schema": self._schema, "max_string": self._max_string, "count": CHUNK_SIZE}

    def _store(self, key: tuple[Stream, int], entries: list[_Entry]) -> None:
        self._chunks[key] = entries
        self._chunks.move_to_end(key)
        if len(self._chunks) > _CACHED_CHUNKS:
            self._chunks.popitem(last=False)

    def _entry(self, arguments: dict[str, Any], origin: str) -> _Entry:
        from fuzzgate.model.untrusted_regex import PatternTimeout

        arguments = self._confinement.apply(arguments)
        text = json.dumps(arguments, ensure_ascii=True, allow_nan=False)
        try:
            valid = self._validator.is_valid(arguments)
        except PatternTimeout as exc:
            raise UnsupportedSchema(f"has a pattern too costly to match ({exc}) at /") from None
        return _Entry(text, origin, valid)
