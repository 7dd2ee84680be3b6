"""The vocabulary every stage speaks: the data types at the boundaries, the one error hierarchy,
atomic files, and the command lines fuzzgate prints.

- In: nothing of fuzzgate's (this package imports only itself).
- Out: `Finding`/`Repro`/`Step`/`Details` (`findings.py`), `CallOutcome` (`outcome.py`), the
  corpus entry (`corpus.py`), `FuzzgateError` and its kinds with their exit codes (`errors.py`).
- Never: start a process, speak MCP, read a config, or decide anything a later stage decides.

The modules:

- `findings.py`: kinds, severities, repros and findings. A repro and each step record the request's
  `surface` (a tool's `tools/call`, a prompt's `prompts/get`, a resource's `resources/read`, a
  protocol probe's raw message); a step records the values its reply brought. `to_json`/`from_json`
  are the one codec `report.json`, baseline entries, the shared store and corpus entries read and
  write them with, each field checked by `json_fields.py`.
- `corpus.py`: `CorpusEntry`, a call with the calls of its sequence before it, how and where it was
  kept (JSON format 1).
- `outcome.py`: what one request came back with, as the oracles see it.
- `errors.py`: the one error hierarchy; `files.py`: atomic writes, and the checks of a user's paths
  every command shares (`read_regular` never opens a FIFO or device to read;
  `check_output_directory`, the pre-flight of every output, store, corpus and baseline directory a
  command writes, run before any server starts).
- `commands.py`: the command lines fuzzgate prints (`repro_command`, `prune_command`,
  `subject_label`).
- `untrusted_regex.py`: regexes from servers, run with a time limit (the `regex` engine); nothing
  else in fuzzgate's own process runs a server-supplied pattern.
- `uri_template.py`: RFC 6570 templates, filled with raw values.
"""
