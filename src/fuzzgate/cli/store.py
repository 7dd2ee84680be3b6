"""`fuzzgate store export | import | merge | show`: moving state between shared stores, and a look inside.

- `export DEST --store SRC`: every value of SRC added to DEST (a directory or a Redis URL); with
  `--corpus-dir DIR`, SRC's corpus also written as a run's corpus directory (`<DIR>/<slug(target)>/
  <key>.json`), ready for `fuzzgate run --corpus DIR` in CI.
- `import SRC --store DEST`: every value of SRC added to DEST; with `--corpus-dir DIR`, a run's
  corpus directory (one subdirectory per target, or one target's directory) added too.
- `merge SRC... --store DEST`: every value of each SRC added to DEST, then values a later one of the
  same worker supersedes dropped (`SharedStore.compact`): every input and finding is kept, and the
  statistics of each worker are its latest snapshot.
- `show --store URL|DIR`: targets, corpus sizes, findings by state, workers.

Every move is a union: nothing in the destination is removed but superseded records. Values that
do not parse are skipped, counted and listed, never fatal; a store that cannot be reached or
written is a `StoreError` (exit 2). Nothing here writes a value a worker did not write: findings
are redacted by the worker that stored them, and a Redis URL's password is never printed.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from fuzzgate.model.commands import subject_label
from fuzzgate.model.corpus import slug
from fuzzgate.model.errors import ExitCode, UsageError
from fuzzgate.model.files import check_output_directory
from fuzzgate.store.corpus_store import CorpusStore, targets
from fuzzgate.store.layout import KINDS, PREFIX
from fuzzgate.store.records import STATES
from fuzzgate.store.shared import SharedStore, is_url

CLI_RETRY_S = 10.0
"""How long a command retries a Redis it cannot reach before it says so (a worker waits longer)."""

SHOWN_SKIPS = 10
"""Skipped values listed one per line; the rest are counted."""


def open_store(
    spec: str, *, retry_for: float = CLI_RETRY_S, must_exist: bool = False, written: bool = False
) -> SharedStore:
    """The store at `spec`; with `must_exist`, a directory that is not there is a usage error
    (a mistyped source would otherwise read as an empty store); with `written`, so is a directory
    that cannot be written, before anything is read or copied."""
    if not is_url(spec) and written:
        check_output_directory(Path(spec), what="store directory")
    if not is_url(spec) and must_exist:
        path = Path(spec)
        if not path.is_dir():
            raise UsageError(f"{spec} is not a store directory", hint="pass an existing directory or a redis:// URL")
        if not (path / PREFIX.split("/")[0]).is_dir() and targets(path):
            raise UsageError(
                f"{spec} is a run's corpus directory, not a store",
                hint="import it with --corpus-dir, e.g. fuzzgate store import --corpus-dir DIR --store URL",
            )
    store = SharedStore.open(spec, retry_for=retry_for)
    if is_url(spec):
        ping = getattr(store.db, "ping", None)
        if ping is not None:
            ping()
    return store


def _say(console: Console, text: str) -> None:
    # One line however long (paths, URLs): a wrapped line is harder to grep in a CI log.
    console.print(escape(text), soft_wrap=True, highlight=False)


def _counts_line(counts: dict[str, int]) -> str:
    words = {"targets": "target", "corpus": "corpus entry", "findings": "finding record", "stats": "stats snapshot"}
    parts = []
    for kind in KINDS:
        n = counts.get(kind, 0)
        noun = words.get(kind, "worker")
        plural = noun.replace("entry", "entries") if noun.endswith("entry") else noun + "s"
        parts.append(f"{n} {noun if n == 1 else plural}")
    return ", ".join(parts)


def _report_skips(console: Console, stores: Sequence[SharedStore], extra: Sequence[str] = ()) -> int:
    reasons = [*extra, *(text for store in stores for text in store.skipped)]
    for text in reasons[:SHOWN_SKIPS]:
        console.print(f"[yellow]skipped:[/] {escape(text)}", highlight=False, soft_wrap=True)
    if len(reasons) > SHOWN_SKIPS:
        console.print(f"[yellow]skipped:[/] {len(reasons) - SHOWN_SKIPS} more", highlight=False, soft_wrap=True)
    return len(reasons)


# --- export / import / merge ----------------------------------------------------------------------


def export_command(
    console: Console, source: str, dest: str | None, corpus_dir: Path | None, *, retry_for: float = CLI_RETRY_S
) -> int:
    """Copy the store at `source` to `dest` and/or write its corpus as a run's corpus directory."""
    if dest is None and corpus_dir is None:
        raise UsageError("store export needs a DEST (a directory or redis:// URL) or --corpus-dir DIR")
    if corpus_dir is not None:
        check_output_directory(corpus_dir, what="corpus directory (--corpus-dir)")
    with open_store(source, retry_for=retry_for, must_exist=True) as src:
        if dest is not None:
            with open_store(dest, retry_for=retry_for, written=True) as out:
                _refuse_same(src, out)
                counts = src.copy_to(out)
                _say(console, f"exported {src.location} to {out.location}: new there {_counts_line(counts)}")
        if corpus_dir is not None:
            written = write_run_corpus(src, corpus_dir)
            _say(console, f"wrote {written} new corpus file(s) of {src.location} to {corpus_dir}")
        skipped = _report_skips(console, [src])
    _skips_line(console, skipped)
    return ExitCode.OK


