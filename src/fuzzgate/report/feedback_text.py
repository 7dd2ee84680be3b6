"""The feedback, corpus, probes and memory lines the console and the Markdown summary print, in the same words."""

from __future__ import annotations

from fuzzgate.check.crash import mebibytes
from fuzzgate.record.results import RunReport, Status


def feedback_line(report: RunReport) -> str | None:
    """`coverage (why): 312 lines, 401 arcs, 57 behaviours, 12 constants`, and what coverage sampling
    did when it sampled; None for an old report."""
    feedback = report.feedback
    if feedback is None:
        return None
    if feedback.signal == "off":
        return "off (feedback = off): no corpus read or written, every run starts cold"
    reached = [f"{feedback.behaviours} behaviours"]
    if feedback.signal == "coverage":
        covered = [f"{feedback.lines} lines", f"{feedback.arcs} arcs"]
        reached = [*covered, *reached, f"{feedback.constants} constants mined"]
    line = f"{feedback.note}; reached {', '.join(reached)}"
    sampling = feedback.sampling
    if sampling is not None and sampling.tools:
        total = sampling.measured + sampling.unmeasured
        line += (
            f"; coverage sampled 1 in {sampling.every} after a plateau of {sampling.plateau} calls on"
            f" {_named(sampling.tools)} ({sampling.measured} of {total} calls measured)"
        )
    return line


def _named(tools: tuple[str, ...], shown: int = 5) -> str:
    names = ", ".join(tools[:shown])
    return f"{names} and {len(tools) - shown} more" if len(tools) > shown else names


def corpus_line(report: RunReport) -> str | None:
    """Where the corpus is, what the run started from, replayed, kept and saved."""
    corpus = report.corpus
    if corpus is None:
        return None
    if corpus.cold is not None:
        start = f"started cold ({corpus.cold})"
    else:
        start = f"{corpus.loaded} entries loaded, {corpus.replayed} replayed in {corpus.replay_s:.1f}s"
        start += f" ({corpus.kept} reached something new)"
        if corpus.not_replayed:
            start += f", {corpus.not_replayed} not replayed"
    if corpus.skipped:
        start += f", {len(corpus.skipped)} unreadable file(s) skipped"
    saved = f"{corpus.added} new entries, {corpus.saved} saved"
    if corpus.save_error is not None:
        saved += f" (saving stopped: {corpus.save_error})"
    where = f" to {corpus.path}" if corpus.path else ""
    return f"{start}; {saved}{where}"


def probes_line(report: RunReport) -> str | None:
    """`12 of 40 sent (3 tools could not send all theirs)`; None when no probe was planned (no
    containment and no field that evaluates, or an old report)."""
    sent, planned = report.probe_counts()
    if not planned:
        return None
    short = report.probes_short()
    if not short:
        return f"{sent} of {planned} sent"
    # Of those fuzzed, as the note counts them: a blocked or skipped tool was never to send any.
    fuzzed = sum(1 for e in report.entries if e.status is Status.FUZZED)
    return f"{sent} of {planned} sent ({len(short)} of {fuzzed} could not send all theirs: see the notes)"


def memory_line(report: RunReport) -> str | None:
    """The most memory one server held against the limit: what `memory_limit` is sized by. None when
    no server's memory was watched (and in a report from before it was)."""
    memory = report.memory
    if memory is None or memory.peak == 0:
        return None
    held = f"one server held at most {mebibytes(memory.peak)} resident (its processes together)"
    if memory.peak > memory.limit:
        return f"{held}, past memory_limit ({mebibytes(memory.limit)}): fuzzgate stopped it"
    return f"{held}, {memory.peak / memory.limit:.0%} of memory_limit ({mebibytes(memory.limit)})"
