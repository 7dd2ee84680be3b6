"""The commands: flags become a `Config`, the engine runs, events fan out to reporters, and the exit
code is decided here and in the action entrypoint, nowhere else.

The `Config` stops here: each stage is handed the small frozen view of what it reads, built here
once (`EngineSettings.of(config)`, `ServerSettings.of(config)`, `config.target`).

- In: the command line (and, for the action, its `INPUT_*` environment), the config file, the
  files on disk (`report.json`, the baseline, the corpus, the shared store).
- Out: exit codes, the written outputs, the console.
- Never: speak MCP itself (the engine and its entry points make every call), or change what a
  run decided.

One module per command family:

- `entry.py`: the `fuzzgate` console script and `python -m fuzzgate`: `main.py` imported under a
  Ctrl-C guard (exit 130, one line, during the imports too).
- `main.py`: `fuzzgate` itself: the parser, `init`, and the dispatch to the
  modules below; installs the workflow-command filter under GitHub Actions.
- `run.py`: `run` (replay the baseline, fuzz, classify, write every output; the target's corpus
  loaded before and what it kept saved after, never an entry holding a secret) and `tools`.
- `replay.py`: `replay`, a recorded finding (by file or fingerprint, also from the shared store) or
  one call, on fresh servers.
- `starter.py`: `init`'s file with the target given by `--command`/`--arg`/`--url`, refused when
  a value looks like a secret, read back before it is written.
- `baseline.py`: `baseline list|accept|upgrade|prune`.
- `recorded.py`: the target the last `report.json` recorded, for `replay` and `baseline` typed
  with no config file and no target flag (the commands a run given its server by flags prints).
- `merge.py`: `fuzzgate merge`: the shards' (or several targets') `report.json` combined into one
  set of outputs and one verdict, refusing incomplete, duplicated or disagreeing shards.
- `corpus.py`: `fuzzgate corpus list|merge|minimize|cleanse` over the corpus store and
  `engine.measure`.
- `store.py`: `fuzzgate store export|import|merge|show`.
- `work.py`: `fuzzgate work`: cycles of engine runs on the target and tools `fleet.worker_choice`
  says need effort most, writing as it goes through `fleet.worker_writer`.
- `report.py`: `fuzzgate report`, the HTML page drawn from the shared store alone.
- `action.py`: the Docker action's entrypoint (`fuzzgate-action`, `python -m fuzzgate.cli.action`).
- `interrupt.py`: SIGINT/SIGTERM turned into a level-triggered cancellation of the whole run
  (130/143), signals held while the outputs are written.
"""