def import_command(
    console: Console,
    source: str | None,
    dest: str,
    corpus_dir: Path | None,
    target: str | None,
    *,
    retry_for: float = CLI_RETRY_S,
) -> int:
    """Add the store at `source` and/or a run's corpus directory to the store at `dest`."""
    if source is None and corpus_dir is None:
        raise UsageError("store import needs a SRC (a directory or redis:// URL) or --corpus-dir DIR")
    extra: list[str] = []
    with open_store(dest, retry_for=retry_for, written=True) as out:
        stores = [out]
        if source is not None:
            with open_store(source, retry_for=retry_for, must_exist=True) as src:
                _refuse_same(src, out)
                stores.append(src)
                counts = src.copy_to(out)
                _say(console, f"imported {src.location} into {out.location}: new there {_counts_line(counts)}")
        if corpus_dir is not None:
            added, extra = read_run_corpus(out, corpus_dir, target)
            for name, n in added.items():
                _say(console, f"imported {n} new corpus entries of {name} from {corpus_dir} into {out.location}")
            if not added:
                _say(console, f"no corpus entries found in {corpus_dir}")
        skipped = _report_skips(console, stores, extra)
    _skips_line(console, skipped)
    return ExitCode.OK


def merge_command(console: Console, sources: Sequence[str], dest: str, *, retry_for: float = CLI_RETRY_S) -> int:
    """Union every store of `sources` into `dest`, then drop superseded records."""
    total: Counter[str] = Counter()
    stores: list[SharedStore] = []
    with open_store(dest, retry_for=retry_for, written=True) as out:
        stores.append(out)
        for source in sources:
            src = open_store(source, retry_for=retry_for, must_exist=True)
            stores.append(src)
            try:
                _refuse_same(src, out)
                counts = src.copy_to(out)
            finally:
                src.close()
            total.update(counts)
            _say(console, f"merged {src.location}: new in {out.location} {_counts_line(counts)}")
        dropped = out.compact()
        line = f"{out.location} now holds {len(out.targets())} target(s); {dropped} superseded record(s) dropped"
        _say(console, line)
        skipped = _report_skips(console, stores)
    _skips_line(console, skipped)
    return ExitCode.OK


def _refuse_same(src: SharedStore, out: SharedStore) -> None:
    same = src.location == out.location
    if not is_url(src.location) and not is_url(out.location):
        same = Path(src.location).resolve() == Path(out.location).resolve()
    if same:
        raise UsageError(f"{src.location} is both the source and the destination")


