"""An MCP server whose bugs sit behind resource templates and prompts, each beside a clean twin.

    python surfaces.py [--clean]

| surface                          | bug                                                              |
| -------------------------------- | ---------------------------------------------------------------- |
| template `docs://{name}`         | a name with a non-ASCII character raises an unhandled error       |
| prompt `summarize(text, style)`  | an empty `style` raises KeyError (unhandled)                      |
| template `notes://{name}`        | clean: unknown names answer "not found" (`ResourceNotFoundError`)  |
| prompt `greet(name)`             | clean: any name, empty included                                   |
| resource `config://settings`     | clean: a fixed text                                               |
| tool `echo(text)`                | clean                                                             |

With `--clean` the buggy template and prompt behave like their clean twins. (The SDK itself
refuses template values with `..`, raw or percent-encoded, before any handler runs.)
"""

from __future__ import annotations

import argparse
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ResourceNotFoundError

parser = argparse.ArgumentParser()
parser.add_argument("--clean", action="store_true")
CLEAN = parser.parse_args().clean

server = MCPServer("surfaces")
DOCS = {"intro": "Welcome.", "usage": "Run it."}
STYLES = {"short": "In one line: ", "long": "In detail: "}


@server.resource("docs://{name}")
def doc(name: str) -> str:
    if not CLEAN:
        name.encode("ascii")  # the planted bug: UnicodeEncodeError, unhandled
    if name not in DOCS:
        raise ResourceNotFoundError(f"no document {name!r}")
    return DOCS[name]


@server.resource("notes://{name}")
def note(name: str) -> str:
    if name not in DOCS:
        raise ResourceNotFoundError(f"no note {name!r}")
    return DOCS[name]


@server.resource("config://settings")
def settings() -> str:
    return "theme=dark"


@server.prompt()
def summarize(text: str, style: str = "short") -> str:
    if CLEAN and style not in STYLES:
        style = "short"
    return STYLES[style] + text  # the planted bug: KeyError for an empty or unknown style


@server.prompt()
def greet(name: str) -> str:
    return f"Say hello to {name or 'nobody'}."


@server.tool()
def echo(text: str) -> str:
    return text


server.run()
