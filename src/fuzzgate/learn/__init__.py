"""What a run learns from the server's replies while it fuzzes, and what it sends because of it.

- In: each call's `CallOutcome` and, where the collector runs, its `CallCoverage` (`coverage`); the
  plans (`plan`), the dictionary and the mutator (`generate`).
- Out: the `Feed` and the `LiveCorpus` the engine asks for cases before the scheduler's; the
  features a call reached; the corpus entries a run kept.
- Never: send anything itself (the engine does), or use timing: with one call in flight, the same
  seed, config and server behaviour give the same requests.

The modules:

- `feed.py`: the dictionary's values put into every 4th valid case, the sequences a new id queues,
  no identical request to a tool while the server's state is unchanged, and whether a tool still
  shows something new (which the scheduler weighs).
- `accepted.py`: the field values of the calls each tool accepted (else its schema's examples and
  pool), put as they are or changed a little (`generate.nearby`) into one in three random draws.
- `chains.py`: the sequences a new id queues: read, update, delete, delete again, read after delete;
  two objects interleaved; consumers only among the selected tools, so the destructive guard holds.
- `behaviour.py`: behaviour keys (status, code, normalized text, structured shape; no timing).
- `features.py`: what counts as new: a call's features (its behaviour per tool, the coverage arcs
  the collector reports) and which no call reached before.
- `sampling.py`: which calls the collector measures: every call of a tool until 100 in a row
  reached nothing new, then one in `[fuzzgate] coverage_sampling`, drawn from the run's seed.
- `live_corpus.py`: the corpus a run grows: the stored entries replayed first, within a quarter of
  the fuzzing time; a call that reached a new feature kept with its sequence's earlier steps and
  shrunk; mutants of entries picked by energy, sent on top of the generator's cases.
"""
