"""A death whose traceback is the SDK's alone is the SDK's bug (`sdk.died_in_sdk`): told from the
frames of what raised, never from the server's name; any frame of the server's own code, or of
another package, or no traceback at all, keeps the death the server's."""

from __future__ import annotations

from pathlib import Path

import pytest

from fuzzgate.check import CallContext, Observation, Oracles
from fuzzgate.check.protocol_probes import judge
from fuzzgate.check.sdk import Sdk, ServerFacts, died_in_sdk
from fuzzgate.check.secrets import Redactor, SecretScanner
from fuzzgate.check.traceback import parse_traces
from fuzzgate.model.findings import DEFAULT_SEVERITY, Cause, Kind, Severity
from fuzzgate.model.outcome import AfterTimeout, CallOutcome, OutcomeStatus
from fuzzgate.triage.finding_set import severity_of, subject
from fuzzgate.triage.fingerprint import fingerprint

SITE = "/opt/venv/lib/python3.12/site-packages"
STDLIB = "/usr/lib/python3.12"
SERVER_FRAME = f'''    |   File "{SITE}/notes_server/server.py", line 495, in serve
    |     await server.run(read_stream, write_stream, options, raise_exceptions=True)
'''


def died_of(leaf_frames: str, *, between: str = SERVER_FRAME) -> str:
    """What a Python SDK server writes when its read loop raises: the exception group the task
    groups raise on the way out (the server's `main` and `serve` among its callers), around the
    traceback of what raised, whose frames are `leaf_frames`."""
    return f"""\
ERROR:mcp.server.lowlevel.server:Received exception from stream: 1 validation error for JSONRPCMessage
  + Exception Group Traceback (most recent call last):
  |   File "/opt/venv/bin/notes-server", line 8, in <module>
  |     sys.exit(main())
  |   File "{SITE}/notes_server/__init__.py", line 21, in main
  |     asyncio.run(serve(repository))
  |   File "{STDLIB}/asyncio/runners.py", line 190, in run
  |     return runner.run(main)
  |   File "{SITE}/mcp/server/stdio.py", line 85, in stdio_server
  |     async with anyio.create_task_group() as tg:
  |   File "{SITE}/anyio/_backends/_asyncio.py", line 871, in __aexit__
  |     raise BaseExceptionGroup(
  | ExceptionGroup: unhandled errors in a TaskGroup (1 sub-exception)
  +-+---------------- 1 ----------------
    | Exception Group Traceback (most recent call last):
    |   File "{SITE}/mcp/server/stdio.py", line 88, in stdio_server
    |     yield read_stream, write_stream
{between}    |   File "{SITE}/mcp/server/lowlevel/server.py", line 662, in run
    |     async with AsyncExitStack() as stack:
    |   File "{SITE}/anyio/_backends/_asyncio.py", line 871, in __aexit__
    |     raise BaseExceptionGroup(
    | ExceptionGroup: unhandled errors in a TaskGroup (1 sub-exception)
    +-+---------------- 1 ----------------
      | Traceback (most recent call last):
{leaf_frames}      | pydantic_core._pydantic_core.ValidationError: 1 validation error for JSONRPCMessage
      +------------------------------------
"""


SDK_LEAF = f'''      |   File "{SITE}/anyio/_core/_tasks.py", line 327, in _run_coro
      |     retval = await self._coro
      |   File "{SITE}/mcp/server/lowlevel/server.py", line 720, in _handle_message
      |     raise message
      |   File "{SITE}/mcp/server/stdio.py", line 65, in stdin_reader
      |     message = types.JSONRPCMessage.model_validate_json(line)
      |   File "{SITE}/pydantic/main.py", line 847, in model_validate_json
      |     return cls.__pydantic_validator__.validate_json(
'''
SDK_DEATH = died_of(SDK_LEAF)
OWN_CODE_LEAF = f'''      |   File "{SITE}/mcp/server/stdio.py", line 65, in stdin_reader
      |     message = decode(line)
      |   File "/srv/notes/server.py", line 40, in decode
      |     return types.JSONRPCMessage.model_validate_json(line)
      |   File "{SITE}/pydantic/main.py", line 847, in model_validate_json
      |     return cls.__pydantic_validator__.validate_json(
'''
OWN_PACKAGE_LEAF = SDK_LEAF.replace(f"{SITE}/mcp/server/stdio.py", f"{SITE}/notes_server/transport.py")
OTHER_PACKAGE_LEAF = SDK_LEAF.replace(f"{SITE}/pydantic/main.py", f"{SITE}/orjson_compat/loads.py")


def _died(stderr: str) -> Sdk | None:
    return died_in_sdk(parse_traces(stderr))


def test_a_death_whose_raising_frames_are_all_the_sdks_is_the_sdks() -> None:
    # The server's `main` and `serve` are in the exception groups' tracebacks: they started the
    # SDK's loop, as every server does; what raised is the sub-exception's traceback.
    assert _died(SDK_DEATH) == Sdk("mcp")
    assert _died(died_of(SDK_LEAF, between="")) == Sdk("mcp")


