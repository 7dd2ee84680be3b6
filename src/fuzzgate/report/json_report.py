"""`report.json`: the source of truth every other output and `fuzzgate replay` read."""

from __future__ import annotations

import json
from pathlib import Path

from fuzzgate.model.errors import ReportError
from fuzzgate.model.files import read_regular, write_atomic
from fuzzgate.model.json_fields import JSONValue, UnusableJSON, json_type, parse_json
from fuzzgate.record.results import REPORT_VERSION, RunReport
from fuzzgate.triage.fingerprint import known_scheme

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
    _check_format(path, data)
    try:
        return RunReport.from_json(data)
    except KeyError as exc:
        raise ReportError(f"{path}: not a fuzzgate report (missing or bad field {exc})") from None
    except _MALFORMED as exc:
        raise ReportError(f"{path}: not a fuzzgate report (a field of the wrong shape: {exc})") from None


_MALFORMED = (TypeError, ValueError, AttributeError, ArithmeticError)
"""What converting a field of the wrong shape raises: `.get` of an array, `int(1e999)`, ..."""


def _check_format(path: Path, data: dict[str, JSONValue]) -> None:
    """Refuse a report this fuzzgate would misread: a later `report_version`, a fingerprint scheme
    it does not know (accepting its findings would write baseline entries no fuzzgate reads), no
    `findings` at all. A report without `fingerprint_scheme` is one of `fuzzgate/1`."""
    version = data.get("report_version", REPORT_VERSION)
    if type(version) is not int or version < 1:
        raise ReportError(f'{path}: not a fuzzgate report ("report_version" is {json.dumps(version)})')
    if version > REPORT_VERSION:
        raise ReportError(
            f"{path}: written by a newer fuzzgate (report_version {version}; this fuzzgate reads {REPORT_VERSION})",
            hint=_NEWER_HINT,
        )
    scheme = data.get("fingerprint_scheme")
    if scheme is not None and not isinstance(scheme, str):
        raise ReportError(f'{path}: not a fuzzgate report ("fingerprint_scheme" is {json_type(scheme)})')
    if scheme is not None and not known_scheme(scheme):
        raise ReportError(
            f'{path}: has "fingerprint_scheme": {json.dumps(scheme)}, which this fuzzgate does not know',
            hint=_NEWER_HINT,
        )
    if "findings" not in data:
        raise ReportError(f'{path}: not a fuzzgate report (it has no "findings")')
    if not isinstance(data["findings"], list):
        raise ReportError(f'{path}: not a fuzzgate report ("findings" is {json_type(data["findings"])}, not an array)')


_NEWER_HINT = "it was written by a newer fuzzgate: upgrade fuzzgate to read it"
