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
"""

from __future__ import annotations

from collections.abc import Mapping
from collections.abc import Set as AbstractSet

from attrs import frozen

from coordinator.assignor.api import ConsumerGroupPartitionAssignor, SubscriptionType
from coordinator.assignor.ordering import uuid_order
from coordinator.assignor.sets import copy_capacity
from coordinator.assignor.spec import (
    GroupSpecImpl,
    MemberSubscriptionAndAssignmentImpl,
    SubscribedTopicDescriberImpl,
)
from coordinator.assignor.spec import TopicMetadata as SpecTopicMetadata
from coordinator.consumer_group import ConsumerGroupMember, Partitions, TopicMetadata
from coordinator.java import java_hashmap_order
from coordinator.kafka_uuid import Uuid


@frozen
class TargetAssignmentResult:
    """TargetAssignmentResult: the new target per member (in the assignor's result order) and
    the changed members' ids in record order."""

    target_assignment: Mapping[str, Partitions]
    changed_members: tuple[str, ...]


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
) -> TargetAssignmentResult:
    """TargetAssignmentBuilder.build (``updated_members``: addOrUpdateMember / removeMember)."""
    specs: dict[str, MemberSubscriptionAndAssignmentImpl] = {}
    resolved: dict[tuple[str, ...], AbstractSet[Uuid]] = {}
    for member_id, member in members.items():
        specs[member_id] = _spec(member, target_assignment.get(member_id, {}), topic_ids, resolved)
    inserted = list(specs)
    for member_id, updated in updated_members.items():
        if updated is None:
            specs.pop(member_id, None)
            continue
        assignment = target_assignment.get(member_id, {})
        if updated.instance_id is not None:
            previous = static_members.get(updated.instance_id)
            if previous is not None and previous != member_id:
                assignment = target_assignment.get(previous, {})
        specs[member_id] = _spec(updated, assignment, topic_ids, resolved)
        if member_id not in inserted:
            inserted.append(member_id)
    # HashMap<String, ...> iteration order: capacity grown by every key ever put
    order = [m for m in java_hashmap_order(inserted) if m in specs]
    ordered_specs = {m: specs[m] for m in order}
    metadata = {
        t.id: SpecTopicMetadata(t.id, t.name, t.num_partitions)
        for t in subscription_metadata.values()
    }
    describer = SubscribedTopicDescriberImpl({t: metadata[t] for t in uuid_order(metadata)})
    result = assignor.assign(
        GroupSpecImpl(
            ordered_specs,
            subscription_type=subscription_type,
            inverted_member_assignment=inverted_target_assignment,
        ),
        describer,
    )
    new_target: dict[str, Partitions] = {}
    for member_id, member_assignment in result.members.items():
        new_target[member_id] = {
            t: frozenset(ps) for t, ps in member_assignment.partitions.items() if ps
        }
    changed = []
    for member_id in order:
        old = target_assignment.get(member_id)
        new = new_target.get(member_id, {})
        if old is None or _as_sets(old) != new:
            changed.append(member_id)
    return TargetAssignmentResult(new_target, tuple(changed))


def _as_sets(assignment: Partitions) -> dict[Uuid, frozenset[int]]:
    return {t: frozenset(ps) for t, ps in assignment.items() if ps}


def _spec(
    member: ConsumerGroupMember,
    assignment: Partitions,
    topic_ids: Mapping[str, Uuid],
    resolved: dict[tuple[str, ...], AbstractSet[Uuid]],
) -> MemberSubscriptionAndAssignmentImpl:
    """createMemberSubscriptionAndAssignment: the member's topic names resolved to ids (a
    TopicIds view: names the metadata does not know are left out). ``resolved`` memoises the
    ids per topic-name sequence within one build: members usually share their subscription,
    and the ids' order is a function of the names in their iteration order."""
    key = tuple(member.subscribed_topic_names)
    ids = resolved.get(key)
    if ids is None:
        names = java_hashmap_order(key, copy_capacity(len(key)))
        ids = resolved[key] = dict.fromkeys(topic_ids[n] for n in names if n in topic_ids).keys()
    return MemberSubscriptionAndAssignmentImpl(
        rack_id=member.rack_id,
        instance_id=member.instance_id,
        subscribed_topic_ids=ids,
        partitions=assignment,
    )
