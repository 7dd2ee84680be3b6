"""fuzzgate-example: an MCP server with planted bugs, one per tool, for fuzzgate's demo and e2e tests.

    python buggy_server.py [--transport stdio|http] [--host 127.0.0.1] [--port 8000] [--legacy]

Each buggy tool misbehaves only for the trigger below and is well-behaved for every other input, so
a finding on it has exactly one cause. Triggers are values a schema-driven fuzzer reaches within
seconds: enum members, schema bounds, booleans, NUL bytes, empty/short traversal strings.

| tool                 | kind                        | trigger                                                  |
|----------------------|-----------------------------|----------------------------------------------------------|
| format_label         | crash (exit 1)              | `template` contains "\\x00" or "%n"                      |
| batch_export         | crash (exit 3)              | `record_count >= 2**31` (schema allows 1 .. 2**32-1)     |
| render_thumbnail     | crash, flaky (p = 1/2)      | `size == "original"`; exits 1 on half of the calls       |
| sync_repository      | hang (never answers)        | `mode == "wait"`                                         |
| analyze_dependencies | slow (2.5 s)                | `depth > 5` (schema allows 1 .. 10)                      |
| split_bill           | internal_error (unhandled)  | `people == 0`: ZeroDivisionError, traceback on stderr    |
| parse_config         | internal_error (traceback)  | `format == "json"` and `text` is not valid JSON          |
| get_stock_level      | schema_violation            | `warehouse == "archive"`: `quantity` is "unknown"        |
| export_csv           | protocol_error (stdio only) | `progress == true`: a non-JSON line on the real stdout   |
| read_note            | secret_leak                 | `path` leaves notes/: "..", a schema example, or "../"   |
| debug_env            | secret_leak                 | `verbose == true`: dumps *TOKEN*, *SECRET*, *CANARY*... |

Transport notes: the crash tools end the whole process on every transport (over HTTP the server is
gone for every later request too). `export_csv` corrupts only a stdio stream; over HTTP stdout is
not the protocol channel, so with `progress == true` it just returns its CSV. A v2 `stdio_server()`
points fd 1 at stderr while serving, so the real stdout is duplicated at import time, before `run()`,
and the stray line is written to that duplicate, as a C extension or a subprocess would. It is one
short write between replies; with several calls in flight it may land inside another call's reply.

Destructive tools, which a fuzzer must never call:

- `delete_all_notes`: destructive by name and by annotation (`destructiveHint`);
- `archive_project`: destructive by annotation only, with an innocuous name;
- `preview_cleanup` carries `destructiveHint` *and* `readOnlyHint`: read-only wins, it may be called
  and is clean.

Calling `delete_all_notes` or `archive_project` deletes nothing; it appends a line naming the tool to
`.destructive-called` in `$FUZZGATE_EXAMPLE_MARKER_DIR` (default: this directory). Tests assert the
file is never created.

Clean tools, where a fuzzer must find nothing whatever it sends: `echo`, `add`, `search`,
`preview_cleanup`. Invalid arguments get the SDK's `isError` validation message, and `search` refuses
inconsistent filters with a plain `isError` message of its own.

The server also lists a resource (`notes://index`), a resource template (`notes://note/{name}`) and a
prompt (`summarize_note`). fuzzgate lists them but does not fuzz them yet; they are clean.
"""

from __future__ import annotations

import configparser
import json
import os
import random
import re
import sys
import tomllib
import traceback
import zlib
from enum import StrEnum
from pathlib import Path
from typing import Annotated, Literal

import _serve  # examples/servers/_serve.py: the shared command line
import anyio
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp_types import ToolAnnotations
from pydantic import BaseModel, Field, WithJsonSchema

HERE = Path(__file__).resolve().parent
NOTES_DIR = HERE / "notes"
MARKER_NAME = ".destructive-called"

# stdio_server() points fd 1 at stderr while it serves; keep a handle on the real stdout first.
_REAL_STDOUT_FD = os.dup(1)
_serving_stdio = True

_serve.plain_stderr_logging()
app = MCPServer(
    "fuzzgate-example",
    version="1.0.0",
    instructions="A notes and inventory service with deliberately planted bugs, for fuzzing demos.",
)

# Every tool states destructiveHint explicitly: the spec's default for a tool without annotations is
# destructive, and a fuzzer that honours it would skip the tool.
READ_ONLY = ToolAnnotations(read_only_hint=True, destructive_hint=False, idempotent_hint=True)


# --------------------------------------------------------------------------------------- crash


