"""An MCP server whose bugs sit behind resource templates and prompts, each beside a clean twin.

    python surfaces.py [--clean] [--port PORT]     (stdio; streamable HTTP on 127.0.0.1:PORT)

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
import logging
import sys

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ResourceNotFoundError

# Plain text logs, as the example servers write them (rich rendering of a traceback takes seconds).
logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s", stream=sys.stderr)

parser = argparse.ArgumentParser()
parser.add_argument("--clean", action="store_true")
parser.add_argument("--port", type=int)
ARGS = parser.parse_args()
CLEAN = ARGS.clean

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


if ARGS.port:
    server.run("streamable-http", host="127.0.0.1", port=ARGS.port)
else:
    server.run()
