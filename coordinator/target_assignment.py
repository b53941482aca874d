"""The group's next target assignment: Kafka's ``modern/TargetAssignmentBuilder`` at 1eb7644.

It hands the server-side assignor (``coordinator.assignor``) every member's subscription and
current target assignment, with the member being updated (or removed, for a replaced static
member) applied on top, and returns the assignor's result with the records of the delta: a
``ConsumerGroupTargetAssignmentMember`` record for each member whose target changed, then the
``ConsumerGroupTargetAssignmentMetadata`` record of the new epoch.

Order: the member map is Kafka's ``HashMap<String, MemberSubscriptionAndAssignmentImpl>`` (filled
with the group's members in their insertion order here, then the updated ones), so the assignor
and the records see the members in that map's iteration order
(``coordinator.java.java_hashmap_order``); a member's subscribed topic ids follow its
``HashSet<String>`` of names; topic metadata is keyed by id in a ``HashMap<Uuid, ...>``.

Cost: Kafka's builder makes each member's spec in O(1) (a lazy ``TopicIds`` view) and its delta
loop is O(1) for a member the assignor left alone (the assignor returns the very map it was
given, and ``AbstractMap.equals`` starts with ``o == this``). Here a :class:`MemberSpecs` keeps
the specs between builds, reusing a member's while its subscription object, rack, instance id
and target object are the same ones; the delta compares by identity first and deep-compares only
the others; and the new target is converted to frozensets only for the members someone reads
(:class:`NewTargetAssignment`).
"""

from __future__ import annotations

import itertools
import operator
from collections.abc import Iterator, Mapping
from collections.abc import Set as AbstractSet
from types import MappingProxyType

from attrs import frozen

from coordinator.assignor.api import (
    ConsumerGroupPartitionAssignor,
    MemberAssignment,
    SubscriptionType,
    TopicPartitions,
)
from coordinator.assignor.ordering import uuid_order
from coordinator.assignor.spec import (
    EMPTY_PARTITIONS,
    GroupSpecImpl,
    MemberSubscriptionAndAssignmentImpl,
    SubscribedTopicDescriberImpl,
)
from coordinator.assignor.spec import TopicMetadata as SpecTopicMetadata
from coordinator.consumer_group import ConsumerGroupMember, Partitions, TopicMetadata
from coordinator.java import copy_capacity, java_hashmap_order
from coordinator.kafka_uuid import Uuid

#: A member without a current target (Kafka's ``targetAssignment.get`` answering null): never
#: the assignor's map, so such a member always gets a record.
_NO_TARGET: TopicPartitions = MappingProxyType({})
_partitions_of = operator.attrgetter("partitions")


@frozen
class TargetAssignmentResult:
    """TargetAssignmentResult: the new target per member (in the assignor's result order) and
    the changed members' ids in record order."""

    target_assignment: Mapping[str, Partitions]
    changed_members: tuple[str, ...]


class NewTargetAssignment(Mapping[str, Partitions]):
    """The assignor's result as ``member id -> {topic id: frozenset}`` (empty topics left out),
    in the result's order. A member's map is converted when first read: the coordinator reads
    only the members it writes records for (and the member that heartbeats)."""

    __slots__ = ("_assignments", "_converted")

    def __init__(
        self, assignments: Mapping[str, MemberAssignment], converted: dict[str, Partitions]
    ) -> None:
        self._assignments = assignments
        self._converted = converted

    def __getitem__(self, member_id: str) -> Partitions:
        converted = self._converted.get(member_id)
        if converted is None:
            partitions = self._assignments[member_id].partitions
            converted = self._converted[member_id] = _as_sets(partitions)
        return converted

    def __iter__(self) -> Iterator[str]:
        return iter(self._assignments)

    def __len__(self) -> int:
        return len(self._assignments)

    def __contains__(self, member_id: object) -> bool:
        return member_id in self._assignments

    def __repr__(self) -> str:
        return f"NewTargetAssignment({dict(self)!r})"


