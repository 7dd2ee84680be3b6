"""fuzzgate's import graph, module by module, grouped by stage, and the stage order it keeps.

    python scripts/import_graph.py            # every module and the fuzzgate modules it imports
    python scripts/import_graph.py --summary  # each stage and the stages it imports from
    python scripts/import_graph.py --check    # exit 1, listing every import of a later stage
    python scripts/import_graph.py --update   # write the summary into ARCHITECTURE.md

The stage order is declared once, here (`STAGES`), with the few imports of a later stage that are
allowed and why (`ALLOWED`); tests/unit/test_import_graph.py fails when the code leaves it.

Every `import fuzzgate...` and `from fuzzgate... import ...` counts, wherever it is in the file
(inside a function, under `TYPE_CHECKING`): each is a dependency. `from package import name` is an
edge to the submodule when `name` is one, else to the package. Importing a submodule also runs its
package's `__init__`; that implicit edge is not drawn.
"""

from __future__ import annotations

import argparse
import ast
import sys
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = "fuzzgate"
SOURCE = ROOT / "src" / PACKAGE

STAGES: tuple[tuple[str, tuple[str, ...]], ...] = (
    # The vocabulary every stage speaks (and `fuzzgate` itself, which holds only `__version__`).
    ("model", ("fuzzgate", "fuzzgate.model")),
    ("config", ("fuzzgate.config",)),
    # Containing a server: where it runs, what it may touch, every process it starts.
    ("sandbox", ("fuzzgate.sandbox",)),
    # Measuring a server: the coverage plan and the collector injected into it.
    ("coverage", ("fuzzgate.coverage",)),
    ("generate", ("fuzzgate.generate",)),
    ("check", ("fuzzgate.check",)),
    # Talking to a server; it reads the check stage's redactor and traceback patterns.
    ("target", ("fuzzgate.target",)),
    ("triage", ("fuzzgate.triage",)),
    # The run's record (`RunReport`, `SurfaceEntry`): it carries fingerprints, and the plan fills it.
    ("record", ("fuzzgate.record",)),
    ("plan", ("fuzzgate.plan",)),
    ("learn", ("fuzzgate.learn",)),
    # The engine and its other entry points, with verification: it drives the stages above.
    ("engine", ("fuzzgate.engine",)),
    ("store", ("fuzzgate.store",)),
    ("report", ("fuzzgate.report",)),
    ("fleet", ("fuzzgate.fleet",)),
    ("cli", ("fuzzgate.cli", "fuzzgate.__main__")),
)
"""Stages in import order, one package each: a module imports only from its own stage and the ones
before it. A module belongs to the stage of the longest prefix naming it (`fuzzgate` names only
itself)."""

ALLOWED: Mapping[tuple[str, str], str] = {
    ("fuzzgate.sandbox.owned_process", "fuzzgate.check.secrets"): (
        "a stderr line too long to keep loses its end, where a known secret may have been cut in two: only "
        "the owner of the server's process sees the whole line, so it redacts that end; secrets.py imports "
        "nothing later than config"
    ),
}
"""Imports of a later stage that are allowed: (importer prefix, imported module) -> why. The
imported module must itself import nothing later than the importer's stage."""


@dataclass(frozen=True, slots=True)
class Violation:
    importer: str
    imported: str
    importer_stage: str
    imported_stage: str

    def __str__(self) -> str:
        return f"{self.importer} ({self.importer_stage}) imports {self.imported} ({self.imported_stage}), a later stage"


