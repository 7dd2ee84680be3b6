"""`report.json`: the source of truth every other output and `fuzzgate replay` read."""

from __future__ import annotations

import json
from pathlib import Path

from fuzzgate.model.errors import ReportError
from fuzzgate.model.files import read_regular, write_atomic
from fuzzgate.model.json_fields import UnusableJSON, json_type, parse_json
from fuzzgate.record.results import RunReport

REPORT_FILE = "report.json"


def render(report: RunReport) -> str:
    return json.dumps(report.to_json(), indent=2, ensure_ascii=False, sort_keys=False) + "\n"


def write(report: RunReport, out_dir: Path) -> Path:
    path = out_dir / REPORT_FILE
    write_atomic(path, render(report))
    return path


def read(path: Path) -> RunReport:
    try:
        data = parse_json(read_regular(path))
    except FileNotFoundError:
        raise ReportError(f"{path}: no such report", hint="run `fuzzgate run` first, or pass --out") from None
    except OSError as exc:
        raise ReportError(f"{path}: not a readable report ({exc.strerror or exc})") from None
    except UnusableJSON as exc:
        raise ReportError(f"{path}: not a readable report ({exc})") from None
    if not isinstance(data, dict):
        raise ReportError(f"{path}: not a fuzzgate report (holds {json_type(data)}, not a JSON object)")
    try:
        return RunReport.from_json(data)
    except KeyError as exc:
        raise ReportError(f"{path}: not a fuzzgate report (missing or bad field {exc})") from None
    except _MALFORMED as exc:
        raise ReportError(f"{path}: not a fuzzgate report (a field of the wrong shape: {exc})") from None


_MALFORMED = (TypeError, ValueError, AttributeError, ArithmeticError)
"""What converting a field of the wrong shape raises: `.get` of an array, `int(1e999)`, ..."""
