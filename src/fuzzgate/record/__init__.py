"""The run's record: what a run did with each tool and what it found, as every reporter reads it and
`report.json` stores it.

- In: findings (`model`), their fingerprint scheme and generator versions (`triage`), the shard.
- Out: `RunReport`, `SurfaceEntry`, `Status`, `Verdict`, `BaselineState`, `exit_code`.
- Never: compute anything a run decides; it holds and reads back what was decided.

`results.py` comes after `triage` because a report read back from disk is brought into the current
fingerprint scheme, and before `plan` because the plan's decisions are `SurfaceEntry`s.
"""
