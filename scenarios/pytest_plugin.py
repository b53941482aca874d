"""pytest fixtures for testing consumer-group behaviour with groupsim (registered as ``pytest11``).

Once groupsim is installed, any test can ask for the ``groupsim`` fixture: a factory that builds
a ``Simulation`` in one call::

    def test_a_third_member_triggers_one_rebalance(groupsim):
        sim = groupsim(topics={"orders": 6})
        sim.add_consumers(2, group_id="g", topics=["orders"], start=True)
        assert sim.run_until_stable("g")
        sim.add_consumer("C3", group_id="g", topics=["orders"], start=True)
        assert sim.run_until_stable("g")
        assert len(sim.rebalances("g")) == 2

``kafka_sim`` is the same factory under another name. ``--groupsim-seed N`` changes the default
seed of every simulation the factory builds (a test that passes its own ``seed=`` keeps it), to
explore other interleavings. When a test fails, the end of each simulation's timeline (the lines
``groupsim run`` prints) is added to the failure report as a "groupsim events" section
(``--groupsim-raw-events``: the JSON event lines instead).

Scenario files are collected as tests too: every file matching the ``groupsim_scenarios`` ini
patterns (default ``*.scenario.yaml``) is one test that loads, runs and checks it; a failure shows
the failed expectations and the run's story. ``groupsim_allow_code = true`` lets those files name
``module:Class`` assignors (README, "Trust"). ``--groupsim-html DIR`` also writes each failed
scenario's run as the browser page (``groupsim html``, docs/html.md) to ``DIR/<file stem>.html`` and
names the file in the report, so the failing rebalance opens in the viewer. It does the same for
a failed test's simulations built through the fixture (no scenario file): each is written from its
event log to ``DIR/<test id>.html`` (``-2``, ``-3``... for a test's further simulations), with the
test's failure as the page's last callout, and listed in a "groupsim pages" section.
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Generator, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pluggy
import pytest

if TYPE_CHECKING:
    from scenarios.simulation import Simulation

REPORT_TAIL = 40


class SimulationFactory:
    """Builds simulations with the session's default seed and remembers them for the report."""

    def __init__(self, default_seed: int) -> None:
        self.default_seed = default_seed
        self.simulations: list[Simulation] = []

    def __call__(self, **kwargs: Any) -> Simulation:
        # imported here so that loading the plugin (in every pytest run) imports nothing heavy
        from scenarios.simulation import Simulation

        kwargs.setdefault("seed", self.default_seed)
        kwargs.setdefault("check_invariants", True)
        sim = Simulation(**kwargs)
        self.simulations.append(sim)
        return sim

    def __iter__(self) -> Iterator[Simulation]:
        return iter(self.simulations)


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("groupsim")
    group.addoption(
        "--groupsim-seed",
        type=int,
        default=0,
        help="default seed of the simulations built by the groupsim fixture (default 0)",
    )
    group.addoption(
        "--groupsim-raw-events",
        action="store_true",
        default=False,
        help="on failure, report the JSON event lines instead of the readable timeline",
    )
    group.addoption(
        "--groupsim-html",
        metavar="DIR",
        default=None,
        help="write each failed scenario file's run (DIR/<file stem>.html) and each failed "
        "test's simulations built by the groupsim fixture (DIR/<test id>.html) as browser pages",
    )
    parser.addini(
        "groupsim_scenarios",
        type="args",
        default=["*.scenario.yaml"],
        help="file name patterns of groupsim scenario files to collect as tests",
    )
    parser.addini(
        "groupsim_allow_code",
        type="bool",
        default=False,
        help="let collected scenario files name module:Class assignors (imports that code)",
    )


def pytest_collect_file(parent: pytest.Collector, file_path: Path) -> pytest.Collector | None:
    if file_path.suffix not in (".yaml", ".yml"):
        return None
    patterns = parent.config.getini("groupsim_scenarios")
    if any(fnmatch.fnmatch(file_path.name, p) for p in patterns):
        return ScenarioFile.from_parent(parent, path=file_path)
    return None


class ScenarioFile(pytest.File):
    """A scenario file: one test, named after the file."""

    def collect(self) -> Iterator[pytest.Item]:
        yield ScenarioItem.from_parent(self, name=self.path.stem)


class ScenarioFailed(Exception):
    """A collected scenario is invalid or its run failed; the message is the report to show."""