class MemberSpecs:
    """What one group's builds can share, each kept only while its inputs are the very same
    objects, so a reuse never changes a result:

    * per member id, the member object, target object and spec of the previous build: a member
      whose object and target object are the same ones keeps its spec (found with identity scans
      over whole lists), and so does a member that changed (a new epoch) but kept its
      subscribed-names object, rack, instance id and target object;
    * the topic ids resolved per subscription, the member order, the topic describer.

    Everything is dropped when the topic ids change. The caller keeps one per group."""

    __slots__ = (
        "describer",
        "inserted",
        "metadata",
        "objects",
        "order",
        "resolved",
        "specs",
        "targets",
        "topic_ids",
    )

    def __init__(self) -> None:
        self.topic_ids: dict[str, Uuid] = {}
        self.resolved: dict[tuple[str, ...], AbstractSet[Uuid]] = {}
        self.objects: dict[str, ConsumerGroupMember] = {}
        self.targets: dict[str, TopicPartitions] = {}
        self.specs: dict[str, MemberSubscriptionAndAssignmentImpl] = {}
        self.inserted: list[str] = []
        self.order: list[str] = []
        self.metadata: list[tuple[str, TopicMetadata]] | None = None
        self.describer: SubscribedTopicDescriberImpl | None = None

    def start(self, topic_ids: Mapping[str, Uuid], member_count: int) -> None:
        """Check the kept resolutions against the topic ids if they changed (a topic created,
        deleted or recreated): the specs of a subscription whose ids differ now are dropped.
        The memo of resolved subscriptions is dropped when it outgrows the group."""
        if self.topic_ids != topic_ids:
            kept: set[int] = set()
            for key, ids in list(self.resolved.items()):
                if list(_resolve(key, topic_ids)) == list(ids):
                    kept.add(id(ids))
                else:
                    del self.resolved[key]
            for member_id in [
                m for m, spec in self.specs.items() if id(spec.subscribed_topic_ids) not in kept
            ]:
                del self.objects[member_id], self.targets[member_id], self.specs[member_id]
            self.topic_ids = dict(topic_ids)
        if len(self.resolved) > 2 * member_count + 16:
            self.resolved.clear()

    def member_specs(
        self,
        members: Mapping[str, ConsumerGroupMember],
        target_assignment: Mapping[str, TopicPartitions],
        topic_ids: Mapping[str, Uuid],
    ) -> dict[str, MemberSubscriptionAndAssignmentImpl]:
        """The group's members' specs, in ``members``' order (members that left are forgotten)."""
        member_ids = list(members)
        objects = list(members.values())
        targets = list(map(target_assignment.get, member_ids, itertools.repeat(EMPTY_PARTITIONS)))
        before = list(map(self.objects.get, member_ids))
        specs = list(map(self.specs.get, member_ids))
        moved = map(
            operator.or_,
            map(operator.is_not, objects, before),
            map(operator.is_not, targets, map(self.targets.get, member_ids)),
        )
        for i in itertools.compress(range(len(member_ids)), moved):
            specs[i] = self._make(objects[i], targets[i], before[i], specs[i], topic_ids)
        self.objects = dict(zip(member_ids, objects, strict=True))
        self.targets = dict(zip(member_ids, targets, strict=True))
        # every None (a member seen for the first time) has been filled in by _make
        self.specs = dict(zip(member_ids, specs, strict=True))  # type: ignore[arg-type]
        return self.specs.copy()

    def spec(
        self,
        member_id: str,
        member: ConsumerGroupMember,
        target: TopicPartitions,
        topic_ids: Mapping[str, Uuid],
    ) -> MemberSubscriptionAndAssignmentImpl:
        """An updated member's spec (kept for the next build)."""
        before = self.objects.get(member_id)
        spec = self.specs.get(member_id)
        if before is not member or self.targets.get(member_id) is not target or spec is None:
            spec = self._make(member, target, before, spec, topic_ids)
            self.objects[member_id] = member
            self.targets[member_id] = target
            self.specs[member_id] = spec
        return spec

    def _make(
        self,
        member: ConsumerGroupMember,
        target: TopicPartitions,
        before: ConsumerGroupMember | None,
        spec: MemberSubscriptionAndAssignmentImpl | None,
        topic_ids: Mapping[str, Uuid],
    ) -> MemberSubscriptionAndAssignmentImpl:
        """createMemberSubscriptionAndAssignment, unless the previous spec still fits."""
        if (
            spec is not None
            and before is not None
            and before.subscribed_topic_names is member.subscribed_topic_names
            and spec.partitions is target
            and spec.rack_id == member.rack_id
            and spec.instance_id == member.instance_id
        ):
            return spec
        return _spec(member, target, topic_ids, self.resolved)

    def member_order(self, inserted: list[str]) -> list[str]:
        """``java_hashmap_order(inserted)``, kept while the insertion sequence is the same."""
        if inserted != self.inserted:
            self.order = java_hashmap_order(inserted)
            self.inserted = inserted
        return self.order

    def topic_describer(
        self, subscription_metadata: Mapping[str, TopicMetadata]
    ) -> SubscribedTopicDescriberImpl:
        """The ``SubscribedTopicDescriberImpl`` of the subscription metadata (a ``HashMap<Uuid,
        TopicMetadata>``), kept while the metadata is equal and in the same order."""
        items = list(subscription_metadata.items())
        if self.describer is None or self.metadata != items:
            metadata = {
                t.id: SpecTopicMetadata(t.id, t.name, t.num_partitions)
                for t in subscription_metadata.values()
            }
            self.describer = SubscribedTopicDescriberImpl(
                {t: metadata[t] for t in uuid_order(metadata)}
            )
            self.metadata = items
        return self.describer


