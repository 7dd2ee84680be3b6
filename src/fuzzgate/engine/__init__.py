"""The engine: it starts the server, discovers, fuzzes every selected tool and verifies, all inside
the time box, driving every stage before it.

- In: an `EngineSettings` (`settings.py`, built in `cli/`; the verifier takes its `VerifySettings`),
  a seed, a `TimeBox`, a `Connector` (real or in-memory), the corpus to seed from.
- Out: a stream of small immutable events (`events.py`) and an `EngineResult`; the other entry
  points return a `Listing`, `ReplayResult`s or observations.
- Never: print, call `sys.exit` or decide an exit code (the CLI does), or write a file.

The modules:

- `execute.py`: the `Engine` and its run's phases (start, discovery, the protocol round, fuzzing,
  verification, the result). A watchdog (`deadline.py`) stops
  new calls at the time box's fuzzing end (earlier by whatever part of the grace the margin cannot
  hold) and gives the calls in flight what observing one to its end takes (`observe_s`: timeout,
  ping, a dead server's last words, the collector's read; never past the margin), naming those it
  cuts off (`cut_off`).
- `calls.py`: fuzzing's calls (`CallLoop`): workers pull cases and call tools, each outcome counting
  the calls really in flight while it was pending, and record what each showed. Requests that never
  reached the server (`NOT_SENT`: unsendable, or stranded by fuzzgate's failed side of the
  connection) are counted apart from `calls`, and a broken session is reopened. In a time-boxed
  run a call pending past the slow threshold gets a helper sending the next cases beside it.
- `next_case.py`: which case a worker sends next (a corpus seed's or queued sequence's next step,
  else the scheduler's, generated off the event loop, maybe with a dictionary value or mutated).
  The scheduler's next case is drawn while the call before it is on its way (`draw_ahead`, `Ahead`),
  from what the calls before that one left.
- `verdict.py`: what one fuzzing call showed, before it becomes findings: the oracles' observations
  of its outcome and the repro they carry.
- `deadline.py`: what verification still has to run and what it costs (`backlog_of`, `Backlog`),
  how many replays run at once (`parallel_replays`), fuzzing's deadline (early enough for
  verification of what waits for it: the verifier's backlog, from the server starts measured in this
  run, less the spares waiting), how long observing one call to its end takes (`observe_s`), and the
  watch that stops new calls at the deadline, gives the calls in flight that grace and names those
  it cuts off.
- `feedback.py`: the feedback signal a run is guided by, and what one call showed through it (its
  features and which are new; under coverage, the constants its code compares against). Under
  coverage, `CallLoop._measure` asks `learn.sampling` whether the collector measures each call, and
  switches it off for the calls it does not (one call in flight at a time).
- `collector.py`: what the coverage collector costs and how the engine allows for it: the time its
  read may take, a traced server's slow or hung calls counted ambiguous (`under_collector`), replays
  started without it.
- `keeper.py`: the `ServerKeeper`, one task that owns the connection and restarts it after a crash or
  hang (from its first restart on, on a warm spare).
- `spare.py`: warm spares (`Spares`, the pool of one run): servers started ahead of need, each in its
  own fresh layer and jail and initialized, so a restart or a replay takes one at once instead of a
  cold start; one that died or failed to start while it waited is dropped unseen, and the pool
  returns only once every server it started is reaped. stdio targets only (an HTTP server holds its
  port). It also measures every server start, for the fuzzing deadline.
- `result.py`: the `EngineResult`, and what is built for it: the target as reports show it, the table
  of what was fuzzed, the feedback and corpus summaries, the notes on what the run cut short.
- `steps.py`: one call as fuzzing and replays both send it (dispatching on its surface; a protocol
  probe's raw message through `target.raw`, judged by `check.protocol_probes`), handed to the
  oracles.
- `protocol_round.py`: the protocol probes, sent once per server after discovery (restarting a
  server a probe killed, within its own time limit), and non-JSON lines before the first reply
  turned into the start-up banner finding.
- `verify.py`: replays on fresh servers: findings as fuzzing records them (stdio, and HTTP servers
  in the sandbox: on warm spares, one at a time beside fuzzing, up to 4 at once after it), round by
  round, smaller calls to try after them, restarting a tally when a smaller repro replaces the old;
  the baseline entries fuzzing did not meet; all before the time box's verification end. What is cut
  short is labelled (`unconfirmed`, fewer replays, baseline entries that stay known) and said in
  `notes`; a baseline entry whose fresh server cannot start is not replayed and stays known, the
  note giving the start error (`baseline prune` keeps it the same way). It lives here, not in
  `triage`, because it sends calls through the plan's `Admission`.
- `labels.py`: the verifier's tallies (a finding's replays, a baseline entry's) and what they come to
  once verification is over (`label`): the labelled findings, the baseline entries still failing or
  kept known, and the notes on what was cut short.
- `replay.py`: one repro sent to a fresh server (its prefix, then its failing call) and whether the
  same bug showed again (`replay_once`), asking the plan's `Admission` first: every replay, shrinking
  try, `fuzzgate replay`, prune and baseline entry goes through it.
- `base_check.py`: with `--base`, each confirmed new finding replayed on the base revision's server
  (its repro's paths moved to the base): failing there too, it is pre-existing; what could not be
  checked stays new and is said in a note. Its jobs run in the verifier's queue and time box.
- `session.py`: the engine's other entry points, which the CLI calls and prints: `list_surface`
  (the inventory and what a run would do with each tool), `replay_findings` and `replay_call` (on
  fresh servers, through `replay.replay_once`).
- `measure.py`: stored corpus entries measured on a live server, for the corpus tools.
- `settings.py`: the frozen views of the configuration the engine and the verifier read.
- `events.py`: the events the engine emits (`RunStarted`, `CallFinished`, `RunFinished`, ...).
"""
