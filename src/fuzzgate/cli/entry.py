"""The `fuzzgate` console script and `python -m fuzzgate`: `cli.main` imported inside the guard.

Importing the commands takes a few tenths of a second (rich, pydantic's MCP types, the config
schema). A Ctrl-C in that time raised `KeyboardInterrupt` outside `cli.main`'s own handling and
printed Python's traceback; here it is the same one line and exit 130 as an interrupted run.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

INTERRUPTED_EXIT = 130
"""128 + SIGINT, as `cli.interrupt` and shells report it."""


def main(argv: Sequence[str] | None = None) -> int:
    try:
        from fuzzgate.cli.main import main as command

        return command(argv)
    except KeyboardInterrupt:
        # Only an interrupt before `cli.main` installed its own handling reaches here: nothing has
        # started or been written yet.
        print("fuzzgate: interrupted before the command started; nothing was written", file=sys.stderr)
        return INTERRUPTED_EXIT