@app.tool(annotations=READ_ONLY)
def format_label(
    template: Annotated[
        str,
        Field(
            max_length=2000,
            description="Label text; {key} placeholders are replaced from `values`.",
            examples=["Order {order_id} shipped to {city}"],
        ),
    ],
    values: Annotated[
        dict[str, Annotated[str, Field(max_length=200)]] | None,
        Field(max_length=20, description="Placeholder values.", examples=[{"order_id": "A-1001", "city": "Lyon"}]),
    ] = None,
) -> str:
    """Render a shipping label from a template (native formatter)."""
    if "\x00" in template or "%n" in template:
        # Planted crash: the "native formatter" dies on a NUL byte or a %n conversion.
        print("format_label: native formatter aborted", file=sys.stderr, flush=True)
        os._exit(1)
    label = template
    for key, value in (values or {}).items():
        label = label.replace("{" + key + "}", value)
    return label


class ExportFormat(StrEnum):
    CSV = "csv"
    JSONL = "jsonl"
    PARQUET = "parquet"


@app.tool(annotations=READ_ONLY)
def batch_export(
    record_count: Annotated[
        int, Field(ge=1, le=2**32 - 1, description="How many records to export (uint32).", examples=[500])
    ],
    format: ExportFormat = ExportFormat.CSV,
    columns: Annotated[list[str] | None, Field(max_length=32, description="Columns; all when null.")] = None,
) -> str:
    """Export a batch of records (dry run: reports what would be written)."""
    if record_count >= 2**31:
        # Planted crash: the buffer size is a signed 32-bit int in the "native writer".
        print("batch_export: int32 overflow in buffer size", file=sys.stderr, flush=True)
        os._exit(3)
    shown = ", ".join(columns) if columns else "all columns"
    return f"would export {record_count} records as {format.value} ({shown})"


class ThumbnailSize(StrEnum):
    SMALL = "small"
    MEDIUM = "medium"
    LARGE = "large"
    ORIGINAL = "original"


_THUMBNAIL_PIXELS = {"small": 64, "medium": 256, "large": 1024}


@app.tool(annotations=READ_ONLY)
def render_thumbnail(
    image_id: Annotated[int, Field(ge=1, le=1_000_000, examples=[42])],
    size: ThumbnailSize = ThumbnailSize.SMALL,
) -> str:
    """Render a thumbnail of a stored image."""
    if size is ThumbnailSize.ORIGINAL and random.random() < 0.5:
        # Planted flaky crash: a race in the full-size decoder kills the process half of the time.
        print("render_thumbnail: decoder race, aborting", file=sys.stderr, flush=True)
        os._exit(1)
    pixels = _THUMBNAIL_PIXELS.get(size.value, 4096)
    return f"image {image_id}: {pixels}x{pixels} thumbnail rendered"


# ------------------------------------------------------------------------------------ hang, slow


class SyncMode(StrEnum):
    FAST = "fast"
    FULL = "full"
    WAIT = "wait"


@app.tool(annotations=ToolAnnotations(read_only_hint=False, destructive_hint=False, idempotent_hint=True))
async def sync_repository(
    repository: Annotated[str, Field(min_length=1, max_length=200, examples=["octo/hello-world"])],
    mode: Annotated[SyncMode, Field(description="'wait' waits for the remote lock first.")] = SyncMode.FAST,
) -> str:
    """Synchronise a mirrored repository."""
    if mode is SyncMode.WAIT:
        # Planted hang: waits for a lock that nobody ever releases.
        await anyio.sleep_forever()
    objects = zlib.crc32(repository.encode()) % 500
    return f"{repository}: {mode.value} sync done, {objects} objects fetched"


@app.tool(annotations=READ_ONLY)
async def analyze_dependencies(
    package: Annotated[str, Field(min_length=1, max_length=214, examples=["requests"])],
    depth: Annotated[int, Field(ge=1, le=10, description="How many levels to resolve.")] = 2,
    include_dev: bool = False,
) -> str:
    """Resolve a package's dependency tree down to `depth` levels."""
    if depth > 5:
        # Planted slowness: deep trees are resolved without a cache.
        await anyio.sleep(2.5)
    kind = "all" if include_dev else "runtime"
    return f"{package}: {kind} dependency tree resolved to depth {depth}"


# --------------------------------------------------------------------------------- internal_error


class Split(BaseModel):
    share_cents: int
    remainder_cents: int


