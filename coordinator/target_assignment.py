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
given, and ``AbstractMap.equals`` starts with ``o == this``). Here a homogeneous group's specs get
:class:`TopicIds` views too (assignors read one member's ids there; a heterogeneous group's are
resolved at once, shared per subscription, as its builders group members by that object), and
a :class:`MemberSpecs` keeps the specs between builds, reusing a member's while its subscription object, rack, instance id
and target object are the same ones (found by identity scans over whole lists, so an unchanged
group costs a few C-level passes), and hands the assignor the previous member map itself when
no spec in it changed; the delta compares by identity first and deep-compares only the
others, the new map converted (``DeferredTopicMap.partition_sets`` replays the assignor's
steps without building its table) and the old one read as it is (:func:`_holds`: partition
counts, then a topic at a time); the assignor's maps are read without their per-member wrappers
(``LazyMembers.partition_maps``), and the new target is converted to frozensets only for the
members someone reads (:class:`NewTargetAssignment`). A group's first build (nothing kept) makes
the specs and views in bulk (tuples made in C), orders the members with numpy, and shares the
topic describer made lately from equal metadata.
"""

from __future__ import annotations

import itertools
import operator
from collections.abc import Iterable, Iterator, Mapping, Sequence
from collections.abc import Set as AbstractSet
from types import MappingProxyType

import numpy as np
from attrs import frozen

from coordinator.assignor.api import (
    ConsumerGroupPartitionAssignor,
    MemberAssignment,
    SubscriptionType,
    TopicPartitions,
)
from coordinator.assignor.ordering import uuid_order
from coordinator.assignor.sets import DeferredTopicMap
from coordinator.assignor.spec import (
    EMPTY_PARTITIONS,
    GroupSpecImpl,
    MemberSubscriptionAndAssignmentImpl,
    SubscribedTopicDescriberImpl,
    member_subscriptions,
)
from coordinator.assignor.spec import TopicMetadata as SpecTopicMetadata
from coordinator.consumer_group import ConsumerGroupMember, Partitions, TopicMetadata
from coordinator.gc_pause import gc_paused
from coordinator.java import (
    copy_capacity,
    java_hashmap_capacity,
    java_hashmap_order,
    java_string_hashcode,
)
from coordinator.kafka_uuid import Uuid
from coordinator.timeline_order import iteration_order

#: A member without a current target (Kafka's ``targetAssignment.get`` answering null): never
#: the assignor's map, so such a member always gets a record.
_NO_TARGET: TopicPartitions = MappingProxyType({})
_partitions_of = operator.attrgetter("partitions")
_names_of = operator.attrgetter("subscribed_topic_names")
_rack_of = operator.attrgetter("rack_id")
_instance_of = operator.attrgetter("instance_id")


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

    __slots__ = ("_converted", "_ids", "_index", "_maps")

    def __init__(
        self,
        member_ids: Sequence[str],
        maps: Sequence[TopicPartitions],
        converted: dict[str, Partitions],
    ) -> None:
        self._ids = member_ids
        self._maps = maps
        self._converted = converted
        self._index: dict[str, int] | None = None

    def _position(self, member_id: object) -> int | None:
        if self._index is None:
            self._index = dict(zip(self._ids, range(len(self._ids)), strict=True))
        return self._index.get(member_id)  # type: ignore[call-overload]

    def __getitem__(self, member_id: str) -> Partitions:
        converted = self._converted.get(member_id)
        if converted is None:
            i = self._position(member_id)
            if i is None:
                raise KeyError(member_id)
            converted = self._converted[member_id] = _as_sets(self._maps[i])
        return converted

    def __iter__(self) -> Iterator[str]:
        return iter(self._ids)

    def __len__(self) -> int:
        return len(self._ids)

    def __contains__(self, member_id: object) -> bool:
        return member_id in self._converted or self._position(member_id) is not None

    def __repr__(self) -> str:
        return f"NewTargetAssignment({dict(self)!r})"


_Spec = MemberSubscriptionAndAssignmentImpl
#: what a spec was made from: the member object and the target object
_Made = tuple[ConsumerGroupMember, TopicPartitions, _Spec]


class MemberSpecs:
    """What one group's builds can share, each kept only while its inputs are the very same
    objects, so a reuse never changes a result:

    * the previous build's group members as parallel lists (ids, member objects, target
      objects, specs): when the ids come in the same order, identity scans (in C) find the
      members whose object or target object is another one, and only those are looked at; a
      member that changed (a new epoch) but kept its subscribed-names object, rack, instance id
      and target object keeps its spec too;
    * the updated members' (``addOrUpdateMember``) specs, by id;
    * the member map handed to the assignor, handed again while its order and every spec are
      the same (never mutated once handed out: a change makes a copy);
    * the topic ids resolved per subscription, the member order, the topic describer.

    Specs whose resolved topic ids change are dropped. The caller keeps one per group."""

    __slots__ = (
        "describer",
        "group",
        "group_order",
        "group_updates",
        "ids",
        "index",
        "inserted",
        "lazy",
        "metadata",
        "objects",
        "order",
        "resolved",
        "specs",
        "targets",
        "timeline_capacity",
        "timeline_keys",
        "timeline_order",
        "topic_ids",
        "updated",
    )

    def __init__(self) -> None:
        self.topic_ids: dict[str, Uuid] = {}
        self.resolved: dict[tuple[str, ...], AbstractSet[Uuid]] = {}
        self.ids: list[str] = []
        self.objects: Sequence[ConsumerGroupMember | None] = []
        self.targets: list[TopicPartitions] = []
        self.specs: list[_Spec] = []
        self.index: dict[str, int] | None = None
        self.lazy = False
        self.updated: dict[str, _Made] = {}
        self.group: dict[str, _Spec] = {}
        self.group_order: list[str] = []
        self.group_updates: dict[str, _Spec | None] = {}
        self.inserted: list[str] = []
        self.order: list[str] = []
        self.timeline_keys: list[str] = []
        self.timeline_capacity = 0
        self.timeline_order: list[str] = []
        self.metadata: list[tuple[str, TopicMetadata]] | None = None
        self.describer: SubscribedTopicDescriberImpl | None = None

    def start(
        self,
        topic_ids: Mapping[str, Uuid],
        member_count: int,
        subscription_type: SubscriptionType = SubscriptionType.HETEROGENEOUS,
    ) -> None:
        """Check the kept resolutions against the topic ids if they changed (a topic created,
        deleted or recreated): the specs of a subscription whose ids differ now are dropped,
        and so are the unresolved :class:`TopicIds` views. Views are made for a homogeneous
        group only; when the group turns heterogeneous the specs holding views are made again
        (the heterogeneous builders group members by their ids object). The memo of resolved
        subscriptions is dropped when it outgrows the group."""
        lazy = subscription_type is SubscriptionType.HOMOGENEOUS
        if self.topic_ids != topic_ids or (self.lazy and not lazy):
            kept: set[int] = set()
            for key, ids in list(self.resolved.items()):
                if list(_resolve(key, topic_ids)) == list(ids):
                    kept.add(id(ids))
                else:
                    del self.resolved[key]
            self.objects = [  # None: made again (no member object is None)
                member if id(spec.subscribed_topic_ids) in kept else None
                for member, spec in zip(self.objects, self.specs, strict=True)
            ]
            for member_id, (_, _, spec) in list(self.updated.items()):
                if id(spec.subscribed_topic_ids) not in kept:
                    del self.updated[member_id]
            self.group, self.group_order = {}, []
            self.topic_ids = dict(topic_ids)
        self.lazy = lazy
        if len(self.resolved) > 2 * member_count + 16:
            self.resolved.clear()

    def member_specs(
        self,
        members: Mapping[str, ConsumerGroupMember],
        target_assignment: Mapping[str, TopicPartitions],
    ) -> tuple[list[str], list[_Spec], bool]:
        """The group's member ids and their specs, in ``members``' order (members that left
        are forgotten), and whether every spec is the previous build's, in the same order."""
        ids = list(members)
        objects = list(members.values())
        targets = list(map(target_assignment.get, ids, itertools.repeat(EMPTY_PARTITIONS)))
        specs: list[_Spec]
        same = ids == self.ids
        if same:
            before = self.objects
            specs = self.specs
            if not (
                all(map(operator.is_, objects, before))
                and all(map(operator.is_, targets, self.targets))
            ):
                specs = list(specs)
                moved = map(
                    operator.or_,
                    map(operator.is_not, objects, before),
                    map(operator.is_not, targets, self.targets),
                )
                for i in itertools.compress(range(len(ids)), moved):
                    spec = self._make(objects[i], targets[i], before[i], specs[i])
                    same &= spec is specs[i]
                    specs[i] = spec
        elif not self.ids:  # nothing kept: every spec made now
            specs = self._new_all(objects, targets)
        else:
            previous = self._previous
            specs = []
            for member_id, member, target in zip(ids, objects, targets, strict=True):
                made = previous(member_id)
                if made is None:
                    specs.append(self._new(member, target))
                elif made[0] is member and made[1] is target:
                    specs.append(made[2])
                else:
                    specs.append(self._make(member, target, made[0], made[2]))
            self.index = None
        self.ids, self.objects, self.targets, self.specs = ids, objects, targets, specs
        return ids, specs, same

    def _previous(self, member_id: str) -> _Made | None:
        """The previous build's (member object, target object, spec) of a group member."""
        if self.index is None:
            self.index = dict(zip(self.ids, range(len(self.ids)), strict=True))
        i = self.index.get(member_id)
        if i is None:
            return None
        member = self.objects[i]
        return None if member is None else (member, self.targets[i], self.specs[i])

    def spec(
        self,
        member_id: str,
        member: ConsumerGroupMember,
        target: TopicPartitions,
        in_group: bool = True,
    ) -> _Spec:
        """An updated member's spec (kept for the next build); ``in_group=False``: the member
        is not among the group's members of this build (no group spec of it to reuse)."""
        made = self.updated.get(member_id) or (self._previous(member_id) if in_group else None)
        if made is not None and made[0] is member and made[1] is target:
            spec = made[2]
        elif made is not None:
            spec = self._make(member, target, made[0], made[2])
        else:
            spec = self._new(member, target)
        self.updated[member_id] = (member, target, spec)
        return spec

    def forget_updated(self, kept: Mapping[str, object]) -> None:
        """Forget the updated members of earlier builds that are not updated now."""
        if len(self.updated) > len(kept):
            for member_id in [m for m in self.updated if m not in kept]:
                del self.updated[member_id]

    def _make(
        self,
        member: ConsumerGroupMember,
        target: TopicPartitions,
        before: ConsumerGroupMember | None,
        spec: _Spec | None,
    ) -> _Spec:
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
        return self._new(member, target)

    def _new(self, member: ConsumerGroupMember, target: TopicPartitions) -> _Spec:
        """createMemberSubscriptionAndAssignment: the member's subscribed names as ids, a
        :class:`TopicIds` view (O(1)) in a homogeneous group, where assignors read one member's
        ids, else resolved now through the memo, so that members sharing a subscription share
        one ids object (the heterogeneous builders group members by it)."""
        names = member.subscribed_topic_names
        if self.lazy:
            ids: AbstractSet[Uuid] = TopicIds(names, self.topic_ids, self.resolved)
        else:
            ids = _resolved(names, self.topic_ids, self.resolved)
        return MemberSubscriptionAndAssignmentImpl(
            rack_id=member.rack_id,
            instance_id=member.instance_id,
            subscribed_topic_ids=ids,
            partitions=target,
        )

    def _new_all(
        self, members: list[ConsumerGroupMember], targets: list[TopicPartitions]
    ) -> list[_Spec]:
        """:meth:`_new` of every member, in C-level passes."""
        names = map(_names_of, members)
        ids: Iterator[AbstractSet[Uuid]]
        if self.lazy:
            ids = topic_ids_views(names, self.topic_ids, self.resolved)
        else:
            ids = map(
                _resolved, names, itertools.repeat(self.topic_ids), itertools.repeat(self.resolved)
            )
        return member_subscriptions(
            map(_rack_of, members), map(_instance_of, members), ids, targets
        )

    def in_timeline_order(
        self, members: Mapping[str, ConsumerGroupMember], capacity: int
    ) -> dict[str, ConsumerGroupMember]:
        """The group's ``members`` (in insertion order) in the iteration order of Kafka's
        ``TimelineHashMap`` of ``capacity`` slots (:func:`coordinator.timeline_order
        .iteration_order`), the order kept while the insertion sequence and capacity are the
        same."""
        keys = list(members)
        if keys != self.timeline_keys or capacity != self.timeline_capacity:
            self.timeline_order = iteration_order(keys, capacity)
            self.timeline_keys, self.timeline_capacity = keys, capacity
        order = self.timeline_order
        return dict(zip(order, map(members.__getitem__, order), strict=True))

    def member_order(self, inserted: list[str]) -> list[str]:
        """``java_hashmap_order(inserted)``, kept while the insertion sequence is the same."""
        if inserted != self.inserted:
            self.order = _distinct_keys_order(inserted)
            self.inserted = inserted
        return self.order

    def member_map(
        self,
        order: list[str],
        ids: list[str],
        specs: list[_Spec],
        same: bool,
        updates: dict[str, _Spec | None],
    ) -> dict[str, _Spec]:
        """The member map in ``order``: the group members' ``specs`` (``same``: the previous
        build's, in the same order) with the ``updates`` applied (None: removed, left out of
        ``order``). The previous build's map itself when nothing differs from it."""
        group = self.group
        last = self.group_updates
        if (
            same
            and order == self.group_order
            and updates.keys() == last.keys()
            and all(map(operator.is_, updates.values(), last.values()))
        ):
            return group
        by_id = dict(zip(ids, specs, strict=True))
        by_id.update((m, s) for m, s in updates.items() if s is not None)
        group = dict(zip(order, map(by_id.__getitem__, order), strict=True))
        self.group, self.group_order, self.group_updates = group, order, updates
        return group

    def topic_describer(
        self, subscription_metadata: Mapping[str, TopicMetadata]
    ) -> SubscribedTopicDescriberImpl:
        """The ``SubscribedTopicDescriberImpl`` of the subscription metadata (a ``HashMap<Uuid,
        TopicMetadata>``), kept while the metadata is equal and in the same order."""
        items = list(subscription_metadata.items())
        if self.describer is None or self.metadata != items:
            self.describer = _describer(items)
            self.metadata = items
        return self.describer


