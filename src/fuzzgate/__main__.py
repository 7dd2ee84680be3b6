from __future__ import annotations

from fuzzgate.cli.main import main

raise SystemExit(main())
