"""The simulated network: latency, seeded jitter, FIFO links, loss and partitions."""

from __future__ import annotations

import random

import pytest

from scenarios.network import Network, NetworkConfig


def test_latency_without_jitter_is_exact() -> None:
    net = Network(NetworkConfig(latency_ms=3), random.Random(1))
    assert net.arrival("C1", "broker-0", 100) == 103


def test_jitter_is_seeded_and_links_stay_fifo() -> None:
    def arrivals(seed: int) -> list[int]:
        net = Network(NetworkConfig(latency_ms=2, jitter_ms=20), random.Random(seed))
        return [net.arrival("C1", "broker-0", t) for t in range(0, 50, 5)]  # type: ignore[misc]

    first = arrivals(7)
    assert first == arrivals(7)
    assert first != arrivals(8)
    assert first == sorted(first)  # a later message never overtakes an earlier one
    assert all(a >= t + 2 for a, t in zip(first, range(0, 50, 5), strict=True))


def test_drop_probability_loses_about_that_share() -> None:
    net = Network(NetworkConfig(drop_probability=0.25), random.Random(3))
    lost = sum(net.arrival("C1", "broker-0", t) is None for t in range(4000))
    assert 850 < lost < 1150
    assert net.stats["dropped"] == lost


def test_partition_blocks_only_between_islands_and_heals() -> None:
    net = Network(NetworkConfig(), random.Random(0))
    net.partition([["C1", "broker-0"], ["C2"]], until_ms=500)
    assert net.arrival("C1", "broker-0", 0) == 1
    assert net.arrival("C1", "broker-1", 0) is None  # broker-1 is in the implicit island
    assert net.arrival("C2", "broker-0", 0) is None
    assert net.arrival("C3", "broker-1", 0) == 1  # both unnamed: same island
    assert net.partition_until == 500
    net.heal()
    assert net.arrival("C2", "broker-0", 0) == 1


def test_a_node_in_two_groups_is_rejected() -> None:
    net = Network(NetworkConfig(), random.Random(0))
    with pytest.raises(ValueError, match="two partition groups"):
        net.partition([["C1"], ["C1", "C2"]], None)


def test_bad_settings_are_rejected() -> None:
    with pytest.raises(ValueError):
        NetworkConfig(drop_probability=1.5)
    with pytest.raises(ValueError):
        NetworkConfig(latency_ms=-1)
