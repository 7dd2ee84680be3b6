"""What the server offers: tools, resources, resource templates and prompts, every page of each."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

import anyio
import mcp_types as types
import pydantic
import regex
from mcp.shared.exceptions import MCPError

from fuzzgate.model.errors import TargetError
from fuzzgate.model.findings import Surface
from fuzzgate.model.uri_template import template_variables
from fuzzgate.target.connection import Connection, describe_exception

MAX_PAGES = 100
"""A server whose cursor never ends must not keep discovery going forever."""

_Item = TypeVar("_Item")


@dataclass(frozen=True, slots=True)
class ToolInfo:
    """Something fuzzgate sends generated arguments to: a tool, or a prompt, a resource template
    or a resource seen as one (`surface`), with an input schema made from what it declares."""

    name: str
    description: str
    input_schema: dict[str, Any]
    output_schema: dict[str, Any] | None
    destructive_hint: bool | None
    read_only_hint: bool | None
    surface: Surface = Surface.TOOL


@dataclass(frozen=True, slots=True)
class Inventory:
    tools: tuple[ToolInfo, ...]
    resources: tuple[str, ...]
    resource_templates: tuple[str, ...]
    prompts: tuple[str, ...]
    others: tuple[ToolInfo, ...] = ()
    """The resources, resource templates and prompts as fuzzgate sends to them (`surface_infos`)."""


_NO_ARGUMENTS: dict[str, Any] = {"type": "object", "properties": {}, "additionalProperties": False}

TEMPLATE_EXAMPLES: tuple[str, ...] = (
    "..",
    "../..",
    "../../../../etc/passwd",
    "%2e%2e",
    "%2e%2e%2f%2e%2e%2fetc%2fpasswd",
    "%252e%252e%252f",
    "..%2f..%2f",
    "a/b",
    "/",
    "",
    "%00",
    "%",
    "%zz",
    "\u00e9t\u00e9",
    "\u2603/\u00e9",
    "x" * 4096,
)
"""Values a resource template's variables get first: they are inserted into the URI as they are
(`expand_template`), so a server sees raw `..` and `/`, percent- and double-encoded ones, an empty
value, a very long one and non-ASCII text."""

def _string_properties(names: Sequence[tuple[str, str | None]], examples: Sequence[str] = ()) -> dict[str, Any]:
    properties: dict[str, Any] = {}
    for name, description in names:
        prop: dict[str, Any] = {"type": "string"}
        if description:
            prop["description"] = description
        if examples:
            prop["examples"] = list(examples)
        properties[name] = prop
    return properties


def _prompt_info(prompt: types.Prompt) -> ToolInfo:
    arguments = prompt.arguments or []
    schema = {
        "type": "object",
        "properties": _string_properties([(a.name, a.description) for a in arguments]),
        "required": [a.name for a in arguments if a.required],
        "additionalProperties": False,
    }
    return ToolInfo(prompt.name, prompt.description or "", schema, None, None, True, Surface.PROMPT)


def _template_info(template: types.ResourceTemplate) -> ToolInfo:
    names = template_variables(template.uri_template)
    schema = {
        "type": "object",
        "properties": _string_properties([(n, None) for n in names], TEMPLATE_EXAMPLES),
        "required": names,
        "additionalProperties": False,
    }
    description = " ".join(filter(None, [template.name, template.description]))
    return ToolInfo(template.uri_template, description, schema, None, None, None, Surface.RESOURCE)


def _resource_info(resource: types.Resource) -> ToolInfo:
    description = " ".join(filter(None, [resource.name, resource.description]))
    return ToolInfo(str(resource.uri), description, dict(_NO_ARGUMENTS), None, None, None, Surface.RESOURCE)


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


_NAME_LIKE = regex.compile(r"[\w$.-]{1,64}")


def invalid_reply(exc: BaseException) -> str | None:
    """What is wrong with a reply the SDK refused to read (pydantic's validation of the MCP schema),
    in words: how many errors, and where the first one is and what it says. None for any other
    error. The reply's values are left out (its field names only where they look like names): they
    are the server's bytes."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    if not isinstance(exc, pydantic.ValidationError):
        return None
    errors = exc.errors(include_url=False, include_context=False, include_input=False)
    if not errors:
        return None
    first = errors[0]
    where = ".".join(str(p) if isinstance(p, int) or _NAME_LIKE.fullmatch(p) else "…" for p in first["loc"])
    return (
        f"its reply does not follow the MCP schema ({len(errors)} error(s) in {exc.title}; the first at "
        f"`{where or '/'}`: {first['msg']})"
    )


async def discover(connection: Connection, timeout_s: float) -> Inventory:
    """List everything, each list bounded by `timeout_s`. Failing to list tools is a target error."""
    client = connection.client
    caps = client.server_capabilities
    listing = "tools"
    try:
        with anyio.fail_after(timeout_s * 4):
            tools = await _paginate(lambda c: client.list_tools(cursor=c, cache_mode="bypass"), lambda p: p.tools)
            listing = "resources"
            resources = await _optional(
                caps.resources is not None,
                lambda c: client.list_resources(cursor=c, cache_mode="bypass"),
                lambda p: list(p.resources),
            )
            listing = "resource templates"
            templates = await _optional(
                caps.resources is not None,
                lambda c: client.list_resource_templates(cursor=c, cache_mode="bypass"),
                lambda p: list(p.resource_templates),
            )
            listing = "prompts"
            prompts = await _optional(
                caps.prompts is not None,
                lambda c: client.list_prompts(cursor=c, cache_mode="bypass"),
                lambda p: list(p.prompts),
            )
    except TimeoutError:
        raise TargetError(f"the server did not list its {listing} in time", hint="raise [target] timeout_ms") from None
    except Exception as exc:
        invalid = invalid_reply(exc)
        if invalid is not None:
            raise TargetError(
                f"could not list the server's {listing}: {invalid}",
                hint="the server's reply is at fault: clients that check replies against the MCP schema refuse it too",
            ) from None
        raise TargetError(f"could not list the server's {listing}: {describe_exception(exc)}") from None
    for tool in tools:
        connection.outputs.learn(tool.name, tool.output_schema)
    return Inventory(
        tools=tuple(_tool_info(t) for t in tools),
        resources=tuple(str(r.uri) for r in resources),
        resource_templates=tuple(t.uri_template for t in templates),
        prompts=tuple(p.name for p in prompts),
        others=(
            *(_resource_info(r) for r in resources),
            *(_template_info(t) for t in templates),
            *(_prompt_info(p) for p in prompts),
        ),
    )
