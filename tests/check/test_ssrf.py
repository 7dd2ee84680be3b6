"""The SSRF oracle: a request the listener reported, or a canary URL's content in the reply, for
the call whose arguments carry the canary, read through the real `Oracles` with real probes."""

from __future__ import annotations

from typing import Any

from fuzzgate.check import CallContext, Observation, Oracles
from fuzzgate.check.secrets import Redactor, SecretScanner
from fuzzgate.generate.probes import OUTSIDE, ProbeClass, probe_cases
from fuzzgate.model.findings import Kind
from fuzzgate.model.outcome import CallOutcome, OutcomeStatus
from fuzzgate.sandbox.listener import FILE_CANARY, PAGE_MARKER, URL_MARKER, Listener, Request

SECRET = "sk-live-" + "Zq81xWv3Lm5Pt7Rk9Hs2"
LISTENER = Listener.for_token("token-1")
SCHEMA = {"type": "object", "properties": {"url": {"type": "string"}, "note": {"type": "string"}}}
PROBES = {
    c.probe.marker: c.probe
    for c in probe_cases("fetch", SCHEMA, {}, "token-1", [], listener=LISTENER)
    if c.probe.probe_class is ProbeClass.URL and c.probe.marker is not None
}


def _url(label: str) -> tuple[str, str]:
    probe = next(p for p in PROBES.values() if p.label == label)
    assert probe.marker is not None and isinstance(probe.value, str)
    return probe.value, probe.marker


def _observe(arguments: dict[str, Any], text: str = "ok", requests: tuple[Request, ...] = ()) -> list[Observation]:
    oracles = Oracles(slow_s=10, scanner=SecretScanner((), {}), redact=Redactor((SECRET,)), probes=PROBES)
    outcome = CallOutcome(OutcomeStatus.OK, 0.01, text=text)
    ctx = CallContext(tool="fetch", arguments=arguments, schema_valid=True, outcome=outcome, effects=requests)
    return [o for o in oracles.observe_call(ctx) if o.kind is Kind.SSRF]


def test_a_request_carrying_the_calls_marker_is_ssrf_naming_the_argument_and_probe() -> None:
    url, marker = _url("decimal loopback")
    [found] = _observe({"url": url, "note": SECRET}, requests=(Request(f"/{marker}"),))
    assert found.signature == ("fetch", "url")
    assert "requested the canary URL (decimal loopback)" in found.message
    assert SECRET not in found.message


def test_a_followed_redirect_is_said() -> None:
    url, marker = _url("redirect")
    requests = (Request(f"/{marker}/redirect"), Request(f"/{marker}/redirect/followed"))
    [found] = _observe({"url": url}, requests=requests)
    assert "requested the canary URL (redirect)" in found.message  # one finding, its first evidence
    [followed] = _observe({"url": url}, requests=requests[1:])
    assert "followed the listener's redirect" in followed.message


def test_another_calls_late_request_is_not_this_calls() -> None:
    _, other = _url("loopback")
    url, _ = _url("localhost")
    assert _observe({"url": url}, requests=(Request(f"/{other}"),)) == []
    assert _observe({"note": "x"}, requests=(Request("/"), Request(f"/{URL_MARKER}zz"))) == []


def test_the_page_in_the_reply_is_ssrf_an_echoed_url_is_not() -> None:
    url, marker = _url("IPv6 loopback")
    digits = marker.removeprefix(URL_MARKER)
    [found] = _observe({"url": url}, text=f"fetched: fuzzgate url canary: {PAGE_MARKER}{digits}")
    assert found.signature == ("fetch", "url") and "answered with the content" in found.message
    assert _observe({"url": url}, text=f"could not fetch {url}") == []
    # The page of a URL this call did not send is not this call's.
    assert _observe({"note": "x"}, text=f"{PAGE_MARKER}{digits}") == []


def test_the_file_canarys_content_is_ssrf() -> None:
    url = f"file://{OUTSIDE.replace('@', '')}/{FILE_CANARY}"
    [found] = _observe({"url": url}, text=LISTENER.file_content)
    assert found.signature == ("fetch", "url") and "file:// canary" in found.message
    assert _observe({"url": url}, text="no such file") == []
