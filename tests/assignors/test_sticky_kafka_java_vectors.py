"""200 random groups assigned by Kafka's real sticky classes, replayed through ours: identical.

How the vectors were made (once, offline; Java is not needed to run this test): Kafka's
``StickyAssignor``, ``CooperativeStickyAssignor``, ``AbstractStickyAssignor`` and their small
dependency closure from apache/kafka trunk (1eb7644, Oct 2024) were compiled unchanged with Java
17, plus ``data/StickyDriver.java``, which puts the subscriptions into a ``HashMap`` in input order
(as ``ConsumerCoordinator`` does), calls ``assignPartitions`` with the subscribed topics only (as
``AbstractPartitionAssignor.assign`` does) and prints every member's list. Groups mix uniform and
differing subscriptions, topics with no partitions or no existence ("ghost"), random overlapping
ownership and generations (absent, -1, 1-3). Eager members carry ownership in user data
serialised by Kafka itself; cooperative members in ``owned_partitions``. Cases where Kafka throws
(a ``NullPointerException`` when a lower-generation previous owner has become "fixed", see
docs/sticky-assignors.md) are not included. Lists are compared in order. A second file holds 100
rack-aware groups (random replica racks a-d, member racks or none, ``preferRackAwareLogic`` on or
off).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.assignors.sweep_cases import assign

DATA = Path(__file__).parent / "data"
VECTORS = json.loads((DATA / "sticky_kafka_java_vectors.json").read_text())
# KIP-881: partition replica racks, member racks, preferRackAwareLogic on or off
RACK_VECTORS = json.loads((DATA / "sticky_kafka_java_rack_vectors.json").read_text())


def _ours(case: dict) -> dict[str, list[str]]:
    """Our lists for a vector (the sweep's case format: sweep_cases.assign builds the members'
    subscriptions as Kafka's client sends them, racks and preferRackAwareLogic included)."""
    result = assign(case)
    return {m: [f"{p.topic}:{p.partition}" for p in parts] for m, parts in result.items()}


def test_vector_file_covers_both_assignors_and_builders() -> None:
    kinds = {v["case"]["kind"] for v in VECTORS}
    assert kinds == {"sticky", "coop"} and len(VECTORS) == 200


@pytest.mark.parametrize("index", range(len(VECTORS)))
def test_same_lists_as_kafka(index: int) -> None:
    vector = VECTORS[index]
    assert _ours(vector["case"]) == vector["expected"]


@pytest.mark.parametrize("index", range(len(RACK_VECTORS)))
def test_same_lists_as_kafka_with_racks(index: int) -> None:
    vector = RACK_VECTORS[index]
    assert _ours(vector["case"]) == vector["expected"]
