from __future__ import annotations

from fuzzgate.check.traceback import parse_traces, reports_fatal_error, root_cause

PLAIN = """INFO handling request
Traceback (most recent call last):
  File "/venv/lib/python3.11/site-packages/mcp/server.py", line 88, in dispatch
    return await handler(args)
  File "/repo/server.py", line 10, in split_bill
    share = total / people
ZeroDivisionError: division by zero
"""

CHAINED = """Traceback (most recent call last):
  File "/repo/app/tools.py", line 5, in lookup
    return table[key]
KeyError: 'x'

The above exception was the direct cause of the following exception:

Traceback (most recent call last):
  File "/venv/lib/python3.11/site-packages/mcp/base.py", line 213, in run
    raise ToolError from exc
mcp.ToolError: Error executing tool lookup
"""

RICH = """[11/21/26 09:28:23] ERROR    Tool 'boom' raised an unexpected exception        server.py:455
                    ╭──────────── Traceback (most recent call last) ────────────╮
                    │ /venv/lib/python3.11/site-packages/anyio/to_thread.py:65 in run_sync      │
                    │                                                            │
                    │ /tmp/exp/srv.py:8 in boom                                   │
                    │                                                            │
                    ╰────────────────────────────────────────────────────────────╯
                    ValueError: bad three
"""

NODE = """TypeError: Cannot read properties of undefined (reading 'length')
    at countWords (/srv/app/dist/tools.js:42:17)
    at Server.<anonymous> (/srv/app/node_modules/@modelcontextprotocol/sdk/dist/server.js:10:5)
    at node:internal/process/task_queues:95:5
"""


def test_plain_python() -> None:
    (trace,) = parse_traces(PLAIN)
    assert trace.exc_type == "ZeroDivisionError"
    assert trace.user_frames()[-1].path == "/repo/server.py"
    assert trace.signature() == ("server.py:split_bill",)


def test_chained_root_cause_is_the_user_frame() -> None:
    traces = parse_traces(CHAINED)
    assert [t.exc_type for t in traces] == ["KeyError", "mcp.ToolError"]
    root = root_cause(traces)
    assert root is not None and root.signature() == ("tools.py:lookup",)


def test_rich_boxed() -> None:
    (trace,) = parse_traces(RICH)
    assert trace.exc_type == "ValueError" and trace.message == "bad three"
    assert trace.signature() == ("srv.py:boom",)


def test_node() -> None:
    (trace,) = parse_traces(NODE)
    assert trace.exc_type == "TypeError"
    assert trace.user_frames()[-1].func == "countWords"
    assert trace.signature() == ("tools.js:countWords",)


def test_signature_ignores_line_numbers() -> None:
    moved = PLAIN.replace("line 10", "line 99")
    assert parse_traces(moved)[0].signature() == parse_traces(PLAIN)[0].signature()


def test_plain_logs_have_no_trace() -> None:
    assert parse_traces("INFO started\nWARNING slow request\nError handling is fine\n") == []


RECURSIVE = """Traceback (most recent call last):
  File "/repo/orders.py", line 90, in evaluate_rule
    return _evaluate(rule)
  File "/repo/orders.py", line 80, in _evaluate
    return all([_evaluate(c) for c in rule.children])
  File "/repo/orders.py", line 80, in <listcomp>
    return all([_evaluate(c) for c in rule.children])
  File "/repo/orders.py", line 79, in _evaluate
    return OPS[rule.op](rule)
IndexError: list index out of range
"""
SHALLOW = """Traceback (most recent call last):
  File "/repo/orders.py", line 90, in evaluate_rule
    return _evaluate(rule)
  File "/repo/orders.py", line 79, in _evaluate
    return OPS[rule.op](rule)
IndexError: list index out of range
"""


def test_recursion_depth_does_not_change_the_signature() -> None:
    assert parse_traces(RECURSIVE)[0].signature() == parse_traces(SHALLOW)[0].signature()
    assert parse_traces(SHALLOW)[0].signature() == ("orders.py:_evaluate",)


def test_the_exception_type_does_not_change_the_signature() -> None:
    as_type_error = PLAIN.replace("ZeroDivisionError: division by zero", "TypeError: unsupported operand")
    assert parse_traces(as_type_error)[0].exc_type == "TypeError"
    assert parse_traces(PLAIN)[0].signature() == parse_traces(as_type_error)[0].signature()


def test_another_raising_function_is_another_signature() -> None:
    elsewhere = PLAIN.replace("in split_bill", "in tip_share")
    assert parse_traces(PLAIN)[0].signature() != parse_traces(elsewhere)[0].signature()


def test_nodes_report_of_the_error_it_dies_of_is_told_from_a_logged_one() -> None:
    dying = (
        "file.js:3\n  throw e;\n  ^\n\nError: boom\n    at Timeout._onTimeout (/srv/file.js:3:9)\n\nNode.js v20.20.2\n"
    )
    assert reports_fatal_error(dying)
    # Colour codes and a trailing blank line are no different.
    assert reports_fatal_error("\x1b[31mError: boom\x1b[0m\nNode.js v22.1.0")
    # The same error logged by a server that goes on: no footer, or words after it.
    assert not reports_fatal_error(dying.replace("Node.js v20.20.2", ""))
    assert not reports_fatal_error(dying + "listening again\n")
    assert not reports_fatal_error("")
