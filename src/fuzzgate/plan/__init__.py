"""What a run will do, before it does it: the seed, which tools it fuzzes, blocks and skips, the
fair share of the time each gets, and the time box every phase draws on.

- In: a `SelectionSettings` (`selection.py`: include, exclude, the destructive guard, `max_tools`,
  the shard, generation mode and `max_string`), the seed, the server's `Inventory`
  (`target.discover`), the case generators (`generate`).
- Out: `ToolPlan`s (with `SurfaceEntry` decisions), a `Scheduler`, `Admission` for stored calls,
  a `TimeBox`, a `SeedChoice`.
- Never: send a call; deciding costs nothing, and building a tool's generator waits for its first
  case.

The modules:

- `seed.py`: the master seed and where it came from (flag, env, config, the PR head SHA,
  `GITHUB_SHA`, `git HEAD`, 0).
- `selection.py`: include/exclude/max_tools and the destructive guard → fuzzed / blocked / skipped,
  deciding without building anything. `Admission` is the same include, exclude and guard for stored
  calls, which every sender asks before sending one (the live corpus through the plans,
  `engine.replay.replay_once` for replays, prune and a run's baseline, `engine.measure.Measurer`
  for the corpus tools); a refused call raises `NotSelected` and nothing of it is sent. A tool's
  generator is built on its first case (off the event loop, under a deadline; a schema too costly to
  generate for skips the tool with its reason). The fair-share `Scheduler`: the next case goes to
  the tool that used least time, generation included, or with `--cases` to each tool in turn; it
  asks for its deadline every time.
- `shards.py`: the shards (`--shard I/N`: `shard_of`, a jump consistent hash of a tool's surface
  and name; `owned_baseline`, `shard_reason`, `shard_split`).
- `safety.py`: the destructive guard: tools that look like they delete or reset data are never
  called unless the user allowlisted them by name, or `fuzz_guarded_in_sandbox` is on and the
  sandbox holds for the server (`SelectionSettings.held_by`, filled in by whoever contains the
  servers; until then guarded tools stay blocked).
- `budget.py`: the time box: one deadline from the process start for every phase, the fuzzing end
  moved earlier as replays wait, the margin.
- `focus.py`: where the change is: the files a change touched (a list, or two checkouts compared)
  against the files each tool's corpus entries ran, giving the tools that reach them most of the
  time (`ToolPlan.weight`) and a note saying which and why.
"""
