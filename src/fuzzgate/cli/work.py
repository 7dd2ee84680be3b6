"""`fuzzgate work`: fuzz until stopped, cycle after cycle, sharing everything through the store.

HypoFuzz's pattern for soaking up idle machines. A worker holds nothing that matters: each cycle
it asks the store which target and tools need effort most (`worker_choice`), runs the engine on
them for `--cycle` seconds starting from the store's corpus of that target, and writes as it goes
(`worker_writer`, from its own thread): every ~5 s the entries it kept, the bugs it met (as `seen`)
and its statistics, and at the cycle's end the findings as verification left them. Workers join
and leave at any time; one killed mid-cycle loses only what it had not handed to the store yet.

SIGTERM or SIGINT ends the cycle under way (its servers are stopped), hands over what the cycle
found so far, drains the writes, marks the worker stopped and exits 0. The store being away (a
Redis restart, a network blip) never stops fuzzing: writes wait in the writer and are retried, and
the next cycle's reads wait for the store. Only at start does a store that cannot be reached, after
a bounded wait, end the worker (exit 2).
"""

from __future__ import annotations

import glob
import hashlib
import os
import signal
import socket
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from functools import partial
from pathlib import Path
from typing import TypeVar

from rich.console import Console
from rich.markup import escape

from fuzzgate import __version__
from fuzzgate.cli import interrupt
from fuzzgate.config import Config, Overrides, load_config
from fuzzgate.engine.events import CallFinished, Event, ServerReady
from fuzzgate.engine.execute import Engine
from fuzzgate.engine.result import EngineResult
from fuzzgate.engine.settings import EngineSettings
from fuzzgate.fleet.store_sync import StatsRecorder, keepable, merge_record, server_label
from fuzzgate.fleet.worker_choice import Candidate, Pick, ToolNeed, needs, pick
from fuzzgate.fleet.worker_writer import StoreWriter
from fuzzgate.learn.live_corpus import Seeds
from fuzzgate.model.commands import subject_label
from fuzzgate.model.corpus import CorpusEntry
from fuzzgate.model.errors import ExitCode, FuzzgateError, UsageError
from fuzzgate.model.files import check_output_directory
from fuzzgate.model.findings import Finding
from fuzzgate.plan.budget import TimeBox
from fuzzgate.record.results import Status
from fuzzgate.report.redaction import redact_finding
from fuzzgate.store.shared import (
    Environment,
    FindingRecord,
    SharedStore,
    StoreError,
    WorkerInfo,
    finding_state,
    is_url,
    new_worker_id,
)

FLUSH_S = 5.0
"""How often a cycle hands its new entries, bugs and statistics to the writer."""
CONNECT_S = 30.0
"""How long a worker waits for the store at start before it gives up (exit 2), by default."""
READ_RETRY_S = 10.0
"""How long one store operation retries a lost connection before the worker's own loop waits."""
STOP_DRAIN_S = 20.0
"""How long a stopping worker waits for the store to take what is still queued."""
FAILED_CYCLE_PAUSE_S = 10.0
MAX_FAILED_PAUSE_S = 300.0
MIN_CYCLE_S = 2.0
MAX_OWN_SEEDS = 4096
"""The most entries of its own a worker remembers per target to seed its next cycles with."""

_T = TypeVar("_T")


@dataclass(frozen=True, slots=True)
class WorkOptions:
    cycle_s: float = 60.0
    budget_s: float | None = None
    """Bounds the whole work; None: until stopped."""
    cycles: int | None = None
    nice: int = 10
    tools: int = 4
    """Tools fuzzed per cycle (more when more were never fuzzed)."""
    wait_s: float = CONNECT_S
    """How long to wait for the store at start."""


def load_configs(main: Config, also: Sequence[Path], overrides: Overrides, warn: Callable[[str], None]) -> list[Config]:
    """The worker's targets: the main config and each `--also` file, with the same flags laid over
    them except those naming a target (`--command`, `--arg`, `--url`, `--header`, `--name`), which
    apply to the main config only. Every target needs a distinct name."""
    own = replace(overrides, command=None, args=None, url=None, headers=None, name=None)
    configs = [main, *(load_config(path, own, os.environ, warn=warn) for path in also)]
    names = [config.target.display_name for config in configs]
    for name in names:
        if names.count(name) > 1:
            raise UsageError(f"two targets are both named {name!r}", hint="give each config a distinct [target] name")
    return configs


