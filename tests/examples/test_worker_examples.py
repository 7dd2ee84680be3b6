"""examples/workers/: the compose file validates against the Compose specification, the systemd
unit passes `systemd-analyze verify`, and both start `fuzzgate work` with flags fuzzgate accepts."""

from __future__ import annotations

import configparser
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import yaml

from fuzzgate.cli.main import build_parser
from tests.action.action_harness import check_jsonschema
from tests.validators import missing

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "workers"
COMPOSE = EXAMPLES / "compose.yaml"
UNIT = EXAMPLES / "fuzzgate-worker@.service"


def _unit() -> configparser.ConfigParser:
    # systemd allows a key more than once (Environment=); the last one of each is enough here.
    parser = configparser.ConfigParser(strict=False, interpolation=None)
    parser.optionxform = str  # type: ignore[assignment,method-assign]
    parser.read(UNIT, encoding="utf-8")
    return parser


def test_the_compose_file_follows_the_compose_specification() -> None:
    result = check_jsonschema("vendor.compose-spec", [COMPOSE])
    assert result.returncode == 0, result.stdout + result.stderr


def test_compose_runs_several_workers_next_to_a_redis_that_keeps_every_write() -> None:
    compose = yaml.safe_load(COMPOSE.read_text(encoding="utf-8"))
    redis, worker = compose["services"]["redis"], compose["services"]["worker"]
    assert "--appendonly" in redis["command"] and "yes" in redis["command"]
    assert worker["deploy"]["replicas"] >= 2
    assert worker["depends_on"]["redis"]["condition"] == "service_healthy"
    assert worker["stop_signal"] == "SIGTERM"
    ns = build_parser().parse_args(worker["command"])
    assert ns.command == "work" and ns.store == "redis://redis:6379/0"


def test_the_unit_is_a_low_priority_service_that_comes_back() -> None:
    service = _unit()["Service"]
    assert int(service["Nice"]) > 0
    assert service["CPUSchedulingPolicy"] in ("idle", "batch")
    assert service["Restart"] == "always"
    assert service["DynamicUser"] == "yes"
    argv = shlex.split(service["ExecStart"].replace("${FUZZGATE_STORE}", "redis://127.0.0.1:6379/0"))
    ns = build_parser().parse_args(argv[1:])
    assert ns.command == "work" and ns.sandbox == "required"


def test_systemd_analyze_verifies_the_unit(tmp_path: Path) -> None:
    analyze = shutil.which("systemd-analyze")
    if analyze is None:
        missing("systemd-analyze is not on PATH", "apt-get install systemd")
    # verify checks that ExecStart's program exists: point it at this fuzzgate.
    fuzzgate = Path(sys.executable).parent / "fuzzgate"
    text = UNIT.read_text(encoding="utf-8").replace("/opt/fuzzgate/venv/bin/fuzzgate", str(fuzzgate))
    (tmp_path / UNIT.name).write_text(text, encoding="utf-8")
    result = subprocess.run(
        [analyze, "verify", "--man=no", str(tmp_path / "fuzzgate-worker@1.service")],
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    # Unknown keys and unparsable values are warnings with exit 0: any output is a failure.
    assert result.returncode == 0 and not (result.stdout + result.stderr).strip(), result.stdout + result.stderr
