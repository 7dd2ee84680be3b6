"""A fixed corpus of outcomes built from real inputs, for the golden fingerprint tests.

The traceback texts in `fingerprint_samples/` were captured from real processes: the Python MCP
SDK's log of an exception in `examples/servers/buggy_server.py` (plain, chained), a traceback a
tool returned as its reply, Python 3.11 with only library frames, `rich` tracebacks as servers
that log through `RichHandler` print them (one of them with long paths wrapped at the box edge),
and Node.js 20 stack traces (CommonJS through an SDK in `node_modules`, and ESM with `file://`).
The other outcomes reproduce what `fuzzgate.target.connection` builds from real replies: schema
paths come from real `jsonschema` errors, secrets from the example server's fake token and the
canaries fuzzgate plants.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import jsonschema

from fuzzgate.check import Observation, Oracles
from fuzzgate.check.secrets import SecretScanner, canary_environment
from fuzzgate.outcome import AnomalyKind, CallOutcome, OutcomeStatus, WireAnomaly

SAMPLES = Path(__file__).parent / "fingerprint_samples"
ROOT = Path(__file__).resolve().parents[2]
CANARIES = canary_environment(101)
CUSTOM_PATTERN = r"corp-[0-9]{6}"
ORACLES = Oracles(slow_s=2.0, scanner=SecretScanner([CUSTOM_PATTERN], CANARIES))


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

    def observe(self) -> list[Observation]:
        return ORACLES.observe(self.arguments, self.schema_valid, self.outcome)


def _ok(text: str = "", *, duration_s: float = 0.05, payload: str = "", **fields: Any) -> CallOutcome:
    return CallOutcome(OutcomeStatus.OK, duration_s, text=text, payload=payload or text, **fields)


def _closed(exit_code: int | None, stderr: str = "") -> CallOutcome:
    return CallOutcome(OutcomeStatus.CLOSED, 0.2, error="MCPError -32000: Connection closed", stderr=stderr,
                       exit_code=exit_code)  # fmt: skip


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
}
