"""The small-group shortcuts of the uniform builders, against their general paths.

* Heterogeneous: a topic of few partitions is water-filled in Python lists
  (``_Builder._assign_small_topic``); here against the numpy path (``SMALL_TOPIC`` lowered so
  that every topic takes it), record by record on random loads and free partitions, and as whole
  results read in iteration order.
* Homogeneous: a first assignment (every member's map ``EMPTY_PARTITIONS``), topics without
  partitions and a group without owners skip steps of ``build_homogeneous`` and ``_unassigned``;
  here against the same group handed over through the ``GroupSpec``/``SubscribedTopicDescriber``
  interfaces (not Kafka's ``*Impl`` classes), which take the general path.
"""

from __future__ import annotations

import itertools
from unittest import mock

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from coordinator.assignor import (
    GroupSpecImpl,
    MemberSubscriptionAndAssignmentImpl,
    SubscriptionType,
    uniform_heterogeneous,
)
from coordinator.assignor.uniform_heterogeneous import _Builder, build_heterogeneous
from coordinator.assignor.uniform_homogeneous import build_homogeneous
from coordinator.kafka_uuid import topic_id_for

from .helpers import SETTINGS, describer
from .test_properties import groups

TOPIC = topic_id_for("small")


def _read(result) -> list:
    return [(m, [(t, list(ps)) for t, ps in a.partitions.items()]) for m, a in result.items()]


def _builder(members: int, partitions: int) -> _Builder:
    spec = GroupSpecImpl(
        {
            f"m{i}": MemberSubscriptionAndAssignmentImpl(None, None, frozenset({TOPIC}))
            for i in range(members)
        },
        subscription_type=SubscriptionType.HOMOGENEOUS,
    )
    builder = _Builder(spec, describer({TOPIC: partitions}))
    builder.revoke()
    return builder


@SETTINGS
@given(
    st.integers(1, 12).flatmap(
        lambda n: st.tuples(
            st.lists(st.integers(0, 6), min_size=n, max_size=n),
            st.lists(st.booleans(), min_size=1, max_size=40),
        )
    )
)
def test_a_small_topic_is_recorded_as_the_numpy_path_records_it(case):
    loads, free = case
    if not any(free):
        free[0] = True
    partitions = np.flatnonzero(np.array(free)).astype(np.int64)
    made = []
    for limit in (uniform_heterogeneous.SMALL_TOPIC, -1):
        builder = _builder(len(loads), len(free))
        builder.sizes[:] = loads
        with mock.patch.object(uniform_heterogeneous, "SMALL_TOPIC", limit):
            builder.assign_topic(0, partitions.copy())
        made.append(builder)
    small, general = made
    assert small.sizes.tolist() == general.sizes.tolist()
    assert small.owners[0].tolist() == general.owners[0].tolist()
    (ours,), (theirs,) = small.records, general.records
    assert ours[:2] == theirs[:2]
    for a, b in zip(ours[2:7], theirs[2:7], strict=True):
        assert a.dtype == b.dtype == np.int64
        assert a.tolist() == b.tolist()
    assert ours[7] == theirs[7]


@SETTINGS
@given(groups(homogeneous=False))
def test_small_topics_give_the_numpy_paths_result(group):
    spec, counts = group
    topics = describer(counts)
    fast = build_heterogeneous(spec, topics).members
    with mock.patch.object(uniform_heterogeneous, "SMALL_TOPIC", -1):
        general = build_heterogeneous(spec, topics).members
    assert _read(fast) == _read(general)


class _Spec:
    """A GroupSpec that is not GroupSpecImpl (the builders' general path)."""

    def __init__(self, spec: GroupSpecImpl) -> None:
        self._spec = spec

    def member_ids(self):
        return self._spec.member_ids()

    def subscription_type(self):
        return self._spec.subscription_type()

    def is_partition_assigned(self, topic_id, partition_id):
        return self._spec.is_partition_assigned(topic_id, partition_id)

    def member_subscription(self, member_id):
        return self._spec.member_subscription(member_id)

    def member_assignment(self, member_id):
        return self._spec.member_assignment(member_id)


class _Describer:
    """A SubscribedTopicDescriber that is not SubscribedTopicDescriberImpl."""

    def __init__(self, counts) -> None:
        self._impl = describer(counts)

    def num_partitions(self, topic_id):
        return self._impl.num_partitions(topic_id)

    def racks_for_partition(self, topic_id, partition):
        return self._impl.racks_for_partition(topic_id, partition)


@SETTINGS
@given(groups(homogeneous=True), st.booleans())
def test_homogeneous_shortcuts_give_the_general_paths_result(group, first_assignment):
    spec, counts = group
    if first_assignment:  # every map the default EMPTY_PARTITIONS, nobody owning anything
        spec = GroupSpecImpl(
            {
                m: MemberSubscriptionAndAssignmentImpl(None, None, s.subscribed_topic_ids)
                for m, s in spec.members.items()
            },
            subscription_type=SubscriptionType.HOMOGENEOUS,
        )
    fast = build_homogeneous(spec, describer(counts)).members
    general = build_homogeneous(_Spec(spec), _Describer(counts)).members
    assert _read(fast) == _read(general)


def test_topics_without_partitions_add_nothing_to_a_first_assignment():
    """Every mix of empty and small topics, in every position of the subscription's order."""
    topic_ids = [topic_id_for(f"t{i}") for i in range(3)]
    for members, partition_counts in itertools.product(
        range(1, 5), itertools.product([0, 1, 3], repeat=3)
    ):
        counts = dict(zip(topic_ids, partition_counts, strict=True))
        spec = GroupSpecImpl(
            {
                f"m{i}": MemberSubscriptionAndAssignmentImpl(None, None, frozenset(topic_ids))
                for i in range(members)
            },
            subscription_type=SubscriptionType.HOMOGENEOUS,
        )
        fast = build_homogeneous(spec, describer(counts)).members
        general = build_homogeneous(_Spec(spec), _Describer(counts)).members
        assert _read(fast) == _read(general), (members, partition_counts)
