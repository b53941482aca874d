"""Medium-size random groups (2 to 400 members) against Kafka's own sticky assignors.

``data/sticky_kafka_java_vectors.json`` holds small groups (at most 9 members) in full. The
sticky builders switch representations with size (numpy placement, batched claims, strided
result lists), so these groups run up to 400 members and thousands of partitions: the cases are
rebuilt here from their seed (``sweep_cases.generate``) and only the CRC32 of Kafka's answer is
stored, recorded by ``scripts/sweep_client_assignors_vs_java.py --record`` from Kafka's
``StickyAssignor`` and ``CooperativeStickyAssignor`` (apache/kafka 1eb7644) through
``data/StickyDriver.java``. Cases where Kafka throws (its ``NullPointerException``, see
docs/sticky-assignors.md) are recorded as such; groupsim answers them without an error.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.assignors.sweep_cases import (
    GENERATOR,
    assign,
    generate,
    generate_with_racks,
    our_digest,
)

DATA = Path(__file__).parent / "data"
RECORDED = json.loads((DATA / "sticky_kafka_java_sweep.json").read_text())
SEED = RECORDED["seed"]
ANSWERS = [(i, answer) for i, answer in RECORDED["cases"] if not answer.startswith("error:")]
THROWS = [i for i, answer in RECORDED["cases"] if answer.startswith("error:")]
RACK_RECORDED = json.loads((DATA / "sticky_kafka_java_rack_sweep.json").read_text())
RACK_SEED = RACK_RECORDED["seed"]
RACK_ANSWERS = [(i, a) for i, a in RACK_RECORDED["cases"] if not a.startswith("error:")]


def test_recorded_with_this_generator_and_sizes_beyond_the_small_vectors() -> None:
    assert RECORDED["generator"] == GENERATOR and not RECORDED["racks"]
    assert RACK_RECORDED["generator"] == GENERATOR and RACK_RECORDED["racks"]
    assert len(RACK_ANSWERS) >= 150
    assert len(ANSWERS) >= 250
    sizes = [len(generate(SEED, i)["members"]) for i, _ in ANSWERS]
    assert max(sizes) >= 300 and sum(s >= 50 for s in sizes) >= 100
    kinds = {generate(SEED, i)["kind"] for i, _ in ANSWERS[:20]}
    assert kinds == {"sticky", "coop"}


def test_the_generator_depends_on_its_seed_only() -> None:
    assert generate(SEED, 7) == generate(SEED, 7)
    assert generate(SEED, 7) != generate(SEED, 8)


@pytest.mark.parametrize(("index", "expected"), ANSWERS, ids=[f"case{i}" for i, _ in ANSWERS])
def test_same_lists_as_kafka(index: int, expected: str) -> None:
    assert our_digest(generate(SEED, index)) == expected


@pytest.mark.parametrize(
    ("index", "expected"), RACK_ANSWERS, ids=[f"racks-case{i}" for i, _ in RACK_ANSWERS]
)
def test_same_lists_as_kafka_with_racks(index: int, expected: str) -> None:
    assert our_digest(generate_with_racks(RACK_SEED, index)) == expected


def test_racks_leave_the_rest_of_a_case_as_it_was() -> None:
    plain, racked = generate(RACK_SEED, 3), generate_with_racks(RACK_SEED, 3)
    assert [m[:4] for m in racked["members"]] == plain["members"]
    assert racked["counts"] == plain["counts"]
    assert {t: len(r) for t, r in racked["racks"].items()} == plain["counts"]


@pytest.mark.parametrize("index", THROWS, ids=[f"case{i}" for i in THROWS])
def test_where_kafka_throws_every_member_still_gets_a_list(index: int) -> None:
    case = generate(SEED, index)
    result = assign(case)
    assert list(result) == [m[0] for m in case["members"]]
    owners = [tp for parts in result.values() for tp in parts]
    assert len(owners) == len(set(owners))  # no partition handed out twice