def _skips_line(console: Console, skipped: int) -> None:
    if skipped:
        console.print(f"{skipped} value(s) could not be read and were skipped (listed above)", soft_wrap=True)


def write_run_corpus(store: SharedStore, root: Path) -> int:
    """Write every target's corpus entries of `store` under `root` as a run lays them out
    (`<root>/<slug(target)>/<key>.json`); entries already there stay. Returns the files written."""
    written = 0
    for name in store.targets():
        entries = store.corpus(name).entries
        if not entries:
            continue
        corpus = CorpusStore(root, name)
        held = corpus.load().entries
        # `replace` writes what is missing before it deletes anything, and deletes only copies of
        # a kept entry under another name: every entry there stays.
        new, _ = corpus.replace([*held, *entries])
        written += new
    return written


def read_run_corpus(store: SharedStore, root: Path, target: str | None) -> tuple[dict[str, int], list[str]]:
    """Add the entries of a run's corpus directory `root` to `store`: one subdirectory per target
    (named by `slug`: a target the store already holds under that slug keeps its name), or `root`
    itself one target's directory (named `target`, else the directory's name). Returns the new
    entries per target and the files skipped with why."""
    if not root.is_dir():
        raise UsageError(f"{root} is not a corpus directory", hint="pass a run's corpus directory (.fuzzgate/corpus)")
    names = targets(root)
    if target is not None or not names:
        directories = {target or root.name: root}
    else:
        known = {slug(name): name for name in store.targets()}
        directories = {known.get(name, name): root / name for name in names}
    added: dict[str, int] = {}
    skipped: list[str] = []
    for name, directory in sorted(directories.items()):
        load = CorpusStore.at(directory).load()
        skipped.extend(load.skipped)
        if load.entries:
            added[name] = store.add_corpus(name, load.entries, cap=False)
    return added, skipped


# --- show -----------------------------------------------------------------------------------------


def show_command(console: Console, spec: str, *, retry_for: float = CLI_RETRY_S) -> int:
    """Print what the store at `spec` holds: per target its corpus, findings and statistics; workers."""
    with open_store(spec, retry_for=retry_for, must_exist=True) as store:
        names = store.targets()
        _say(console, f"store {store.location}: {len(names)} target(s)")
        if names:
            console.print(_targets_table(store, names))
        workers = store.workers()
        if workers:
            console.print(_workers_table(store, time.time()))
        else:
            console.print("no worker has written a heartbeat", highlight=False)
        skipped = _report_skips(console, [store])
    _skips_line(console, skipped)
    return ExitCode.OK


def _targets_table(store: SharedStore, names: Sequence[str]) -> Table:
    table = Table(title="targets", title_justify="left")
    for column in ("target", "corpus", "tools", *STATES, "workers", "calls"):
        table.add_column(column, justify="left" if column in ("target", "tools") else "right")
    for name in names:
        entries = store.corpus(name).entries
        per_tool = Counter(subject_label(entry.surface, entry.tool) for entry in entries)
        by_state = Counter(found.state for found in store.findings(name))
        stats = store.stats(name)
        calls = sum(tool.calls for snapshot in stats for tool in snapshot.tools.values())
        tools = ", ".join(f"{tool} {n}" for tool, n in per_tool.most_common(4))
        if len(per_tool) > 4:
            tools += f", +{len(per_tool) - 4} more"
        table.add_row(
            escape(name),
            str(len(entries)),
            escape(tools),
            *(str(by_state[state]) for state in STATES),
            str(len(stats)),
            str(calls),
        )
    return table


def _workers_table(store: SharedStore, now: float) -> Table:
    table = Table(title="workers", title_justify="left")
    for column in ("worker", "host", "pid", "state", "last seen", "targets"):
        table.add_column(column)
    for worker in store.workers():
        table.add_row(
            escape(worker.id),
            escape(worker.host),
            str(worker.pid),
            worker.state,
            f"{max(0.0, now - worker.seen):.0f}s ago",
            escape(", ".join(worker.targets)),
        )
    return table
