"""URL probes: which fields take a URL, the canary URLs each gets when (and only when) the server
has the SSRF listener, and the marker that maps a request back to its probe."""

from __future__ import annotations

from fuzzgate.generate.probes import OUTSIDE, ProbeClass, probe_cases, url_fields
from fuzzgate.sandbox.listener import FILE_CANARY, HOSTS, URL_MARKER, Listener

LISTENER = Listener.for_token("token-1")
SCHEMA = {
    "type": "object",
    "properties": {
        "url": {"type": "string"},
        "target": {"type": "string", "format": "uri"},
        "hook": {"type": "string", "description": "Called back when done (a webhook)."},
        "source": {"type": "string", "examples": ["https://example.com/feed.xml"]},
        "mirror": {"type": "string", "default": "ftp://example.com/pub"},
        "imageLink": {"type": "string"},
        "title": {"type": "string", "description": "The page's title."},
        "kind": {"type": "string", "enum": ["url", "link"]},
        "count": {"type": "integer", "description": "How many URLs."},
        "host": {"type": "string", "format": "hostname"},
    },
}


def test_url_like_fields_are_named_formatted_described_or_shown_as_urls() -> None:
    assert url_fields(SCHEMA) == ["url", "target", "hook", "source", "mirror", "imageLink"]


def test_each_url_field_gets_every_spelling_a_redirect_and_the_file_canary_first() -> None:
    cases = probe_cases("fetch", SCHEMA, {"title": "t"}, "token-1", [], listener=LISTENER)
    for field in url_fields(SCHEMA):
        mine = [c for c in cases if c.probe.field == field]
        urls = [c for c in mine if c.probe.probe_class is ProbeClass.URL]
        assert mine[0] in urls, "a URL probe goes first in a URL-like field (then one of each class, in rounds)"
        labels = [c.probe.label for c in urls]
        assert labels == [*(label for label, _ in HOSTS), "redirect", "file:// canary"]
        for case, (_, host) in zip(urls, HOSTS, strict=False):
            marker = case.probe.marker
            assert marker is not None and marker.startswith(URL_MARKER) and len(marker) == len(URL_MARKER) + 16
            assert case.arguments == {"title": "t", field: f"http://{host}:{LISTENER.port}/{marker}"}
        assert urls[-2].arguments[field].endswith("/redirect")
        assert urls[-1].arguments[field] == f"file://{OUTSIDE}/{FILE_CANARY}"
    markers = [c.probe.marker for c in cases if c.probe.probe_class is ProbeClass.URL and c.probe.marker]
    assert len(set(markers)) == len(markers), "a marker names one probe"
    assert not any(c.probe.probe_class is ProbeClass.URL for c in cases if c.probe.field == "title")


def test_no_url_probe_without_a_listener() -> None:
    cases = probe_cases("fetch", SCHEMA, {}, "token-1", [])
    assert cases and not any(c.probe.probe_class is ProbeClass.URL for c in cases)
    assert not any(str(LISTENER.port) in str(c.arguments) for c in cases)


def test_the_same_token_gives_the_same_urls() -> None:
    def urls(token: str) -> list[object]:
        listener = Listener.for_token(token)
        return [c.arguments for c in probe_cases("fetch", SCHEMA, {}, token, [], listener=listener)]

    assert urls("token-1") == urls("token-1")
    assert urls("token-1") != urls("token-2")
