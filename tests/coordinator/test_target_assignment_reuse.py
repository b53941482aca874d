"""The target-assignment step's reuse between builds (``MemberSpecs``) and its delta.

A group goes through the changes the coordinator sees (joins, a new epoch, a new subscription, a
rack, a static replacement, a recreated topic, more partitions, a leave), its targets updated
from each build's changed members the way ConsumerGroupManager replays the records. Every build
runs twice, with the group's kept ``MemberSpecs`` and with a fresh one: the assignor must be
handed the same members in the same order (subscribed ids in order, targets), and the records
and new targets must be the same. Kafka's TargetAssignmentBuilder has no such cache (its specs
are O(1) views); these tests are groupsim's.
"""

from __future__ import annotations

from types import MappingProxyType

import pytest

from coordinator.assignor.api import GroupAssignment, SubscriptionType
from coordinator.assignor.ordering import assignment_from_record, uuid_order
from coordinator.assignor.registry import get_assignor
from coordinator.assignor.spec import MemberAssignmentImpl
from coordinator.consumer_group import ConsumerGroupMember, TopicMetadata
from coordinator.kafka_uuid import topic_id_for
from coordinator.target_assignment import MemberSpecs, build_target_assignment


class Recording:
    """The uniform assignor, recording what each call was handed, in order."""

    name = "uniform"

    def __init__(self) -> None:
        self.specs = []
        self.seen = []

    def assign(self, group_spec, describer):
        self.specs.append(group_spec)
        self.seen.append(
            (
                [
                    (
                        m,
                        s.rack_id,
                        s.instance_id,
                        list(s.subscribed_topic_ids),
                        [(t, list(ps)) for t, ps in s.partitions.items()],
                    )
                    for m, s in group_spec.members.items()
                ],
                [(t, m.num_partitions) for t, m in describer.topic_metadata.items()],
            )
        )
        return get_assignor("uniform").assign(group_spec, describer)


class Group:
    """A consumer group's state as the builder reads it."""

    def __init__(self, topics: dict[str, int]) -> None:
        self.sizes = dict(topics)
        self.topic_ids = {name: topic_id_for(name) for name in topics}
        self.members: dict[str, ConsumerGroupMember] = {}
        self.targets: dict[str, dict] = {}
        self.static: dict[str, str] = {}
        self.specs = MemberSpecs()

    def build(self, updated: dict[str, ConsumerGroupMember | None]):
        everyone = {**self.members, **{m: u for m, u in updated.items() if u is not None}}
        subscriptions = {m.subscribed_topic_names for m in everyone.values()}
        kind = (
            SubscriptionType.HOMOGENEOUS
            if len(subscriptions) <= 1
            else SubscriptionType.HETEROGENEOUS
        )
        names = set().union(*subscriptions) if subscriptions else set()
        metadata = {
            n: TopicMetadata(self.topic_ids[n], n, self.sizes[n])
            for n in sorted(names)
            if n in self.topic_ids
        }
        inverted: dict = {}
        for member_id, target in self.targets.items():
            for t, ps in target.items():
                for p in ps:
                    inverted.setdefault(t, {})[p] = member_id
        runs = []
        for specs in (self.specs, None):
            assignor = Recording()
            result = build_target_assignment(
                assignor=assignor,
                members=self.members,
                static_members=self.static,
                subscription_metadata=metadata,
                subscription_type=kind,
                target_assignment=self.targets,
                inverted_target_assignment=inverted,
                topic_ids=self.topic_ids,
                updated_members=updated,
                specs=specs,
            )
            runs.append((assignor, result))
        (kept, kept_result), (fresh, fresh_result) = runs
        assert kept.seen == fresh.seen
        assert kept_result.changed_members == fresh_result.changed_members
        assert list(kept_result.target_assignment) == list(fresh_result.target_assignment)
        assert dict(kept_result.target_assignment) == dict(fresh_result.target_assignment)
        self.apply(updated, kept_result)
        return kept.specs[0], kept_result

    def apply(self, updated, result) -> None:
        """What the records do: members updated or gone, changed targets replayed."""
        for member_id, member in updated.items():
            if member is None:
                self.members.pop(member_id, None)
                self.targets.pop(member_id, None)
                continue
            self.members[member_id] = member
            if member.instance_id is not None:
                self.static[member.instance_id] = member_id
        for member_id in result.changed_members:
            new = result.target_assignment.get(member_id, {})
            record = [(t, sorted(new[t])) for t in uuid_order(new)]
            self.targets[member_id] = {
                t: frozenset(ps) for t, ps in assignment_from_record(record).items()
            }


