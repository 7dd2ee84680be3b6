"""Schema-driven generation: JSON Schema to Hypothesis strategies to deterministic test cases.

`CaseGenerator(schema, ...).case(k)` is the one entry point the engine needs; `compile_schema` gives
the underlying strategy of conforming values for other uses.
"""

from __future__ import annotations

from fuzzgate.generate._model import UnsupportedSchema
from fuzzgate.generate.cases import Case, CaseGenerator
from fuzzgate.generate.schema import compile_schema

__all__ = ["Case", "CaseGenerator", "UnsupportedSchema", "compile_schema"]