class ScenarioItem(pytest.Item):
    """Loads, runs and checks one scenario file, like ``groupsim run`` (exit 0 = pass)."""

    def runtest(self) -> None:
        import io

        from rich.console import Console

        from scenarios.errors import ScenarioError
        from scenarios.loader import load_scenario
        from scenarios.report import render_run
        from scenarios.runner import run_scenario

        allow_code = bool(self.config.getini("groupsim_allow_code"))
        try:
            scenario = load_scenario(self.path, allow_code=allow_code)
        except ScenarioError as exc:
            raise ScenarioFailed(exc.format()) from None
        result = run_scenario(scenario)
        if not result.passed:
            out = io.StringIO()
            console = Console(file=out, width=120, color_system=None, highlight=False)
            render_run(console, scenario, result, brief=True)
            page_dir = self.config.getoption("--groupsim-html")
            if page_dir:
                from scenarios.html import write_html

                page = write_html(scenario, result, Path(page_dir) / f"{self.name}.html")
                out.write(f"\nthe run as a browser page: {page}\n")
            raise ScenarioFailed(out.getvalue())

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> Any:
        if isinstance(excinfo.value, ScenarioFailed):
            return str(excinfo.value)
        return super().repr_failure(excinfo)

    def reportinfo(self) -> tuple[Path, int, str]:
        return self.path, 0, f"groupsim scenario {self.name}"


@pytest.fixture
def groupsim(request: pytest.FixtureRequest) -> Generator[SimulationFactory, None, None]:
    """A factory: ``groupsim(brokers=3, topics={...}, seed=..., network=...) -> Simulation``.

    Invariant checks are on by default (``check_invariants=False`` turns them off).
    """
    factory = SimulationFactory(request.config.getoption("--groupsim-seed"))
    request.node._groupsim_factory = factory
    yield factory


@pytest.fixture
def kafka_sim(groupsim: SimulationFactory) -> SimulationFactory:
    """The ``groupsim`` factory under another name."""
    return groupsim


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, pluggy.Result[pytest.TestReport], None]:
    outcome = yield
    report = outcome.get_result()
    factory = getattr(item, "_groupsim_factory", None)
    if factory is None or report.when != "call" or not report.failed:
        return
    from scenarios.eventlog import dumps_event
    from scenarios.report import timeline_lines
    from scenarios.units import format_ms

    raw = item.config.getoption("--groupsim-raw-events")
    for number, sim in enumerate(factory, start=1):
        if raw:
            text = "\n".join(dumps_event(event) for event in sim.events[-REPORT_TAIL:])
        else:
            lines = timeline_lines(sim.events, sim.consumer_ids)[-REPORT_TAIL:]
            text = "\n".join(f"{format_ms(t):>10}  {line}" for t, line, _ in lines)
        title = f"groupsim events (simulation {number}, seed {sim.seed}, t={sim.now} ms)"
        report.sections.append((title, text or "(no events)"))
    page_dir = item.config.getoption("--groupsim-html")
    if page_dir:
        pages = _write_pages(item, factory, Path(page_dir), report)
        listing = "\n".join(f"the run as a browser page: {page}" for page in pages)
        report.sections.append(("groupsim pages", listing))


def page_stem(nodeid: str) -> str:
    """A file name for a test's page: its node id with every character a file name may not
    safely hold (``/``, ``::``, ``[``, spaces...) replaced by ``_``."""
    stem = re.sub(r"[^A-Za-z0-9._-]+", "_", nodeid).strip("_.")
    return stem[:150] or "test"


def _write_pages(
    item: pytest.Item, factory: SimulationFactory, page_dir: Path, report: pytest.TestReport
) -> list[Path]:
    """The failed test's simulations as browser pages (``DIR/<test>.html``, ``-2``, ``-3``...
    when the test built several), from their event logs; the failure is the last callout."""
    from scenarios.html import write_simulation_html

    failure = report.longreprtext.strip().splitlines()
    message = next((line for line in failure if line.startswith("E ")), "")
    message = message[1:].strip() or (failure[-1] if failure else "the test failed")
    stem = page_stem(item.nodeid)
    pages = []
    for number, sim in enumerate(factory, start=1):
        suffix = "" if number == 1 else f"-{number}"
        pages.append(
            write_simulation_html(
                sim,
                page_dir / f"{stem}{suffix}.html",
                name=f"{item.name}" + (f" (simulation {number})" if number > 1 else ""),
                description=f"built by the test {item.nodeid}",
                source=item.nodeid,
                failure=f"{item.name} failed: {message}",
            )
        )
    return pages
