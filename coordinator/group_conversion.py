"""Online migration between the two group types (KIP-848, Kafka 4.0 at 1eb7644): a non-empty
classic group becomes a consumer group when a ConsumerGroupHeartbeat arrives
(``ConsumerGroup.fromClassicGroup``, ``createConsumerGroupRecords``), and a consumer group whose
last consumer-protocol member leaves becomes a classic group again
(``ClassicGroup.fromConsumerGroup``, ``createClassicGroupRecords``).

Pure conversions: a group in, the other type's group and its records out. What triggers them,
the migration policy and the size limits are GroupMetadataManager's (consumer_group_manager.py).
"""

from __future__ import annotations

from collections.abc import Mapping

from coordinator.assignor.ordering import uuid_order
from coordinator.consumer_group import ConsumerGroup, ConsumerGroupMember, MemberState, Partitions
from coordinator.consumer_protocol import (
    decode_version,
    read_assignment,
    read_subscription,
    write_assignment,
)
from coordinator.group import ClassicGroup, Member
from coordinator.kafka_uuid import Uuid
from coordinator.records import (
    ClassicMemberMetadata,
    ClassicProtocol,
    ConsumerGroupCurrentMemberAssignmentKey,
    ConsumerGroupMemberMetadataKey,
    ConsumerGroupMetadataKey,
    ConsumerGroupPartitionMetadataKey,
    ConsumerGroupTargetAssignmentMemberKey,
    ConsumerGroupTargetAssignmentMetadataKey,
    RecordKey,
    RecordValue,
)
from coordinator.state_machine import STABLE
from coordinator.timeline_order import capacity_for, iteration_order
from coordinator.topology import Topology

CONSUMER_PROTOCOL_TYPE = "consumer"

Entry = tuple[RecordKey, RecordValue]


def members_in_order(group: ConsumerGroup) -> list[ConsumerGroupMember]:
    """``members().forEach``: the order of Kafka's TimelineHashMap of members."""
    order = iteration_order(group.members, capacity_for(group.members_high_water))
    return [group.members[m] for m in order]


def to_partition_map(partitions: list[tuple[str, int]], topology: Topology) -> Partitions:
    """Utils.toTopicPartitionMap: by topic id; topics the metadata does not know are dropped."""
    out: dict[Uuid, set[int]] = {}
    for topic, partition in partitions:
        topic_id = topology.topic_ids.get(topic)
        if topic_id is not None:
            out.setdefault(topic_id, set()).add(partition)
    return {t: frozenset(ps) for t, ps in out.items()}


def assignment_bytes(assignment: Partitions, metadata: bytes, topology: Topology) -> bytes:
    """ConsumerProtocol.serializeAssignment(toConsumerProtocolAssignment(...), version of the
    member's subscription): topics by name in the HashMap's order, deleted topics left out."""
    partitions: list[tuple[str, int]] = []
    for topic_id in uuid_order(assignment):
        name = topology.topic_name(topic_id)
        if name is not None:
            partitions.extend((name, p) for p in sorted(assignment[topic_id]))
    return write_assignment(partitions, None, decode_version(metadata))


def classic_metadata(
    session_timeout_ms: int, protocols: tuple[tuple[str, bytes], ...]
) -> ClassicMemberMetadata:
    """ClassicMemberMetadata (classicProtocolListFromJoinRequestProtocolCollection)."""
    return ClassicMemberMetadata(
        session_timeout_ms, tuple([ClassicProtocol(name, data) for name, data in protocols])
    )


def from_classic_group(classic: ClassicGroup, topology: Topology) -> ConsumerGroup:
    """ConsumerGroup.fromClassicGroup: every member Stable at the generation, its last classic
    assignment as both its target and its current assignment. Raises SchemaError (from
    consumer_protocol) if a member's subscription or assignment does not parse."""
    group = ConsumerGroup(classic.group_id)
    group.set_group_epoch(classic.generation_id)
    group.set_target_assignment_epoch(classic.generation_id)
    for m in classic.iter_members():
        assigned = to_partition_map(read_assignment(m.assignment)[0], topology)
        subscription = read_subscription(m.metadata_for(classic.protocol_name))
        member = ConsumerGroupMember(
            m.member_id,
            member_epoch=classic.generation_id,
            previous_member_epoch=classic.generation_id,
            state=MemberState.STABLE,
            instance_id=m.group_instance_id,
            rack_id=subscription.rack_id,
            rebalance_timeout_ms=m.rebalance_timeout_ms,
            client_id=m.client_id,
            client_host=m.client_host,
            subscribed_topic_names=frozenset(subscription.topics),
            assigned_partitions=assigned,
            classic_member_metadata=classic_metadata(m.session_timeout_ms, m.protocols),
        )
        group.update_target_assignment(m.member_id, assigned)
        group.update_member(member)
    return group


def consumer_group_tombstones(
    group: ConsumerGroup, replaced: Mapping[str, str] | None = None
) -> list[Entry]:
    """ConsumerGroup.createGroupTombstoneRecords (WithReplacedMember: a replaced member's
    tombstones carry the id of the member replacing it)."""
    gid = group.group_id
    ids = [m.member_id for m in members_in_order(group)]
    if replaced:
        ids = [replaced.get(mid, mid) for mid in ids]
    records: list[Entry] = [(ConsumerGroupCurrentMemberAssignmentKey(gid, m), None) for m in ids]
    records.extend((ConsumerGroupTargetAssignmentMemberKey(gid, m), None) for m in ids)
    records.append((ConsumerGroupTargetAssignmentMetadataKey(gid), None))
    records.extend((ConsumerGroupMemberMetadataKey(gid, m), None) for m in ids)
    records.append((ConsumerGroupPartitionMetadataKey(gid), None))
    records.append((ConsumerGroupMetadataKey(gid), None))
    return records


def from_consumer_group(
    group: ConsumerGroup,
    leaving_member_id: str,
    joining: ConsumerGroupMember | None,
    topology: Topology,
    now_ms: int,
) -> ClassicGroup:
    """ClassicGroup.fromConsumerGroup: a Stable classic group at the group epoch with every
    member but the leaving one (and the joining one, which takes the leaving one's target),
    each assigned its target assignment in its own subscription's version."""
    classic = ClassicGroup(
        group_id=group.group_id,
        created_ms=now_ms,
        initial_state=STABLE,
        generation_id=group.group_epoch,
        protocol_type=CONSUMER_PROTOCOL_TYPE,
    )
    converted = [m for m in members_in_order(group) if m.member_id != leaving_member_id]
    if joining is not None:
        converted.append(joining)
    for m in converted:
        metadata = m.classic_member_metadata
        assert metadata is not None  # every member left uses the classic protocol
        classic.add(
            Member(
                member_id=m.member_id,
                group_instance_id=m.instance_id,
                client_id=m.client_id,
                client_host=m.client_host,
                rebalance_timeout_ms=m.rebalance_timeout_ms,
                session_timeout_ms=metadata.session_timeout_ms,
                protocol_type=CONSUMER_PROTOCOL_TYPE,
                protocols=tuple([(p.name, p.metadata) for p in metadata.supported_protocols]),
            )
        )
    classic.protocol_name = classic.select_protocol()
    for member in classic.iter_members():
        source = member.member_id
        if joining is not None and source == joining.member_id:
            source = leaving_member_id
        member.assignment = assignment_bytes(
            group.target_assignment.get(source, {}),
            member.metadata_for(classic.protocol_name),
            topology,
        )
    return classic
