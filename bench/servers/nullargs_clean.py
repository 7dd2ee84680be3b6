"""bench-nullargs, fixed: the clean twin of NUL-1. The same loop as nullargs.py, with a `tools/call`
whose `arguments` is `null` refused with JSON-RPC -32602; any report on it is a false positive.

    python nullargs_clean.py    # stdio
"""

from __future__ import annotations

import nullargs

if __name__ == "__main__":
    nullargs.main(clean=True)
