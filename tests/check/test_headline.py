"""What a finding's message says about an exception: its type and the first line of its message,
from Python tracebacks (plain, chained, exception groups, any type name) and Node.js stack traces,
redacted before it is cut, escaped, capped."""

from __future__ import annotations

from fuzzgate.check.headline import HEADLINE_CHARS, first_line, headline, named_exception, stderr_headline
from fuzzgate.check.secrets import REDACTED, Redactor
from fuzzgate.check.traceback import parse_traces, root_cause
from tests.check.test_traceback import NODE, PLAIN

NO_SECRETS = Redactor(())

GROUP = """  + Exception Group Traceback (most recent call last):
  |   File "/srv/app/server.py", line 9, in serve
  |     async with anyio.create_task_group() as tg:
  |   File "/venv/lib/python3.11/site-packages/anyio/_backends/_asyncio.py", line 871, in __aexit__
  |     raise BaseExceptionGroup(
  | ExceptionGroup: unhandled errors in a TaskGroup (1 sub-exception)
  +-+---------------- 1 ----------------
    | Traceback (most recent call last):
    |   File "/venv/lib/python3.11/site-packages/anyio/_core/_tasks.py", line 327, in _run_coro
    |     retval = await self._coro
    |   File "/srv/app/records.py", line 4, in fetch
    |     raise NotFound("no such record\\nsecond line")
    | records.NotFound: no such record
    | second line
    +------------------------------------
"""

ANY_TYPE = """ERROR app: lookup failed
Traceback (most recent call last):
  File "/srv/app/tools.py", line 12, in lookup
    return next(rows)
StopIteration
"""

CUT_SHORT = """Traceback (most recent call last):
  File "/srv/app/tools.py", line 12, in lookup
    return next(rows)
"""


def test_a_plain_traceback_names_its_type_and_message() -> None:
    assert stderr_headline(PLAIN, NO_SECRETS) == "ZeroDivisionError: division by zero"


def test_a_node_stack_trace_names_its_type_and_message() -> None:
    assert stderr_headline(NODE, NO_SECRETS) == "TypeError: Cannot read properties of undefined (reading 'length')"


def test_an_exception_group_names_the_sub_exception_by_its_first_line() -> None:
    traces = parse_traces(GROUP)
    assert [t.exc_type for t in traces] == ["ExceptionGroup", "records.NotFound"]
    root = root_cause(traces)
    assert root is not None
    assert headline(named_exception(traces, root), NO_SECRETS) == "records.NotFound: no such record"
    # The sub-exception's frames are read through the group's bars.
    assert [f.func for f in traces[1].frames] == ["_run_coro", "fetch"]


def test_any_type_name_right_after_the_frames_is_the_exception() -> None:
    (trace,) = parse_traces(ANY_TYPE)
    assert trace.exc_type == "StopIteration" and trace.typed
    assert headline(trace, NO_SECRETS) == "StopIteration"


def test_a_traceback_cut_before_its_type_says_so() -> None:
    (trace,) = parse_traces(CUT_SHORT)
    assert not trace.typed
    assert "ends before its type" in headline(trace, NO_SECRETS)
    # The placeholder type still signs a trace without frames as before.
    assert trace.exc_type == "Exception"


def test_the_headline_is_redacted_before_it_is_cut_escaped_and_capped() -> None:
    secret = "s3cr3t-value-0123456789"
    redact = Redactor([secret])
    text = f"ValueError: bad token {secret} \x1b[31m\u200b" + "x" * 500
    shown = first_line(text, redact)
    assert secret not in shown and REDACTED in shown
    assert "\x1b" not in shown and "\\x1b" in shown and "\\u200b" in shown
    # Any line break ends the line quoted, a Unicode one too.
    assert first_line("KeyError: a\u2028b", redact) == "KeyError: a"
    assert len(shown) <= HEADLINE_CHARS and shown.endswith("...")
    # A secret straddling the cap is never cut into a visible prefix.
    straddling = "E: " + "y" * (HEADLINE_CHARS - 10) + secret
    assert secret[:5] not in first_line(straddling, redact)