@pytest.mark.parametrize(
    "stderr",
    [
        pytest.param(died_of(OWN_CODE_LEAF), id="the server's checkout"),
        pytest.param(died_of(OWN_PACKAGE_LEAF), id="the server's installed package"),
        pytest.param(died_of(OTHER_PACKAGE_LEAF), id="another package"),
        pytest.param("", id="no traceback"),
        pytest.param("Segmentation fault (core dumped)\n", id="no traceback, a line"),
        # A traceback the server logged of its own beside the SDK's: the death may be its doing.
        pytest.param(
            'Traceback (most recent call last):\n  File "/srv/notes/server.py", line 9, in load\n'
            "KeyError: 'x'\n" + SDK_DEATH,
            id="another traceback of the server's own",
        ),
    ],
)
def test_a_death_with_a_frame_outside_the_sdk_or_no_traceback_is_the_servers(stderr: str) -> None:
    assert _died(stderr) is None


def test_a_death_with_no_frame_of_the_sdk_is_not_tied_to_it() -> None:
    only_runtime = (
        f'Traceback (most recent call last):\n  File "{SITE}/anyio/streams/text.py", line 1, in send\nOSError: x\n'
    )
    assert _died(only_runtime) is None


def test_the_version_the_process_showed_fills_in_what_the_frames_do_not_say(tmp_path: Path) -> None:
    assert died_in_sdk(parse_traces(SDK_DEATH), Sdk("mcp", "1.30.0")) == Sdk("mcp", "1.30.0")
    # Another SDK's version says nothing of this one.
    assert died_in_sdk(parse_traces(SDK_DEATH), Sdk("fastmcp", "2.0")) == Sdk("mcp")
    site = tmp_path / "lib" / "python3.12" / "site-packages"
    (site / "mcp-1.9.4.dist-info").mkdir(parents=True)
    (site / "mcp-1.9.4.dist-info" / "METADATA").write_text("Name: mcp\nVersion: 1.9.4\n")
    assert _died(SDK_DEATH.replace(SITE, str(site))) == Sdk("mcp", "1.9.4")


# --- the checks that use it -------------------------------------------------------------------------------------


ORACLES = Oracles(slow_s=10.0, scanner=SecretScanner([], {}), server=ServerFacts(sdk=Sdk("mcp", "1.30.0")))
SURROGATE = {"title": "a\ud800b"}


def _died_after_silence(stderr: str) -> CallOutcome:
    return CallOutcome(
        OutcomeStatus.TIMEOUT, 1.0, error="no reply", stderr=stderr, exit_code=1, after_timeout=AfterTimeout.DIED
    )


def _unanswered(stderr: str) -> Observation:
    (observation,) = ORACLES.observe_call(CallContext("set_title", SURROGATE, True, _died_after_silence(stderr)))
    return observation


def _finding_id(observation: Observation) -> str:
    surface, name = subject(observation, "set_title")
    return fingerprint(observation.kind, surface, name, observation.signature)


def test_a_lone_surrogate_the_sdk_died_of_is_the_sdks_low_finding() -> None:
    by_sdk = _unanswered(SDK_DEATH)
    assert (by_sdk.kind, by_sdk.cause, by_sdk.server_wide) == (Kind.CRASH, Cause.SDK, True)
    assert severity_of(by_sdk, DEFAULT_SEVERITY) is Severity.LOW
    assert "it died in the Python MCP SDK (mcp 1.30.0)" in by_sdk.message
    assert "upgrading does not help yet" in by_sdk.message  # no mcp release answers a lone surrogate
    # The same death through the server's own code: the server's, at the crash's severity.
    own = _unanswered(died_of(OWN_CODE_LEAF))
    assert (own.kind, own.cause) == (Kind.CRASH, Cause.SERVER)
    assert severity_of(own, DEFAULT_SEVERITY) is DEFAULT_SEVERITY[Kind.CRASH]
    assert "SDK" not in own.message
    # Whose bug it is is not which bug it is: the fingerprint is the same.
    assert by_sdk.signature == own.signature and _finding_id(by_sdk) == _finding_id(own)


def test_a_protocol_probe_the_sdk_died_of_is_the_sdks() -> None:
    (by_sdk,) = judge("params-array", _died_after_silence(SDK_DEATH), Redactor(()))
    assert (by_sdk.kind, by_sdk.cause, by_sdk.signature) == (Kind.CRASH, Cause.SDK, ("probe", "params-array", "crash"))
    assert "it died in the Python MCP SDK (mcp, version not known)" in by_sdk.message
    assert "fuzzgate does not know whether a newer mcp fixes it" in by_sdk.message
    during = CallOutcome(OutcomeStatus.CLOSED, 0.1, stderr=SDK_DEATH, exit_code=1)
    (closed,) = judge("params-array", during, Redactor(()))
    assert closed.cause is Cause.SDK
    for stderr in (died_of(OWN_CODE_LEAF), ""):
        (own,) = judge("params-array", _died_after_silence(stderr), Redactor(()))
        assert (own.kind, own.cause) == (Kind.CRASH, Cause.SERVER)
        assert _finding_id(own) == _finding_id(by_sdk)
