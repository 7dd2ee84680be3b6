"""Every distribution the code imports is declared in pyproject.toml, so a clean install has it
rather than getting it by chance as a dependency of a dependency: the package's imports against
`[project] dependencies`, the test suite's (and the example servers' it runs) against those plus
the `test` extra."""

from __future__ import annotations

import ast
import re
import sys
import tomllib
from collections.abc import Iterable, Iterator
from importlib.metadata import packages_distributions
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "src" / "fuzzgate"
TEST_CODE = (ROOT / "tests", ROOT / "examples" / "servers")
DYNAMIC_IMPORTERS = frozenset({"import_or_missing", "importorskip", "import_module"})
"""Calls whose first argument, a string literal, names a module the code imports."""


def normalize(name: str) -> str:
    """A distribution name as PEP 503 compares them."""
    return re.sub(r"[-_.]+", "-", name).lower()


def requirement_name(requirement: str) -> str:
    match = re.match(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)", requirement)
    assert match, f"not a requirement: {requirement!r}"
    return normalize(match.group(1))


def declared(*extras: str) -> set[str]:
    """`[project] dependencies` and the given extras, normalized."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    requirements = list(project["dependencies"])
    for extra in extras:
        requirements += project["optional-dependencies"][extra]
    return {requirement_name(r) for r in requirements}


def imported_modules(path: Path) -> Iterator[tuple[str, int]]:
    """The top-level name of every absolute import in a file (anywhere in it), with its line."""
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name.partition(".")[0], node.lineno
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            yield node.module.partition(".")[0], node.lineno
        elif isinstance(node, ast.Call) and node.args and _called_name(node.func) in DYNAMIC_IMPORTERS:
            first = node.args[0]
            if isinstance(first, ast.Constant) and isinstance(first.value, str):
                yield first.value.partition(".")[0], node.lineno


def _called_name(func: ast.expr) -> str | None:
    if isinstance(func, ast.Name):
        return func.id
    return func.attr if isinstance(func, ast.Attribute) else None


def _python_files(roots: Iterable[Path]) -> Iterator[Path]:
    for root in roots:
        yield from (p for p in sorted(root.rglob("*.py")) if ".tools" not in p.relative_to(ROOT).parts)


def _is_local(module: str, path: Path) -> bool:
    """This project's own code: the package, the test package, or a module beside the importing file
    (pytest puts a test's directory on sys.path, Python a script's: `action_harness`, `_serve`)."""
    beside = path.parent
    return module in ("fuzzgate", "tests") or (beside / f"{module}.py").is_file() or (beside / module).is_dir()


def undeclared(roots: Iterable[Path], allowed: set[str]) -> list[str]:
    """One line per import no declared distribution provides."""
    providers = packages_distributions()
    problems = []
    for path in _python_files(roots):
        for module, line in imported_modules(path):
            if module in sys.stdlib_module_names or _is_local(module, path):
                continue
            where = f"{path.relative_to(ROOT)}:{line}: {module}"
            distributions = {normalize(d) for d in providers.get(module, [])}
            if not distributions:
                problems.append(f"{where}: no installed distribution provides it")
            elif not distributions & allowed:
                problems.append(f"{where}: provided by {', '.join(sorted(distributions))}, not declared")
    return problems


def test_requirement_names_are_normalized() -> None:
    assert requirement_name("PyYAML>=6") == "pyyaml"
    assert requirement_name("mcp_types >=2.3,<3") == "mcp-types"
    assert requirement_name("coverage[toml]>=7.10; python_version >= '3.11'") == "coverage"
    assert requirement_name("jschema.to_python>=1.2.3") == "jschema-to-python"


def test_imports_are_found_anywhere_in_a_file(tmp_path: Path) -> None:
    source = tmp_path / "m.py"
    source.write_text(
        "import os.path, yaml\n"
        "from mcp_types.version import X\n"
        "from . import sibling\n"
        "def f():\n"
        "    import httpx2\n"
        '    return import_or_missing("dockerfile_parse")\n',
        encoding="utf-8",
    )
    found = sorted(imported_modules(source), key=lambda item: item[1])
    assert found == [("os", 1), ("yaml", 1), ("mcp_types", 2), ("httpx2", 5), ("dockerfile_parse", 6)]


def test_an_undeclared_import_is_reported() -> None:
    without_yaml = set(undeclared([PACKAGE], allowed=declared() - {"pyyaml"}))
    added = without_yaml - set(undeclared([PACKAGE], allowed=declared()))
    assert added, "with PyYAML left out, config/_document.py's `import yaml` should be reported"
    assert all(line.endswith(": yaml: provided by pyyaml, not declared") for line in added), added


def test_the_package_declares_every_distribution_it_imports() -> None:
    assert undeclared([PACKAGE], declared()) == []


def test_the_tests_declare_every_distribution_they_import() -> None:
    assert undeclared(TEST_CODE, declared("test")) == []
