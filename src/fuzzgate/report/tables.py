"""Console tables for the commands that show what a server offers (`fuzzgate tools`).

Every text in them is the server's: redacted whole, then escaped for rich markup."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from fuzzgate.check.secrets import Redactor
from fuzzgate.model.commands import subject_label

if TYPE_CHECKING:
    from fuzzgate.engine.session import Listing


def print_listing(console: Console, target_name: str, listing: Listing, redact: Redactor) -> None:
    """The tools and what a run would do with each, then the resources, templates and prompts."""

    def shown(text: str) -> str:
        return escape(redact.text(text))

    table = Table(title=f"{shown(target_name)} (protocol {shown(listing.protocol_version)})")
    table.add_column("tool, prompt or resource")
    table.add_column("would be")
    table.add_column("reason")
    for entry in listing.decisions:
        table.add_row(shown(subject_label(entry.surface, entry.name)), entry.status.value, shown(entry.reason or ""))
    console.print(table)
    inventory = listing.inventory
    for label, items in (
        ("resources", inventory.resources),
        ("resource templates", inventory.resource_templates),
        ("prompts", inventory.prompts),
    ):
        console.print(f"{label}: {shown(', '.join(items)) if items else '-'}")
