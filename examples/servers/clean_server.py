"""fuzzgate-clean-example: an MCP server with no bugs, for checking that fuzzgate reports nothing.

    python clean_server.py [--transport stdio|http] [--host 127.0.0.1] [--port 8000] [--legacy]

Six tools with varied schemas: string patterns and formats (date-time), bounded integers and
numbers, enums, nested models, optional fields, lists of objects. Each declares an output schema
its structured content always matches. Whatever a fuzzer sends, a tool answers at once with either
a result or an `isError` result carrying a plain message (the SDK's validation message for
arguments that break the input schema, the tool's own for values the schema cannot rule out). No
tool raises an unhandled exception, writes to stdout, reads files or the environment, or sleeps.
"""

from __future__ import annotations

import re
import unicodedata
import zlib
from datetime import UTC, datetime, timedelta
from enum import StrEnum
from typing import Annotated, Literal

import _serve  # examples/servers/_serve.py: the shared command line
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp_types import ToolAnnotations
from pydantic import BaseModel, Field

_serve.plain_stderr_logging()
app = MCPServer("fuzzgate-clean-example", version="1.0.0")

READ_ONLY = ToolAnnotations(read_only_hint=True, destructive_hint=False, idempotent_hint=True)


# ------------------------------------------------------------------------------------- slugify


class Slug(BaseModel):
    slug: Annotated[str, Field(pattern=r"^[a-z0-9_-]*$", max_length=120)]
    words: int = Field(ge=0)


@app.tool(annotations=READ_ONLY)
def slugify(
    text: Annotated[str, Field(max_length=500, examples=["Hello, Wörld!"])],
    separator: Literal["-", "_"] = "-",
    max_length: Annotated[int, Field(ge=8, le=120)] = 60,
) -> Slug:
    """Turn a title into a URL slug (ASCII letters and digits joined by the separator)."""
    ascii_text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode("ascii").lower()
    words = re.findall(r"[a-z0-9]+", ascii_text)
    slug = separator.join(words)[:max_length].strip(separator)
    return Slug(slug=slug, words=len(words))


# ---------------------------------------------------------------------------------- lookup_user


class Detail(StrEnum):
    EMAIL = "email"
    GROUPS = "groups"


class UserProfile(BaseModel):
    username: str
    display_name: str
    email: str | None = None
    groups: list[str] | None = None


_USERS = {
    "ada": ("Ada Lovelace", "ada@example.org", ["admins", "analysts"]),
    "grace": ("Grace Hopper", "grace@example.org", ["compilers"]),
    "linus_t": ("Linus T.", "linus@example.org", []),
}


@app.tool(annotations=READ_ONLY)
def lookup_user(
    username: Annotated[str, Field(pattern=r"^[a-z][a-z0-9_]{2,31}$", examples=["ada", "grace"])],
    include: Annotated[list[Detail] | None, Field(max_length=2, description="Extra details.")] = None,
) -> UserProfile:
    """Look a user up in the directory."""
    if username not in _USERS:
        raise ToolError(f"no user named {username!r}")
    name, email, groups = _USERS[username]
    wanted = set(include or ())
    return UserProfile(
        username=username,
        display_name=name,
        email=email if Detail.EMAIL in wanted else None,
        groups=list(groups) if Detail.GROUPS in wanted else None,
    )


# ------------------------------------------------------------------------------ schedule_meeting


class Room(StrEnum):
    ATLAS = "atlas"
    BOREAL = "boreal"
    CIRRUS = "cirrus"


class Attendee(BaseModel):
    name: Annotated[str, Field(min_length=1, max_length=80)]
    email: Annotated[str, Field(pattern=r"^[^@\s]+@[^@\s]+\.[a-z]{2,}$", max_length=254)]
    optional: bool = False


class Meeting(BaseModel):
    id: str
    title: str
    start: datetime
    end: datetime
    required_attendees: int = Field(ge=0)
    optional_attendees: int = Field(ge=0)
    room: Room | None


@app.tool(annotations=ToolAnnotations(read_only_hint=False, destructive_hint=False, idempotent_hint=True))
def schedule_meeting(
    title: Annotated[str, Field(min_length=1, max_length=120, examples=["Sprint review"])],
    start: Annotated[datetime, Field(examples=["2026-03-02T14:00:00+01:00"])],
    attendees: Annotated[list[Attendee], Field(min_length=1, max_length=20)],
    duration_minutes: Annotated[int, Field(ge=15, le=480, multiple_of=15)] = 30,
    room: Room | None = None,
) -> Meeting:
    """Book a meeting (a draft: nothing is sent). A start without a UTC offset is taken as UTC."""
    if start.tzinfo is None:
        # RFC 3339 date-times carry an offset; answering with a naive one would break `format`.
        start = start.replace(tzinfo=UTC)
    try:
        end = start + timedelta(minutes=duration_minutes)
    except OverflowError:
        raise ToolError("the meeting would end after the year 9999") from None
    required = sum(1 for a in attendees if not a.optional)
    meeting_id = f"mtg-{zlib.crc32(f'{title}|{start.isoformat()}'.encode()) % 1_000_000:06d}"
    return Meeting(
        id=meeting_id,
        title=title,
        start=start,
        end=end,
        required_attendees=required,
        optional_attendees=len(attendees) - required,
        room=room,
    )


