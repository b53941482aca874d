"""The pytest example of docs/runner.md (which the README quotes) runs and passes as written.

It is run in a fresh pytest session, so this also checks that the plugin is found through its
``pytest11`` entry point, as it will be for a user who installed groupsim.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

pytest_plugins = ["pytester"]

DOC = Path(__file__).resolve().parents[2] / "docs" / "runner.md"


def documented_example() -> str:
    text = DOC.read_text(encoding="utf-8")
    match = re.search(r"<!-- pytest-example -->\s*```python\n(.*?)```", text, re.S)
    assert match, "docs/runner.md lost its <!-- pytest-example --> block"
    return match.group(1)


def test_the_documented_example_passes(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_documented=documented_example())
    result = pytester.runpytest_inprocess("-q", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=1)


def test_a_failing_test_reports_the_simulation_events(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        test_failing="""
def test_fails(kafka_sim):
    sim = kafka_sim(topics={"t": 2}, seed=5)
    sim.add_consumer("C1", group_id="g", topics=["t"], start=True)
    sim.run_until_stable("g")
    assert sim.generation("g") == 99
"""
    )
    result = pytester.runpytest_inprocess("-q", "-p", "no:cacheprovider")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*groupsim events (simulation 1, seed 5, t=*"])
    result.stdout.fnmatch_lines(['*"event":"rebalance_callback"*'])


def test_the_seed_option_changes_the_default_seed(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        test_seed="""
def test_seed(groupsim):
    assert groupsim().seed == 42
    assert groupsim(seed=3).seed == 3
"""
    )
    result = pytester.runpytest_inprocess("-q", "-p", "no:cacheprovider", "--groupsim-seed", "42")
    result.assert_outcomes(passed=1)
