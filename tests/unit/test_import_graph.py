"""The pipeline's direction, as the code has it: no module imports from a later stage than its own
(stages and the allowed exceptions are declared in scripts/import_graph.py)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "import_graph.py"


def _load() -> ModuleType:
    spec = importlib.util.spec_from_file_location("import_graph", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while the class is built
    spec.loader.exec_module(module)
    return module


ig = _load()
GRAPH: dict[str, set[str]] = ig.import_graph()


def test_every_module_has_a_stage() -> None:
    assert ig.unmapped(GRAPH) == [], "add the module's prefix to STAGES in scripts/import_graph.py"


def test_no_module_imports_from_a_later_stage() -> None:
    assert [str(v) for v in ig.violations(GRAPH)] == []


def test_allowed_exceptions_are_needed_and_import_nothing_later_than_their_importer() -> None:
    for (importer, imported), reason in ig.ALLOWED.items():
        assert reason
        assert any(ig._matches(m, importer) and imported in targets for m, targets in GRAPH.items()), (
            f"nothing in {importer} imports {imported} any more: drop the allowance"
        )
        ceiling = ig.stage_index(ig.stage_of(importer))
        later = [t for t in GRAPH[imported] if ig.stage_index(ig.stage_of(t)) > ceiling]
        assert later == [], f"{imported} is allowed in {importer} only while it imports nothing later"


def test_the_graph_sees_every_form_of_import(tmp_path: Path) -> None:
    package = tmp_path / "fuzzgate"
    (package / "check").mkdir(parents=True)
    (package / "report").mkdir()
    for name in ("__init__", "check/__init__", "check/oracles", "report/__init__", "report/sarif", "plan"):
        (package / f"{name}.py").write_text("")
    (package / "check" / "oracles.py").write_text(
        "from typing import TYPE_CHECKING\n"
        "import fuzzgate.plan\n"
        "from . import __init__\n"
        "from fuzzgate.report import sarif\n"
        "if TYPE_CHECKING:\n    from fuzzgate.check import Something\n"
        "def f() -> None:\n    from ..report.sarif import x\n"
    )
    graph = ig.import_graph(package)
    assert graph["fuzzgate.check.oracles"] == {"fuzzgate.plan", "fuzzgate.report.sarif", "fuzzgate.check"}
    # And the check flags what it must: plan and report are later stages than check.
    assert [(v.importer, v.imported) for v in ig.violations(graph)] == [
        ("fuzzgate.check.oracles", "fuzzgate.plan"),
        ("fuzzgate.check.oracles", "fuzzgate.report.sarif"),
    ]


def test_the_script_prints_every_module_under_its_stage() -> None:
    text = ig.render_graph(GRAPH)
    assert all(f"  {ig._short(m)} -> " in text for m in GRAPH)
    assert ig.render_summary(GRAPH).splitlines()[0].startswith("model")


def test_architecture_shows_the_graph_the_code_has() -> None:
    text = ig.ARCHITECTURE.read_text(encoding="utf-8")
    assert ig.documented_block(text) == ig.summary_block(GRAPH), (
        "ARCHITECTURE.md is out of step with the imports: run `python scripts/import_graph.py --update`"
    )
