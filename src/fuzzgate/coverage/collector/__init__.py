"""The coverage collector fuzzgate injects into a Python stdio server, through its environment only.

`fuzzgate.coverage.channel` puts `_site/` at the front of the server's PYTHONPATH and describes the
collector in one environment variable (`ENV`: the side channel's pipe fds, where coverage.py and
this package are, what to measure). The interpreter imports `_site/sitecustomize.py` at start-up,
which pops that variable, puts PYTHONPATH back as the user had it (so the server's own children
start unmeasured), loads this package under a private name and calls `agent.start`, then runs
the `sitecustomize` the interpreter would have run without fuzzgate (Debian ships one).

`agent` measures the server's own code (with sys.monitoring on Python 3.12 and later, `monitor`;
with coverage.py's C tracer on 3.11) and answers fuzzgate over the pipes, switching measuring off
and on between calls when asked (`monitor`'s pause, `switch` for the C tracer in every thread;
`pipe` is its end of the side channel);
`imports` has the modules it does not measure imported with no trace function on 3.11 (a
server's start is mostly its SDK's imports); `constants` mines the constants that code compares
against. Everything here runs inside the server's interpreter, which
may be any Python from 3.11 on (coverage.py needs that much; an older one says so in an error
line and gets behaviour feedback): standard library only, no fuzzgate imports, and nothing ever
written to stdout (the MCP channel).
"""

from __future__ import annotations

ENV = "FUZZGATE_COLLECTOR"
"""The one environment variable that switches the collector on, holding its settings as JSON."""