def member(member_id: str, *topics: str, **fields) -> ConsumerGroupMember:
    return ConsumerGroupMember(member_id, subscribed_topic_names=frozenset(topics), **fields)


def test_kept_specs_build_what_fresh_ones_build():
    g = Group({"t0": 7, "t1": 5, "t2": 4})
    everything = ("t0", "t1", "t2")
    for i in range(5):
        extra = {"instance_id": "i4"} if i == 4 else {}
        _, result = g.build({f"m{i}": member(f"m{i}", *everything, **extra)})
        assert f"m{i}" in result.changed_members
    # a new epoch keeps the names object: the spec is reused, nothing changes
    _, result = g.build({"m2": g.members["m2"].with_(member_epoch=5)})
    assert result.changed_members == ()
    # a new subscription (heterogeneous from here on), a rack
    g.build({"m3": g.members["m3"].with_(subscribed_topic_names=frozenset({"t0", "t2"}))})
    g.build({"m1": g.members["m1"].with_(rack_id="rack-1")})
    # a static member replaced: the new member id starts from the old one's target
    spec, result = g.build({"m4": None, "m4b": member("m4b", *everything, instance_id="i4")})
    assert "m4" not in spec.members and "m4b" in result.changed_members
    # t1 deleted and recreated (a new id): subscriptions resolve to the new id
    g.topic_ids["t1"] = topic_id_for("t1", 1)
    g.targets = {
        m: {t: ps for t, ps in target.items() if t != topic_id_for("t1")}
        for m, target in g.targets.items()
    }
    spec, _ = g.build({"m0": g.members["m0"].with_(member_epoch=9)})
    assert topic_id_for("t1", 1) in spec.members["m1"].subscribed_topic_ids
    assert topic_id_for("t1") not in spec.members["m1"].subscribed_topic_ids
    # more partitions, a topic nobody knows, a leave
    g.sizes["t0"] = 12
    g.build({"m5": member("m5", "t0", "ghost")})
    _, result = g.build({"m0": None})
    assert sorted(result.target_assignment) == ["m1", "m2", "m3", "m4b", "m5"]
    # the new target covers every partition of the subscribed topics once
    owned = [(t, p) for target in g.targets.values() for t, ps in target.items() for p in ps]
    assert len(owned) == len(set(owned)) == 12 + 5 + 4


def test_an_unchanged_member_keeps_its_spec_object():
    g = Group({"t0": 6, "t1": 6})
    for i in range(3):
        g.build({f"m{i}": member(f"m{i}", "t0", "t1")})
    first, _ = g.build({})
    second, _ = g.build({})
    assert all(second.members[m] is first.members[m] for m in first.members)
    g.targets["m1"] = dict(g.targets["m1"])  # the same target, another object
    third, result = g.build({})
    assert third.members["m1"] is not second.members["m1"]
    assert third.members["m1"].partitions is g.targets["m1"]
    assert third.members["m0"] is second.members["m0"]
    assert result.changed_members == ()  # equal by content


class Prepared:
    """An assignor returning prepared maps (the same objects on every call)."""

    name = "prepared"

    def __init__(self, prepared) -> None:
        self.prepared = prepared

    def assign(self, group_spec, describer):
        return GroupAssignment({m: MemberAssignmentImpl(p) for m, p in self.prepared.items()})


def build(assignor, members, targets, updated=None):
    foo = topic_id_for("foo")
    return build_target_assignment(
        assignor=assignor,
        members=members,
        static_members={},
        subscription_metadata={"foo": TopicMetadata(foo, "foo", 4)},
        subscription_type=SubscriptionType.HOMOGENEOUS,
        target_assignment=targets,
        inverted_target_assignment={},
        topic_ids={"foo": foo},
        updated_members=updated or {},
    )


def test_the_delta_by_identity_then_by_content():
    foo = topic_id_for("foo")
    same = {foo: frozenset({0, 1})}
    members = {m: member(m, "foo") for m in ("a", "b", "c", "d")}
    targets = {"a": same, "b": {foo: frozenset({2})}, "c": {foo: frozenset({3})}}
    prepared = {
        "a": same,  # the old map itself: unchanged
        "b": MappingProxyType({foo: frozenset({2}), topic_id_for("bar"): frozenset()}),  # equal
        "c": {foo: frozenset({2, 3})},  # changed
        # "d": left out by the assignor, and without a target: a record of nothing
    }
    result = build(Prepared(prepared), members, targets)
    assert set(result.changed_members) == {"c", "d"}
    assert sorted(result.target_assignment) == ["a", "b", "c"]
    assert result.target_assignment["b"] == {foo: frozenset({2})}  # empty topics left out
    assert result.target_assignment["c"] == {foo: frozenset({2, 3})}
    assert "d" not in result.target_assignment and result.target_assignment.get("d") is None


