"""Helpers shared by the end-to-end simulation tests.

Timeouts are shortened (session 10 s, heartbeat 1 s, max.poll.interval 30 s, initial rebalance
delay 100 ms) so that a test covers minutes of simulated time in a fraction of a second of real
time; the protocol behaves exactly as with Kafka's defaults, only sooner.
"""

from __future__ import annotations

from typing import Any

from coordinator.config import CoordinatorConfig

PROTOCOLS = {"eager": ("range",), "cooperative": ("cooperative-sticky",)}
FAST = {
    "session_timeout_ms": 10_000,
    "heartbeat_interval_ms": 1_000,
    "max_poll_interval_ms": 30_000,
}
FAST_BROKER = CoordinatorConfig(group_initial_rebalance_delay_ms=100)


def consumer_settings(protocol: str, **overrides: Any) -> dict[str, Any]:
    return {"partition_assignment_strategy": PROTOCOLS[protocol], **FAST, **overrides}


def owners(sim: Any, group_id: str = "g") -> dict[str, str]:
    """partition name -> consumer id, from the consumers' owned sets (checked disjoint)."""
    out: dict[str, str] = {}
    for cid, parts in sim.assignments(group_id).items():
        for tp in parts:
            assert str(tp) not in out, f"{tp} owned twice"
            out[str(tp)] = cid
    return out
