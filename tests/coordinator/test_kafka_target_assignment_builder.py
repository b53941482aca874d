"""Kafka's TargetAssignmentBuilderTest (group-coordinator, modern, at 1eb7644), ported to
:func:`coordinator.target_assignment.build_target_assignment`.

As in Kafka, the assignor is a stub returning a prepared assignment, and each test checks what the
builder handed it (the members' subscriptions resolved to topic ids, their current targets) and
the delta it returns: the members whose target changed (Kafka's TargetAssignmentMember records;
the TargetAssignmentMetadata record of the epoch is the caller's, ConsumerGroupManager) and the
new target. testCreateMemberSubscriptionSpecImpl is covered by the subscription checks of every
test (unknown topic names are left out, as Kafka's TopicIds view does).
"""

from __future__ import annotations

from coordinator.assignor.api import GroupAssignment, SubscriptionType
from coordinator.assignor.spec import MemberAssignmentImpl
from coordinator.consumer_group import ConsumerGroupMember, TopicMetadata
from coordinator.kafka_uuid import topic_id_for
from coordinator.target_assignment import build_target_assignment

FOO, BAR = topic_id_for("foo"), topic_id_for("bar")
TOPICS = {"foo": FOO, "bar": BAR}
SUBSCRIPTION = {"foo": TopicMetadata(FOO, "foo", 6), "bar": TopicMetadata(BAR, "bar", 6)}


def a(foo: tuple[int, ...] = (), bar: tuple[int, ...] = ()) -> dict:
    return {t: frozenset(ps) for t, ps in ((FOO, foo), (BAR, bar)) if ps}


class StubAssignor:
    name = "stub"

    def __init__(self, prepared: dict[str, dict]) -> None:
        self.prepared = prepared
        self.spec = None

    def assign(self, group_spec, describer):
        self.spec = group_spec
        assert describer.num_partitions(FOO) == 6 and describer.num_partitions(BAR) == 6
        return GroupAssignment({m: MemberAssignmentImpl(p) for m, p in self.prepared.items()})


class Context:
    """TargetAssignmentBuilderTestContext."""

    def __init__(self) -> None:
        self.members: dict[str, ConsumerGroupMember] = {}
        self.targets: dict[str, dict] = {}
        self.static: dict[str, str] = {}
        self.updated: dict[str, ConsumerGroupMember | None] = {}

    def add_group_member(self, member_id, topics, target, instance_id=None):
        self.members[member_id] = ConsumerGroupMember(
            member_id, subscribed_topic_names=frozenset(topics), instance_id=instance_id
        )
        if instance_id is not None:
            self.static[instance_id] = member_id
        self.targets[member_id] = target

    def update_member_subscription(self, member_id, topics, instance_id=None, rack_id=None):
        base = self.members.get(member_id, ConsumerGroupMember(member_id))
        self.updated[member_id] = base.with_(
            subscribed_topic_names=frozenset(topics),
            instance_id=instance_id if instance_id is not None else base.instance_id,
            rack_id=rack_id if rack_id is not None else base.rack_id,
        )

    def remove_member_subscription(self, member_id):
        self.updated[member_id] = None

    def build(self, prepared):
        assignor = StubAssignor(prepared)
        result = build_target_assignment(
            assignor=assignor,
            members=self.members,
            static_members=self.static,
            subscription_metadata=SUBSCRIPTION,
            subscription_type=SubscriptionType.HOMOGENEOUS,
            target_assignment=self.targets,
            inverted_target_assignment={},
            topic_ids=TOPICS,
            updated_members=self.updated,
        )
        return assignor.spec, result


def subscriptions(spec) -> dict[str, set]:
    return {m: set(spec.members[m].subscribed_topic_ids) for m in spec.member_ids()}


def test_empty():
    """TargetAssignmentBuilderTest.testEmpty"""
    spec, result = Context().build({})
    assert result.changed_members == () and dict(result.target_assignment) == {}
    assert list(spec.member_ids()) == []


def test_assignment_has_not_changed():
    """TargetAssignmentBuilderTest.testAssignmentHasNotChanged"""
    c = Context()
    c.add_group_member("member-1", ["foo", "bar", "zar"], a((1, 2, 3), (1, 2, 3)))
    c.add_group_member("member-2", ["foo", "bar", "zar"], a((4, 5, 6), (4, 5, 6)))
    prepared = {"member-1": a((1, 2, 3), (1, 2, 3)), "member-2": a((4, 5, 6), (4, 5, 6))}
    spec, result = c.build(prepared)
    assert result.changed_members == ()
    assert dict(result.target_assignment) == prepared
    assert subscriptions(spec) == {"member-1": {FOO, BAR}, "member-2": {FOO, BAR}}
    assert dict(spec.member_assignment("member-1").partitions) == a((1, 2, 3), (1, 2, 3))


