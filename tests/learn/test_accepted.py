"""Values a tool accepted, drawn again and changed a little (fuzzgate.learn.accepted, generate.nearby):
what is kept, which case takes one, that the choice is the same for the same history, and that the
engine's feed puts them into a share of a tool's cases."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from fuzzgate.generate.cases import Case
from fuzzgate.generate.nearby import nearby, variants
from fuzzgate.learn.accepted import AROUND_EVERY, AcceptedValues
from fuzzgate.learn.feed import Feed
from fuzzgate.model.findings import Surface
from fuzzgate.model.outcome import CallOutcome, OutcomeStatus
from fuzzgate.plan.selection import ToolPlan
from fuzzgate.target.discover import ToolInfo
from tests.learn.test_feed import StandIn

ZONE = {"type": "object", "properties": {"timezone": {"type": "string"}}, "required": ["timezone"]}
KEY = (Surface.TOOL, "zone_time")


@given(value=st.text(max_size=20) | st.integers(-(10**6), 10**6), variant=st.integers(0, 100))
def test_variant_zero_is_the_value_and_every_variant_keeps_its_type(value: str | int, variant: int) -> None:
    assert nearby(value, 0) == ("as-is", value)
    label, changed = nearby(value, variant)
    assert type(changed) is type(value)
    assert nearby(value, variant) == (label, changed)
    assert nearby(value, variant + variants(value)) == (label, changed)


def test_a_path_segment_and_a_character_are_among_the_variants() -> None:
    made = {nearby("Europe/London", i)[1] for i in range(variants("Europe/London"))}
    assert {"Europe/London", "Europe/London/x", "europe/london", "Europe/Londonx", "Europe/Londo"} <= made


def test_accepted_values_are_kept_once_per_field_in_order() -> None:
    values = AcceptedValues()
    assert values.learn(KEY, ZONE, {"timezone": "Asia/Tokyo"}) == 1
    assert values.learn(KEY, ZONE, {"timezone": "Asia/Tokyo"}) == 0
    assert values.learn(KEY, ZONE, {"timezone": "UTC"}) == 1
    field = next(f for f in _fields())
    assert values.values(KEY, field, {("timezone",): ["Europe/Paris"]}) == ["Asia/Tokyo", "UTC"]
    # A field nothing went through yet takes what its schema offers.
    assert AcceptedValues().values(KEY, field, {("timezone",): ["Europe/Paris", 3.5]}) == ["Europe/Paris"]


def _near(*values: str) -> set[str | int]:
    return {nearby(v, i)[1] for v in values for i in range(variants(v))}


def _fields() -> Any:
    from fuzzgate.generate.fields import fields_of

    return fields_of(ZONE, {})


def test_offers_are_the_same_for_the_same_history_and_name_the_change_not_the_value() -> None:
    def offers() -> list[tuple[dict[str, Any], str] | None]:
        values = AcceptedValues()
        for zone in ("Asia/Tokyo", "UTC", "Europe/London"):
            values.learn(KEY, ZONE, {"timezone": zone})
        return [values.offer(KEY, ZONE, {"timezone": "r4nd0m"}, k, {}) for k in range(40)]

    first = offers()
    assert first == offers()
    assert all(made is not None for made in first)
    origins = [made[1] for made in first if made is not None]
    assert all(o.startswith("accepted:") and o.endswith(":/properties/timezone") for o in origins)
    assert not any("Tokyo" in o for o in origins)
    sent = [made[0]["timezone"] for made in first if made is not None]
    # Each an accepted value or a variant of one, and most of them distinct.
    assert set(sent) <= _near("Asia/Tokyo", "UTC", "Europe/London")
    assert len(set(sent)) >= 20


@dataclass
class Offering(StandIn):
    offers: dict[tuple[str, ...], list[Any]]

    def offered(self) -> dict[tuple[str, ...], list[Any]]:
        return self.offers


def _zone_plan() -> ToolPlan:
    info = ToolInfo("zone_time", "", ZONE, None, None, True)
    made = ToolPlan(info, lambda: Offering(ZONE, {("timezone",): ["Europe/London", "Asia/Tokyo"]}))  # type: ignore[arg-type,return-value]
    made.case(0)
    return made


def _ok() -> CallOutcome:
    return CallOutcome(status=OutcomeStatus.OK, duration_s=0.01, payload='{"content": []}')


def test_the_feed_puts_accepted_values_into_a_share_of_the_cases_and_learns_from_accepted_calls() -> None:
    plan = _zone_plan()
    feed = Feed([plan])
    cases = [Case(k, {"timezone": f"random-{k}"}, True, "random") for k in range(30)]
    around = [feed.around(plan, case) for case in cases]
    changed = [case for case in around if case.origin.startswith("accepted:")]
    assert {case.index % AROUND_EVERY for case in changed} == {1}
    assert len(changed) == len(cases) // AROUND_EVERY
    # Examples, boundaries and values from replies stay as they are: only random draws give way.
    for origin in ("example", 'boundary:/properties/timezone=""', "dictionary:/properties/timezone"):
        kept = Case(1, {"timezone": "Asia/Tokyo"}, True, origin)
        assert feed.around(plan, kept) is kept
    # Before any call went through, the schema's offers are the values.
    assert {c.arguments["timezone"] for c in changed} <= _near("Europe/London", "Asia/Tokyo")
    accepted = Case(30, {"timezone": "Pacific/Fiji"}, True, "random")
    feed.after_call(plan, accepted, _ok())
    later = [feed.around(plan, Case(k, {"timezone": "r"}, True, "random")) for k in range(31, 100, AROUND_EVERY)]
    assert {c.arguments["timezone"] for c in later if c.origin != "random"} <= _near("Pacific/Fiji")
    assert sum(c.origin != "random" for c in later) >= len(later) - 2
    # A probe's accepted call teaches nothing, nor does a refused one.
    probe = Case(101, {"timezone": "--output=x"}, True, "probe:option:/properties/timezone=--output=")
    feed.after_call(plan, probe, _ok())
    refused = Case(102, {"timezone": "Mars/Base"}, True, "random")
    feed.after_call(plan, refused, CallOutcome(status=OutcomeStatus.TOOL_ERROR, duration_s=0.01, payload=""))
    again = [feed.around(plan, Case(k, {"timezone": "r"}, True, "random")) for k in range(103, 200, AROUND_EVERY)]
    assert not any("output" in c.arguments["timezone"] or "Mars" in c.arguments["timezone"] for c in again)
