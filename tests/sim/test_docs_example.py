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
    # the readable timeline, as groupsim run prints it, not JSON lines
    result.stdout.fnmatch_lines(["*C1: onPartitionsAssigned(t-0, t-1)*"])
    assert '"event":' not in result.stdout.str()
    raw = pytester.runpytest_inprocess("-q", "-p", "no:cacheprovider", "--groupsim-raw-events")
    raw.stdout.fnmatch_lines(['*"event":"rebalance_callback"*'])


def test_assignments_compare_with_strings_and_unsettled_says_where(
    pytester: pytest.Pytester,
) -> None:
    pytester.makepyfile(
        test_strings="""
def test_strings(groupsim):
    sim = groupsim(topics={"orders": 3}, seed=1)
    sim.add_consumers(1, group_id="g", topics=["orders"], start=True)
    assert sim.run_until_stable("g")
    assert sim.assignments("g") == {"C1": ["orders-0", "orders-1", "orders-2"]}
    assert {"C1": ["orders-0", "orders-1", "orders-2"]} == sim.assignments("g")
    assert sim.assignments("g") != {"C1": ["orders-0"]}

def test_unsettled(groupsim):
    sim = groupsim(topics={"orders": 3}, seed=1)
    sim.add_consumers(2, group_id="g", topics=["orders"], start=True)
    assert sim.run_until_stable("g", timeout_ms=50)
"""
    )
    result = pytester.runpytest_inprocess("-q", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(
        ["*Settled(False: not settled at t=50 ms: group g * consumers: C1=*, C2=*"]
    )


SCENARIO = """\
version: 1
name: {name}
cluster: {{topics: {{T1: 2}}}}
defaults: {{partition.assignment.strategy: [range]}}
consumers: [{{count: 2, id: "C{{i}}", group: g, topics: [T1]}}]
timeline: [{{at: 0s, start: all}}]
expect:
  - {{at: 10s, state: Stable, assignment: {{C0: [T1-0], C1: [{partition}]}}}}
"""


def test_scenario_files_are_collected_as_tests(pytester: pytest.Pytester) -> None:
    pytester.makefile(".scenario.yaml", good=SCENARIO.format(name="good", partition="T1-1"))
    pytester.makefile(".scenario.yaml", bad=SCENARIO.format(name="bad", partition="T1-0"))
    pytester.makefile(".yaml", ignored="not: [a scenario")  # not matching the pattern
    pytester.makefile(".scenario.yaml", broken="version: 1\nconsumers: 7\n")
    result = pytester.runpytest_inprocess("-q", "-p", "no:cacheprovider", "-rf")
    result.assert_outcomes(passed=1, failed=2)
    out = result.stdout.str()
    assert "FAIL group g at 10000ms" in out and "C1]: expected [T1-0], got [T1-1]" in out
    assert "broken.scenario.yaml:2:12: consumers:" in out


def test_a_failed_scenario_file_opens_as_a_browser_page(pytester: pytest.Pytester) -> None:
    pytester.makefile(".scenario.yaml", good=SCENARIO.format(name="good", partition="T1-1"))
    pytester.makefile(".scenario.yaml", bad=SCENARIO.format(name="bad", partition="T1-0"))
    pages = pytester.path / "pages"
    result = pytester.runpytest_inprocess(
        "-q", "-p", "no:cacheprovider", "-rf", "--groupsim-html", str(pages)
    )
    result.assert_outcomes(passed=1, failed=1)
    assert sorted(p.name for p in pages.iterdir()) == ["bad.scenario.html"]  # only the failed run
    assert f"the run as a browser page: {pages / 'bad.scenario.html'}" in result.stdout.str()
    page = (pages / "bad.scenario.html").read_text(encoding="utf-8")
    # the failed expectation is a callout of the page, with what was expected and what happened
    assert "<title>groupsim: bad</title>" in page and "expected ['T1-0'], got ['T1-1']" in page


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


def test_runner_doc_setup_snippet_runs_as_written() -> None:
    """docs/runner.md's construction snippet is complete (its imports included)."""
    import re
    from pathlib import Path

    doc = (Path(__file__).resolve().parents[2] / "docs" / "runner.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```python\n(.*?)```", doc, re.S)
    setup = next(b for b in blocks if "sim = Simulation(" in b)
    namespace: dict[str, object] = {}
    exec(compile(setup, "docs/runner.md", "exec"), namespace)
    assert {"C1", "C2", "S1", "S2", "S3"} <= set(namespace["sim"].consumer_ids)  # type: ignore[attr-defined]


def test_a_failed_fixture_test_opens_as_a_browser_page(pytester: pytest.Pytester) -> None:
    """A simulation built in Python (no scenario file) is written from its event log."""
    pytester.makepyfile(
        test_fixture_pages="""
def test_passes(groupsim):
    sim = groupsim(topics={"orders": 2}, seed=1)
    sim.add_consumers(2, group_id="g", topics=["orders"], start=True)
    assert sim.run_until_stable("g")

def test_fails(groupsim):
    sim = groupsim(topics={"orders": 2}, seed=1)
    sim.add_consumers(2, group_id="g", topics=["orders"], start=True)
    assert sim.run_until_stable("g")
    other = groupsim(topics={"audit": 1}, seed=2)
    other.add_consumer("A1", group_id="audit-group", topics=["audit"], start=True)
    other.run_for(8000)
    assert sim.generation("g") == 7, "wrong generation"
"""
    )
    pages = pytester.path / "pages"
    result = pytester.runpytest_inprocess(
        "-q", "-p", "no:cacheprovider", "-rf", "--groupsim-html", str(pages)
    )
    result.assert_outcomes(passed=1, failed=1)
    names = sorted(p.name for p in pages.iterdir())
    stem = "test_fixture_pages.py_test_fails"
    assert names == [f"{stem}-2.html", f"{stem}.html"]  # the failed test's two simulations only
    assert f"the run as a browser page: {pages / (stem + '.html')}" in result.stdout.str()
    from scenarios.html import simulation_view

    first = (pages / f"{stem}.html").read_text(encoding="utf-8")
    second = (pages / f"{stem}-2.html").read_text(encoding="utf-8")
    assert "<title>groupsim: test_fails</title>" in first
    # the failure is a callout; the page's lanes and steps come from that simulation's own log
    assert "test_fails failed: AssertionError: wrong generation" in first
    assert '"group_id":"g"' in first and '"id":"C1"' in first
    assert "JoinGroup" in first and '"group_id":"audit-group"' not in first
    assert '"group_id":"audit-group"' in second and '"id":"A1"' in second
    # the same view the page embeds, computed again from a fresh run of the same calls
    from scenarios.simulation import Simulation

    sim = Simulation(topics={"orders": 2}, seed=1, check_invariants=True)
    sim.add_consumers(2, group_id="g", topics=["orders"], start=True)
    assert sim.run_until_stable("g")
    view = simulation_view(sim, name="test_fails")
    assert view["group"][-1][2] == "Stable" and view["members"] == sim.consumer_ids
    assert len(view["steps"]) > 10 and view["end_ms"] == sim.now