@app.tool(annotations=READ_ONLY)
def split_bill(
    total_cents: Annotated[int, Field(ge=0, le=10**9, examples=[12345])],
    people: Annotated[int, Field(ge=0, le=100, description="How many people share the bill.", examples=[3])],
) -> Split:
    """Split a bill evenly between people."""
    # Planted internal error: people == 0 is schema-valid and raises ZeroDivisionError.
    share, remainder = divmod(total_cents, people)
    return Split(share_cents=share, remainder_cents=remainder)


@app.tool(annotations=READ_ONLY)
def parse_config(
    text: Annotated[str, Field(max_length=20000, examples=['{"debug": true}'])],
    format: Literal["json", "toml", "ini"] = "json",
) -> str:
    """Parse a configuration file and list its top-level keys."""
    if format == "json":
        try:
            data = json.loads(text)
            keys = sorted(data) if isinstance(data, dict) else []
        except Exception:
            # Planted internal error: the traceback goes back to the caller as the tool's text.
            return traceback.format_exc()
    elif format == "toml":
        try:
            keys = sorted(tomllib.loads(text))
        except Exception as exc:
            raise ToolError(f"not valid TOML: {type(exc).__name__}") from None
    else:
        parser = configparser.ConfigParser(interpolation=None)
        try:
            parser.read_string(text)
        except Exception as exc:
            raise ToolError(f"not valid INI: {type(exc).__name__}") from None
        keys = parser.sections()
    return "keys: " + ", ".join(keys) if keys else "no keys"


# ------------------------------------------------------------------------------- schema_violation


class Warehouse(StrEnum):
    LYON = "lyon"
    OSAKA = "osaka"
    RENO = "reno"
    ARCHIVE = "archive"


class StockLevel(BaseModel):
    sku: str
    warehouse: Warehouse
    # Planted drift: the published schema says integer, the model also lets a string through.
    quantity: Annotated[int | str, WithJsonSchema({"type": "integer", "minimum": 0})]
    reserved: int = Field(ge=0)


