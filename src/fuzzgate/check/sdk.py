"""Which MCP SDK a server runs on, and which of its symptoms are the SDK's rather than the server's.

A server author cannot fix their SDK's behaviour, only upgrade it; a gate that fails every server on
an SDK for the SDK's bug is noise. So fuzzgate names the SDK where it can tell, and reports the
SDK's symptoms once per server, low, with `cause: sdk` (`Observation.cause`), which no gate fails on
unless `fail_on_sdk` is set.

How the SDK is known, most reliable first (README, "What it finds", "Caused by the SDK"):

1. the server's process: a Python interpreter maps its extension modules from the `site-packages`
   it imports from, and the SDK's distribution metadata lies there (`mcp-X.Y.Z.dist-info`); a
   Node.js process loads the `@modelcontextprotocol/sdk` that `require` finds from its script. The
   engine reads that once per run (`target.runtime.server_sdk`) into `ServerFacts.sdk`;
2. a traceback's frames in the SDK's package (`site-packages/mcp/...`,
   `node_modules/@modelcontextprotocol/sdk/...`), its version read from the package's metadata
   beside them (`mcp-*.dist-info/METADATA`, the SDK's `package.json`), when that file exists here.

`serverInfo` from `initialize` is not used: it names the server (and some SDK releases fill in
their own version when the server gives none, others do not).

What is the SDK's:

- a rejection by raising: input the schema forbids that the SDK refused before the server's code
  ran (a validation error logged with a traceback through the SDK and its validator only);
- the lone-surrogate request the Python SDK's transport drops without a reply (every mcp release
  known to fuzzgate, 1.x and 2.x): the request never answered while the server went on answering
  others, on a server the process shows runs on the Python SDK;
- a death whose traceback is the SDK's (`died_in_sdk`): the process died of a request (a lone
  surrogate, a protocol probe) with every frame of what raised in the SDK's package, what the SDK
  runs on and the standard library, none in the server's own code or another package. Told from
  the traceback alone, never from the server's name;
- a request the TypeScript SDK's own request schema refused (`envelope_rejection`): it answers
  -32603 with zod's list of issues, each at a path under the request's `params`, which only the
  SDK validates (a handler is given the arguments, never the request). Told from the reply alone,
  so it holds for a Node.js server and for an HTTP server fuzzgate does not start.

A server that stopped answering on a request, one that died with no traceback, or with any frame
of its own code (or of another package) in it, and one fuzzgate cannot tie to the SDK, keeps the
finding as its own.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any, Final

from fuzzgate.check.environment import SandboxCause
from fuzzgate.check.normalize import SDK_PACKAGES, package_of
from fuzzgate.check.traceback import Trace
from fuzzgate.model.findings import Surface

PYTHON_SDK = "mcp"
TYPESCRIPT_SDK = "@modelcontextprotocol/sdk"
_VALIDATORS = frozenset({"pydantic", "pydantic_core", "zod", "anyio", "starlette"})
"""What an SDK validates arguments and runs handlers with: their frames are the SDK's doing too."""

_LANGUAGE = {PYTHON_SDK: "Python", "fastmcp": "Python", TYPESCRIPT_SDK: "TypeScript"}
SURROGATE_FIXED_IN: dict[str, str] = {}
"""The first release of each SDK whose transport answers a request holding a lone surrogate, where
one is known (none is, as of mcp 2.3)."""
ZOD_OWN_CONSTRUCTOR_FIXED_IN: Final = "4.1.13"
"""The first zod whose records take an object with its own `constructor` key: before it, zod 4's
`isPlainObject` (and zod 3.25's `zod/v4`, which the TypeScript SDK 1.x validates with) took such an
object for a class instance, so the SDK refused `{"constructor": {}}` as a tool's arguments
(checked against each release's `v4/core/util.js`)."""


@dataclass(frozen=True, slots=True)
class Sdk:
    """An MCP SDK a server runs on: its package and, where it could be read, its version."""

    package: str
    version: str | None = None

    def __str__(self) -> str:
        language = _LANGUAGE.get(self.package)
        name = f"the {language} MCP SDK" if language else "the MCP SDK"
        version = f" {self.version}" if self.version else ", version not known"
        return f"{name} ({self.package}{version})"

    def upgrade_advice(self, fixed_in: Mapping[str, str] | None = None) -> str:
        """What a server author can do about the SDK's bug: upgrade to the release `fixed_in` names,
        or that none is known to fix it; without `fixed_in` (a bug fuzzgate follows no releases
        for) that whether one does is not known."""
        if fixed_in is None:
            return f"fuzzgate does not know whether a newer {self.package} fixes it: try upgrading first"
        fixed = fixed_in.get(self.package)
        if fixed is None:
            return f"no release of {self.package} is known to fix it: upgrading does not help yet"
        return f"{self.package} {fixed} fixes it: upgrading is the fix"


