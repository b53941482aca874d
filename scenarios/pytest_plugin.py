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
explore other interleavings. When a test fails, the last events of each simulation it built are
added to the failure report as a "groupsim events" section.
"""

from __future__ import annotations

from collections.abc import Generator, Iterator
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

    for number, sim in enumerate(factory, start=1):
        tail = sim.events[-REPORT_TAIL:]
        text = "\n".join(dumps_event(event) for event in tail)
        title = f"groupsim events (simulation {number}, seed {sim.seed}, t={sim.now} ms)"
        report.sections.append((title, text or "(no events)"))
