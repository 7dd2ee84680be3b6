from __future__ import annotations

from fuzzgate.cli.entry import main

raise SystemExit(main())