#: describers made lately, with the metadata items they were made from (shared by the groups
#: and by a group's first build: a describer is immutable and depends on the items alone)
_DESCRIBERS: list[tuple[list[tuple[str, TopicMetadata]], SubscribedTopicDescriberImpl]] = []
_DESCRIBERS_KEPT = 8


def _describer(items: list[tuple[str, TopicMetadata]]) -> SubscribedTopicDescriberImpl:
    """The ``SubscribedTopicDescriberImpl`` of the metadata ``items`` (name, metadata): one made
    lately from equal items (same order), else a new one."""
    for made_from, describer in _DESCRIBERS:
        if made_from == items:
            return describer
    metadata = {t.id: SpecTopicMetadata(t.id, t.name, t.num_partitions) for _, t in items}
    describer = SubscribedTopicDescriberImpl({t: metadata[t] for t in uuid_order(metadata)})
    _DESCRIBERS.insert(0, (items, describer))
    del _DESCRIBERS[_DESCRIBERS_KEPT:]
    return describer


def _distinct_keys_order(keys: list[str]) -> list[str]:
    """``java_hashmap_order(keys)`` of distinct keys (a default ``HashMap``), the buckets
    sorted with numpy for a large map (stable: insertion order within a bucket)."""
    if len(keys) < 64:
        return java_hashmap_order(keys)
    mask = java_hashmap_capacity(len(keys)) - 1
    hashes = np.fromiter(map(java_string_hashcode, keys), np.int64, len(keys)) & 0xFFFFFFFF
    buckets = (hashes ^ (hashes >> 16)) & mask  # HashMap.hash, as java.spread
    return list(map(keys.__getitem__, np.argsort(buckets, kind="stable").tolist()))