# --------------------------------------------------------------------------- convert_temperature


class Unit(StrEnum):
    CELSIUS = "celsius"
    FAHRENHEIT = "fahrenheit"
    KELVIN = "kelvin"


class Temperature(BaseModel):
    value: float
    unit: Unit


def _to_kelvin(value: float, unit: Unit) -> float:
    if unit is Unit.CELSIUS:
        return value + 273.15
    if unit is Unit.FAHRENHEIT:
        return (value - 32) * 5 / 9 + 273.15
    return value


def _from_kelvin(kelvin: float, unit: Unit) -> float:
    if unit is Unit.CELSIUS:
        return kelvin - 273.15
    if unit is Unit.FAHRENHEIT:
        return (kelvin - 273.15) * 9 / 5 + 32
    return kelvin


@app.tool(annotations=READ_ONLY)
def convert_temperature(
    value: Annotated[float, Field(ge=-1e6, le=1e6, allow_inf_nan=False, examples=[21.5])],
    from_unit: Unit = Unit.CELSIUS,
    to_unit: Unit = Unit.FAHRENHEIT,
) -> Temperature:
    """Convert a temperature between Celsius, Fahrenheit and Kelvin."""
    kelvin = _to_kelvin(value, from_unit)
    if kelvin < 0:
        raise ToolError(f"{value} {from_unit.value} is below absolute zero")
    return Temperature(value=round(_from_kelvin(kelvin, to_unit), 6), unit=to_unit)


# -------------------------------------------------------------------------------------- paginate


class Page(BaseModel):
    items: list[str]
    page: int = Field(ge=1)
    total_pages: int = Field(ge=0)
    has_next: bool


@app.tool(annotations=READ_ONLY)
def paginate(
    items: Annotated[list[Annotated[str, Field(max_length=200)]], Field(max_length=200)],
    page: Annotated[int, Field(ge=1, le=1000)] = 1,
    page_size: Annotated[int, Field(ge=1, le=50)] = 10,
) -> Page:
    """Return one page of a list."""
    total_pages = -(-len(items) // page_size)
    start = (page - 1) * page_size
    return Page(items=items[start : start + page_size], page=page, total_pages=total_pages, has_next=page < total_pages)


# -------------------------------------------------------------------------------- create_invoice


class Country(StrEnum):
    FR = "FR"
    DE = "DE"
    JP = "JP"
    US = "US"


class Currency(StrEnum):
    EUR = "EUR"
    JPY = "JPY"
    USD = "USD"


class Address(BaseModel):
    street: Annotated[str, Field(min_length=1, max_length=200)]
    city: Annotated[str, Field(min_length=1, max_length=100)]
    postal_code: Annotated[str, Field(pattern=r"^[A-Z0-9][A-Z0-9 -]{1,8}[A-Z0-9]$", examples=["75001"])]
    country: Country


class Customer(BaseModel):
    name: Annotated[str, Field(min_length=1, max_length=100, examples=["ACME SARL"])]
    email: Annotated[str | None, Field(max_length=254)] = None
    address: Address | None = None


class InvoiceLine(BaseModel):
    sku: Annotated[str, Field(pattern=r"^[A-Z]{3}-[0-9]{4}$", examples=["MUG-0001"])]
    quantity: Annotated[int, Field(ge=1, le=1000)]
    unit_price_cents: Annotated[int, Field(ge=0, le=10_000_000)]
    discount_percent: Annotated[int, Field(ge=0, le=100)] = 0


class LineTotal(BaseModel):
    sku: str
    quantity: int = Field(ge=1)
    total_cents: int = Field(ge=0)


class Invoice(BaseModel):
    customer: str
    currency: Currency
    lines: list[LineTotal]
    subtotal_cents: int = Field(ge=0)
    tax_percent: int = Field(ge=0, le=100)
    tax_cents: int = Field(ge=0)
    total_cents: int = Field(ge=0)
    notes: str | None = None


_TAX_PERCENT = {Country.FR: 20, Country.DE: 19, Country.JP: 10, Country.US: 0}


@app.tool(annotations=ToolAnnotations(read_only_hint=True, destructive_hint=False, idempotent_hint=True))
def create_invoice(
    customer: Customer,
    lines: Annotated[list[InvoiceLine], Field(min_length=1, max_length=50)],
    currency: Currency = Currency.EUR,
    notes: Annotated[str | None, Field(max_length=500)] = None,
) -> Invoice:
    """Compute an invoice draft: line totals, tax by the customer's country, grand total."""
    totals = [
        LineTotal(
            sku=line.sku,
            quantity=line.quantity,
            total_cents=line.quantity * line.unit_price_cents * (100 - line.discount_percent) // 100,
        )
        for line in lines
    ]
    subtotal = sum(t.total_cents for t in totals)
    tax_percent = _TAX_PERCENT[customer.address.country] if customer.address else 0
    tax = subtotal * tax_percent // 100
    return Invoice(
        customer=customer.name,
        currency=currency,
        lines=totals,
        subtotal_cents=subtotal,
        tax_percent=tax_percent,
        tax_cents=tax,
        total_cents=subtotal + tax,
        notes=notes,
    )


def main() -> None:
    _serve.serve(app, _serve.parse_args("fuzzgate example server without bugs"))


if __name__ == "__main__":
    main()
