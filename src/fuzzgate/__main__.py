from __future__ import annotations

from fuzzgate.cli import main

raise SystemExit(main())