def build_target_assignment(
    *,
    assignor: ConsumerGroupPartitionAssignor,
    members: Mapping[str, ConsumerGroupMember],
    static_members: Mapping[str, str],
    subscription_metadata: Mapping[str, TopicMetadata],
    subscription_type: SubscriptionType,
    target_assignment: Mapping[str, Partitions],
    inverted_target_assignment: Mapping[Uuid, Mapping[int, str]],
    topic_ids: Mapping[str, Uuid],
    updated_members: Mapping[str, ConsumerGroupMember | None],
    specs: MemberSpecs | None = None,
) -> TargetAssignmentResult:
    """TargetAssignmentBuilder.build (``updated_members``: addOrUpdateMember / removeMember).
    ``specs``: the group's :class:`MemberSpecs` from earlier builds (a fresh one if omitted)."""
    cache = MemberSpecs() if specs is None else specs
    cache.start(topic_ids, len(members))
    old_of = target_assignment.get
    member_specs = cache.member_specs(members, target_assignment, topic_ids)
    inserted = list(member_specs)
    for member_id, updated in updated_members.items():
        if updated is None:
            member_specs.pop(member_id, None)
            continue
        assignment = old_of(member_id, EMPTY_PARTITIONS)
        if updated.instance_id is not None:
            previous = static_members.get(updated.instance_id)
            if previous is not None and previous != member_id:
                assignment = old_of(previous, EMPTY_PARTITIONS)
        if member_id not in member_specs:
            inserted.append(member_id)
        member_specs[member_id] = cache.spec(member_id, updated, assignment, topic_ids)
    # HashMap<String, ...> iteration order: capacity grown by every key ever put
    order = cache.member_order(inserted)
    if len(order) != len(member_specs):
        order = [m for m in order if m in member_specs]
    result = assignor.assign(
        GroupSpecImpl(
            dict(zip(order, map(member_specs.__getitem__, order), strict=True)),
            subscription_type=subscription_type,
            inverted_member_assignment=inverted_target_assignment,
        ),
        cache.topic_describer(subscription_metadata),
    )
    assignments = dict(result.members.items())
    # the delta, in the member map's order: a member whose new map is its old map object is
    # unchanged (AbstractMap.equals' identity check); the others are compared by content
    converted: dict[str, Partitions] = {}
    changed: list[str] = []
    news = list(map(assignments.get, order))
    olds = list(map(old_of, order, itertools.repeat(_NO_TARGET)))
    try:
        new_parts = list(map(_partitions_of, news))
    except AttributeError:  # a member the assignor left out (Kafka: Assignment.EMPTY)
        new_parts = [EMPTY_PARTITIONS if a is None else a.partitions for a in news]
    for i in itertools.compress(range(len(order)), map(operator.is_not, new_parts, olds)):
        member_id = order[i]
        old = olds[i]
        new_sets = _as_sets(new_parts[i])
        if news[i] is not None:
            converted[member_id] = new_sets
        if old is _NO_TARGET or _as_sets(old) != new_sets:
            changed.append(member_id)
    return TargetAssignmentResult(NewTargetAssignment(assignments, converted), tuple(changed))


def _as_sets(assignment: TopicPartitions) -> dict[Uuid, frozenset[int]]:
    return {t: frozenset(ps) for t, ps in assignment.items() if ps}


def _spec(
    member: ConsumerGroupMember,
    assignment: TopicPartitions,
    topic_ids: Mapping[str, Uuid],
    resolved: dict[tuple[str, ...], AbstractSet[Uuid]],
) -> MemberSubscriptionAndAssignmentImpl:
    """createMemberSubscriptionAndAssignment: the member's topic names resolved to ids (a
    TopicIds view: names the metadata does not know are left out). ``resolved`` memoises the
    ids per topic-name sequence: members usually share their subscription, and the ids' order
    is a function of the names in their iteration order."""
    key = tuple(member.subscribed_topic_names)
    ids = resolved.get(key)
    if ids is None:
        ids = resolved[key] = _resolve(key, topic_ids)
    return MemberSubscriptionAndAssignmentImpl(
        rack_id=member.rack_id,
        instance_id=member.instance_id,
        subscribed_topic_ids=ids,
        partitions=assignment,
    )


def _resolve(names: tuple[str, ...], topic_ids: Mapping[str, Uuid]) -> AbstractSet[Uuid]:
    """The ids of the known names, in the order of the names' ``HashSet<String>``."""
    ordered = java_hashmap_order(names, copy_capacity(len(names)))
    return dict.fromkeys(topic_ids[n] for n in ordered if n in topic_ids).keys()
