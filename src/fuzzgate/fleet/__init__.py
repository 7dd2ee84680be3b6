"""What runs beyond one process: what a run and a worker write to the shared store, which tools a
worker picks next, and the thread that writes for it.

- In: the engine's events and results, the shared store (`store.shared`).
- Out: corpus entries, finding records, statistics snapshots and worker records in the store; the
  next target and tools for a worker.
- Never: hold anything that matters outside the store (workers come and go at any time), or let a
  store that fails fail a gate or block fuzzing.

The modules:

- `store_sync.py`: `run --store` and `fuzzgate work` write the same records: seeds from the store,
  then the kept entries, finding records, a stats snapshot (a store that fails is a note, never a
  failed gate); `StatsRecorder` counts what one process did.
- `worker_choice.py`: the target and tools that need effort most (never fuzzed first, then features
  per second spent, in the current environment).
- `worker_writer.py`: a thread and a queue that retry until the store takes each write, so Redis
  trouble never blocks fuzzing.
"""
