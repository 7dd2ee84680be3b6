"""fuzzgate: a deterministic fuzzing gate for MCP servers."""

from __future__ import annotations

__version__ = "0.2.0"

__all__ = ["__version__"]
