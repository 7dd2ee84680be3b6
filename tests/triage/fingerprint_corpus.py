"""A fixed corpus of outcomes built from real inputs, for the golden fingerprint tests.

The traceback texts in `fingerprint_samples/` were captured from real processes: the Python MCP
SDK's log of an exception in `examples/servers/buggy_server.py` (plain, chained), a traceback a
tool returned as its reply, Python 3.11 with only library frames, `rich` tracebacks as servers
that log through `RichHandler` print them (one of them with long paths wrapped at the box edge),
and Node.js 20 stack traces (CommonJS through an SDK in `node_modules`, and ESM with `file://`).
The other outcomes reproduce what `fuzzgate.target.connection` builds from real replies: schema
paths come from real `jsonschema` errors, secrets from the example server's fake token and the
canaries fuzzgate plants. Effects outside the scope are what `fuzzgate.sandbox.workspace` reports
for the planted servers of `tests/servers/polite.py` (a folder made outside the root, a canary
read through `../..`, git option and shell injection), with the run's real probes; the stderr of a
server that never answered a lone surrogate and died on the next request is the one
`tests/servers/surrogate_dropper.py` writes, modelled on an old Python SDK release. The server
installed as a package (`rich_installed_server.txt`) is a real MCPServer's log of a handler in
`site-packages` whose library raised in the standard library (paths renamed to a uv cache's); the
bare argument value is the shape of server-everything's prompt error.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import jsonschema

from fuzzgate.check import CallContext, Observation, Oracles
from fuzzgate.check.effects import Effect
from fuzzgate.check.secrets import SecretScanner, canary_environment
from fuzzgate.generate.probes import Probe, probe_cases
from fuzzgate.model.findings import SERVER_NAME, Surface
from fuzzgate.model.outcome import AfterTimeout, AnomalyKind, CallOutcome, MemoryExceeded, OutcomeStatus, WireAnomaly
from fuzzgate.sandbox.canaries import Canary
from fuzzgate.sandbox.listener import URL_MARKER, Request

SAMPLES = Path(__file__).parent / "fingerprint_samples"
ROOT = Path(__file__).resolve().parents[2]
CANARIES = canary_environment(101)
CUSTOM_PATTERN = r"corp-[0-9]{6}"
WORKSPACE_CANARIES = (
    Canary("file", "fuzzgate-canary.txt", ("fzgcanary5d1f0c3a9e7b2468ac13f0e9",)),
    Canary("env", ".env", ("fzgcanary0b7e4a91c6d2f83e5a7c9d10",)),
)
_PROBED = {
    "make_folder": {"type": "object", "properties": {"folder": {"type": "string"}}},
    "git_log": {"type": "object", "properties": {"ref": {"type": "string"}}},
    "grep_notes": {"type": "object", "properties": {"pattern": {"type": "string"}}},
}
_SSRF_MARKER = f"{URL_MARKER}0123456789abcdef"
PROBES: dict[str, Probe] = {
    case.probe.marker: case.probe
    for tool, schema in _PROBED.items()
    for case in probe_cases(tool, schema, {}, "corpus-token", [c.relpath for c in WORKSPACE_CANARIES])
    if case.probe.marker is not None
}
ORACLES = Oracles(
    slow_s=2.0, scanner=SecretScanner([CUSTOM_PATTERN], CANARIES), probes=PROBES, canaries=WORKSPACE_CANARIES
)


def sample(name: str) -> str:
    return (SAMPLES / name).read_text(encoding="utf-8")


def _schema_path(schema: dict[str, Any], instance: object) -> str | None:
    """The failing keyword's path as `fuzzgate.target.connection` takes it from the SDK's error."""
    try:
        jsonschema.validate(instance, schema)
    except jsonschema.ValidationError as error:
        return "/".join(str(part) for part in error.schema_path)
    return None


_STOCK = {
    "type": "object",
    "properties": {"sku": {"type": "string"}, "quantity": {"type": "integer", "minimum": 0}},
    "required": ["sku", "quantity"],
}
_ORDERS = {
    "type": "object",
    "properties": {
        "items": {
            "type": "array",
            "items": {"type": "array", "prefixItems": [{"type": "string"}, {"type": "number", "minimum": 0}]},
        }
    },
}
_TOKEN = next(
    line.split("=", 1)[1] for line in (ROOT / "examples/servers/.env.example").read_text().splitlines() if "=" in line
)


@dataclass(frozen=True)
class Case:
    tool: str
    outcome: CallOutcome
    arguments: dict[str, Any] = field(default_factory=dict)
    schema_valid: bool = True
    effects: tuple[Effect, ...] = ()
    server_wide: bool = False
    """The bug is the server's, whichever tool the request was for (`triage.subject`)."""

    @property
    def subject(self) -> tuple[Surface, str]:
        return (Surface.SERVER, SERVER_NAME) if self.server_wide else (Surface.TOOL, self.tool)

    def observe(self) -> list[Observation]:
        context = CallContext(self.tool, self.arguments, self.schema_valid, self.outcome, self.effects)
        return ORACLES.observe_call(context)