def module_name(path: Path, source: Path = SOURCE) -> str:
    parts = path.relative_to(source.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def modules(source: Path = SOURCE) -> dict[str, Path]:
    return {module_name(p, source): p for p in sorted(source.rglob("*.py"))}


def _imported(node: ast.AST, importer: str, is_package: bool, known: Iterable[str]) -> list[str]:
    names = set(known)
    if isinstance(node, ast.Import):
        return [a.name for a in node.names if a.name == PACKAGE or a.name.startswith(PACKAGE + ".")]
    if not isinstance(node, ast.ImportFrom):
        return []
    if node.level:
        base = importer.split(".") if is_package else importer.split(".")[:-1]
        base = base[: len(base) - (node.level - 1)]
        module = ".".join([*base, node.module] if node.module else base)
    else:
        module = node.module or ""
    if module != PACKAGE and not module.startswith(PACKAGE + "."):
        return []
    return [f"{module}.{a.name}" if f"{module}.{a.name}" in names else module for a in node.names]


def import_graph(source: Path = SOURCE) -> dict[str, set[str]]:
    """Each fuzzgate module and the fuzzgate modules it imports (itself left out)."""
    found = modules(source)
    graph: dict[str, set[str]] = {}
    for name, path in found.items():
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        is_package = path.name == "__init__.py"
        targets = {t for node in ast.walk(tree) for t in _imported(node, name, is_package, found)}
        graph[name] = targets - {name}
    return graph


def _matches(module: str, prefix: str) -> bool:
    if prefix == PACKAGE:
        return module == PACKAGE
    return module == prefix or module.startswith(prefix + ".")


def stage_of(module: str) -> str | None:
    best: tuple[int, str] | None = None
    for stage, prefixes in STAGES:
        for prefix in prefixes:
            if _matches(module, prefix) and (best is None or len(prefix) > best[0]):
                best = (len(prefix), stage)
    return best[1] if best else None


def stage_index(stage: str) -> int:
    return [name for name, _ in STAGES].index(stage)


def _allowed(importer: str, imported: str) -> bool:
    return any(_matches(importer, who) and imported == what for who, what in ALLOWED)


def violations(graph: Mapping[str, Iterable[str]]) -> list[Violation]:
    """Every import of a later stage that `ALLOWED` does not list."""
    found: list[Violation] = []
    for importer, targets in sorted(graph.items()):
        own = stage_of(importer)
        for imported in sorted(targets):
            theirs = stage_of(imported)
            if own is None or theirs is None:
                continue
            if stage_index(theirs) > stage_index(own) and not _allowed(importer, imported):
                found.append(Violation(importer, imported, own, theirs))
    return found


def unmapped(graph: Mapping[str, Iterable[str]]) -> list[str]:
    return sorted(m for m in graph if stage_of(m) is None)


def _short(module: str) -> str:
    return module.removeprefix(PACKAGE + ".") if module != PACKAGE else PACKAGE


def render_graph(graph: Mapping[str, Iterable[str]]) -> str:
    lines: list[str] = []
    for stage, _ in STAGES:
        members = sorted(m for m in graph if stage_of(m) == stage)
        lines.append(f"{stage}:")
        for module in members:
            targets = ", ".join(_short(t) for t in sorted(graph[module])) or "-"
            lines.append(f"  {_short(module)} -> {targets}")
    return "\n".join(lines)


def stage_edges(graph: Mapping[str, Iterable[str]]) -> dict[str, set[str]]:
    """Each stage and the earlier stages its modules import from (imports against the order are
    `violations` or `ALLOWED`, listed apart)."""
    edges: dict[str, set[str]] = {stage: set() for stage, _ in STAGES}
    for importer, targets in graph.items():
        own = stage_of(importer)
        for imported in targets:
            theirs = stage_of(imported)
            if own is not None and theirs is not None and stage_index(theirs) < stage_index(own):
                edges[own].add(theirs)
    return edges


def render_summary(graph: Mapping[str, Iterable[str]]) -> str:
    edges = stage_edges(graph)
    width = max(len(stage) for stage, _ in STAGES)
    lines = []
    for stage, _ in STAGES:
        uses = sorted(edges[stage], key=stage_index)
        lines.append(f"{stage:<{width}} <- {', '.join(uses) if uses else '-'}")
    for who, what in ALLOWED:
        lines.append(f"allowed against the order: {_short(who)} -> {_short(what)}")
    return "\n".join(lines)


ARCHITECTURE = ROOT / "ARCHITECTURE.md"
_BLOCK_START = "<!-- import-graph:start -->"
_BLOCK_END = "<!-- import-graph:end -->"


def summary_block(graph: Mapping[str, Iterable[str]]) -> str:
    """The summary as ARCHITECTURE.md holds it, between its markers."""
    return f"{_BLOCK_START}\n```\n{render_summary(graph)}\n```\n{_BLOCK_END}"


def documented_block(text: str) -> str | None:
    """The marked block of an ARCHITECTURE.md text, markers included, or None without markers."""
    start, end = text.find(_BLOCK_START), text.find(_BLOCK_END)
    return text[start : end + len(_BLOCK_END)] if 0 <= start < end else None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--summary", action="store_true", help="stages and the stages they import from")
    parser.add_argument("--check", action="store_true", help="exit 1 on an import of a later stage")
    parser.add_argument("--update", action="store_true", help="write the summary into ARCHITECTURE.md")
    ns = parser.parse_args(argv)
    graph = import_graph()
    if ns.update:
        text = ARCHITECTURE.read_text(encoding="utf-8")
        old = documented_block(text)
        if old is None:
            print(f"{ARCHITECTURE}: no {_BLOCK_START} ... {_BLOCK_END} block", file=sys.stderr)
            return 1
        ARCHITECTURE.write_text(text.replace(old, summary_block(graph)), encoding="utf-8")
        return 0
    if ns.check:
        problems = [f"{m}: no stage declared in STAGES" for m in unmapped(graph)]
        problems += [str(v) for v in violations(graph)]
        for problem in problems:
            print(problem)
        return 1 if problems else 0
    print(render_summary(graph) if ns.summary else render_graph(graph))
    return 0


if __name__ == "__main__":
    sys.exit(main())
