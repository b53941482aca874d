"""groupsim's server-side assignors against Kafka's own on 300 seeded random groups.

The grid test (test_kafka_grid_digests.py) covers Kafka's two benchmark shapes; these groups
(bench.server_sweep: 2 to 600 members, random partition counts, each member's own random subset
of the topics, groups of few members on a few topics of thousands of partitions, FULL and
INCREMENTAL, uniform and range) are rebuilt from their seed, and each assignment's CRC32 in
Java's iteration order is compared with the digest Kafka's ``UniformAssignor`` /
``RangeAssignor`` (apache/kafka 1eb7644) gave (scripts/sweep_server_assignors_vs_java.py
--record, data/kafka_server_assignor_sweep.json)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bench.server_assignors import digest
from bench.server_sweep import GENERATOR, RandomInputs, case
from coordinator.assignor.registry import get_assignor

DATA = json.loads((Path(__file__).parent / "data" / "kafka_server_assignor_sweep.json").read_text())
SEED = DATA["seed"]
DIGESTS: list[str] = DATA["digests"]


def test_recorded_with_this_generator_over_both_shapes_and_assignors() -> None:
    assert DATA["generator"] == GENERATOR and len(DIGESTS) == 300
    shapes = [case(SEED, i) for i in range(len(DIGESTS))]
    assert {(s.assignor, s.subscription, s.assignment) for s in shapes} == {
        (a, s, k)
        for a in ("uniform", "range")
        for s in ("HOMOGENEOUS", "HETEROGENEOUS")
        for k in ("FULL", "INCREMENTAL")
    }
    assert max(s.members for s in shapes) >= 500
    inputs = RandomInputs(SEED, 0)
    assert inputs.case == shapes[0] and RandomInputs(SEED, 0).counts == inputs.counts


@pytest.mark.parametrize("index", range(len(DIGESTS)), ids=[f"case{i}" for i in range(300)])
def test_assignment_is_kafkas(index: int) -> None:
    spec, describer = RandomInputs(SEED, index).python_spec()
    result = get_assignor(case(SEED, index).assignor).assign(spec, describer)
    assert digest(result) == DIGESTS[index]