def test_a_member_left_out_with_a_target_loses_it():
    foo = topic_id_for("foo")
    members = {m: member(m, "foo") for m in ("a", "b")}
    targets = {"a": {foo: frozenset({0, 1})}, "b": {}}
    result = build(Prepared({"a": targets["a"]}), members, targets)
    assert result.changed_members == ()  # b had nothing and gets nothing: no record
    targets["b"] = {foo: frozenset({2})}
    result = build(Prepared({"a": targets["a"]}), members, targets)
    assert result.changed_members == ("b",)


def test_a_topic_change_drops_only_the_specs_it_touches():
    g = Group({"t0": 6, "t1": 6, "t2": 3})
    g.build({"a": member("a", "t0", "t1")})
    g.build({"b": member("b", "t0", "t2", "t3")})  # t3 does not exist yet
    first, _ = g.build({})
    g.topic_ids["t9"] = topic_id_for("t9")  # a topic nobody subscribes to
    second, _ = g.build({})
    assert second.members["a"] is first.members["a"]
    assert second.members["b"] is first.members["b"]
    g.topic_ids["t3"] = topic_id_for("t3")  # b's missing topic appears
    g.sizes["t3"] = 2
    third, _ = g.build({})
    assert third.members["a"] is first.members["a"]
    assert third.members["b"] is not first.members["b"]
    assert topic_id_for("t3") in third.members["b"].subscribed_topic_ids


def test_the_member_map_is_handed_again_only_while_nothing_differs():
    g = Group({"t0": 6, "t1": 6})
    for i in range(4):
        g.build({f"m{i}": member(f"m{i}", "t0", "t1")})
    first, _ = g.build({})
    second, _ = g.build({})
    assert second.members is first.members  # same order, every spec the same object
    snapshot = dict(first.members)
    third, _ = g.build({"m1": g.members["m1"].with_(rack_id="r")})
    assert third.members is not first.members and dict(first.members) == snapshot
    assert third.members["m1"].rack_id == "r"
    # the same updated member again: its spec is kept, and the map with it
    fourth, _ = g.build({"m1": g.members["m1"]})
    assert fourth.members["m1"] is third.members["m1"]
    # a member replaced in place by one with a new names object: its spec is made again
    g.members = {**g.members, "m2": member("m2", "t0", "t1")}
    fifth, _ = g.build({})
    assert fifth.members is not fourth.members
    assert fifth.members["m2"] is not fourth.members["m2"]
    assert fifth.members["m0"] is fourth.members["m0"]


