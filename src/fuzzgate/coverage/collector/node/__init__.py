"""The coverage collector fuzzgate injects into a Node.js stdio server, through its environment only.

`fuzzgate.coverage.channel` adds `--require <preload.cjs>` to the server's `NODE_OPTIONS` and
describes the collector in one environment variable (`ENV`: the side channel's pipe fds, the entry
file or package, what to measure, the user's own `NODE_OPTIONS`). Every Node process started with
that environment loads the preload, and all but one leave at once: only the process that runs the
server's entry point (not `npm`, `npx`, `tsx`'s launcher or a shell's `node`) measures. That process
takes the variable and its `--require` out of `process.env`, so the children the server starts run
as they would without fuzzgate.

The preload opens an in-process `inspector.Session`, starts V8's precise coverage (block
granularity, call counts) before the server's code runs, and answers each request on the request
pipe with what the server's own code ran since the previous answer (`Profiler.takePreciseCoverage`
resets the counts, so each answer is one call's), speaking the Python collector's protocol: a hello,
then one JSON line per request with `lines`, `arcs` and `constants`. Own code is the measured
directories and packages, never `node_modules` inside them, Node's internals or the preload.

- `lines` are the lines whose code ran: in each function that ran, the lines not inside a block
  V8 reports unrun, nor inside a function of its own.
- `arcs` are the blocks that ran, as `line:-column` of their start (a negative second number, so
  the line counts name only the line): a block V8 merged into its function because it ran as
  often is still named, once an earlier answer showed it.
- `constants` are the string and number literals the code compares against (`x === "a"`,
  `case 7:`, `s.startsWith("p")`, `[..].includes(x)`, `a.length === 3`), mined by a small
  tokenizer from each measured file the first time one of its functions runs.

Everything in `preload.cjs` runs inside the server's Node (14 and later: an older one, or one built
without the inspector, says so in an error line and gets behaviour feedback): Node's built-in
modules only, nothing written to stdout (the MCP channel), and any error only ends the measuring.
"""

from __future__ import annotations

from pathlib import Path

ENV = "FUZZGATE_NODE_COLLECTOR"
"""The one environment variable that switches the Node collector on, holding its settings as JSON."""
PRELOAD = Path(__file__).parent / "preload.cjs"