@app.tool(annotations=READ_ONLY)
def get_stock_level(
    sku: Annotated[str, Field(min_length=1, max_length=64, examples=["SKU-1001"])],
    warehouse: Warehouse = Warehouse.LYON,
) -> StockLevel:
    """How many units of a SKU a warehouse holds."""
    if warehouse is Warehouse.ARCHIVE:
        return StockLevel(sku=sku, warehouse=warehouse, quantity="unknown", reserved=0)
    quantity = zlib.crc32(f"{warehouse.value}:{sku}".encode()) % 1000
    return StockLevel(sku=sku, warehouse=warehouse, quantity=quantity, reserved=quantity // 10)


# --------------------------------------------------------------------------------- protocol_error


class Table(StrEnum):
    ORDERS = "orders"
    CUSTOMERS = "customers"
    PRODUCTS = "products"


_TABLE_ROWS = {
    Table.ORDERS: ("id,customer,total_cents", ["1,ada,1250", "2,linus,990"]),
    Table.CUSTOMERS: ("id,name,city", ["ada,Ada,London", "linus,Linus,Helsinki"]),
    Table.PRODUCTS: ("sku,name,price_cents", ["SKU-1001,Mug,990", "SKU-1002,Lamp,2500"]),
}


@app.tool(annotations=READ_ONLY)
def export_csv(
    table: Table,
    progress: Annotated[bool, Field(description="Report progress while exporting.")] = False,
    limit: Annotated[int | None, Field(ge=1, le=1000)] = None,
) -> str:
    """Export a table as CSV."""
    header, rows = _TABLE_ROWS[table]
    rows = rows[:limit] if limit else rows
    if progress and _serving_stdio:
        # Planted protocol error: progress goes to the real stdout, which is the JSON-RPC stream.
        os.write(_REAL_STDOUT_FD, f"exporting {table.value}: {len(rows)} rows... 100%\n".encode())
    return "\n".join([header, *rows])


# ------------------------------------------------------------------------------------ secret_leak


@app.tool(annotations=READ_ONLY)
def read_note(
    path: Annotated[
        str,
        Field(
            max_length=500,
            description="A note, or a folder of notes, relative to the notes directory ('..': the workspace).",
            examples=["welcome.md", "projects", ".."],
        ),
    ],
) -> str:
    """Read a note, or every note in a folder."""
    # Planted traversal: leading slashes are stripped, but '..' is not, so the path can leave notes/.
    # The author meant '..' for the shared workspace docs and forgot that .env.example lives there.
    target = NOTES_DIR / path.lstrip("/\\")
    try:
        if target.is_dir():
            files = sorted(p for p in target.iterdir() if p.is_file())[:50]
        elif target.is_file():
            files = [target]
        else:
            raise ToolError(f"no note or folder named {path!r}")
        parts: list[str] = []
        for file in files:
            text = _small_text(file)
            if text is not None and sum(map(len, parts)) + len(text) <= _MAX_REPLY_CHARS:
                parts.append(f"## {file.name}\n{text}")
    except (OSError, ValueError):
        raise ToolError(f"cannot read {path!r}") from None
    return "\n\n".join(parts) if parts else "(no readable notes)"


_MAX_REPLY_CHARS = 256 * 1024


def _small_text(file: Path) -> str | None:
    """The file's text, or None for empty, large, unreadable or binary files (and /proc's zero-size ones)."""
    try:
        if not 0 < file.stat().st_size <= 64 * 1024:
            return None
        return file.read_text(encoding="utf-8")
    except (OSError, ValueError):
        return None


_SENSITIVE_NAME = re.compile(r"TOKEN|SECRET|CANARY|PASSWORD|API_?KEY|CREDENTIAL", re.IGNORECASE)


@app.tool(annotations=READ_ONLY)
def debug_env(
    verbose: Annotated[bool, Field(description="Include the authentication settings.")] = False,
) -> str:
    """Describe the server's runtime environment, for support tickets."""
    summary = f"python {sys.version.split()[0]}, {len(os.environ)} environment variables"
    if not verbose:
        return summary
    # Planted leak: "authentication settings" are dumped with their values.
    auth = sorted(f"{name}={value}" for name, value in os.environ.items() if _SENSITIVE_NAME.search(name))
    return "\n".join([summary, "auth settings:", *auth])


# ------------------------------------------------------------------------------------ destructive


def _record_destructive_call(tool: str) -> None:
    marker_dir = Path(os.environ.get("FUZZGATE_EXAMPLE_MARKER_DIR") or HERE)
    marker_dir.mkdir(parents=True, exist_ok=True)
    with (marker_dir / MARKER_NAME).open("a", encoding="utf-8") as marker:
        marker.write(f"{tool}\n")


@app.tool(annotations=ToolAnnotations(destructive_hint=True, read_only_hint=False, idempotent_hint=True))
def delete_all_notes(confirm: bool = False) -> str:
    """Delete every note. Irreversible."""
    _record_destructive_call("delete_all_notes")
    return "all notes deleted"


@app.tool(annotations=ToolAnnotations(destructive_hint=True, read_only_hint=False))
def archive_project(
    project: Annotated[str, Field(min_length=1, max_length=100, examples=["roadmap"])],
    reason: str | None = None,
) -> str:
    """Move a project's notes to cold storage and remove them from the workspace."""
    _record_destructive_call("archive_project")
    return f"project {project!r} archived"


_NOTE_AGES_DAYS = {"welcome.md": 400, "projects/roadmap.md": 12, "projects/launch-checklist.md": 95}


@app.tool(annotations=ToolAnnotations(destructive_hint=True, read_only_hint=True))
def preview_cleanup(
    older_than_days: Annotated[int, Field(ge=1, le=3650, description="Age threshold in days.")] = 30,
) -> list[str]:
    """List the notes a cleanup would remove. Changes nothing."""
    return sorted(name for name, age in _NOTE_AGES_DAYS.items() if age > older_than_days)


# ------------------------------------------------------------------------------------------ clean


@app.tool(annotations=READ_ONLY)
def echo(
    text: Annotated[str, Field(max_length=10000, examples=["hello"])],
    uppercase: bool = False,
) -> str:
    """Return the text unchanged (or upper-cased)."""
    return text.upper() if uppercase else text


class Sum(BaseModel):
    a: int
    b: int
    total: int


@app.tool(annotations=READ_ONLY)
def add(
    a: Annotated[int, Field(ge=-(2**53), le=2**53, examples=[2])],
    b: Annotated[int, Field(ge=-(2**53), le=2**53, examples=[40])],
) -> Sum:
    """Add two integers."""
    return Sum(a=a, b=b, total=a + b)


class Category(StrEnum):
    BOOK = "book"
    MUSIC = "music"
    FILM = "film"


class FilterField(StrEnum):
    TITLE = "title"
    CATEGORY = "category"
    YEAR = "year"
    PRICE_CENTS = "price_cents"


class Operator(StrEnum):
    EQ = "eq"
    NE = "ne"
    LT = "lt"
    GT = "gt"
    CONTAINS = "contains"


class Filter(BaseModel):
    field: FilterField
    op: Operator = Operator.EQ
    value: Annotated[str | int, Field(examples=["book", 1999])]


class SortOrder(StrEnum):
    RELEVANCE = "relevance"
    NEWEST = "newest"
    CHEAPEST = "cheapest"


class Item(BaseModel):
    id: str
    title: str
    category: Category
    year: int
    price_cents: int


class SearchPage(BaseModel):
    query: str
    total: int = Field(ge=0)
    items: list[Item]


_CATALOGUE = [
    Item(id="item-01", title="The Pragmatic Programmer", category=Category.BOOK, year=1999, price_cents=3999),
    Item(id="item-02", title="Kind of Blue", category=Category.MUSIC, year=1959, price_cents=1299),
    Item(id="item-03", title="Structure and Interpretation", category=Category.BOOK, year=1985, price_cents=4500),
    Item(id="item-04", title="Blue Velvet", category=Category.FILM, year=1986, price_cents=999),
    Item(id="item-05", title="Programming Pearls", category=Category.BOOK, year=1986, price_cents=2999),
    Item(id="item-06", title="Blue Train", category=Category.MUSIC, year=1957, price_cents=1199),
]

_NUMERIC = {FilterField.YEAR, FilterField.PRICE_CENTS}


def _check_filter(index: int, f: Filter) -> None:
    where = f"filters[{index}]"
    if f.field in _NUMERIC:
        if f.op is Operator.CONTAINS:
            raise ToolError(f"{where}: 'contains' does not apply to {f.field.value}")
        if not isinstance(f.value, int):
            raise ToolError(f"{where}: {f.field.value} needs an integer value")
    else:
        if f.op in (Operator.LT, Operator.GT):
            raise ToolError(f"{where}: '{f.op.value}' does not apply to {f.field.value}")
        if not isinstance(f.value, str):
            raise ToolError(f"{where}: {f.field.value} needs a string value")
        if f.field is FilterField.CATEGORY and f.op is not Operator.CONTAINS and f.value not in set(Category):
            raise ToolError(f"{where}: unknown category {f.value!r}")


def _matches(item: Item, f: Filter) -> bool:
    actual = getattr(item, f.field.value)
    if f.op is Operator.CONTAINS:
        return str(f.value).casefold() in str(actual).casefold()
    if f.op is Operator.EQ:
        return bool(actual == f.value)
    if f.op is Operator.NE:
        return bool(actual != f.value)
    if f.op is Operator.LT:
        return bool(actual < f.value)
    return bool(actual > f.value)


@app.tool(annotations=READ_ONLY)
def search(
    query: Annotated[str, Field(min_length=1, max_length=200, examples=["blue"])],
    limit: Annotated[int, Field(ge=1, le=50)] = 10,
    filters: Annotated[list[Filter] | None, Field(max_length=10, description="All must match.")] = None,
    sort: SortOrder = SortOrder.RELEVANCE,
) -> SearchPage:
    """Search the catalogue; filters narrow the hits."""
    filters = filters or []
    for index, f in enumerate(filters):
        _check_filter(index, f)
    needle = query.casefold()
    hits = [i for i in _CATALOGUE if needle in i.title.casefold() and all(_matches(i, f) for f in filters)]
    if sort is SortOrder.NEWEST:
        hits.sort(key=lambda i: (-i.year, i.id))
    elif sort is SortOrder.CHEAPEST:
        hits.sort(key=lambda i: (i.price_cents, i.id))
    return SearchPage(query=query, total=len(hits), items=hits[:limit])


# -------------------------------------------------------------------- resources and prompts (clean)


_NOTE_NAME = re.compile(r"^[a-z0-9-]{1,64}$")


@app.resource("notes://index", name="notes-index", mime_type="text/plain")
def notes_index() -> str:
    """The names of the top-level notes."""
    return "\n".join(sorted(p.stem for p in NOTES_DIR.glob("*.md")))


@app.resource("notes://note/{name}", name="note", mime_type="text/markdown")
def note_by_name(name: str) -> str:
    """One top-level note, by name without its .md suffix."""
    if not _NOTE_NAME.match(name) or not (NOTES_DIR / f"{name}.md").is_file():
        return f"no note named {name!r}"
    return (NOTES_DIR / f"{name}.md").read_text(encoding="utf-8")


@app.prompt()
def summarize_note(name: str) -> str:
    """Ask the model to summarise a note."""
    return f"Summarise the note notes://note/{name} in three bullet points."


def main() -> None:
    global _serving_stdio
    args = _serve.parse_args(__doc__.splitlines()[0] if __doc__ else "fuzzgate example server")
    _serving_stdio = args.transport == "stdio"
    _serve.serve(app, args)


if __name__ == "__main__":
    main()