def test_assignment_swapped():
    """TargetAssignmentBuilderTest.testAssignmentSwapped"""
    c = Context()
    c.add_group_member("member-1", ["foo", "bar", "zar"], a((1, 2, 3), (1, 2, 3)))
    c.add_group_member("member-2", ["foo", "bar", "zar"], a((4, 5, 6), (4, 5, 6)))
    prepared = {"member-2": a((1, 2, 3), (1, 2, 3)), "member-1": a((4, 5, 6), (4, 5, 6))}
    _, result = c.build(prepared)
    assert set(result.changed_members) == {"member-1", "member-2"}
    assert dict(result.target_assignment) == prepared


def test_new_member():
    """TargetAssignmentBuilderTest.testNewMember"""
    c = Context()
    c.add_group_member("member-1", ["foo", "bar", "zar"], a((1, 2, 3), (1, 2, 3)))
    c.add_group_member("member-2", ["foo", "bar", "zar"], a((4, 5, 6), (4, 5, 6)))
    c.update_member_subscription("member-3", ["foo", "bar", "zar"])
    prepared = {
        "member-1": a((1, 2), (1, 2)),
        "member-2": a((3, 4), (3, 4)),
        "member-3": a((5, 6), (5, 6)),
    }
    spec, result = c.build(prepared)
    assert set(result.changed_members) == {"member-1", "member-2", "member-3"}
    assert dict(result.target_assignment) == prepared
    assert dict(spec.member_assignment("member-3").partitions) == {}  # no target yet


def test_update_member():
    """TargetAssignmentBuilderTest.testUpdateMember"""
    c = Context()
    c.add_group_member("member-1", ["foo", "bar", "zar"], a((1, 2, 3), (1, 2)))
    c.add_group_member("member-2", ["foo", "bar", "zar"], a((4, 5, 6), (3, 4)))
    c.add_group_member("member-3", ["bar", "zar"], a(bar=(5, 6)))
    c.update_member_subscription("member-3", ["foo", "bar", "zar"], "instance-id-3", "rack-0")
    prepared = {
        "member-1": a((1, 2), (1, 2)),
        "member-2": a((3, 4), (3, 4)),
        "member-3": a((5, 6), (5, 6)),
    }
    spec, result = c.build(prepared)
    assert set(result.changed_members) == {"member-1", "member-2", "member-3"}
    member3 = spec.member_subscription("member-3")
    assert (member3.instance_id, member3.rack_id) == ("instance-id-3", "rack-0")
    assert set(member3.subscribed_topic_ids) == {FOO, BAR}


def test_partial_assignment_update():
    """TargetAssignmentBuilderTest.testPartialAssignmentUpdate: member-1's target is unchanged,
    so it gets no record."""
    c = Context()
    c.add_group_member("member-1", ["foo", "bar", "zar"], a((1, 2), (1, 2)))
    c.add_group_member("member-2", ["foo", "bar", "zar"], a((3, 4), (3, 4)))
    c.add_group_member("member-3", ["bar", "zar"], a((5, 6), (5, 6)))
    prepared = {
        "member-1": a((1, 2), (1, 2)),
        "member-2": a((3, 4, 5), (3, 4, 5)),
        "member-3": a((6,), (6,)),
    }
    spec, result = c.build(prepared)
    assert set(result.changed_members) == {"member-2", "member-3"}
    assert subscriptions(spec)["member-3"] == {BAR}


def test_delete_member():
    """TargetAssignmentBuilderTest.testDeleteMember"""
    c = Context()
    c.add_group_member("member-1", ["foo", "bar", "zar"], a((1, 2), (1, 2)))
    c.add_group_member("member-2", ["foo", "bar", "zar"], a((3, 4), (3, 4)))
    c.add_group_member("member-3", ["foo", "bar", "zar"], a((5, 6), (5, 6)))
    c.remove_member_subscription("member-3")
    prepared = {"member-1": a((1, 2, 3), (1, 2, 3)), "member-2": a((4, 5, 6), (4, 5, 6))}
    spec, result = c.build(prepared)
    assert set(result.changed_members) == {"member-1", "member-2"}
    assert sorted(spec.member_ids()) == ["member-1", "member-2"]


def test_replace_static_member():
    """TargetAssignmentBuilderTest.testReplaceStaticMember: the new member of a static instance
    starts from the departed member's target."""
    c = Context()
    c.add_group_member("member-1", ["foo", "bar", "zar"], a((1, 2), (1, 2)), "instance-member-1")
    c.add_group_member("member-2", ["foo", "bar", "zar"], a((3, 4), (3, 4)), "instance-member-2")
    c.add_group_member("member-3", ["foo", "bar", "zar"], a((5, 6), (5, 6)), "instance-member-3")
    c.remove_member_subscription("member-3")
    c.update_member_subscription("member-3-a", ["foo", "bar", "zar"], "instance-member-3")
    prepared = {
        "member-1": a((1, 2), (1, 2)),
        "member-2": a((3, 4), (3, 4)),
        "member-3-a": a((5, 6), (5, 6)),
    }
    spec, result = c.build(prepared)
    assert result.changed_members == ("member-3-a",)
    assert dict(spec.member_assignment("member-3-a").partitions) == a((5, 6), (5, 6))
    assert "member-3" not in spec.member_ids()
