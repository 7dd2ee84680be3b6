"""What a server's text and codes say about an unhandled exception: the one place fuzzgate spells it.

The oracles decide from these what a reply means; the target stage reads them too, only to know
when to wait for the rest of a traceback on stderr. So this module imports nothing of fuzzgate's.
"""

from __future__ import annotations

import re

_PY_TRACEBACK_HEADER = r"Traceback \(most recent call last"

PY_TRACEBACK_HEADER = re.compile(_PY_TRACEBACK_HEADER)
"""The first line of a Python traceback, plain or rich-formatted."""

TRACE_START = re.compile(rf"{_PY_TRACEBACK_HEADER}|^\s+at \S.*:\d+:\d+\)?\s*$")
"""The start of a Python (plain or rich) or Node.js stack trace on one line of stderr. Looser than
the Node.js frame `traceback.parse_traces` reads, so a wait it decides never misses one."""

SDK_UNHANDLED = re.compile(r"Error executing tool [^\s:]+")
"""What the Python SDK's MCPServer answers, and only that, when a tool raises an unexpected exception."""

SDK_RESOURCE_CRASH = re.compile(r"Error (creating resource from template|reading resource) \S+")
"""What the Python SDK's MCPServer answers when a resource or template handler raises an
unexpected exception. An anticipated failure (its `ResourceError`) answers -32603 too, with the
handler's own message and no traceback: for resources the code alone does not say "crash"."""

SDK_PROMPT_ANSWERED = re.compile(r"Error rendering prompt [^\s:]+: .+", re.DOTALL)
"""What the Python SDK 1.x's FastMCP answers (JSON-RPC code 0) when a prompt raises: the exception's
own message after the prompt's name. A prompt has no `isError` reply, so raising is how it refuses a
value, and the SDK caught it as it catches a tool's (answered `isError` with the message). The SDK
2.x answers a bare "Error rendering prompt NAME" for an exception it did not expect instead, and
the prompt's own `MCPError` with its code."""

INTERNAL_ERROR_CODES = frozenset({-32603, 0})
"""JSON-RPC internal error, and the code 0 handshake-era SDK servers use for unhandled exceptions."""
