"""bench-nested: a media-and-layout MCP server (MCPServer) whose bugs each sit behind two to four
nested conditions that one random draw almost never satisfies together: a magic string the code
compares against, a number in a narrow range, a combination of enum values and flags, an array of
one length with one kind of item at one place, a state armed by an earlier call, a path deep in
optional objects. Bugs NST-1 .. NST-6 (issue 11).

    python nested.py            # stdio; set BENCH_GROUND_TRUTH=FILE to record triggered bugs
    python nested_clean.py      # the clean twin: the same tools, every deep branch handled

Each condition is its own `if`, so a fuzzer guided by coverage sees every step it gets past, and
the values compared against are plain constants in the code (what a collector of comparison
constants hands over); no description, schema or example names them. Whether a step also shows in
the reply (so behaviour feedback can see it) differs by bug, on purpose:

| bug | tool | steps | shows in the reply |
| --- | --- | --- | --- |
| NST-1 | `render_theme` | `theme == "xylophone-7"`, then `depth > 8` | the first step |
| NST-2 | `allocate_buffer` | `4093 < size < 4099`, then `not aligned` | nothing |
| NST-3 | `encode_media` | codec, container, layout, then `lossless and not dither` | nothing |
| NST-4 | `layout_segments` | `len(segments) == 7`, `segments[3].kind == "break"`, its `weight == 0` | the first step |
| NST-5 | `set_profile` → `run_batch` | armed `profile == "overdrive"`, then `jobs > 50` | the first step |
| NST-6 | `connect_proxy` | `network`, `proxy`, `auth` present, `auth.scheme == "ntlm-legacy"` | the first three |

Every other input is handled: a refusal is a polite `ToolError`, never an exception.
"""

from __future__ import annotations

import os
import signal
import sys
from typing import Annotated, Literal

import _truth
import anyio
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp_types import ToolAnnotations
from pydantic import BaseModel, Field

READ_ONLY = ToolAnnotations(read_only_hint=True, destructive_hint=False, idempotent_hint=True)
WRITES = ToolAnnotations(read_only_hint=False, destructive_hint=False, idempotent_hint=True)

PAGE = 4096
SERVICE_KEY = "AKIAJ3NESTEDPROXY7QX"
"""The proxy service account's access key: the secret NST-6 leaks (the clean twin redacts it)."""

Codec = Literal["pcm", "mp3", "aac", "opus", "vorbis", "flac", "alac", "wav"]
Container = Literal["mp4", "mkv", "ogg", "webm", "mov", "raw"]
Layout = Literal["mono", "stereo", "2.1", "5.1", "7.1"]
SegmentKind = Literal["text", "image", "rule", "break", "quote"]


class Segment(BaseModel):
    kind: SegmentKind
    weight: Annotated[int, Field(ge=0, le=100, description="Relative height of the segment.")] = 1


class Auth(BaseModel):
    scheme: Annotated[str, Field(min_length=1, max_length=32, description="Authentication scheme.")]
    user: Annotated[str, Field(max_length=64)] = "proxy"


class Proxy(BaseModel):
    host: Annotated[str, Field(min_length=1, max_length=253)]
    port: Annotated[int, Field(ge=1, le=65535)] = 3128
    auth: Auth | None = None


class Network(BaseModel):
    timeout_s: Annotated[int, Field(ge=1, le=300)] = 30
    proxy: Proxy | None = None


class Settings(BaseModel):
    name: Annotated[str, Field(max_length=64)] = "default"
    network: Network | None = None


class _Profile:
    """What `set_profile` armed for the process's life (one client, one server, as stdio goes)."""

    profile = "balanced"
    threshold = 10


