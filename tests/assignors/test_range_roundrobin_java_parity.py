"""Exact parity, list order included, with Kafka's own Java RangeAssignor and RoundRobinAssignor.

``data/java_range_roundrobin.tsv`` holds 60 random groups (random topic names chosen to collide in
Java hash buckets, 0-8 partitions, missing topics, static members, racks on some, Kafka's
``preferRackAwareLogic`` on some) and what the real Java classes returned for them. The classes
were compiled unchanged from apache/kafka at 1eb7644349cb with stubs for ``Cluster``, ``Utils`` and
slf4j, fed through a small harness that builds the subscriptions as the leader does (a ``HashMap``
filled in input order). The same harness agreed with groupsim on 2,600 further random groups.

Line format (tab-separated): assignor, prefer flag, ``topic=count:racks`` specs (partitions split
by ``/``, replica racks by ``.``), ``member|instance|rack|topic,topic`` specs, and Java's result as
``member=t-p,t-p;`` in member-id order.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from assignors import ClusterMetadata, Subscription
from assignors.range import RangeAssignor
from assignors.roundrobin import RoundRobinAssignor

DATA = Path(__file__).with_name("data") / "java_range_roundrobin.tsv"


def parse(line: str):
    name, prefer, topic_specs, member_specs, expected = line.rstrip("\n").split("\t")
    counts: dict[str, int] = {}
    racks: dict[str, list[list[str]]] = {}
    for spec in filter(None, topic_specs.split(";")):
        topic, rest = spec.split("=", 1)
        count, _, rack_spec = rest.partition(":")
        counts[topic] = int(count)
        racks[topic] = (
            [[r for r in p.split(".") if r] for p in rack_spec.split("/")] if rack_spec else []
        )
    subs = {}
    for spec in member_specs.split(";"):
        member, instance, rack, topics = spec.split("|")
        subs[member] = Subscription(
            [t for t in topics.split(",") if t],
            group_instance_id=instance or None,
            rack_id=rack or None,
        )
    assignor = (
        RangeAssignor(prefer_rack_aware_logic=prefer == "1")
        if name == "range"
        else RoundRobinAssignor()
    )
    has_racks = any(racks.values())
    return assignor, ClusterMetadata(counts, racks if has_racks else None), subs, expected


CASES = DATA.read_text(encoding="utf-8").splitlines()


def test_the_recorded_cases_cover_both_assignors_and_racks():
    assert len(CASES) == 60
    assert sum(1 for c in CASES if c.startswith("range\t")) == 30
    assert sum(1 for c in CASES if ":a" in c or ".a" in c) > 5


@pytest.mark.parametrize(
    "line", CASES, ids=[f"{c.split(chr(9))[0]}-{i}" for i, c in enumerate(CASES)]
)
def test_matches_kafka_java_output_exactly(line):
    assignor, cluster, subs, expected = parse(line)
    result = assignor.assign(cluster, subs)
    ours = "".join(f"{m}={','.join(map(str, result[m]))};" for m in sorted(result))
    assert ours == expected
