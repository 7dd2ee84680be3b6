"""What every test shares: where validation is required (FUZZGATE_REQUIRE_VALIDATORS=1, set by
scripts/test.sh and so by CI), a test may skip only through a declared `skipif` condition, such as
the permission test that cannot work as root; any other skip fails, so no missing tool or forgotten
`pytest.skip` can turn into a green run. Hypothesis runs without its timings (`fuzzgate` profile)."""

from __future__ import annotations

from collections.abc import Generator

import pytest
from hypothesis import HealthCheck, settings

from tests.validators import REQUIRE_ENV, required

# Property tests assert what they generate, never how fast: Hypothesis's per-example deadline and its
# too-slow health check are timings, and failed the suite when the machine was busy
# (tests/store/test_baseline.py, "Input generation is slow: 9 valid inputs after 1.01 seconds").
settings.register_profile("fuzzgate", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("fuzzgate")


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    report: pytest.TestReport = yield
    declared = item.get_closest_marker("skipif") is not None
    if report.skipped and required() and not declared and not hasattr(report, "wasxfail"):
        reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else str(report.longrepr)
        report.outcome = "failed"
        report.longrepr = f"skipped, but {REQUIRE_ENV}=1 allows only declared skipif conditions: {reason}"
    return report
