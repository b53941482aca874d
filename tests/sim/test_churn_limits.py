"""validate's churn check (scenarios.validate.Validator.churn_limits) matches what a run does.

A consumer whose processing of every batch (``processing.time.ms``) outlasts
``max.poll.interval.ms`` overruns its poll timer on every poll and leaves the group each time:
the loader refuses such a file. Here the simulation is driven directly (no validation) to show
that the refused setting really churns and that the boundary (equal) settles.
"""

from __future__ import annotations

from scenarios.simulation import Simulation
from tests.sim.helpers import FAST_BROKER, consumer_settings


def rebalances_with_processing(processing_ms: int, **extra: object) -> Simulation:
    sim = Simulation(topics={"T1": 4}, coordinator_config=FAST_BROKER, seed=3)
    settings = consumer_settings(
        "eager",
        max_poll_interval_ms=10_000,
        session_timeout_ms=45_000,
        heartbeat_interval_ms=3_000,
        **extra,
    )
    sim.add_consumers(2, group_id="g", topics=["T1"], processing_time_ms=processing_ms, **settings)
    sim.start()
    sim.run(until=120_000)
    return sim


def test_processing_past_max_poll_interval_churns_for_ever() -> None:
    sim = rebalances_with_processing(11_000)
    leaves = sim.events_named("leave_group")
    assert len(leaves) >= 4 and all("poll timeout" in str(e["reason"]) for e in leaves)
    assert len(sim.rebalances("g")) >= 4
    late = [e for e in leaves if e["t_ms"] > 90_000]
    assert late, "still leaving near the end: it never settles"


def test_processing_equal_to_max_poll_interval_settles() -> None:
    sim = rebalances_with_processing(10_000)
    assert sim.events_named("leave_group") == []
    assert sim.group_state("g") == "Stable" and len(sim.rebalances("g")) == 1


def test_a_static_member_rejoins_at_every_poll_instead() -> None:
    sim = rebalances_with_processing(11_000, group_instance_id="inst-{}")
    timeouts = sim.events_named("poll_timeout")
    # no LeaveGroup from a static member (maybeLeaveGroup skips it), but its generation is reset
    # and it rejoins under a new member id (the coordinator replaces the static member) each time
    assert len(timeouts) >= 4 and any(e["t_ms"] > 90_000 for e in timeouts)
    assert len(sim.events_named("member_replaced")) >= 4