@dataclass(slots=True)
class ServerFacts:
    """What the engine learnt about the server fuzzgate started, for the checks (filled once the
    server is up; empty for an HTTP target fuzzgate did not start)."""

    sdk: Sdk | None = None
    """The SDK the server's process runs on, where it could be read (`target.runtime`)."""
    jailed: bool = False
    """Whether the server runs in fuzzgate's jail: a loopback-only network, the file system
    read-only outside its scope (errors that causes are the sandbox's, `check.environment`)."""
    environment: dict[SandboxCause, set[str]] = field(default_factory=dict)
    """The errors the sandbox caused, by cause, with the tools they touched: the run's notes."""
    time_defaults: dict[str, frozenset[str]] = field(default_factory=dict)
    """Per tool, its arguments that ask for time (`duration`, `delay_ms`) with a positive default in
    its input schema: a call that leaves one out asks for that time (`check.slow`)."""


def sdk_in_frames(trace: Trace) -> Sdk | None:
    """The SDK a traceback runs through, with its version when its metadata is readable here."""
    for frame in trace.frames:
        package = package_of(frame.path)
        if package in SDK_PACKAGES:
            return Sdk(package, version_beside(frame.path.replace("\\", "/"), package))
    return None


def through_sdk_only(trace: Trace) -> Sdk | None:
    """The SDK, when `trace` ran through nothing but the SDK, what it validates with and runs on and
    the standard library (for a call the schema forbids: the SDK rejected it before the server's
    code ran)."""
    sdk = sdk_in_frames(trace)
    return None if sdk is None or _outside_sdk(trace) else sdk


def _outside_sdk(trace: Trace) -> bool:
    """Whether `trace` has a frame of the server's own code (its checkout, or its installed package)
    or of any package but the SDKs and what they run on."""
    for frame in trace.frames:
        package = package_of(frame.path)
        if package is None and not frame.in_library:
            return True  # code outside any library: the server's
        if package is not None and package not in SDK_PACKAGES | _VALIDATORS:
            return True  # an installed server's package, or a library it called
    return False


_GROUPS = frozenset({"ExceptionGroup", "BaseExceptionGroup"})


def died_in_sdk(traces: Sequence[Trace], known: Sdk | None = None) -> Sdk | None:
    """The SDK, when the tracebacks a server died with (`traceback.parse_traces` of its stderr) are
    the SDK's: none has a frame outside the SDK, what it runs on and the standard library, and one
    at least runs through the SDK. None when there is no traceback, or when any has a frame of the
    server's own code or of another package: the death is the server's then.

    An exception group's own traceback is left out: its frames are the callers it unwound on its
    way out (the server's `main`, which started the SDK's loop, as every server does), while what
    raised is in its sub-exceptions' tracebacks, which are read. `known` (the SDK the process
    showed) gives the version where the frames' metadata could not be read."""
    raised = [trace for trace in traces if trace.exc_type.rsplit(".", 1)[-1] not in _GROUPS]
    if any(_outside_sdk(trace) for trace in raised):
        return None
    sdk = next((found for trace in raised if (found := sdk_in_frames(trace)) is not None), None)
    if sdk is not None and sdk.version is None and known is not None and known.package == sdk.package:
        return known
    return sdk


def sdk_death(sdk: Sdk, fixed_in: Mapping[str, str] | None = None) -> str:
    """A death `died_in_sdk` tied to `sdk`, in words, with what upgrading does (`Sdk.upgrade_advice`)."""
    return (
        f"it died in {sdk}, every frame of what raised in the SDK or what it runs on and none in the "
        f"server's own code; the SDK's bug, not the server's ({sdk.upgrade_advice(fixed_in)})"
    )


