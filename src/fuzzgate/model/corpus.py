"""A corpus entry: one input that made the server do something new, kept to start later runs from.

An entry is a call (a tool, prompt or resource and its arguments) and, for a sequence, the calls sent
before it on the same server (`prefix`). It records how it was kept (`signal`, the features it was
first to reach then) and the environment it came from (HypoFuzz's environment tags): a run replays
entries from any environment as seeds, but measures their feedback again and never trusts what an
entry says it reached. The JSON form (`to_json`, format 1) is what the store writes, one small file
per entry; docs/corpus.md describes it.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from fuzzgate.model.errors import FuzzgateError
from fuzzgate.model.findings import JSONValue, Step, Surface

FORMAT = 1
"""The version of an entry's JSON form; an entry of a later format is skipped, not misread."""

_SLUG = re.compile(r"[^A-Za-z0-9_.-]+")
_MAX_SLUG = 48


class CorpusFormatError(FuzzgateError):
    """A corpus file that is not an entry this version can read (the store skips it and says so)."""


def slug(name: str) -> str:
    """`name` as a safe, readable part of a file name (a tool name, a target name, a URI)."""
    text = _SLUG.sub("-", name).strip("-.")[:_MAX_SLUG]
    return text or "x"


@dataclass(frozen=True, slots=True)
class CorpusEntry:
    tool: str
    """What the call goes to: a tool name, a prompt name, a resource URI or template."""
    arguments: dict[str, JSONValue]
    surface: Surface = Surface.TOOL
    prefix: tuple[Step, ...] = ()
    """Calls sent before it on the same server (the earlier steps of a sequence), in order."""
    origin: str = ""
    """How its input was made (`conform`, `boundary:...`, `mutate:<op>:<pointer>`, `sequence:...`)."""
    signal: str = "behaviour"
    """The feedback it was kept under: `coverage` or `behaviour`."""
    features: int = 0
    """How many features it was first to reach when it was kept: informational, never trusted."""
    environment: Mapping[str, str] = field(default_factory=dict)
    """Where it came from: `fuzzgate` (version), `server` (name and version), `python`, ... ."""
    files: tuple[str, ...] = ()
    """The files of the server's own code its call ran, as the coverage collector names them (sorted;
    empty without coverage): what tells which tools a change reaches (`fuzzgate.plan.focus`).
    Written as `feedback.files`, which a fuzzgate that predates it ignores."""
    duration_s: float | None = None
    """How long its call took when it was kept (None when not recorded): a seed that takes longer
    than what is left of the replay share waits for a run with the time (`learn.live_corpus`).
    Written as `feedback.duration_s`, which a fuzzgate that predates it ignores."""

    @property
    def identity(self) -> str:
        """What makes two entries the same input (not how or where they were kept)."""
        body = {
            "surface": self.surface.value,
            "tool": self.tool,
            "arguments": self.arguments,
            "prefix": [step.to_json() for step in self.prefix],
        }
        text = json.dumps(body, sort_keys=True, ensure_ascii=True, separators=(",", ":"), default=str)
        return hashlib.sha256(text.encode("ascii")).hexdigest()[:16]

    @property
    def key(self) -> str:
        """The entry's name in the store: readable tool part, then its identity."""
        return f"{slug(self.tool)}-{self.identity}"

    @property
    def size(self) -> int:
        """How big its input is (the canonical JSON of arguments and prefix): smaller is simpler."""
        body = [self.arguments, [step.arguments for step in self.prefix]]
        return len(json.dumps(body, sort_keys=True, ensure_ascii=True, separators=(",", ":"), default=str))

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {"format": FORMAT, "tool": self.tool}
        if self.surface is not Surface.TOOL:
            data["surface"] = self.surface.value
        data["arguments"] = self.arguments
        if self.prefix:
            data["prefix"] = [step.to_json() for step in self.prefix]
        data["origin"] = self.origin
        data["feedback"] = {"signal": self.signal, "features": self.features}
        if self.files:
            data["feedback"]["files"] = list(self.files)
        if self.duration_s is not None:
            data["feedback"]["duration_s"] = self.duration_s
        data["environment"] = dict(sorted(self.environment.items()))
        return data

    @classmethod
    def from_json(cls, data: object) -> CorpusEntry:
        """Raises `CorpusFormatError` saying what is wrong with `data`."""
        if not isinstance(data, dict):
            raise CorpusFormatError("not a JSON object")
        version = data.get("format")
        if version != FORMAT:
            raise CorpusFormatError(f"format {version!r}, this fuzzgate reads format {FORMAT}")
        try:
            tool = data["tool"]
            arguments = data["arguments"]
            if not isinstance(tool, str) or not isinstance(arguments, dict):
                raise CorpusFormatError("`tool` must be a string and `arguments` an object")
            prefix = tuple(Step.from_json(step) for step in data.get("prefix") or ())
            feedback = data.get("feedback") or {}
            environment = data.get("environment") or {}
            files = feedback.get("files") or []
            if not isinstance(files, list) or not all(isinstance(f, str) for f in files):
                raise CorpusFormatError("`feedback.files` must be a list of strings")
            duration = feedback.get("duration_s")
            if duration is not None and (
                isinstance(duration, bool) or not isinstance(duration, int | float) or not 0 <= duration < 1e9
            ):
                raise CorpusFormatError("`feedback.duration_s` must be a number of seconds")
            return cls(
                tool=tool,
                arguments=arguments,
                surface=Surface(data.get("surface", Surface.TOOL.value)),
                prefix=prefix,
                origin=str(data.get("origin", "")),
                signal=str(feedback.get("signal", "behaviour")),
                features=int(feedback.get("features", 0)),
                environment={str(k): str(v) for k, v in dict(environment).items()},
                files=tuple(sorted(set(files))),
                duration_s=None if duration is None else float(duration),
            )
        except CorpusFormatError:
            raise
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            raise CorpusFormatError(f"malformed entry ({type(exc).__name__}: {exc})") from None
