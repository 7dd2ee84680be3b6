"""Which bug an observation is: its fingerprint, merged with the others of the run, and the sequence
of calls a repro needs.

- In: `Observation`s from the check stage (kind, payload-free signature, excerpts).
- Out: `Finding`s in a `FindingSet` (one per fingerprint, the smallest repro and a count), the
  fingerprint schemes, the versions that decide generated values.
- Never: send anything to a server. Confirming a finding on fresh servers is the engine's
  (`engine.verify`), which calls the pure parts here.

The modules:

- `fingerprint.py`: the versioned fingerprint schemes (registry, per-scheme signature upgrades),
  re-deriving an older entry's fingerprint, rebuilding (and verifying) format-1 signatures;
  documented for users in docs/fingerprints.md.
- `versions.py`: the fuzzgate and Hypothesis versions that decide generated values.
- `finding_set.py`: from observations to findings: fingerprint, merge by fingerprint with the
  smallest repro and a count, redact. What verification later labels (`flaky`, `unconfirmed`, or
  dropped when only seen among concurrent calls) is decided in `engine.verify`.
- `minimize.py`: shrinking a finding's failing call (`CallShrinker`, without I/O: the engine's
  verification replays each smaller call it hands out).
- `alike.py`: the note for one error that most of what a server offers failed with (its
  environment, more often than as many bugs).
- `sequence.py`: sequence repros: replaying and shrinking the calls a repro needs before the failing
  one (`rebind` puts a fresh server's own ids where the recorded run's went, `Step.produced`).
"""