@gc_paused()
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
    ``specs``: the group's :class:`MemberSpecs` from earlier builds (a fresh one if omitted).

    The cyclic garbage collector is paused for the build (:func:`coordinator.gc_pause.gc_paused`,
    as ``LazyMembers`` pauses it for its own part): a build allocates a few acyclic objects per
    member (specs, views, assignments), over which CPython would otherwise run many
    collections, some walking the whole heap."""
    cache = MemberSpecs() if specs is None else specs
    cache.start(topic_ids, len(members), subscription_type)
    old_of = target_assignment.get
    ids, member_specs, same = cache.member_specs(members, target_assignment)
    inserted = ids
    updates: dict[str, _Spec | None] = {}
    for member_id, updated in updated_members.items():
        if updated is None:
            updates[member_id] = None
            continue
        assignment = old_of(member_id, EMPTY_PARTITIONS)
        if updated.instance_id is not None:
            previous = static_members.get(updated.instance_id)
            if previous is not None and previous != member_id:
                assignment = old_of(previous, EMPTY_PARTITIONS)
        in_group = member_id in members
        if not in_group:
            if inserted is ids:
                inserted = list(ids)
            inserted.append(member_id)
        updates[member_id] = cache.spec(member_id, updated, assignment, in_group)
    cache.forget_updated(updates)
    # HashMap<String, ...> iteration order: capacity grown by every key ever put
    order = cache.member_order(inserted)
    if any(s is None for s in updates.values()):
        order = [m for m in order if updates.get(m, m) is not None]
    group = cache.member_map(order, ids, member_specs, same, updates)
    result = assignor.assign(
        GroupSpecImpl(
            group,
            subscription_type=subscription_type,
            inverted_member_assignment=inverted_target_assignment,
        ),
        cache.topic_describer(subscription_metadata),
    )
    # Every member's new map, in the result's order: a LazyMembers hands its maps over without
    # making the assignment objects; another mapping is read once.
    result_ids, result_maps = _result_maps(result.members)
    if result_ids == order:
        new_parts: list[TopicPartitions] = result_maps
        present: list[bool] | None = None
    else:
        by_id: dict[str, TopicPartitions] = dict(zip(result_ids, result_maps, strict=True))
        present = list(map(by_id.__contains__, order))
        # a member the assignor left out gets Kafka's Assignment.EMPTY
        new_parts = list(map(by_id.get, order, itertools.repeat(EMPTY_PARTITIONS)))
    # the delta, in the member map's order: a member whose new map is its old map object is
    # unchanged (AbstractMap.equals' identity check); the others are compared by content
    converted: dict[str, Partitions] = {}
    changed: list[str] = []
    olds = list(map(old_of, order, itertools.repeat(_NO_TARGET)))
    for i in itertools.compress(range(len(order)), map(operator.is_not, new_parts, olds)):
        member_id = order[i]
        old = olds[i]
        new_sets = _as_sets(new_parts[i])
        if present is None or present[i]:
            converted[member_id] = new_sets
        if old is _NO_TARGET or not _holds(old, new_sets):
            changed.append(member_id)
    return TargetAssignmentResult(
        NewTargetAssignment(result_ids, result_maps, converted), tuple(changed)
    )


def _result_maps(
    members: Mapping[str, MemberAssignment],
) -> tuple[Sequence[str], list[TopicPartitions]]:
    """(The result's member ids, their partitions maps), in the result's order."""
    partition_maps = getattr(members, "partition_maps", None)
    if partition_maps is not None:
        return members.member_ids(), partition_maps()  # type: ignore[attr-defined]
    values = members.values()
    # dict_values.mapping is the result's own dict, read-only: no copy of it
    ids = list(getattr(values, "mapping", members))
    return ids, list(map(_partitions_of, values))


def _as_sets(assignment: TopicPartitions) -> dict[Uuid, frozenset[int]]:
    """The map's non-empty sets as frozensets, in its order (an assignor's map may compute them
    without building its Java-ordered tables: ``DeferredTopicMap.partition_sets``)."""
    if type(assignment) is DeferredTopicMap:  # not isinstance: an ABC's check costs a call
        return assignment.partition_sets()
    return {t: frozenset(ps) for t, ps in assignment.items() if ps}


def _holds(old: TopicPartitions, new_sets: Mapping[Uuid, frozenset[int]]) -> bool:
    """Whether the old target holds what ``new_sets`` holds (``AbstractMap.equals`` of the two
    assignments, empty sets left out) without converting the old one: the partition counts
    first, then a topic at a time, the first difference ending it."""
    if type(old) is DeferredTopicMap:
        return old.partition_sets() == new_sets
    if sum(map(len, old.values())) != sum(map(len, new_sets.values())):
        return False  # a member that gained or lost partitions (no key looked up)
    topics = 0
    for topic_id, partitions in old.items():
        if partitions:
            now = new_sets.get(topic_id)
            if now is None or len(now) != len(partitions) or not now.issuperset(partitions):
                return False
            topics += 1
    return topics == len(new_sets)


def _resolved(
    names: AbstractSet[str],
    topic_ids: Mapping[str, Uuid],
    resolved: dict[tuple[str, ...], AbstractSet[Uuid]],
) -> AbstractSet[Uuid]:
    """The ids of the known ``names`` (a TopicIds view's content: names the metadata does not
    know are left out). ``resolved`` memoises the ids per topic-name sequence: members usually
    share their subscription, and the ids' order is a function of the names in their iteration
    order."""
    key = tuple(names)
    ids = resolved.get(key)
    if ids is None:
        ids = resolved[key] = _resolve(key, topic_ids)
    return ids


class TopicIds(tuple, AbstractSet[Uuid]):
    """Kafka's ``modern.TopicIds``: a member's subscribed topic names seen as their ids,
    resolved when read (through the memo: the shared ids object, same content and order).

    A tuple ``(names, topic ids by name, memo)`` underneath, so that a group's views are made
    in bulk with the construction in C (:func:`topic_ids_views`); equality is a set's."""

    __slots__ = ()

    def __new__(
        cls,
        names: AbstractSet[str],
        topic_ids: Mapping[str, Uuid],
        resolved: dict[tuple[str, ...], AbstractSet[Uuid]],
    ) -> TopicIds:
        return tuple.__new__(cls, (names, topic_ids, resolved))

    def _get(self) -> AbstractSet[Uuid]:
        return _resolved(self[0], self[1], self[2])

    def __iter__(self) -> Iterator[Uuid]:
        return iter(self._get())

    def __len__(self) -> int:
        return len(self._get())

    def __contains__(self, topic_id: object) -> bool:
        return topic_id in self._get()

    __eq__ = AbstractSet.__eq__
    __ne__ = AbstractSet.__ne__
    __le__ = AbstractSet.__le__  # type: ignore[assignment]
    __lt__ = AbstractSet.__lt__  # type: ignore[assignment]
    __ge__ = AbstractSet.__ge__  # type: ignore[assignment]
    __gt__ = AbstractSet.__gt__  # type: ignore[assignment]
    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"TopicIds({list(self._get())!r})"


def topic_ids_views(
    names: Iterable[AbstractSet[str]],
    topic_ids: Mapping[str, Uuid],
    resolved: dict[tuple[str, ...], AbstractSet[Uuid]],
) -> Iterator[TopicIds]:
    """A :class:`TopicIds` view of each subscription, without a Python call per view."""
    rows = zip(names, itertools.repeat(topic_ids), itertools.repeat(resolved))
    return map(tuple.__new__, itertools.repeat(TopicIds), rows)


def _resolve(names: tuple[str, ...], topic_ids: Mapping[str, Uuid]) -> AbstractSet[Uuid]:
    """The ids of the known names, in the order of the names' ``HashSet<String>``."""
    ordered = java_hashmap_order(names, copy_capacity(len(names)))
    return dict.fromkeys(topic_ids[n] for n in ordered if n in topic_ids).keys()
