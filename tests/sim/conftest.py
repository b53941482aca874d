"""Fixtures for the end-to-end simulation tests (helpers live in tests/sim/helpers.py)."""

from __future__ import annotations

from typing import Any

import pytest

from tests.sim.helpers import FAST_BROKER, PROTOCOLS, consumer_settings


@pytest.fixture(params=sorted(PROTOCOLS))
def protocol(request: pytest.FixtureRequest) -> str:
    """Every end-to-end test that asks for it runs once eager and once cooperative."""
    return request.param


@pytest.fixture
def stable_group(groupsim: Any, protocol: str) -> Any:
    """A factory: ``stable_group(n, partitions=6, **consumer overrides)`` -> a settled sim."""

    def make(n: int = 3, partitions: int = 6, seed: int = 1, **overrides: Any) -> Any:
        sim = groupsim(
            brokers=3,
            topics={"orders": partitions},
            seed=seed,
            coordinator_config=FAST_BROKER,
            raise_on_violation=True,
        )
        sim.add_consumers(
            n, group_id="g", topics=["orders"], **consumer_settings(protocol, **overrides)
        )
        sim.start()
        assert sim.run_until_stable("g", timeout_ms=60_000)
        return sim

    return make
