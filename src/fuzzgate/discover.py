"""What the server offers: tools, resources, resource templates and prompts, every page of each."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, TypeVar

import anyio
import mcp_types as types
from mcp.shared.exceptions import MCPError

from fuzzgate.errors import TargetError
from fuzzgate.target.connection import Connection, describe_exception

MAX_PAGES = 100
"""A server whose cursor never ends must not keep discovery going forever."""

_Item = TypeVar("_Item")


@dataclass(frozen=True, slots=True)
class ToolInfo:
    name: str
    description: str
    input_schema: dict[str, Any]
    output_schema: dict[str, Any] | None
    destructive_hint: bool | None
    read_only_hint: bool | None


@dataclass(frozen=True, slots=True)
class Inventory:
    tools: tuple[ToolInfo, ...]
    resources: tuple[str, ...]
    resource_templates: tuple[str, ...]
    prompts: tuple[str, ...]


def _tool_info(tool: types.Tool) -> ToolInfo:
    annotations = tool.annotations
    return ToolInfo(
        name=tool.name,
        description=tool.description or "",
        input_schema=dict(tool.input_schema),
        output_schema=dict(tool.output_schema) if tool.output_schema is not None else None,
        destructive_hint=annotations.destructive_hint if annotations else None,
        read_only_hint=annotations.read_only_hint if annotations else None,
    )


async def _paginate(
    fetch: Callable[[str | None], Awaitable[Any]], items_of: Callable[[Any], list[_Item]]
) -> list[_Item]:
    items: list[_Item] = []
    cursor: str | None = None
    seen: set[str] = set()
    for _ in range(MAX_PAGES):
        page = await fetch(cursor)
        items.extend(items_of(page))
        cursor = page.next_cursor
        if not cursor or cursor in seen:
            break
        seen.add(cursor)
    return items


async def _optional(
    supported: bool, fetch: Callable[[str | None], Awaitable[Any]], items_of: Callable[[Any], list[_Item]]
) -> list[_Item]:
    """Resources and prompts are optional capabilities; a server without them lists nothing."""
    if not supported:
        return []
    try:
        return await _paginate(fetch, items_of)
    except MCPError:
        return []


async def discover(connection: Connection, timeout_s: float) -> Inventory:
    """List everything, each list bounded by `timeout_s`. Failing to list tools is a target error."""
    client = connection.client
    caps = client.server_capabilities
    try:
        with anyio.fail_after(timeout_s * 4):
            tools = await _paginate(lambda c: client.list_tools(cursor=c, cache_mode="bypass"), lambda p: p.tools)
            resources = await _optional(
                caps.resources is not None,
                lambda c: client.list_resources(cursor=c, cache_mode="bypass"),
                lambda p: [str(r.uri) for r in p.resources],
            )
            templates = await _optional(
                caps.resources is not None,
                lambda c: client.list_resource_templates(cursor=c, cache_mode="bypass"),
                lambda p: [t.uri_template for t in p.resource_templates],
            )
            prompts = await _optional(
                caps.prompts is not None,
                lambda c: client.list_prompts(cursor=c, cache_mode="bypass"),
                lambda p: [pr.name for pr in p.prompts],
            )
    except TimeoutError:
        raise TargetError("the server did not answer tools/list in time", hint="raise [target] timeout_ms") from None
    except Exception as exc:
        raise TargetError(f"could not list the server's tools: {describe_exception(exc)}") from None
    for tool in tools:
        connection.outputs.learn(tool.name, tool.output_schema)
    return Inventory(
        tools=tuple(_tool_info(t) for t in tools),
        resources=tuple(resources),
        resource_templates=tuple(templates),
        prompts=tuple(prompts),
    )
