"""Counts over time, drawn by hand as inline SVG for the HTML report (no script, no library, no
external resource: the page must render from the file alone under a strict Content-Security-Policy).

Every worker writes its own cumulative timeline; what a reader wants is the store's total. Each
worker's count holds its last value until its next point (a stopped worker's count stays where it
ended: what it found is still in the store), so the total is a step function, drawn as steps.
"""

from __future__ import annotations

import html
import math
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

Series = tuple[tuple[float, int], ...]
"""`(unix time, count)` points, times increasing: the count from that time until the next point."""

LATEST_TIME = 253402300799.0
"""23:59:59 UTC on 31 December 9999: later (or infinite, or NaN) is not a time a worker wrote."""


def plausible(at: float) -> bool:
    """Whether `at` can be a time a worker wrote; a store may hold anything (`1e300`, `NaN`)."""
    return 0.0 <= at <= LATEST_TIME


def summed(timelines: Iterable[Iterable[tuple[float, int]]]) -> Series:
    """The sum over several cumulative step functions, one point per distinct time.

    Before its first point a timeline counts 0; points of one timeline at the same time keep the
    last one's value. Points at no plausible time are left out."""
    events: list[tuple[float, int, int]] = []
    for index, points in enumerate(timelines):
        events.extend((at, index, value) for at, value in points if plausible(at))
    events.sort(key=lambda e: e[0])
    current: dict[int, int] = {}
    total = 0
    out: list[tuple[float, int]] = []
    for position, (at, index, value) in enumerate(events):
        total += value - current.get(index, 0)
        current[index] = value
        if position + 1 < len(events) and events[position + 1][0] == at:
            continue
        if out and out[-1][1] == total:
            continue
        out.append((at, total))
    return tuple(out)


def counted(times: Iterable[float]) -> Series:
    """How many of `times` are at or before each of them: e.g. distinct findings by first seen."""
    out: list[tuple[float, int]] = []
    for count, at in enumerate(sorted(t for t in times if plausible(t)), start=1):
        if out and out[-1][0] == at:
            out[-1] = (at, count)
        else:
            out.append((at, count))
    return tuple(out)


@dataclass(frozen=True, slots=True)
class Frame:
    """The plot's geometry, in SVG user units."""

    width: int = 500
    height: int = 220
    left: int = 64
    right: int = 20
    top: int = 16
    bottom: int = 44

    @property
    def plot_width(self) -> int:
        return self.width - self.left - self.right

    @property
    def plot_height(self) -> int:
        return self.height - self.top - self.bottom


_TIME_STEPS = (1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 10800, 21600, 43200, 86400)