def test_kept_specs_match_fresh_ones_over_a_random_history():
    """Joins, leaves, new epochs, new subscriptions, racks, static replacements, targets copied,
    members reordered and topics recreated, in a seeded random order: every build with the kept
    specs hands the assignor what a fresh build hands it (checked by Group.build)."""
    import random

    rng = random.Random(848)
    names = ["t0", "t1", "t2", "t3"]
    g = Group({n: rng.randint(1, 9) for n in names})
    next_id = 0
    for _ in range(120):
        op = rng.randrange(9)
        ids = list(g.members)
        if op <= 1 or not ids:  # a join, sometimes static
            extra = {"instance_id": f"i{next_id}"} if rng.random() < 0.3 else {}
            topics = rng.sample(names, rng.randint(1, len(names)))
            g.build({f"n{next_id}": member(f"n{next_id}", *topics, **extra)})
            next_id += 1
        elif op == 2:  # a leave
            g.build({rng.choice(ids): None})
        elif op == 3:  # a new epoch (same names object)
            m = rng.choice(ids)
            g.build({m: g.members[m].with_(member_epoch=rng.randint(1, 99))})
        elif op == 4:  # a new subscription or rack
            m = rng.choice(ids)
            if rng.random() < 0.5:
                topics = frozenset(rng.sample(names, rng.randint(1, len(names))))
                g.build({m: g.members[m].with_(subscribed_topic_names=topics)})
            else:
                g.build({m: g.members[m].with_(rack_id=f"r{rng.randint(0, 2)}")})
        elif op == 5:  # a static member replaced by a new member id
            static = [m for m in g.static.values() if m in g.members]
            if static:
                old = rng.choice(static)
                new = f"n{next_id}"
                next_id += 1
                old_member = g.members[old]
                g.build({old: None, new: old_member.with_(member_id=new)})
        elif op == 6:  # targets copied (equal content, other objects); members reordered
            for m in rng.sample(list(g.targets), len(g.targets) // 2):
                g.targets[m] = dict(g.targets[m])
            if rng.random() < 0.5:
                g.members = dict(rng.sample(list(g.members.items()), len(g.members)))
            g.build({})
        elif op == 7:  # a topic recreated, or grown
            n = rng.choice(names)
            if rng.random() < 0.5:
                g.topic_ids[n] = topic_id_for(n, rng.randint(1, 5))
                g.targets = {
                    m: {t: ps for t, ps in target.items() if t in g.topic_ids.values()}
                    for m, target in g.targets.items()
                }
            else:
                g.sizes[n] += 1
            g.build({})
        else:  # nothing new
            g.build({})
    assert next_id > 10 and g.members


def test_an_updated_member_that_differs_between_builds_is_seen():
    """The bench's shape: the same group members, a member that is not one of them updated in
    each build; the second build's updated member subscribes to more topics."""
    foo, bar = topic_id_for("foo"), topic_id_for("bar")
    ids = {"foo": foo, "bar": bar}
    metadata = {n: TopicMetadata(t, n, 4) for n, t in ids.items()}
    members = {m: member(m, "foo") for m in ("a", "b")}
    specs = MemberSpecs()
    seen = []
    for topics in (("foo",), ("foo",), ("foo", "bar"), ("foo", "bar")):
        assignor = Recording()
        build_target_assignment(
            assignor=assignor,
            members=members,
            static_members={},
            subscription_metadata=metadata,
            subscription_type=SubscriptionType.HETEROGENEOUS,
            target_assignment={},
            inverted_target_assignment={},
            topic_ids=ids,
            updated_members={"n": member("n", *topics)},
            specs=specs,
        )
        spec = assignor.specs[0]
        seen.append((spec.members, set(spec.members["n"].subscribed_topic_ids)))
    assert [s for _, s in seen] == [{foo}, {foo}, {foo, bar}, {foo, bar}]
    assert all(seen[i][0]["a"] is seen[0][0]["a"] for i in range(4))  # a's spec is kept


def test_a_homogeneous_group_gets_topic_id_views_resolved_as_the_eager_path_resolves():
    from coordinator.target_assignment import TopicIds, _resolve

    g = Group({f"t{i}": 2 for i in range(40)})
    names = [f"t{i}" for i in range(40)] + ["ghost"]  # a name without a topic is left out
    for i in range(3):
        g.build({f"m{i}": member(f"m{i}", *names)})
    spec, _ = g.build({})  # HOMOGENEOUS: views
    for m, s in spec.members.items():
        assert isinstance(s.subscribed_topic_ids, TopicIds)
        expected = list(_resolve(tuple(g.members[m].subscribed_topic_names), g.topic_ids))
        assert list(s.subscribed_topic_ids) == expected and len(expected) == 40
        assert len(s.subscribed_topic_ids) == 40 and expected[0] in s.subscribed_topic_ids
    # the same members and targets, now declared heterogeneous: the specs holding views are
    # made again, members sharing a subscription sharing one ids object
    inverted: dict = {}
    for member_id, target in g.targets.items():
        for t, ps in target.items():
            inverted.setdefault(t, {}).update(dict.fromkeys(ps, member_id))
    kinds = []
    for kind in (SubscriptionType.HOMOGENEOUS, SubscriptionType.HETEROGENEOUS):
        assignor = Recording()
        build_target_assignment(
            assignor=assignor,
            members=g.members,
            static_members={},
            subscription_metadata={n: TopicMetadata(t, n, 2) for n, t in g.topic_ids.items()},
            subscription_type=kind,
            target_assignment=g.targets,
            inverted_target_assignment=inverted,
            topic_ids=g.topic_ids,
            updated_members={},
            specs=g.specs,
        )
        kinds.append([s.subscribed_topic_ids for s in assignor.specs[0].members.values()])
    assert all(isinstance(s, TopicIds) for s in kinds[0])
    assert not any(isinstance(s, TopicIds) for s in kinds[1])
    assert kinds[1][0] is kinds[1][1] is kinds[1][2]


def test_the_collector_is_paused_only_during_the_build():
    import gc

    from coordinator.assignor.api import PartitionAssignorException

    class Failing:
        name = "failing"

        def assign(self, group_spec, describer):
            states.append(gc.isenabled())
            raise PartitionAssignorException("no")

    states: list[bool] = []
    foo = topic_id_for("foo")
    members = {"a": member("a", "foo")}
    assert gc.isenabled()
    result = build(Prepared({"a": {foo: frozenset({0})}}), members, {})
    assert result.changed_members == ("a",) and gc.isenabled()
    with pytest.raises(PartitionAssignorException):
        build(Failing(), members, {})
    assert states == [False] and gc.isenabled()  # re-enabled after a failure too
    gc.disable()
    try:
        build(Prepared({"a": {foo: frozenset({0})}}), members, {})
        assert not gc.isenabled()  # a caller's pause is left alone
    finally:
        gc.enable()


def test_the_kept_timeline_order_is_the_computed_one():
    import random

    from coordinator.timeline_order import capacity_for, iteration_order

    rng = random.Random(17)
    specs = MemberSpecs()
    members: dict[str, ConsumerGroupMember] = {}
    high_water = 0
    for step in range(200):
        if members and rng.random() < 0.3:
            members.pop(rng.choice(list(members)))
        elif rng.random() < 0.7:
            m = f"m{step}"
            members[m] = member(m, "foo")
        elif members:  # a member object replaced in place: same order, new value
            m = rng.choice(list(members))
            members[m] = members[m].with_(member_epoch=step)
        high_water = max(high_water, len(members))
        capacity = capacity_for(high_water)
        got = specs.in_timeline_order(members, capacity)
        expected = {m: members[m] for m in iteration_order(members, capacity)}
        assert list(got.items()) == list(expected.items())
    # the same members in a larger table (a high water mark from members since gone)
    for capacity in (capacity_for(high_water) * 2, capacity_for(high_water) * 8):
        got = specs.in_timeline_order(members, capacity)
        assert list(got) == iteration_order(members, capacity)
    assert iteration_order(members, capacity) != iteration_order(members, capacity_for(high_water))


def test_topic_id_views_are_sets_of_their_resolved_ids():
    """A ``TopicIds`` view (a tuple underneath, made in bulk) is equal, as a set, to its
    resolved ids and to any set of the same ids, and unhashable like Java's views in a map."""
    from coordinator.target_assignment import TopicIds, topic_ids_views

    topic_ids = {n: topic_id_for(n) for n in ("a", "b", "c")}
    memo: dict = {}
    made = list(topic_ids_views([frozenset({"a", "b"}), frozenset({"c", "x"})], topic_ids, memo))
    assert made[0] == TopicIds(frozenset({"b", "a"}), topic_ids, memo)
    assert made[0] == {topic_ids["a"], topic_ids["b"]} and made[0] != made[1]
    assert made[1] == {topic_ids["c"]} and len(made[1]) == 1  # "x" has no topic: left out
    assert made[0] == frozenset(made[0]) and made[1] <= set(topic_ids.values())
    with pytest.raises(TypeError):
        hash(made[0])


def test_the_member_order_of_a_large_group_is_javas():
    """The member map's order (numpy buckets above 64 members) is ``java_hashmap_order``."""
    import random

    from coordinator.java import java_hashmap_order
    from coordinator.target_assignment import _distinct_keys_order

    rng = random.Random(17)
    for n in (0, 5, 63, 64, 65, 700, 3000):
        keys = list(dict.fromkeys(f"m{rng.getrandbits(48):x}-é{i}" for i in range(n)))
        assert _distinct_keys_order(keys) == java_hashmap_order(keys)


def test_equal_subscription_metadata_shares_one_describer():
    """Fresh ``MemberSpecs`` (a group's first build) reuse the describer made lately from
    equal metadata items; other metadata gets its own."""
    metadata = {n: TopicMetadata(topic_id_for(n), n, 3) for n in ("d1", "d2")}
    first = MemberSpecs().topic_describer(metadata)
    again = MemberSpecs().topic_describer(dict(metadata))
    assert again is first
    bigger = {**metadata, "d1": TopicMetadata(topic_id_for("d1"), "d1", 4)}
    other = MemberSpecs().topic_describer(bigger)
    assert other is not first and other.num_partitions(topic_id_for("d1")) == 4
    assert first.num_partitions(topic_id_for("d1")) == 3