def _probe(tool: str, label: str) -> Probe:
    return next(p for p in PROBES.values() if p.tool == tool and p.label == label)


def _created_by(probe: Probe) -> tuple[Effect, ...]:
    assert probe.marker is not None
    return (Effect("created", probe.marker),)


def _ok(text: str = "", *, duration_s: float = 0.05, payload: str = "", **fields: Any) -> CallOutcome:
    return CallOutcome(OutcomeStatus.OK, duration_s, text=text, payload=payload or text, **fields)


def _closed(exit_code: int | None, stderr: str = "") -> CallOutcome:
    return CallOutcome(OutcomeStatus.CLOSED, 0.2, error="MCPError -32000: Connection closed", stderr=stderr,
                       exit_code=exit_code)  # fmt: skip


def _unanswered(after: AfterTimeout, exit_code: int | None = None, stderr: str = "") -> CallOutcome:
    return CallOutcome(OutcomeStatus.TIMEOUT, 1.0, error="no reply within 1s", stderr=stderr, exit_code=exit_code,
                       after_timeout=after)  # fmt: skip


def _rpc(code: int, message: str) -> CallOutcome:
    return CallOutcome(OutcomeStatus.RPC_ERROR, 0.05, text=message, rpc_code=code, error=f"MCPError {code}: {message}")


