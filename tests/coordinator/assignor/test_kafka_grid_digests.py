"""groupsim's server-side assignors against Kafka's own on a slice of ServerSideAssignorBenchmark's
grid: 144 cases (100 and 500 members, 5/10/50 partitions per member, 10/100/1000 topics,
homogeneous and heterogeneous, FULL and INCREMENTAL, uniform and range), each assignment's CRC32
in Java's iteration order against the digest Kafka's classes gave
(scripts/record_server_assignor_digests.py, data/kafka_server_assignor_digests.json). Two of
them differed when recorded, before groupsim followed Java's tree bins and early resizes
(coordinator.assignor.treeify). The inputs are the benchmark's (bench.server_assignors.Inputs),
so this test reads them from there."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bench.server_assignors import Inputs, digest, grid
from coordinator.assignor.registry import get_assignor

DATA = json.loads(
    (Path(__file__).parent / "data" / "kafka_server_assignor_digests.json").read_text()
)
CASES = grid(quick=False, full=False, axes={k: tuple(v) for k, v in DATA["axes"].items()})


def test_the_recording_covers_the_grid_slice() -> None:
    assert sorted(DATA["digests"]) == sorted(c.label for c in CASES)
    assert len(CASES) == 144


@pytest.mark.parametrize("case", CASES, ids=[c.label for c in CASES])
def test_assignment_is_kafkas(case) -> None:  # type: ignore[no-untyped-def]
    spec, describer = Inputs(case).python_spec()
    assert (
        digest(get_assignor(case.assignor).assign(spec, describer)) == DATA["digests"][case.label]
    )
