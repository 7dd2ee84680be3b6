"""The destructive guard: tools that look like they delete or reset data are never called unless
the user allowlisted them by name."""

from __future__ import annotations

import re
from dataclasses import dataclass

BUILTIN_KEYWORDS = (
    "delete", "drop", "destroy", "truncate", "kill", "wipe", "purge", "reset",
    "remove", "erase", "unlink", "rmdir", "revoke", "terminate", "shutdown", "uninstall",
)  # fmt: skip
"""wallfacer's keywords, and more verbs that lose data. A keyword matches a word of the tool name
(split at `_`, `-`, `.`, spaces and camelCase) that starts with it: `deleteAll`, `drop_table`."""

_WORD = re.compile(r"[A-Z]?[a-z0-9]+|[A-Z]+(?![a-z])")


def name_words(name: str) -> list[str]:
    return [w.lower() for w in _WORD.findall(name)]


READ_VERBS = frozenset({"list", "get", "search", "read", "show", "describe", "view", "find"})


def looks_read_only(name: str, read_only_hint: bool | None) -> bool:
    """Annotated `readOnlyHint: true`, or not annotated and named like a reader (`list_notes`,
    `getUser`): such a tool runs early (its replies feed the others) and is taken not to change state."""
    if read_only_hint is not None:
        return read_only_hint
    found = name_words(name)
    return bool(found) and found[0] in READ_VERBS


@dataclass(frozen=True, slots=True)
class DestructiveGuard:
    patterns: tuple[re.Pattern[str], ...]
    allow: tuple[re.Pattern[str], ...]
    use_builtin: bool = True

    @classmethod
    def from_settings(
        cls, patterns: tuple[str, ...], allow: tuple[str, ...], replace_defaults: bool = False
    ) -> DestructiveGuard:
        return cls(
            patterns=tuple(re.compile(p) for p in patterns),
            allow=tuple(re.compile(p) for p in allow),
            use_builtin=not replace_defaults,
        )

    def why_destructive(self, name: str, destructive_hint: bool | None, read_only_hint: bool | None) -> str | None:
        """The reason a tool looks destructive, or None."""
        if self.use_builtin:
            for word in name_words(name):
                keyword = next((k for k in BUILTIN_KEYWORDS if word.startswith(k)), None)
                if keyword:
                    return f"name contains the destructive keyword '{keyword}'"
        for pattern in self.patterns:
            if pattern.search(name):
                return f"name matches the destructive pattern '{pattern.pattern}'"
        if destructive_hint is True and read_only_hint is not True:
            return "annotated destructiveHint: true"
        return None

    def blocks(self, name: str, destructive_hint: bool | None, read_only_hint: bool | None) -> str | None:
        """The reason this tool must not be called, or None when it may be."""
        reason = self.why_destructive(name, destructive_hint, read_only_hint)
        if reason is None or any(p.fullmatch(name) for p in self.allow):
            return None
        return f"{reason}; allow it with [allow_destructive] tools"
