"""Rack-aware range (KIP-881) against a step-by-step port of the Java code, on random racks."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from assignors import ClusterMetadata, Subscription, metrics
from assignors.range import RangeAssignor
from tests.assignors.literal_ports import literal_rack_range

RACKS = ["a", "b", "c", "d"]


@st.composite
def rack_groups(draw):
    topics = draw(
        st.lists(st.sampled_from(["t1", "t2", "t3", "t4"]), min_size=1, max_size=4, unique=True)
    )
    counts = {t: draw(st.sampled_from([0, 2, 3, 4, 7])) for t in topics}
    partition_racks = {
        t: [
            draw(st.lists(st.sampled_from(RACKS), min_size=0, max_size=3, unique=True))
            for _ in range(n)
        ]
        for t, n in counts.items()
    }
    n_members = draw(st.integers(1, 6))
    uniform = draw(st.booleans())
    shared = draw(st.lists(st.sampled_from(topics), min_size=1, max_size=len(topics), unique=True))
    subs = {}
    for i in range(n_members):
        member_topics = (
            shared if uniform else draw(st.lists(st.sampled_from(topics), min_size=1, max_size=3))
        )
        subs[f"consumer{i}"] = Subscription(
            member_topics,
            rack_id=draw(st.sampled_from([*RACKS, None, ""])),
            group_instance_id=draw(st.sampled_from([None, None, f"i{5 - i}"])),
        )
    return ClusterMetadata(counts, partition_racks), subs


@settings(max_examples=50, deadline=None, derandomize=True)
@given(rack_groups(), st.booleans())
def test_rack_aware_range_matches_the_literal_port(group, prefer):
    cluster, subs = group
    ours = RangeAssignor(prefer_rack_aware_logic=prefer).assign(cluster, subs)
    theirs = literal_rack_range(cluster, subs, prefer)
    assert {m: sorted(p) for m, p in ours.items()} == {m: sorted(p) for m, p in theirs.items()}
    assert metrics.validity(cluster, subs, ours).complete
    skew = metrics.per_topic_skew(subs, ours)
    assert all(skew[t] <= 1 for t, n in cluster.partitions_per_topic.items() if n > 0 and t in skew)


def test_rack_path_sorts_lists_and_plain_path_does_not():
    counts = {"orders": 2, "payments": 2}
    subs = {"c0": Subscription(["orders", "payments"], rack_id="a")}
    racks_everywhere = ClusterMetadata(counts, {t: [["a"], ["a"]] for t in counts})
    plain = RangeAssignor().assign(racks_everywhere, subs)["c0"]
    assert [tp.topic for tp in plain] == [
        "payments",
        "payments",
        "orders",
        "orders",
    ]  # HashMap order
    rack_path = RangeAssignor(prefer_rack_aware_logic=True).assign(racks_everywhere, subs)["c0"]
    assert rack_path == sorted(plain)


def test_large_rack_aware_group_is_fast_enough_to_test():
    """50 topics x 200 partitions, 200 members on 3 racks, RF 2: the indexed rack path handles it
    (a scan per member and partition would take minutes). Correctness is the assertion here."""
    topics = [f"t{i:02d}" for i in range(50)]
    counts = dict.fromkeys(topics, 200)
    racks = ["a", "b", "c"]
    partition_racks = {t: [[racks[p % 3], racks[(p + 1) % 3]] for p in range(200)] for t in topics}
    subs = {f"c{i:03d}": Subscription(topics, rack_id=racks[i % 3]) for i in range(200)}
    cluster = ClusterMetadata(counts, partition_racks)
    result = RangeAssignor().assign(cluster, subs)
    assert metrics.validity(cluster, subs, result).complete
    assert metrics.is_fully_balanced(result)
    mismatched = sum(
        1
        for m, ps in result.items()
        for tp in ps
        if subs[m].rack_id not in cluster.racks_of(tp.topic, tp.partition)
    )
    assert mismatched < len(topics) * 200 // 3