def time_ticks(start: float, end: float, most: int = 6) -> tuple[float, ...]:
    """Round times (multiples of a step of 1 s to days) between `start` and `end`, at most `most`."""
    span = max(end - start, 1.0)
    step = next((s for s in _TIME_STEPS if span / s <= most - 1), None)
    if step is None:
        step = 86400 * math.ceil(span / (86400 * (most - 1)))
    first = math.ceil(start / step) * step
    return tuple(float(first + i * step) for i in range(int((end - first) // step) + 1))


def count_ticks(top: int, most: int = 5) -> tuple[int, ...]:
    """0 and round counts (1, 2 or 5 times a power of ten apart) up to at least `top`."""
    top = max(top, 1)
    step = 1
    while True:
        for factor in (1, 2, 5):
            candidate = step * factor
            if math.ceil(top / candidate) <= most - 1:
                return tuple(i * candidate for i in range(math.ceil(top / candidate) + 1))
        step *= 10


def _clock(at: float, span: float) -> str:
    fmt = "%H:%M:%S" if span < 600 else "%H:%M" if span < 86400 else "%m-%d %H:%M"
    return time.strftime(fmt, time.gmtime(at))


def _num(value: float) -> str:
    return f"{value:.1f}".removesuffix(".0")


def step_path(series: Series, start: float, end: float, top: int, frame: Frame = Frame()) -> str:
    """The SVG path data of `series` as steps on the plot area, from its first point to `end`."""
    span = max(end - start, 1.0)

    def x(at: float) -> str:
        return _num(frame.left + (at - start) / span * frame.plot_width)

    def y(value: int) -> str:
        return _num(frame.top + frame.plot_height - value / max(top, 1) * frame.plot_height)

    if not series:
        return ""
    parts = [f"M{x(series[0][0])} {y(series[0][1])}"]
    for at, value in series[1:]:
        parts.append(f"H{x(at)}V{y(value)}")
    parts.append(f"H{x(end)}")
    return "".join(parts)


def chart(series: Series, title: str, unit: str, start: float, end: float, frame: Frame = Frame()) -> str:
    """A stepped line of `series` over [`start`, `end`], with axes, round ticks and labels.

    `title` and `unit` are escaped here like every other text; the numbers are fuzzgate's own."""
    top_value = max((value for _, value in series), default=0)
    y_ticks = count_ticks(top_value)
    top = y_ticks[-1]
    span = max(end - start, 1.0)
    base = frame.top + frame.plot_height
    label = html.escape(f"{title}: {top_value} at the end" if series else f"{title}: nothing recorded")
    out = [
        f'<svg class="chart" role="img" aria-label="{label}" viewBox="0 0 {frame.width} {frame.height}" '
        f'width="{frame.width}" height="{frame.height}" xmlns="http://www.w3.org/2000/svg">',
        f"<title>{label}</title>",
    ]
    for tick in y_ticks:
        ty = _num(base - tick / top * frame.plot_height)
        out.append(
            f'<line class="grid" x1="{frame.left}" x2="{frame.width - frame.right}" y1="{ty}" y2="{ty}"/>'
            f'<text class="tick" x="{frame.left - 6}" y="{ty}" text-anchor="end" dominant-baseline="middle">'
            f"{tick}</text>"
        )
    for at in time_ticks(start, end):
        tx = _num(frame.left + (at - start) / span * frame.plot_width)
        out.append(
            f'<line class="axis" x1="{tx}" x2="{tx}" y1="{base}" y2="{base + 4}"/>'
            f'<text class="tick" x="{tx}" y="{base + 16}" text-anchor="middle">{html.escape(_clock(at, span))}</text>'
        )
    out.append(
        f'<line class="axis" x1="{frame.left}" x2="{frame.left}" y1="{frame.top}" y2="{base}"/>'
        f'<line class="axis" x1="{frame.left}" x2="{frame.width - frame.right}" y1="{base}" y2="{base}"/>'
        f'<text class="axis-label" x="{frame.left + frame.plot_width / 2:g}" y="{frame.height - 6}" '
        f'text-anchor="middle">time (UTC)</text>'
        f'<text class="axis-label" transform="translate(14 {frame.top + frame.plot_height / 2:g}) rotate(-90)" '
        f'text-anchor="middle">{html.escape(unit)}</text>'
    )
    if series:
        out.append(f'<path class="line" d="{step_path(series, start, end, top, frame)}"/>')
        last_at, last_value = series[-1]
        cx = _num(frame.left + (last_at - start) / span * frame.plot_width)
        cy = _num(base - last_value / top * frame.plot_height)
        out.append(f'<circle class="dot" cx="{cx}" cy="{cy}" r="3"/>')
    else:
        out.append(
            f'<text class="empty" x="{frame.left + frame.plot_width / 2:g}" y="{frame.top + frame.plot_height / 2:g}" '
            'text-anchor="middle">nothing recorded yet</text>'
        )
    out.append("</svg>")
    return "".join(out)


def span_of(series: Sequence[Series]) -> tuple[float, float] | None:
    """The earliest and latest time in any of `series`, or None when they are all empty."""
    times = [at for points in series for at, _ in points]
    return (min(times), max(times)) if times else None
