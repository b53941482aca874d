"""``run_until_stable`` / ``is_stable``: when the runner calls a group settled."""

from __future__ import annotations

import pytest

from scenarios.simulation import Simulation
from tests.sim.helpers import FAST, FAST_BROKER


@pytest.mark.parametrize("level", ["debug", "info", "warning"])
def test_many_groups_settle_whatever_the_log_level(level: str) -> None:
    """With the log muted (warning) no group event is recorded, so the runner cannot rely on
    the log to know which groups changed: it must still see both groups settle."""
    sim = Simulation(topics={"t": 4}, seed=1, log_level=level, coordinator_config=FAST_BROKER)
    sim.add_consumers(2, group_id="g", topics=["t"], start=True, **FAST)
    sim.add_consumers(2, prefix="D", group_id="h", topics=["t"], start=True, **FAST)
    assert sim.run_until_stable(["g", "h"], timeout_ms=60_000)
    assert sim.now < 10_000
    assert sim.is_stable("g") and sim.is_stable("h")
    if level == "warning":
        assert sim.events == []