def build(*, clean: bool) -> MCPServer:
    """The server; `clean` handles every deep branch instead of misbehaving (nested_clean.py)."""
    app = MCPServer(
        "bench-nested-clean" if clean else "bench-nested",
        version="1.0.0",
        instructions="Themes, buffers, media encoding, page layout, batch profiles and proxy settings.",
    )
    armed = _Profile()

    @app.tool(annotations=READ_ONLY)
    def render_theme(
        theme: Annotated[str, Field(min_length=1, max_length=64, description="The theme's name.")],
        depth: Annotated[int, Field(ge=0, le=10, description="How many nesting levels to style.")] = 2,
    ) -> str:
        """Render a theme's stylesheet down to a nesting depth."""
        levels = ["body", "section", "article", "aside", "div", "p", "span", "em", "code"]
        if theme == "xylophone-7":
            # The legacy theme keeps one palette per level, and has nine of them.
            if depth > 8:
                if clean:
                    raise ToolError("the legacy theme styles at most 8 nesting levels")
                # NST-1: the palette lookup runs past the ninth level (KeyError).
                _truth.triggered("NST-1")
                palettes = dict(enumerate(levels))
                return f"rendered the legacy theme: {[palettes[n] for n in range(depth + 1)]}"
            return f"rendered the legacy theme down to {levels[depth]}"
        return f"rendered {len(theme)}-letter theme with {depth * 3 + 4} rules"

    @app.tool(annotations=READ_ONLY)
    def allocate_buffer(
        size: Annotated[int, Field(ge=0, le=65536, description="Bytes to allocate.")],
        aligned: Annotated[bool, Field(description="Round the buffer up to whole pages.")] = True,
    ) -> str:
        """Allocate a scratch buffer and say where it landed."""
        pages = (size + PAGE - 1) // PAGE
        if 4093 < size < 4099:  # noqa: SIM102 (one `if` per step: each is a branch of its own)
            # Sizes just around a page share the arena's last slot with its header.
            if not aligned:
                if clean:
                    return f"allocated {size} bytes in {pages + 1} pages"
                # NST-2: the header is overwritten; the allocator aborts.
                _truth.triggered("NST-2")
                sys.stderr.write("malloc(): corrupted top size\n")
                sys.stderr.flush()
                os.kill(os.getpid(), signal.SIGABRT)
        return f"allocated {size} bytes in {max(pages, 1)} pages"

    @app.tool(annotations=READ_ONLY)
    async def encode_media(
        codec: Codec,
        container: Container = "mp4",
        layout: Layout = "stereo",
        lossless: bool = False,
        dither: bool = True,
    ) -> str:
        """Encode the current clip and say how large the stream is."""
        kbps = {"mono": 96, "stereo": 160, "2.1": 192, "5.1": 384, "7.1": 512}[layout]
        if codec == "flac":
            if container == "mkv":
                if layout == "5.1":
                    # The 5.1 downmix waits for the dither stage's first frame.
                    if lossless and not dither:
                        if clean:
                            return f"encoded one stream at {kbps * 4} kbps"
                        # NST-3: without dithering that stage never starts: the call never returns.
                        _truth.triggered("NST-3")
                        await anyio.sleep_forever()
                    kbps *= 3
                kbps += 8
            kbps *= 2
        return f"encoded one stream at {kbps} kbps"

    @app.tool(annotations=READ_ONLY)
    def layout_segments(
        segments: Annotated[list[Segment], Field(max_length=16, description="The page's segments, top to bottom.")],
    ) -> str:
        """Lay a page's segments out and say how its height is shared."""
        total = sum(s.weight for s in segments)
        if len(segments) == 7:
            # Seven segments make a two-column page split around the middle one.
            middle = segments[3]
            if middle.kind == "break":
                if middle.weight == 0:
                    if clean:
                        return "laid out 7 segments in one column (the middle break has no height)"
                    # NST-4: the split divides by the break's height (ZeroDivisionError).
                    _truth.triggered("NST-4")
                ratio = sum(s.weight for s in segments[:3]) / middle.weight
                return f"laid out 7 segments in two columns, ratio {ratio:.2f}"
            return f"laid out 7 segments in two columns of height {total}"
        return f"laid out {len(segments)} segments in one column of height {total}"

    @app.tool(annotations=WRITES)
    def set_profile(
        profile: Annotated[str, Field(min_length=1, max_length=32, description="Scheduler profile name.")],
        threshold: Annotated[int, Field(ge=0, le=1000, description="Queue length that triggers it.")] = 10,
    ) -> str:
        """Choose the batch scheduler's profile for the next batches."""
        armed.profile, armed.threshold = profile, threshold
        return "profile set"

    @app.tool(annotations=WRITES)
    def run_batch(jobs: Annotated[int, Field(ge=1, le=100, description="Jobs in the batch.")]) -> str:
        """Run a batch of jobs under the current profile."""
        if armed.profile == "overdrive":
            # The boosted scheduler keeps one worker slot per job, and has fifty.
            if jobs > 50:
                if clean:
                    return f"ran {jobs} jobs with the boosted scheduler in {(jobs + 49) // 50} rounds"
                # NST-5: the slot table overflows; an assertion aborts the process.
                _truth.triggered("NST-5")
                sys.stderr.write("python3: _sched.c:88: take_slot: Assertion `n < MAX_SLOTS' failed.\nAborted\n")
                sys.stderr.flush()
                os._exit(70)
            return f"ran {jobs} jobs with the boosted scheduler"
        waves = 1 + jobs // max(armed.threshold, 1)
        return f"ran {jobs} jobs in {waves} waves"

    @app.tool(annotations=READ_ONLY)
    def connect_proxy(settings: Settings) -> str:
        """Check the connection settings and say how requests will go out."""
        network = settings.network
        if network is None:
            return "requests go out directly (default network settings)"
        proxy = network.proxy
        if proxy is None:
            return f"requests go out directly, timeout {network.timeout_s} s"
        auth = proxy.auth
        if auth is None:
            return f"requests go through a proxy on port {proxy.port}, no authentication"
        if auth.scheme == "ntlm-legacy":
            # The legacy handshake is logged whole, with the service account's credentials.
            secret = "<redacted>" if clean else SERVICE_KEY
            if not clean:
                # NST-6: the service account's key goes back in the reply.
                _truth.triggered("NST-6")
            return f"requests go through a proxy with a legacy handshake (service key {secret})"
        return f"requests go through a proxy on port {proxy.port} as user #{len(auth.user)}"

    return app


if __name__ == "__main__":
    build(clean=False).run("stdio")
