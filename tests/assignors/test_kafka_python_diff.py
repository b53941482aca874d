"""Differential tests against kafka-python 3.0.12's range and roundrobin assignors.

kafka-python hands its assignors the JoinGroup members (``member_id``, ``group_instance_id``,
``metadata.topics``) and a cluster object answering ``partitions_for_topic``. Its results are
compared with ours as sets per member.

Two kafka-python bugs limit the inputs (both are theirs, not Kafka's behaviour):

* it splits static from dynamic members with ``itertools.groupby`` over the *input order*, so
  interleaved static and dynamic members lose whole groups; the inputs list static members first;
* its round-robin loop rebinds ``member_id`` to a ``(instance, id)`` tuple when it skips a member
  that does not subscribe, and then fails with ``KeyError``; round-robin is compared on groups
  where nobody needs skipping (identical subscriptions), which kafka-python handles;
* a topic listed twice in one subscription makes its range assignor count the member twice and
  then overwrite the member's first slice with its second (Kafka de-duplicates the member), so
  kafka-python is given each member's topics without repeats.
"""

from __future__ import annotations

from types import SimpleNamespace

import pytest
from hypothesis import given, settings

from assignors.range import RangeAssignor
from assignors.roundrobin import RoundRobinAssignor
from tests.assignors.strategies import groups

kafka_range = pytest.importorskip("kafka.coordinator.assignors.range")
kafka_roundrobin = pytest.importorskip("kafka.coordinator.assignors.roundrobin")

SETTINGS = settings(max_examples=50, deadline=None, derandomize=True)


class _Cluster:
    def __init__(self, counts):
        self.counts = counts

    def partitions_for_topic(self, topic):
        return set(range(self.counts[topic])) if topic in self.counts else None


def _members(subs):
    ordered = sorted(subs.items(), key=lambda kv: kv[1].group_instance_id is None)  # statics first
    return [
        SimpleNamespace(
            member_id=m,
            group_instance_id=s.group_instance_id,
            metadata=SimpleNamespace(topics=list(dict.fromkeys(s.topics))),
        )
        for m, s in ordered
    ]


def _as_sets(protocol_assignment):
    return {
        m: {(t, p) for t, ps in a.assigned_partitions for p in ps}
        for m, a in protocol_assignment.items()
    }


def _ours_as_sets(result):
    return {m: {(tp.topic, tp.partition) for tp in ps} for m, ps in result.items()}


@SETTINGS
@given(groups())
def test_range_matches_kafka_python(group):
    counts, subs = group
    theirs = kafka_range.RangePartitionAssignor.assign(_Cluster(counts), _members(subs))
    assert _ours_as_sets(RangeAssignor().assign(counts, subs)) == _as_sets(theirs)


@SETTINGS
@given(groups(uniform=True))
def test_roundrobin_matches_kafka_python(group):
    counts, subs = group
    theirs = kafka_roundrobin.RoundRobinPartitionAssignor.assign(_Cluster(counts), _members(subs))
    assert _ours_as_sets(RoundRobinAssignor().assign(counts, subs)) == _as_sets(theirs)


def test_kafka_python_roundrobin_skip_bug_is_real():
    """Documents why the round-robin comparison avoids skipping: kafka-python raises here,
    while Kafka (and we) give consumer2 both topics' partitions it alone subscribes to."""
    from assignors.api import Subscription

    subs = {"c1": Subscription(["t0"]), "c2": Subscription(["t0", "t1"])}
    with pytest.raises(KeyError):
        kafka_roundrobin.RoundRobinPartitionAssignor.assign(
            _Cluster({"t0": 1, "t1": 2}), _members(subs)
        )
    ours = RoundRobinAssignor().assign({"t0": 1, "t1": 2}, subs)
    assert _ours_as_sets(ours) == {"c1": {("t0", 0)}, "c2": {("t1", 0), ("t1", 1)}}