@dataclass(frozen=True, slots=True)
class EnvelopeIssue:
    """The first issue zod found with a request the TypeScript SDK refused (`envelope_rejection`)."""

    path: str
    """Where in the request, dotted from `params` ("params.arguments")."""
    message: str
    """zod's words ("Invalid input: expected record, received object")."""

    def explained(self, arguments: Mapping[str, Any], known: Sdk | None = None) -> str:
        """What the SDK did, and what upgrading does, in words; `known` is the SDK the server's
        process showed (`ServerFacts.sdk`), for its version."""
        sdk = known if known is not None and known.package == TYPESCRIPT_SDK else Sdk(TYPESCRIPT_SDK)
        said = (
            f"{sdk} refused the request before the server's code ran: its request "
            f"schema (zod) found `{self.path}` invalid ({self.message}); the SDK's validation, not "
            "the server's bug"
        )
        if self.path == "params.arguments" and "record" in self.message and "constructor" in arguments:
            return (
                f"{said} (zod before {ZOD_OWN_CONSTRUCTOR_FIXED_IN} takes an object with its own "
                f"`constructor` key for a class instance; zod {ZOD_OWN_CONSTRUCTOR_FIXED_IN} fixes it: "
                "upgrading the zod the server installs is the fix)"
            )
        return f"{said} ({sdk.upgrade_advice()})"


def envelope_rejection(text: str) -> EnvelopeIssue | None:
    """The first issue, when `text` (an internal error's message) is zod's list of issues with a
    request, every one at a path under the request's `params`: the TypeScript SDK refused the
    request with its own request schema, before any handler ran (it answers a zod error -32603, as
    any exception without a JSON-RPC code). None for anything else, a handler's own zod error
    included: a handler validates its arguments, never the request around them."""
    stripped = text.strip()
    if not stripped.startswith("["):
        return None
    try:
        issues = json.loads(stripped)
    except ValueError:
        return None
    if not isinstance(issues, list) or not issues:
        return None
    for issue in issues:
        if not isinstance(issue, dict) or not isinstance(issue.get("code"), str):
            return None
        path, message = issue.get("path"), issue.get("message")
        if not isinstance(path, list) or not path or path[0] != "params" or not isinstance(message, str):
            return None
    first = issues[0]
    return EnvelopeIssue(".".join(str(part) for part in first["path"]), first["message"])


_DIST_VERSION = re.compile(r"^Version:\s*(\S+)", re.MULTILINE)


def version_beside(path: str, package: str) -> str | None:
    """The version of `package`, whose file `path` is, from the metadata installed beside it."""
    marker = f"node_modules/{package}/"
    if marker in path:
        return _package_json_version(path[: path.rindex(marker) + len(marker)] + "package.json")
    for directory in ("site-packages/", "dist-packages/"):
        if directory in path:
            return _dist_info_version(path[: path.rindex(directory) + len(directory)], package)
    return None


@lru_cache(maxsize=64)
def _dist_info_version(site_packages: str, package: str) -> str | None:
    try:
        candidates = sorted(Path(site_packages).glob(f"{package}-*.dist-info/METADATA"))
        for metadata in candidates:
            found = _DIST_VERSION.search(metadata.read_text(encoding="utf-8", errors="replace")[:4096])
            if found:
                return found[1]
    except OSError:
        return None
    return None


def package_json_version(path: str) -> str | None:
    """The version an npm package's `package.json` at `path` gives, if it can be read."""
    return _package_json_version(path)


@lru_cache(maxsize=64)
def _package_json_version(path: str) -> str | None:
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    version = data.get("version") if isinstance(data, dict) else None
    return version if isinstance(version, str) else None


def installed_sdk(site_packages: str) -> Sdk | None:
    """The Python SDK installed in `site-packages`, if it is."""
    version = _dist_info_version(site_packages.rstrip("/") + "/", PYTHON_SDK)
    return Sdk(PYTHON_SDK, version) if version is not None else None


_SDK_NAMES_REQUEST = re.compile(r"Error (executing tool|rendering prompt|reading resource) (\S+?):?(?:\s|$)")
"""The Python SDK's words for the request a handler's exception came from (`tools/base.py`,
`prompts/base.py`, `server.py` of `mcp.server.mcpserver`)."""
_NAMED_SURFACE = {
    "executing tool": Surface.TOOL,
    "rendering prompt": Surface.PROMPT,
    "reading resource": Surface.RESOURCE,
}


def names_another_request(traces: Sequence[Trace], surface: Surface, name: str) -> bool:
    """Whether the SDK says one of `traces` came from another request than a call of `name` on
    `surface`: another surface, or another tool or prompt ("Error executing tool split_bill"). A
    resource is named by its URI, which a template's call does not hold: only another surface tells
    it apart; so does an empty `name` (a caller that did not say)."""
    for trace in traces:
        named = _SDK_NAMES_REQUEST.match(trace.message.strip())
        if named is None:
            continue
        other = _NAMED_SURFACE[named[1]]
        if other is not surface or (other is not Surface.RESOURCE and name and named[2] != name):
            return True
    return False