CASES: dict[str, Case] = {
    # Python tracebacks
    "python sdk log, stderr": Case(
        "split_bill",
        CallOutcome(
            OutcomeStatus.TOOL_ERROR,
            0.05,
            text="Error executing tool split_bill",
            stderr=sample("python_sdk_stderr.txt"),
        ),
    ),
    "python traceback as the reply": Case("parse_config", _ok(sample("python_reply_traceback.txt"))),
    "python library frames only, stderr": Case(
        "load_settings",
        CallOutcome(OutcomeStatus.TOOL_ERROR, 0.05, text="failed", stderr=sample("python_library_only.txt")),
    ),
    "python crash with a traceback": Case("split_bill", _closed(1, sample("python_sdk_stderr.txt"))),
    "rich traceback through a lambda": Case(
        "lookup_order",
        CallOutcome(
            OutcomeStatus.TOOL_ERROR, 0.05, text="Error executing tool lookup_order", stderr=sample("rich_lambda.txt")
        ),
    ),
    "rich, an installed server's library raised": Case(
        "read_doc",
        CallOutcome(
            OutcomeStatus.TOOL_ERROR,
            0.05,
            text="Error executing tool read_doc",
            stderr=sample("rich_installed_server.txt"),
        ),
        {"content": "hello"},
    ),
    "rich chained, wrapped paths": Case(
        "load_catalog",
        CallOutcome(
            OutcomeStatus.TOOL_ERROR,
            0.05,
            text="Error executing tool load_catalog",
            stderr=sample("rich_chained_wrapped.txt"),
        ),
    ),
    # Node.js
    "node commonjs, stderr": Case(
        "count_words", CallOutcome(OutcomeStatus.TOOL_ERROR, 0.05, text="TypeError", stderr=sample("node_cjs.txt"))
    ),
    "node esm crash": Case("read_note", _closed(1, sample("node_esm.txt"))),
    "node stack in the reply": Case("count_words", _ok(sample("node_cjs.txt"))),
    # The Python SDK's bare message without stderr (HTTP)
    "sdk unhandled message": Case(
        "split_bill", CallOutcome(OutcomeStatus.TOOL_ERROR, 0.05, text="Error executing tool split_bill")
    ),
    # JSON-RPC internal errors for schema-valid input
    "rpc bare argument value": Case(
        "get_resource_reference",
        _rpc(-32603, "Invalid resourceType: a. Must be Text or Blob."),
        {"resourceType": "a", "resourceId": 7},
    ),
    "rpc path and date": Case(
        "read_note",
        _rpc(-32603, "Internal error: ENOENT: no such file or directory, open '/srv/data/notes/2024-05-01.md'"),
    ),
    "rpc uuid, quoted user, float": Case(
        "get_order",
        _rpc(
            -32603, 'Failed to fetch order 8f14e45f-ceea-4167-a5d1-0a1b2c3d4e5f for user "alice": timeout after 30.5s'
        ),
    ),
    "rpc code 0, hex id, windows path, two lines": Case(
        "lookup",
        _rpc(
            0,
            "Error executing tool lookup: KeyError at 0x7f3a2c1b9e10 in C:\\Users\\dev\\app\\tools.py line 42\n"
            "Traceback follows",
        ),
    ),
    "rpc backticks, long hex, numbers": Case(
        "count_words",
        _rpc(-32603, "Cannot read properties of undefined (reading `length`) at index 17 of deadbeefcafe"),
    ),
    # Output schema violations
    "schema: real message, wrong type": Case(
        "get_stock_level",
        CallOutcome(
            OutcomeStatus.OUTPUT_INVALID,
            0.05,
            text=sample("schema_violation_message.txt"),
            schema_path=_schema_path(_STOCK, {"sku": "SKU-1001", "quantity": "unknown"}),
        ),
    ),
    "schema: index 3 in nested arrays": Case(
        "list_orders",
        CallOutcome(
            OutcomeStatus.OUTPUT_INVALID,
            0.05,
            text="Invalid structured content",
            schema_path=_schema_path(_ORDERS, {"items": [["a", 1], ["b", 2], ["c", 3], ["d", -1]]}),
        ),
    ),
    "schema: index 12 in nested arrays": Case(
        "list_orders",
        CallOutcome(
            OutcomeStatus.OUTPUT_INVALID,
            0.05,
            text="Invalid structured content",
            schema_path=_schema_path(_ORDERS, {"items": [["x", 1]] * 12 + [["y", -5]]}),
        ),
    ),
    "schema: no structured content": Case(
        "get_stock_level",
        CallOutcome(
            OutcomeStatus.OUTPUT_INVALID,
            0.05,
            text="did not return structured content",
            schema_path="structuredContent",
        ),
    ),
    # Protocol anomalies
    **{
        f"protocol: {kind.value}": Case(
            "export_csv", _ok("done", anomalies=(WireAnomaly(kind, "exporting orders: 2 rows... 100%"),))
        )
        for kind in AnomalyKind
    },
    # Secret leaks
    "secret: github token": Case("read_note", _ok(f"# A FAKE credential\nGITHUB_TOKEN={_TOKEN}\n"), {"path": ".."}),
    "secret: aws key id": Case("debug_env", _ok("AWS_ACCESS_KEY_ID=AKIAIOSFODNN7EXAMPLE")),
    "secret: private key": Case("read_note", _ok("-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAA\n")),
    "secret: canary": Case(
        "debug_env", _ok(f"FUZZGATE_CANARY_TOKEN={CANARIES['FUZZGATE_CANARY_TOKEN']}"), {"verbose": True}
    ),
    "secret: custom pattern": Case("lookup_customer", _ok("customer corp-123456 found")),
    # Hang, slow, crash exit statuses
    "hang": Case("sync_repository", CallOutcome(OutcomeStatus.TIMEOUT, 5.0, error="no reply within 5s")),
    "slow": Case("analyze_dependencies", _ok("ok", duration_s=2.5)),
    "crash: exit status 1": Case("format_label", _closed(1, "format_label: NUL byte in template\n")),
    "crash: exit status 3": Case("batch_export", _closed(3)),
    "crash: SIGSEGV": Case("render_thumbnail", _closed(-11)),
    "crash: SIGKILL": Case("render_thumbnail", _closed(-9)),
    "crash: connection closed": Case("render_thumbnail", _closed(None)),
    # Never answered, then died on the ping: the same signature as dying during the call
    "crash: never answered, then exit status 3": Case("batch_export", _unanswered(AfterTimeout.DIED, 3)),
    # A lone surrogate the server's transport never answered: the server's finding, whichever tool
    **{
        f"protocol: unanswered lone surrogate, {tool}": Case(
            tool, _unanswered(AfterTimeout.ALIVE), {"text": "title \ud800"}, server_wide=True
        )
        for tool in ("set_title", "echo")
    },
    "crash: unanswered lone surrogate, then died": Case(
        "set_title",
        _unanswered(AfterTimeout.DIED, 1, sample("python_writer_task_died.txt")),
        {"title": "\udc80"},
        server_wide=True,
    ),
    "protocol: unanswered lone surrogate, then stuck": Case(
        "set_title", _unanswered(AfterTimeout.STUCK), {"title": ["\udfff"]}, server_wide=True
    ),
    # Effects outside the scope
    "scope_escape: created path": Case(
        "write_note",
        _ok("saved"),
        {"path": "../../drafts/today.md", "text": "hello"},
        effects=(Effect("created", "drafts"), Effect("created", "drafts/today.md")),
    ),
    "scope_escape: created probe path": Case(
        "make_folder",
        _ok("created"),
        {"folder": _probe("make_folder", "../.. to a new path").value},
        effects=_created_by(_probe("make_folder", "../.. to a new path")),
    ),
    "scope_escape: deleted canary": Case(
        "delete_note",
        _ok("deleted"),
        {"path": "../../fuzzgate-canary.txt"},
        effects=(Effect("deleted", "fuzzgate-canary.txt", "file"),),
    ),
    "scope_escape: read canary": Case(
        "read_note",
        _ok(f"FUZZGATE_CANARY_SECRET={WORKSPACE_CANARIES[1].markers[0]}\n"),
        {"path": "../../.env"},
    ),
    "injection: option": Case(
        "git_log",
        _ok("fatal: could not read from remote repository"),
        {"ref": _probe("git_log", "--upload-pack=").value},
        effects=_created_by(_probe("git_log", "--upload-pack=")),
    ),
    "injection: shell": Case(
        "grep_notes",
        _ok("no match"),
        {"pattern": _probe("grep_notes", "$(...)").value},
        effects=_created_by(_probe("grep_notes", "$(...)")),
    ),
    # A request made for the caller: the listener reported the canary URL's path.
    "ssrf: fetched canary URL": Case(
        "fetch_page",
        _ok("<html>fetched</html>"),
        {"url": f"http://127.0.0.1:41000/{_SSRF_MARKER}"},
        effects=(Request(f"/{_SSRF_MARKER}"),),
    ),
    # Stopped by fuzzgate past the memory limit (`OwnedProcess.watch_memory`), as hoarder.py's render is.
    "out_of_memory: stopped past the limit": Case(
        "render", replace(_closed(-9), memory=MemoryExceeded(325 << 20, 256 << 20)), {"scale": 559}
    ),
}
