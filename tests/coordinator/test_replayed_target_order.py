"""A replayed target assignment iterates as Kafka's ``HashSet`` does, and the assignor reads it so.

Kafka's coordinator holds a member's target as ``Assignment.fromRecord`` rebuilds it from the
record (``new HashSet<>(partitions)``), and the next target is computed from those sets:
``UniformHomogeneousAssignmentBuilder.maybeRevokePartitions`` keeps the first ``quota``
partitions in their iteration order. Found by the large mixed-protocol traces (stop 22, seed
34): a member holding {4, 5, 7, 8} of a 9-partition topic, recorded as ``[8, 4, 5, 7]``, kept
4, 5, 7 in Kafka when two members shared the topic with it, and 8, 4, 5 in groupsim, whose
replay stored a plain frozenset (Python's order: 8, 4, 5, 7).
"""

from __future__ import annotations

import pickle

from coordinator.assignor import (
    GroupSpecImpl,
    MemberSubscriptionAndAssignmentImpl,
    SubscribedTopicDescriberImpl,
    SubscriptionType,
    TopicMetadata,
)
from coordinator.assignor.ordering import assignment_from_record
from coordinator.assignor.registry import get_assignor
from coordinator.assignor.sets import java_runs
from coordinator.consumer_group import ReplayedPartitions
from coordinator.kafka_uuid import topic_id_for

FOO = topic_id_for("foo")


def _replayed(partitions: list[int]) -> dict:
    return {
        t: ReplayedPartitions(ps) for t, ps in assignment_from_record([(FOO, partitions)]).items()
    }


def test_a_replayed_set_iterates_in_javas_order_and_behaves_as_a_frozenset() -> None:
    replayed = _replayed([8, 4, 5, 7])[FOO]
    assert list(replayed) == [4, 5, 7, 8]  # 16 buckets; a plain frozenset gives 8, 4, 5, 7
    assert list(frozenset([8, 4, 5, 7])) == [8, 4, 5, 7]  # (why the plain one was wrong)
    assert replayed == frozenset({4, 5, 7, 8}) and hash(replayed) == hash(frozenset({4, 5, 7, 8}))
    assert 7 in replayed and 6 not in replayed
    assert replayed & frozenset({7, 8, 9}) == {7, 8} and replayed - {4} == {5, 7, 8}
    assert java_runs(replayed) == [range(4, 6), range(7, 9)]  # what the assignors read
    # 20 and 4 share bucket 4, in the order the record lists them
    assert list(pickle.loads(pickle.dumps(_replayed([8, 20, 4])[FOO]))) == [20, 4, 8]


def test_the_uniform_assignor_keeps_the_first_partitions_of_the_replayed_order() -> None:
    def member(partitions: dict) -> MemberSubscriptionAndAssignmentImpl:
        return MemberSubscriptionAndAssignmentImpl(None, None, frozenset({FOO}), partitions)

    describer = SubscribedTopicDescriberImpl({FOO: TopicMetadata(FOO, "foo", 9)})
    old = {"a": _replayed([8, 4, 5, 7]), "b": _replayed([0, 1, 2, 3]), "c": {}}
    spec = GroupSpecImpl(
        {m: member(old[m]) for m in ("a", "b", "c")},
        SubscriptionType.HOMOGENEOUS,
        {FOO: {p: m for m, parts in old.items() for ps in parts.values() for p in ps}},
    )
    result = get_assignor("uniform").assign(spec, describer)
    kept = {m: sorted(a.partitions.get(FOO, ())) for m, a in result.members.items()}
    assert kept["a"] == [4, 5, 7]  # Kafka's answer: 8 goes, not 7
    assert kept["b"] == [0, 1, 2]
    assert sorted(kept["c"]) == [3, 6, 8]
