"""Talking to a server: the stdio process fuzzgate owns or a streamable HTTP endpoint, an MCP session
over either, what the server offers, and one request turned into a `CallOutcome`.

- In: a `ServerSettings` (`config.views`: the target, protocol, start-up timeout and the secrets
  to redact), a `Containment` and a `Layer` (`sandbox`), the collector plan (`coverage`), the
  redactor and traceback patterns of the check stage.
- Out: a `Connection` (`open_connection`), an `Inventory` (`discover.py`), one `CallOutcome` per
  request, classified by codes, exception types and the transport's own evidence (a dead process,
  an ended stdout, a failed HTTP request), never the SDK's English messages
  (`tests/target/test_sdk_contract.py` pins the SDK behaviours relied on).
- Never: decide what kind of bug an outcome shows (that is `check`), or print.

The modules:

- `connection.py`: an `mcp.Client` session over stdio or HTTP with fuzzgate's own timeouts around
  the start and the handshake: the `Connection`, and the error that says why a server could not be
  started or reached.
- `launch.py`: the launch spec, and what one start prepares before its process exists (the layer
  and jail, the listener's log, the collector's channel); it does not import the SDK.
- `head_start.py`: the run's containment and first server (a stdio server or an HTTP target's
  command), made from the config alone and started before the CLI imports the engine, so the server
  starts while fuzzgate does; the first `open_connection` asking for exactly that start takes it
  over, anything else is discarded.
- `call.py`: one request into a `CallOutcome` (a progress notification restarts a call's timeout, up
  to six timeouts in all); `call_and_follow` pings after a timeout (a dropped request, a stuck
  server, or one that died on the next request). An outcome carries the layer's scope directories
  and the user's ones they stand for (`CallOutcome.sources`), so the check stage reports traceback
  paths as the user's files.
- `settle.py`: what a call waits for before it hands the outcome on: the rest of a traceback on
  stderr, a dead server's last words and exit status; which exceptions mean the connection was lost.
- `http_transport.py`: fuzzgate's HTTP client for an HTTP target: it counts transport-level
  failures (a server gone away), keeps the session for raw messages, and records a request body it
  cannot encode as fuzzgate's own failure.
- `stdio.py`: the stdio framing of the server process fuzzgate owns: stderr kept line by line with
  a running index, every stdout line checked for non-JSON, invalid messages and wrong ids before the
  SDK sees it (a late or second reply to a request the session sent is dropped, not a wrong id),
  wire excerpts redacted here, where the whole text is seen.
- `http_server.py`: the process serving an HTTP target that names its command (readiness by TCP
  connect).
- `client_side.py`: fuzzgate's own side of a connection (`ClientSide`): the HTTP client's request
  encoding and the stdio pumps record their own failure before the SDK wakes the calls with
  -32000, so a call tells it from the server's doing (`UNSENDABLE` for the request that could not
  be encoded, `CLIENT_FAILED` for those stranded) and `Connection.broken` tells the engine to
  reopen the session.
- `raw.py`: a raw JSON-RPC message past the SDK (stdio replies taken off stdout by id before the
  SDK sees them, HTTP POSTs with the session's headers and envelope).
- `output.py`: `structuredContent` checked against the declared `outputSchema` by fuzzgate itself.
- `discover.py`: tools (paginated), resources, resource templates, prompts; each resource, template
  and prompt also as a `ToolInfo` with its `surface` and an input schema made from what it declares
  (`Inventory.others`: template variables as required strings with hostile examples first, prompt
  arguments as strings, a plain resource with none).
- `runtime.py`: the MCP SDK a server fuzzgate started runs on, read from its processes in /proc
  (`check.sdk`).
- `memory.py`: the in-memory connector, the engine's test seam.
"""
