"""The feedback that guides a run's cases: which signal it is (`signal_of`), what start-up already
ran (`seen_at_start`), and what one call showed through it: what the coverage collector measured, read at once with the
constants its code compares against going into the dictionary (`call_coverage`), and its features
and which are new, when the call is judged (`observe_features`)."""

from __future__ import annotations

from typing import Any

from fuzzgate.config.model import FeedbackMode, TargetConfig
from fuzzgate.coverage.channel import CallCoverage
from fuzzgate.engine.collector import COLLECT_TIMEOUT_S
from fuzzgate.learn.features import ARC_PREFIX, LINE_PREFIX, Feedback, Observed, Signal, SignalKind
from fuzzgate.learn.feed import Feed
from fuzzgate.model.outcome import AfterTimeout, CallOutcome, OutcomeStatus
from fuzzgate.plan.selection import ToolPlan
from fuzzgate.target.connection import Connection


def signal_of(target: TargetConfig, connection: Connection) -> Signal:
    """Which feedback guides this run, and why (`Connection.feedback_note` says what the
    collector did)."""
    if target.feedback is FeedbackMode.OFF:
        return Signal(SignalKind.OFF, "off: feedback = off")
    note = connection.feedback_note
    if connection.coverage is not None:
        return Signal(SignalKind.COVERAGE, note)
    return Signal(SignalKind.BEHAVIOUR, note)


def _coverage_features(coverage: CallCoverage) -> frozenset[str]:
    arcs = {ARC_PREFIX + arc for arc in coverage.arcs}
    return frozenset(arcs | {LINE_PREFIX + line for line in coverage.lines})


def _learn_constants(feedback: Feedback, feed: Feed, source: str, coverage: CallCoverage) -> None:
    if coverage.constants:
        pairs = [(constant.name, constant.value) for constant in coverage.constants]
        feedback.constants += feed.dictionary.learn_constants(source, pairs)


async def seen_at_start(feedback: Feedback, connection: Connection, feed: Feed) -> None:
    """What start-up, discovery and the protocol probes ran is no call's doing: under coverage
    feedback, its arcs and lines count as seen before the first call, its constants go into the
    dictionary."""
    if feedback.signal.kind is SignalKind.COVERAGE and connection.coverage is not None:
        start = await connection.coverage.collect(COLLECT_TIMEOUT_S)
        if start is not None:
            feedback.seen(_coverage_features(start))
            _learn_constants(feedback, feed, "collector", start)


def lost(outcome: CallOutcome) -> bool:
    """Whether the call lost the connection (the server died or closed it): nothing is collected
    from a server that is going away, so observing a call never waits for both its last stderr
    words and the collector (`deadline.observe_s`)."""
    return (
        outcome.status is OutcomeStatus.CLOSED or outcome.after_timeout is AfterTimeout.DIED or outcome.died_after_reply
    )


async def call_coverage(
    feedback: Feedback,
    connection: Connection,
    feed: Feed,
    plan: ToolPlan,
    outcome: CallOutcome,
    measured: bool = True,
) -> CallCoverage | None:
    """What the collector measured of the call, read before the next call runs in the server (the
    collector's arcs since its last read are this call's); the constants its code compares against
    go into the dictionary. None for a call the collector did not measure (`measured` false:
    `learn.sampling`), one that lost the connection (`lost`), or with no collector."""
    channel = connection.coverage
    if not measured or feedback.signal.kind is not SignalKind.COVERAGE or channel is None:
        return None
    if not connection.alive() or lost(outcome):
        return None
    coverage = await channel.collect(COLLECT_TIMEOUT_S)
    if coverage is not None:
        _learn_constants(feedback, feed, plan.info.name, coverage)
    return coverage


def observe_features(
    feedback: Feedback, plan: ToolPlan, outcome: CallOutcome, arguments: dict[str, Any], coverage: CallCoverage | None
) -> Observed:
    """The call's features (its behaviour, and the arcs and lines of its `coverage`), and which are new."""
    if feedback.signal.kind is SignalKind.OFF:
        return Observed(frozenset(), frozenset())
    return feedback.observe(plan.info.surface, plan.info.name, outcome, coverage, arguments)