def work(configs: Sequence[Config], console: Console, options: WorkOptions) -> int:
    spec = configs[0].store
    if spec is None:
        raise UsageError("fuzzgate work needs a store", hint="pass --store redis://host:6379/0 (or a directory)")
    if not is_url(spec):
        # A worker's every write would be retried in vain: say it now, before the first cycle.
        check_output_directory(Path(spec), what="store directory (--store)")
    if options.cycle_s < MIN_CYCLE_S:
        raise UsageError(f"--cycle: at least {MIN_CYCLE_S:.0f}s (a cycle starts a server and replays seeds)")
    if options.nice:
        try:
            os.nice(options.nice)
        except OSError as exc:  # a negative --nice needs privileges
            raise UsageError(f"--nice {options.nice}: {exc.strerror}", hint="pass 0 or a positive N") from None
    try:
        reader = SharedStore.open(spec, retry_for=options.wait_s)
        reader.targets()  # unreachable after the wait: StoreError, exit 2
        reader.close()
        reader = SharedStore.open(spec, retry_for=READ_RETRY_S)
        worker = _Worker(configs, console, options, reader, spec)
    except (interrupt.Interrupted, KeyboardInterrupt):
        # Stopped while waiting for the store or starting: nothing was fuzzed or written, and a
        # supervisor stopping a worker is no failure (exit 0, as a worker stopped later).
        console.print("fuzzgate work: stopped before the first cycle; nothing was fuzzed or written")
        return ExitCode.OK
    return worker.run()


@dataclass(slots=True)
class _Target:
    config: Config
    index: int
    environment: Environment
    tools: dict[str, str] | None = None
    """Label -> name of the tools fuzzed here; None before this worker's first cycle on it."""
    recorders: dict[Environment, StatsRecorder] = field(default_factory=dict)
    kept: dict[str, CorpusEntry] = field(default_factory=dict)
    """The corpus entries this worker handed to the writer, by key: seeds of its next cycles even
    before the store has them (the writer may still be waiting for it)."""
    records: dict[str, FindingRecord] = field(default_factory=dict)
    """This worker's record per fingerprint, as of its finished cycles."""

    @property
    def name(self) -> str:
        return self.config.target.display_name


@dataclass(slots=True)
class _Cycle:
    """What the cycle under way has handed over so far."""

    target: _Target
    engine: Engine
    recorder: StatsRecorder | None = None
    environment: Environment | None = None
    seen: set[str] = field(default_factory=set)
    flushed: float = field(default_factory=time.monotonic)


