"""`fuzzgate report`: the HTML page over a shared store, drawn from the store alone (no worker, no
server, no config file needed). It reads the store and hands plain values to the renderer
(`fuzzgate.report.html`); it never writes to the store."""

from __future__ import annotations

import time
from collections import Counter
from pathlib import Path

from rich.console import Console
from rich.markup import escape

from fuzzgate.check.secrets import Redactor, url_secrets
from fuzzgate.model.commands import subject_label
from fuzzgate.model.errors import ExitCode, UsageError
from fuzzgate.model.files import check_output_directory, write_atomic, write_failed
from fuzzgate.report.html import render_html
from fuzzgate.report.html_data import StoreData, TargetData
from fuzzgate.store.shared import SharedStore, StoreError, is_url

DEFAULT_OUT = Path(".fuzzgate/report.html")

REPORT_RETRY_S = 5.0
"""How long a read retries an unreachable Redis: a page drawn on demand should fail fast, not wait
out a restart the way a worker does."""


def read_store(store: SharedStore, target: str | None = None, *, now: float | None = None) -> StoreData:
    """Everything the page shows, read from `store`: one target's (when `target` is given) or
    every target's. Raises `UsageError` when `target` is not in the store."""
    names = store.targets()
    if target is not None:
        if target not in names:
            held = ", ".join(names) if names else "no target yet"
            raise UsageError(f"no target {target!r} in {store.location} (it holds: {held})")
        names = [target]
    targets = []
    for name in names:
        corpus = Counter(subject_label(entry.surface, entry.tool) for entry in store.corpus(name).entries)
        targets.append(
            TargetData(
                name=name,
                findings=tuple(store.findings(name)),
                stats=tuple(store.stats(name)),
                corpus=dict(corpus),
            )
        )
    workers = store.workers()
    if target is not None:
        workers = [w for w in workers if target in w.targets]
    return StoreData(
        location=store.location,
        generated=time.time() if now is None else now,
        targets=tuple(targets),
        workers=tuple(workers),
        skipped=tuple(store.skipped),
    )


def open_for_reading(spec: str) -> SharedStore:
    """The store at `spec`; a directory must exist (a typo would otherwise draw an empty page)."""
    if not is_url(spec) and not Path(spec).is_dir():
        raise StoreError(f"{spec}: no store here (not a directory)")
    return SharedStore.open(spec, retry_for=REPORT_RETRY_S)


def report_command(
    console: Console, spec: str, out: Path | None, *, target: str | None = None, secret_patterns: tuple[str, ...] = ()
) -> int:
    """Draw the page of the store at `spec` into `out` (default `DEFAULT_OUT`), atomically. A store
    that cannot be read raises `StoreError` (exit 2) before anything is written; a page that cannot
    be written, `UsageError` (exit 2), the previous page left as it was."""
    out = out or DEFAULT_OUT
    check_output_directory(out.parent, what="directory of --out", files=(out.name,))
    with open_for_reading(spec) as store:
        data = read_store(store, target)
    page = render_html(data, Redactor(url_secrets(spec), secret_patterns))
    try:
        write_atomic(out, page)
    except OSError as exc:
        # Checked before the store was read; what changed since (a full disk) is said in one line.
        raise write_failed("the page", out, exc, hint="choose another --out, or make room there") from None
    findings = sum(len(t.findings) for t in data.targets)
    console.print(
        escape(
            f"wrote {out}: {len(data.targets)} target(s), {findings} finding(s), {len(data.workers)} worker(s)"
            + (f"; {len(data.skipped)} value(s) in the store could not be read" if data.skipped else "")
        ),
        highlight=False,
        soft_wrap=True,
    )
    return int(ExitCode.OK)
