"""Measuring a server: coverage of a Python or Node.js stdio server's own code, collected call by call.

- In: the `Config`'s target (its command line, `[target] coverage_source`, `[fuzzgate] feedback`)
  and the `LaunchSpec` the server is started with.
- Out: a `CollectorPlan` (whether to inject the collector, what to measure, and why not), the
  environment that injects it, and a `CoverageChannel` whose `collect` gives each call's
  `CallCoverage` (the arcs it ran, the constants newly measured files compare against), and whose
  `measure` switches measuring off for the calls fuzzgate does not collect (and on again).
- Never: write to the server's stdout (the MCP channel), import fuzzgate inside the server, or fail
  a run: a channel that breaks gives None and the run goes on with behaviour feedback.

The modules:

- `plan.py`: `plan_collector` decides from the command line whether the server runs on a Python
  interpreter (or on Node: `node_plan.py`) and what is its code.
- `channel.py`: `CoverageChannel` is fuzzgate's end of the two inherited pipes (`CallCoverage` per
  call); `feedback_note` says what feedback a run got. The connection exposes them as
  `Connection.coverage` and `Connection.feedback_note`.
- `collector/`: what runs inside the server: a `sitecustomize` (`collector/_site/`) put first on the
  server's `PYTHONPATH` starts coverage.py there and answers over the pipes, never stdout;
  `collector/node/preload.cjs`, put first in a Node server's `NODE_OPTIONS`, measures with V8's
  precise coverage in the entry process only and answers in the same protocol.

A collector for another runtime joins the same way: a plan that injects it and a channel that
answers `collect` with `CallCoverage`.
"""