class _Worker:
    def __init__(
        self, configs: Sequence[Config], console: Console, options: WorkOptions, reader: SharedStore, spec: str
    ) -> None:
        self.console = console
        self.options = options
        self.reader = reader
        self.id = new_worker_id()
        commit = Environment.detect(cwd=Path.cwd()).commit
        self.targets = [_Target(config, i, Environment(__version__, None, commit)) for i, config in enumerate(configs)]
        now = time.time()
        host = socket.gethostname().split(".")[0] or "host"
        info = WorkerInfo(self.id, host, os.getpid(), now, now, tuple(t.name for t in self.targets))
        self.writer = StoreWriter(SharedStore.open(spec, retry_for=READ_RETRY_S), info, self._log)
        self.started = time.monotonic()
        self.cycle: _Cycle | None = None
        self.cycles = 0
        self.failures = 0
        """Cycles that failed in a row (each waits longer before the next)."""
        self.failures_seen: set[str] = set()

    def _log(self, message: str) -> None:
        self.console.print(escape(f"[{self.id}] {message}"), highlight=False, soft_wrap=True)

    def run(self) -> int:
        options = self.options
        budget = f", whole work {options.budget_s:.0f}s" if options.budget_s is not None else ""
        self._log(
            f"fuzzing {', '.join(t.name for t in self.targets)} with {self.reader.location} "
            f"(cycles of {options.cycle_s:.0f}s{budget}, nice {os.nice(0)})"
        )
        self.writer.start()
        try:
            while (cycle_s := self._next_budget()) is not None:
                self._one_cycle(cycle_s)
            why = "done"
        except (interrupt.Interrupted, KeyboardInterrupt) as stop:
            why = f"stopping ({stop})" if isinstance(stop, interrupt.Interrupted) else "stopping (interrupted)"
        return self._stop(why)

    def _stop(self, why: str) -> int:
        # Stopping is bounded (STOP_DRAIN_S): a second signal need not cut it short.
        for sig in (signal.SIGINT, signal.SIGTERM):
            signal.signal(sig, signal.SIG_IGN)
        self._log(f"{why}: handing over what was found and marking the worker stopped")
        finished = self.cycles
        if self.cycle is not None:
            finished -= 1
            self._flush(self.cycle)
        drained = self.writer.stop(STOP_DRAIN_S)
        self.reader.close()
        written = self.writer.written
        tail = "" if drained else f"; {self.writer.lost} write(s) the store did not take in {STOP_DRAIN_S:.0f}s"
        self._log(
            f"stopped after {finished} finished cycle(s): the store took {written['corpus']} new corpus entries and "
            f"{written['findings']} finding records{tail}"
        )
        return ExitCode.OK

    def _failed(self, target: str, exc: FuzzgateError, cycle_s: float) -> None:
        """A cycle that could not fuzz (most often: the server does not start). The first time a
        failure is seen, its detail and hint are logged too (a server's last stderr lines say why);
        failing again, the worker waits longer each time, up to `MAX_FAILED_PAUSE_S`, rather than
        restart a broken server every few seconds for as long as it runs."""
        self.failures += 1
        pause = min(MAX_FAILED_PAUSE_S, FAILED_CYCLE_PAUSE_S * 2 ** (self.failures - 1), max(cycle_s, MIN_CYCLE_S) * 10)
        self._log(f"cycle {self.cycles} on {target} failed: {exc.message} (next try in {pause:.0f}s)")
        if exc.message not in self.failures_seen:
            self.failures_seen.add(exc.message)
            for line in filter(None, [f"hint: {exc.hint}" if exc.hint else None, exc.detail]):
                for part in line.splitlines():
                    self._log(f"  {part}")
        time.sleep(pause)

    def _next_budget(self) -> float | None:
        options = self.options
        if options.cycles is not None and self.cycles >= options.cycles:
            return None
        if options.budget_s is None:
            return options.cycle_s
        left = options.budget_s - (time.monotonic() - self.started)
        return min(options.cycle_s, left) if left >= MIN_CYCLE_S else None

    # --- one cycle -----------------------------------------------------------------------------------

    def _read(self, what: str, read: Callable[[], _T]) -> _T:
        """`read()` once the store answers: the worker waits for it, however long it is away."""
        delay = 1.0
        while True:
            try:
                return read()
            except StoreError as exc:
                self._log(f"{exc.message}; waiting to read {what} (retrying in {delay:.0f}s)")
            time.sleep(delay)
            delay = min(30.0, delay * 2)

    def _pick(self) -> Pick:
        candidates = [Candidate(t.index, t.name, t.tools) for t in self.targets]
        needs_of: dict[str, dict[str, ToolNeed]] = {}
        for target in self.targets:
            if target.tools is not None:
                snapshots = self._read(f"{target.name}'s statistics", partial(self.reader.stats, target.name))
                needs_of[target.name] = needs(snapshots, target.environment)
        return pick(candidates, needs_of, worker=self.id, tools=self.options.tools)

    def _one_cycle(self, cycle_s: float) -> None:
        self.cycles += 1
        chosen = self._pick()
        target = self.targets[chosen.index]
        loaded = self._read(f"{target.name}'s corpus", partial(self.reader.corpus, target.name))
        entries = {entry.key: entry for entry in loaded.entries} | target.kept
        cold = loaded.cold if not entries else None
        seeds = Seeds(tuple(entries[key] for key in sorted(entries)), cold, loaded.skipped, self.reader.location)
        config = replace(target.config, budget_s=cycle_s, store=None)
        if chosen.names is not None:
            config = replace(config, include=tuple(glob.escape(name) for name in chosen.names))
        seed = int.from_bytes(hashlib.sha256(f"{self.id}:{self.cycles}".encode()).digest()[:4], "big")
        # Bugs the store holds confirmed are not replayed again in every cycle: met again, they are
        # recorded as seen, and the store's view keeps the strongest evidence any worker had.
        stored = self._read(f"{target.name}'s findings", partial(self.reader.findings, target.name))
        settled = frozenset(f.finding.fingerprint for f in stored if f.state == "confirmed")
        engine = Engine(EngineSettings.of(config), seed, lambda event: None, timebox=TimeBox(cycle_s), settled=settled)
        cycle = _Cycle(target, engine)
        engine.emit = lambda event: self._event(cycle, event)
        self.cycle = cycle
        what = "every tool" if chosen.labels == () else ", ".join(chosen.labels)
        try:
            result = _unwrapped(lambda: interrupt.run(lambda: engine.run((), seeds)))
        except FuzzgateError as exc:
            self.cycle = None
            self._flush(cycle)
            self._failed(target.name, exc, cycle_s)
            return
        self.cycle = None
        self.failures = 0
        with interrupt.deferred():
            # A signal now waits until the cycle's findings are handed over whole.
            self._finish(cycle, result)
        self._log(
            f"cycle {self.cycles} on {target.name} ({what}), seed {seed}: {result.calls} calls, "
            f"{len(seeds.entries)} seeds, {len(result.corpus_added)} entries kept, {len(result.findings)} findings"
        )

    def _event(self, cycle: _Cycle, event: Event) -> None:
        if isinstance(event, ServerReady) and event.generation == 0:
            redact = cycle.engine.redact
            name = None if event.server_name is None else redact.text(event.server_name)
            version = None if event.server_version is None else redact.text(event.server_version)
            target = cycle.target
            target.environment = replace(target.environment, server=server_label(name, version))
            cycle.environment = target.environment
            recorder = target.recorders.setdefault(cycle.environment, StatsRecorder(self.id, target.name))
            recorder.begin_cycle()
            cycle.recorder = recorder
        if cycle.recorder is not None:
            cycle.recorder(event)
        if isinstance(event, CallFinished) and time.monotonic() - cycle.flushed >= FLUSH_S:
            self._flush(cycle)

    def _flush(self, cycle: _Cycle) -> None:
        """Hand the writer what the cycle kept and met since the last flush, and its statistics."""
        cycle.flushed = time.monotonic()
        engine, target = cycle.engine, cycle.target
        if engine.live is not None:
            self._entries(target, engine.live.added(), cycle)
        records = []
        for finding, ambiguous in engine.findings.items():
            # An ambiguous one (slow or hung under the coverage collector) waits for its replays.
            if ambiguous or finding.fingerprint in cycle.seen:
                continue
            cycle.seen.add(finding.fingerprint)
            records.append(self._record(cycle, finding, "seen"))
        self.writer.record_findings(records)
        self._stats(cycle)

    def _entries(self, target: _Target, entries: Sequence[CorpusEntry], cycle: _Cycle) -> None:
        new = [entry for entry in entries if entry.key not in target.kept]
        kept = keepable(new, cycle.engine.redact)
        target.kept.update((entry.key, entry) for entry in kept)
        for key in list(target.kept)[: max(0, len(target.kept) - MAX_OWN_SEEDS)]:
            # The oldest have long reached the store.
            del target.kept[key]
        if cycle.recorder is not None:
            cycle.recorder.kept(kept)
        self.writer.add_corpus(target.name, kept)

    def _record(self, cycle: _Cycle, finding: Finding, state: str) -> FindingRecord:
        target = cycle.target
        redacted = redact_finding(finding, cycle.engine.redact)
        if cycle.recorder is not None:
            cycle.recorder.found(redacted)
        return merge_record(
            target.records.get(redacted.fingerprint),
            redacted,
            state,
            target=target.name,
            worker=self.id,
            environment=cycle.environment or target.environment,
            now=time.time(),
        )

    def _stats(self, cycle: _Cycle) -> None:
        if cycle.recorder is not None and cycle.environment is not None:
            self.writer.write_stats(cycle.recorder.snapshot(cycle.environment, redact=cycle.engine.redact))

    def _finish(self, cycle: _Cycle, result: EngineResult) -> None:
        """The cycle is over: what it kept, its findings as verification left them, its statistics."""
        target = cycle.target
        self._entries(target, result.corpus_added, cycle)
        records = [self._record(cycle, finding, finding_state(finding)) for finding in result.findings]
        for record in records:
            target.records[record.finding.fingerprint] = record
        self.writer.record_findings(records)
        self._stats(cycle)
        fuzzed = {
            subject_label(entry.surface, entry.name): entry.name
            for entry in result.entries
            if entry.status is Status.FUZZED
        }
        target.tools = {**(target.tools or {}), **fuzzed}


def _unwrapped(run: Callable[[], _T]) -> _T:
    """`run()`, raising the user's error or the interrupt an anyio task group wrapped, if any."""
    try:
        return run()
    except BaseExceptionGroup as group:
        leaves: list[BaseException] = []
        pending: list[BaseException] = [group]
        while pending:
            exc = pending.pop()
            if isinstance(exc, BaseExceptionGroup):
                pending.extend(exc.exceptions)
            else:
                leaves.append(exc)
        for wanted in (interrupt.Interrupted, KeyboardInterrupt, FuzzgateError):
            for leaf in leaves:
                if isinstance(leaf, wanted):
                    raise leaf from None
        raise
