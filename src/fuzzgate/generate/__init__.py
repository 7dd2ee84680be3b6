"""Schema-driven generation: JSON Schema to Hypothesis strategies to deterministic test cases.

- In: a tool's input schema (and its description), the seed, the mode, the dictionary.
- Out: `Case`s: `CaseGenerator(schema, ...).case(k)` is the one entry point the engine needs, a pure
  function of (seed, tool, k, schema, mode); `compile_schema` gives the underlying strategy of
  conforming values for other uses; mutants and shrink candidates of corpus entries.
- Never: send anything, or draw with Hypothesis in fuzzgate's own process.

Hypothesis draws run in one child worker process (`_worker.py`) that imports only this package:
Hypothesis mixes string constants of every loaded local module into its draws, so drawing in
fuzzgate's own process would make the stream depend on what else happened to be imported. The
engine calls `case()` from a thread so the event loop never waits on the worker; every worker
request has a deadline (the worker is killed past it), and a request the run abandoned at its
deadline is failed at once. Server-supplied regexes run only there or, in this process, through
`model.untrusted_regex`.

Beyond schema-offered, boundary and adversarial values:

- `hints.py`: values a description names become the field's `examples`; `_anchor.py`: two of three
  random valid draws take those examples.
- `_structure.py`: array sizes around and above their bounds, deep nesting, many keys.
- `cost.py`: cost probes for fields that evaluate something (`9**9**9`, catastrophic regexes).
- `dictionary.py`: the values replies hold, typed by key and shape, offered to fields whose names
  match, and the constants the server's code compares against (`_constants.py`); pure.
  `value_class.py`: what a key's name and a string's shape say about a value (its class, hint
  words, a secret key); `fields.py`: the fields of a tool's input a value may go to, and `put`.
- `mutate.py`: structured mutation of a corpus entry (a field from a fresh case or the dictionary,
  numbers and strings nudged to bounds and mined constants, fields spliced between entries, arrays
  grown and shrunk); `_reduce.py`: the shrink and cleanse candidates the corpus tools and the live
  corpus try; `shrink.py`: those candidates for a finding's failing call, each with whether it
  conforms (verification shrinks repros with them); `_locate.py`: where in a schema a value sits.
- `reserved.py`: every host a case, example, mutant or dictionary value names is confined to
  reserved names and ranges, `enum`/`const` values kept (`cases.py`, `_anchor.py`, `mutate.py` and
  `dictionary.py` apply it, `_formats.py` draws reserved ones).
- `probes.py`: the scope, boundary (prefix sibling, symlink), injection and URL probes (canary URLs
  for URL-like fields, only for a server with the SSRF listener: `fuzzgate.sandbox.listener`),
  planned once per free string field, each riding on the tool's last accepted call, paced by the
  cases the tool can expect (back to back on a slow tool, every third case on a fast one), pointing
  at the watched directory through a placeholder the engine replaces.
- `nearby.py`: variants of a value a tool accepted (its case, a character, a path segment).
"""

from __future__ import annotations

from fuzzgate.generate._model import UnsupportedSchema
from fuzzgate.generate.cases import Case, CaseGenerator
from fuzzgate.generate.schema import compile_schema

__all__ = ["Case", "CaseGenerator", "UnsupportedSchema", "compile_schema"]
