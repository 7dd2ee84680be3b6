"""A test-only fingerprint scheme `fuzzgate/next`, the scheme after the current one, as a real scheme
change would look.

It changes the hash (a scheme's name is part of what is hashed) and the oracles' signatures: trace
labels are written `file#function` instead of `file:function`. Its upgrade maps every signature of
the scheme before it to the fuzzgate/next signature of the same bug. `python -m tests.triage.scheme_2 ARGS` is
the `fuzzgate` command with the scheme installed, for end-to-end tests.
"""

from __future__ import annotations

import sys
from collections.abc import Callable

from fuzzgate.check.traceback import Frame
from fuzzgate.model.findings import Kind
from fuzzgate.triage import fingerprint


def upgrade_from_1(kind: Kind, signature: tuple[str, ...]) -> tuple[str, ...]:
    if signature[:1] in (("trace",), ("reply-trace",)) and len(signature) == 2:
        return (signature[0], signature[1].replace(":", "#", 1))
    return signature


def label(self: Frame, redact: Callable[[str], str] | None = None) -> str:
    path = self.path if redact is None else redact(self.path)
    return f"{path.replace(chr(92), '/').rsplit('/', 1)[-1]}#{self.func}"


SCHEME_2 = fingerprint.Scheme("fuzzgate/next", upgrade=upgrade_from_1)


def install() -> None:
    """Make fuzzgate/next current in this process (tests use monkeypatch instead)."""
    fingerprint.SCHEMES = fingerprint.SCHEMES.with_scheme(SCHEME_2)
    Frame.label = label  # type: ignore[method-assign]


if __name__ == "__main__":
    from fuzzgate.cli.main import main

    install()
    sys.exit(main())
