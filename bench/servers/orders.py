"""bench-orders: an order-entry MCP server (MCPServer) whose tools take nested pydantic models, so
their input schemas are `$defs` + `$ref` (one of them recursive). Bugs ORD-1 .. ORD-3 sit behind
values deep inside those references.

    python orders.py            # stdio; set BENCH_GROUND_TRUTH=FILE to record triggered bugs
"""

from __future__ import annotations

import zlib
from enum import StrEnum
from typing import Annotated, Literal

import _truth
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp_types import ToolAnnotations
from pydantic import BaseModel, Field, WithJsonSchema

app = MCPServer("bench-orders", version="1.0.0", instructions="Orders, shipping quotes and pricing rules.")
READ_ONLY = ToolAnnotations(read_only_hint=True, destructive_hint=False, idempotent_hint=True)


class Country(StrEnum):
    FR = "FR"
    JP = "JP"
    US = "US"
    AQ = "AQ"


class Address(BaseModel):
    street: Annotated[str, Field(min_length=1, max_length=200)]
    postcode: Annotated[str, Field(pattern=r"^[0-9A-Z -]{3,10}$")]
    country: Country


class Customer(BaseModel):
    name: Annotated[str, Field(min_length=1, max_length=100)]
    email: Annotated[str | None, Field(max_length=200)] = None
    address: Address


class OrderLine(BaseModel):
    sku: Annotated[str, Field(pattern=r"^SKU-[0-9]{4}$")]
    quantity: Annotated[int, Field(ge=0, le=1000)]
    line_total_cents: Annotated[int, Field(ge=0, le=10**9)]


class Order(BaseModel):
    customer: Customer
    lines: Annotated[list[OrderLine], Field(min_length=1, max_length=20)]
    note: Annotated[str | None, Field(max_length=500)] = None


@app.tool(annotations=ToolAnnotations(read_only_hint=False, destructive_hint=False))
def create_order(order: Order) -> str:
    """Create an order and report the average unit price of each line."""
    if any(line.quantity == 0 for line in order.lines):
        # ORD-1: a zero quantity deep in order.lines[*] divides by zero.
        _truth.triggered("ORD-1")
    units = [line.line_total_cents // line.quantity for line in order.lines]
    return f"order for {order.customer.name} ({order.customer.address.country.value}): unit prices {units}"


class Rule(BaseModel):
    op: Literal["all", "any", "not", "match"]
    field: Annotated[str | None, Field(max_length=50)] = None
    value: Annotated[str | None, Field(max_length=100)] = None
    children: Annotated[list[Rule], Field(max_length=4)] = []


def _evaluate(rule: Rule, record: dict[str, str]) -> bool:
    if rule.op == "match":
        return rule.field is not None and record.get(rule.field) == rule.value
    if rule.op == "not":
        if not rule.children:
            # ORD-2: a "not" without a child indexes an empty list.
            _truth.triggered("ORD-2")
        return not _evaluate(rule.children[0], record)
    results = [_evaluate(child, record) for child in rule.children]
    return all(results) if rule.op == "all" else any(results)


@app.tool(annotations=READ_ONLY)
def evaluate_rule(
    rule: Rule,
    record: Annotated[dict[str, str], Field(max_length=10, examples=[{"country": "FR", "tier": "gold"}])],
) -> str:
    """Evaluate a (nested) pricing rule against a record."""
    return "match" if _evaluate(rule, record) else "no match"


class Parcel(BaseModel):
    weight_grams: Annotated[int, Field(ge=1, le=30_000)]
    fragile: bool = False


class Carrier(BaseModel):
    name: str
    # ORD-3: published as an integer, but unknown ETAs come back as null.
    eta_days: Annotated[int | None, WithJsonSchema({"type": "integer", "minimum": 1})]


class Quote(BaseModel):
    price_cents: int
    carrier: Carrier


@app.tool(annotations=READ_ONLY)
def quote_shipping(
    destination: Address,
    parcels: Annotated[list[Parcel], Field(min_length=1, max_length=10)],
) -> Quote:
    """Quote shipping for parcels to an address."""
    weight = sum(p.weight_grams for p in parcels)
    price = 500 + weight // 10 + 300 * sum(p.fragile for p in parcels)
    if destination.country is Country.AQ:
        _truth.triggered("ORD-3")
        return Quote(price_cents=price * 10, carrier=Carrier(name="polar-freight", eta_days=None))
    eta = 2 + zlib.crc32(destination.postcode.encode()) % 5
    return Quote(price_cents=price, carrier=Carrier(name="postal", eta_days=eta))


# ------------------------------------------------------------------------------------------ clean


@app.tool(annotations=READ_ONLY)
def validate_address(address: Address) -> str:
    """Check an address for deliverability."""
    if address.country is Country.US and not address.postcode.replace("-", "").isdigit():
        raise ToolError("US postcodes are digits")
    return f"{address.street}, {address.postcode} {address.country.value}: deliverable"


@app.tool(annotations=READ_ONLY)
def order_total(lines: Annotated[list[OrderLine], Field(max_length=20)]) -> str:
    """The total of some order lines."""
    return f"{sum(line.line_total_cents for line in lines)} cents in {len(lines)} lines"


# ------------------------------------------------------------------------------------ destructive


@app.tool(annotations=ToolAnnotations(destructive_hint=True, read_only_hint=False))
def drop_order_history(before_year: Annotated[int, Field(ge=2000, le=2100)]) -> str:
    """Drop all orders placed before a year."""
    _truth.destructive("drop_order_history")
    return "dropped"


if __name__ == "__main__":
    app.run("stdio")
