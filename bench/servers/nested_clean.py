"""bench-nested, fixed: the clean twin of NST-1 .. NST-6. The same tools, schemas and code as
nested.py, with every deep branch handled (a polite refusal, a reply, a redacted key); it records no
ground truth, and any report on it is a false positive.

    python nested_clean.py      # stdio
"""

from __future__ import annotations

import nested

if __name__ == "__main__":
    nested.build(clean=True).run("stdio")
