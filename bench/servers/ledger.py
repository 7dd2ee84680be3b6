"""bench-ledger: a bookkeeping MCP server (MCPServer) with planted crashes, an unhandled exception,
an output-schema drift and a flaky crash. Bugs LED-1 .. LED-6 in BUGS.md.

    python ledger.py            # stdio; set BENCH_GROUND_TRUTH=FILE to record triggered bugs

Every buggy tool misbehaves only on its trigger and is correct otherwise. Logging is the SDK's
default (rich when installed), as a user's server would have it.
"""

from __future__ import annotations

import os
import random
import signal
import sys
import threading
import time
import zlib
from enum import StrEnum
from typing import Annotated

import _truth
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp_types import ToolAnnotations
from pydantic import BaseModel, Field, WithJsonSchema

app = MCPServer("bench-ledger", version="1.0.0", instructions="Accounts, transfers and balances.")
READ_ONLY = ToolAnnotations(read_only_hint=True, destructive_hint=False, idempotent_hint=True)
WRITES = ToolAnnotations(read_only_hint=False, destructive_hint=False, idempotent_hint=False)

INT64_MIN = -(2**63)
INT64_MAX = 2**63 - 1
NAME_BUFFER = 8192


def _die(message: str, how: str) -> None:
    print(f"ledger: {message}", file=sys.stderr, flush=True)
    if how == "abort":
        os.abort()
    if how == "segv":
        # Sync tools run in a worker thread: signal the main thread and wait to die, so the process
        # always ends by SIGSEGV rather than racing on to another exit.
        signal.pthread_kill(threading.main_thread().ident or 0, signal.SIGSEGV)
        while True:
            time.sleep(1)
    os._exit(70)


@app.tool(annotations=READ_ONLY)
def format_memo(
    memo: Annotated[
        str,
        Field(max_length=2000, description="Memo text; {field} placeholders are filled in.", examples=["Rent {month}"]),
    ],
    month: Annotated[str, Field(max_length=20, examples=["2026-11"])] = "2026-11",
) -> str:
    """Render a transfer memo through the legacy template engine."""
    if "${" in memo:
        # LED-1: the legacy engine treats "${" as an expression and dies evaluating it.
        _truth.triggered("LED-1")
        _die("template engine: unterminated expression", "exit")
    return memo.replace("{month}", month)


@app.tool(annotations=WRITES)
def transfer(
    amount_cents: Annotated[int, Field(ge=INT64_MIN, le=INT64_MAX, description="Signed amount (int64).")],
    from_account: Annotated[int, Field(ge=1, le=1000, examples=[17])],
    to_account: Annotated[int, Field(ge=1, le=1000, examples=[42])],
) -> str:
    """Move money between two accounts (a negative amount reverses the direction)."""
    if amount_cents == INT64_MIN:
        # LED-2: abs(INT64_MIN) overflows int64 in the native posting code.
        _truth.triggered("LED-2")
        _die("posting: int64 overflow in abs(amount)", "abort")
    if from_account == to_account:
        raise ToolError("from_account and to_account must differ")
    direction = "->" if amount_cents >= 0 else "<-"
    return f"{from_account} {direction} {to_account}: {abs(amount_cents)} cents posted"


@app.tool(annotations=WRITES)
def rename_account(
    account_id: Annotated[int, Field(ge=1, le=1000, examples=[17])],
    name: Annotated[str, Field(min_length=1, max_length=65536, description="Display name.", examples=["Household"])],
) -> str:
    """Give an account a new display name."""
    if len(name.encode("utf-8", "surrogatepass")) > NAME_BUFFER:
        # LED-3: the name is copied into a fixed 8 KiB buffer without a length check.
        _truth.triggered("LED-3")
        _die("rename: buffer overflow", "segv")
    return f"account {account_id} renamed ({len(name)} characters)"


@app.tool(annotations=READ_ONLY)
def average_spend(
    amounts_cents: Annotated[
        list[Annotated[int, Field(ge=-(10**12), le=10**12)]],
        Field(max_length=100, description="Transaction amounts.", examples=[[1250, 990]]),
    ],
) -> str:
    """Average of a list of transaction amounts."""
    if not amounts_cents:
        # LED-4: an empty list is schema-valid and divides by zero below.
        _truth.triggered("LED-4")
    average = sum(amounts_cents) / len(amounts_cents)
    return f"average spend: {average:.0f} cents over {len(amounts_cents)} transactions"


class Balance(BaseModel):
    account_id: str
    # LED-5: the published schema says integer, but pending balances come back as a decimal string.
    balance_cents: Annotated[int | str, WithJsonSchema({"type": "integer"})]
    currency: str


@app.tool(annotations=READ_ONLY)
def get_balance(
    account_id: Annotated[str, Field(pattern=r"^ACC-[0-9]{4}$", examples=["ACC-0017"])],
    include_pending: Annotated[bool, Field(description="Add pending transfers.")] = False,
) -> Balance:
    """The balance of an account."""
    cents = zlib.crc32(account_id.encode()) % 1_000_000
    if include_pending:
        _truth.triggered("LED-5")
        return Balance(account_id=account_id, balance_cents=f"{cents / 100:.2f}", currency="EUR")
    return Balance(account_id=account_id, balance_cents=cents, currency="EUR")


@app.tool(annotations=READ_ONLY)
def reconcile(
    account_id: Annotated[int, Field(ge=1, le=1000, examples=[17])],
    strict: Annotated[bool, Field(description="Cross-check every posting.")] = False,
) -> str:
    """Reconcile an account against the bank statement."""
    if strict and random.random() < 0.4:
        # LED-6: a race in the strict cross-check kills the process on some calls only.
        _truth.triggered("LED-6")
        _die("reconcile: statement cursor used after free", "exit")
    return f"account {account_id}: reconciled ({'strict' if strict else 'quick'})"


# ------------------------------------------------------------------------------------------ clean


class Currency(StrEnum):
    EUR = "EUR"
    USD = "USD"
    JPY = "JPY"


_RATES = {Currency.EUR: 1.0, Currency.USD: 1.08, Currency.JPY: 162.0}


@app.tool(annotations=READ_ONLY)
def convert_currency(
    amount_cents: Annotated[int, Field(ge=0, le=10**12)],
    source: Currency = Currency.EUR,
    target: Currency = Currency.USD,
) -> str:
    """Convert an amount between currencies."""
    converted = round(amount_cents / _RATES[source] * _RATES[target])
    return f"{amount_cents} {source.value} = {converted} {target.value}"


@app.tool(annotations=READ_ONLY)
def list_accounts(
    prefix: Annotated[str, Field(max_length=50)] = "",
    limit: Annotated[int, Field(ge=1, le=100)] = 10,
) -> list[str]:
    """Account ids starting with a prefix."""
    ids = [f"ACC-{n:04d}" for n in range(1, 200)]
    return [i for i in ids if i.startswith(prefix)][:limit]


# ------------------------------------------------------------------------------------ destructive


@app.tool(annotations=ToolAnnotations(destructive_hint=True, read_only_hint=False))
def delete_ledger(confirm: bool = False) -> str:
    """Delete the whole ledger. Irreversible."""
    _truth.destructive("delete_ledger")
    return "ledger deleted"


@app.tool(annotations=ToolAnnotations(destructive_hint=True, read_only_hint=False))
def archive_year(year: Annotated[int, Field(ge=2000, le=2100, examples=[2025])]) -> str:
    """Move a closed year's postings to cold storage and drop them from the live ledger."""
    _truth.destructive("archive_year")
    return f"{year} archived"


if __name__ == "__main__":
    app.run("stdio")
