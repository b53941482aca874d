"""The group coordinator service of the cluster: Kafka's GroupCoordinatorService.

It owns one GroupCoordinatorShard per ``__consumer_offsets`` partition, on the partition's
leader (onElection loads it, onResignation unloads it), routes each group request to its shard
after the service's own checks (group id, session timeout; NOT_COORDINATOR and
COORDINATOR_LOAD_IN_PROGRESS from the routing), and fans the multi-group requests out over the
shards: ListGroups, DescribeGroups, DeleteGroups, and a deleted topic's offsets.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence

from coordinator.config import CoordinatorConfig
from coordinator.effects import Send
from coordinator.errors import NO_ERROR, Errors
from coordinator.java import hashmap_order_by_hash, java_string_hashcode, topic_partition_hashcode
from coordinator.log import OffsetsLog
from coordinator.placement import partition_for
from coordinator.protocol import (
    ConsumerGroupDescribedGroup,
    ConsumerGroupDescribeRequest,
    ConsumerGroupDescribeResponse,
    ConsumerGroupHeartbeatRequest,
    ConsumerGroupHeartbeatResponse,
    DeletableGroupResult,
    DeleteGroupsResponse,
    DescribedGroup,
    DescribeGroupsRequest,
    DescribeGroupsResponse,
    HeartbeatRequest,
    HeartbeatResponse,
    JoinGroupRequest,
    JoinGroupResponse,
    LeaveGroupRequest,
    LeaveGroupResponse,
    ListGroupsRequest,
    ListGroupsResponse,
    OffsetCommitRequest,
    OffsetFetchRequest,
    OffsetFetchResponse,
    SyncGroupRequest,
    SyncGroupResponse,
    TxnOffsetCommitRequest,
    offset_commit_response,
    request_type,
    txn_offset_commit_response,
)
from coordinator.result import Step
from coordinator.shard import GroupCoordinatorShard
from coordinator.topology import OFFSETS_TOPIC, Topology
from coordinator.views import ConsumerGroupView, GroupView

_OFFSETS_TOPIC_HASH = java_string_hashcode(OFFSETS_TOPIC)

GroupRequest = (
    JoinGroupRequest
    | SyncGroupRequest
    | HeartbeatRequest
    | LeaveGroupRequest
    | OffsetCommitRequest
    | OffsetFetchRequest
    | TxnOffsetCommitRequest
    | ConsumerGroupHeartbeatRequest
)

# OffsetCommit/OffsetFetch accept "" as a group id; these reject it (INVALID_GROUP_ID).
_ID_CHECKED_APIS = frozenset(
    (
        JoinGroupRequest,
        SyncGroupRequest,
        HeartbeatRequest,
        LeaveGroupRequest,
        TxnOffsetCommitRequest,
    )
)


def error_response(request: object, error: Errors, *, failed_operation: bool = False) -> object:
    """The response Kafka sends when a request fails as a whole with ``error``.

    GroupCoordinatorService.joinGroup answers its own checks with the request's member id, but a
    failed write operation (the runtime's NOT_COORDINATOR or COORDINATOR_LOAD_IN_PROGRESS, an
    exception of the shard) with an otherwise default response: no member id.
    """
    if isinstance(request, JoinGroupRequest):
        return JoinGroupResponse(error, member_id="" if failed_operation else request.member_id)
    if isinstance(request, SyncGroupRequest):
        return SyncGroupResponse(error)
    if isinstance(request, HeartbeatRequest):
        return HeartbeatResponse(error)
    if isinstance(request, LeaveGroupRequest):
        return LeaveGroupResponse(error)
    if isinstance(request, OffsetCommitRequest):
        return offset_commit_response(request, error)
    if isinstance(request, OffsetFetchRequest):
        return OffsetFetchResponse(error)
    if isinstance(request, TxnOffsetCommitRequest):
        return txn_offset_commit_response(request, error)
    if isinstance(request, ConsumerGroupHeartbeatRequest):
        # handleOperationException: ApiError.fromThrowable drops a message that is the error's
        # default one, as the runtime's NOT_COORDINATOR / COORDINATOR_LOAD_IN_PROGRESS are
        return ConsumerGroupHeartbeatResponse(error)
    raise TypeError(f"no error response for {type(request).__name__}")


class GroupCoordinatorService:
    """The shards, by ``__consumer_offsets`` partition, and the requests spread over them."""

    def __init__(
        self,
        *,
        config: CoordinatorConfig,
        offsets_log: OffsetsLog,
        rng: random.Random,
        is_alive: Callable[[str], bool],
        topology: Topology,
    ) -> None:
        self.config = config
        self.topology = topology
        self.offsets_log = offsets_log
        self.rng = rng
        self._is_alive = is_alive
        self._partition_cache: dict[str, int] = {}
        # per-broker configs that differ from ``config`` (a broker restarted with new settings)
        self.broker_configs: dict[str, CoordinatorConfig] = {}
        # The coordinator shard of each partition, on its leader.
        self.shards: dict[int, GroupCoordinatorShard] = {}

    def partition_for(self, group_id: str) -> int:
        p = self._partition_cache.get(group_id)
        if p is None:
            p = partition_for(group_id, self.config.offsets_topic_num_partitions)
            if len(self._partition_cache) < 1_000_000:
                self._partition_cache[group_id] = p
        return p

    def shard_for(self, group_id: str) -> GroupCoordinatorShard | None:
        return self.shards.get(self.partition_for(group_id))

    # --- elections (onElection / onResignation) ------------------------------------------------

    def start(self, p: int, node: str) -> None:
        """The cluster's start: ``node`` leads partition ``p``, loaded, with nothing to replay."""
        shard = self._new_shard(p, node)
        shard.finish_load(0, quiet=True)
        self.shards[p] = shard

    def on_resignation(self, out: Step, p: int) -> str | None:
        """The leader of ``p`` lost it: its shard unloads (a dead broker answers nobody: its
        parked requests die with its connections). Returns the node that led it, if any."""
        old = self.shards.pop(p, None)
        if old is None:
            return None
        unloaded = old.unload(out.now)
        if self._is_alive(old.node):
            out.add(unloaded)
        else:
            out.effects.extend(e for e in unloaded.effects if not isinstance(e, Send))
            out.events.extend(unloaded.events)
        return old.node

    def on_election(self, out: Step, p: int, node: str) -> None:
        """``node`` became the leader of ``p``: a new shard replays the partition."""
        shard = self._new_shard(p, node)
        self.shards[p] = shard
        out.add(shard.begin_load(out.now))

    def config_of(self, node: str) -> CoordinatorConfig:
        """The configuration ``node`` runs with: its own since it was restarted with one, else
        the cluster's. Each broker reads its ``server.properties`` at start (KafkaConfig), so
        brokers of one cluster can disagree during a rolling restart."""
        return self.broker_configs.get(node, self.config)

    def _new_shard(self, p: int, node: str) -> GroupCoordinatorShard:
        return GroupCoordinatorShard(
            partition=p,
            node=node,
            config=self.config_of(node),
            log=self.offsets_log,
            rng=self.rng,
            topology=self.topology,
        )

    # --- group requests --------------------------------------------------------------------------

    def routed_shard(self, dst: str, group_id: str) -> tuple[GroupCoordinatorShard | None, Errors]:
        """The runtime's routing: the loaded shard of ``group_id`` on ``dst``, or the error."""
        p = self._partition_cache.get(group_id)  # partition_for's cache: no call when it hits
        shard = self.shards.get(p if p is not None else self.partition_for(group_id))
        if shard is None or shard.node != dst:
            return None, Errors.NOT_COORDINATOR
        if shard.loading:
            return None, Errors.COORDINATOR_LOAD_IN_PROGRESS
        return shard, NO_ERROR

    def handle_group_request(
        self,
        out: Step,
        dst: str,
        src: str,
        correlation_id: int,
        request: GroupRequest,
        kind: type | None = None,
    ) -> object | None:
        """The service's checks, then the shard. Returns the response to send now when the
        request fails before reaching a shard, else None (the shard answered or parked it).
        ``kind``: the request's ``request_type``, if the caller has it.
        """
        if kind is None:
            kind = request_type(request)
        # isGroupIdNotEmpty (Join/Sync/Heartbeat/Leave), then JoinGroup's session timeout
        if kind in _ID_CHECKED_APIS and request.group_id == "":
            return error_response(request, Errors.INVALID_GROUP_ID)
        if (
            kind is JoinGroupRequest
            and isinstance(request, JoinGroupRequest)  # cannot fail: narrows the type for mypy
            and not (
                self.config.group_min_session_timeout_ms
                <= request.session_timeout_ms
                <= self.config.group_max_session_timeout_ms
            )
        ):
            return error_response(request, Errors.INVALID_SESSION_TIMEOUT)
        shard, error = self.routed_shard(dst, request.group_id)
        if shard is None:
            if kind is HeartbeatRequest and error == Errors.COORDINATOR_LOAD_IN_PROGRESS:
                error = NO_ERROR  # "respond blindly" while loading
            return error_response(request, error, failed_operation=True)
        shard.handle_into(out, src, correlation_id, request, kind)
        return None

    # --- fan-out -------------------------------------------------------------------------------

    def list_groups(self, dst: str, request: ListGroupsRequest) -> ListGroupsResponse:
        """listGroups: every coordinator this broker runs is read.

        One that is still loading fails the whole request: the combined future fails and the
        response is the error alone, without the other coordinators' groups.
        """
        listed = []
        for p in sorted(self.shards):
            shard = self.shards[p]
            if shard.node != dst:
                continue
            if shard.loading:
                return ListGroupsResponse(Errors.COORDINATOR_LOAD_IN_PROGRESS)
            listed.extend(shard.list_groups(request.states_filter))
        # each coordinator's groups in its map's order (GroupMetadataManager.listGroups); the
        # coordinators by partition (Kafka: the order of the runtime's partitions map)
        return ListGroupsResponse(NO_ERROR, tuple(listed))

    def _by_partition(self, group_ids: Sequence[str]) -> list[list[str]]:
        """The group ids by ``__consumer_offsets`` partition, each list in the given order.

        describeGroups/deleteGroups collect them in a ``HashMap<TopicPartition, List<String>>``
        and answer partition by partition in that map's iteration order (TopicPartition.hashCode
        is ``31 * (31 + partition) + topic.hashCode()``).
        """
        by_partition: dict[int, list[str]] = {}
        for group_id in group_ids:
            by_partition.setdefault(self.partition_for(group_id), []).append(group_id)
        lists = list(by_partition.values())
        if len(lists) < 2:
            return lists
        hashes = [topic_partition_hashcode(_OFFSETS_TOPIC_HASH, p) for p in by_partition]
        return [lists[i] for i in hashmap_order_by_hash(hashes)]

    def describe_groups(self, dst: str, request: DescribeGroupsRequest) -> DescribeGroupsResponse:
        out: list[DescribedGroup] = []
        for group_ids in self._by_partition(request.groups):
            shard, error = self.routed_shard(dst, group_ids[0])
            if shard is None:
                out.extend(DescribedGroup(error, group_id) for group_id in group_ids)
            else:
                out.extend(shard.describe_group(group_id) for group_id in group_ids)
        return DescribeGroupsResponse(tuple(out))

    def consumer_group_describe(
        self, dst: str, request: ConsumerGroupDescribeRequest
    ) -> ConsumerGroupDescribeResponse:
        """consumerGroupDescribe: an empty id is answered INVALID_GROUP_ID with a null group id
        first (isGroupIdNotEmpty, before the routing); then the groups by coordinator, each
        shard's answer or its routing error (without a message: ApiError.fromThrowable drops
        the default one).

        Kafka's defect, not copied (docs/oracle.md): each coordinator's read operation is given
        the request's whole id list (``groupIds``, not the partition's ``groupList``), so an
        empty id is described a second time (GROUP_ID_NOT_FOUND), as would be, with several
        partitions, every group of another coordinator."""
        out = [
            ConsumerGroupDescribedGroup(Errors.INVALID_GROUP_ID, None)
            for group_id in request.group_ids
            if not group_id
        ]
        valid = [group_id for group_id in request.group_ids if group_id]
        for group_ids in self._by_partition(valid):
            shard, error = self.routed_shard(dst, group_ids[0])
            if shard is None:
                out.extend(ConsumerGroupDescribedGroup(error, group_id) for group_id in group_ids)
            else:
                out.extend(shard.consumer_group_describe(group_ids))
        return ConsumerGroupDescribeResponse(out)

    def on_topics_changed(self, topic: str) -> None:
        """onNewMetadataImage: every loaded coordinator's consumer groups subscribed to
        ``topic`` refresh their subscription metadata on their next heartbeat."""
        for p in sorted(self.shards):
            self.shards[p].consumer_group_manager.on_topics_changed(topic)

    def delete_groups(self, out: Step, dst: str, names: list[str]) -> DeleteGroupsResponse:
        """deleteGroups: one write operation per coordinator, for all of its groups
        (GroupCoordinatorShard.deleteGroups)."""
        errors: dict[str, Errors] = {}
        for group_ids in self._by_partition(names):
            shard, error = self.routed_shard(dst, group_ids[0])
            if shard is None:
                errors.update(dict.fromkeys(group_ids, error))
                continue
            results, more = shard.delete_groups(group_ids, out.now)
            out.add(more)
            errors.update(zip(group_ids, results, strict=True))
        return DeleteGroupsResponse(
            tuple(DeletableGroupResult(group_id, error) for group_id, error in errors.items())
        )

    def on_partitions_deleted(self, out: Step, topic: str) -> None:
        """onPartitionsDeleted: every live coordinator tombstones the groups' offsets of
        ``topic`` (OffsetMetadataManager.onPartitionsDeleted)."""
        for p in sorted(self.shards):
            shard = self.shards[p]
            if self._is_alive(shard.node):
                out.add(shard.delete_offsets_of_topic(topic, out.now))

    def complete_transaction(self, out: Step, p: int, producer_id: int, commit: bool) -> Errors:
        """completeTransaction: the transaction coordinator writes the marker of
        ``producer_id``'s transaction to offsets partition ``p`` (WriteTxnMarkers). Without a
        live, loaded coordinator of ``p`` it fails (NOT_COORDINATOR, COORDINATOR_LOAD_IN_PROGRESS)
        and the transaction coordinator retries later."""
        shard = self.shards.get(p)
        if shard is None or not self._is_alive(shard.node):
            return Errors.NOT_COORDINATOR
        if shard.loading:
            return Errors.COORDINATOR_LOAD_IN_PROGRESS
        error, result = shard.complete_transaction(producer_id, commit, out.now)
        out.add(result)
        return error

    # --- queries -------------------------------------------------------------------------------

    def group(self, group_id: str) -> GroupView | None:
        shard = self.shard_for(group_id)
        return shard.view(group_id) if shard is not None else None

    def consumer_group(self, group_id: str) -> ConsumerGroupView | None:
        shard = self.shard_for(group_id)
        return shard.consumer_group_view(group_id) if shard is not None else None

    def groups(self) -> list[GroupView]:
        out: list[GroupView] = []
        for p in sorted(self.shards):
            out.extend(self.shards[p].views())
        return sorted(out, key=lambda v: v.group_id)

    def committed_offsets(self, group_id: str) -> dict[tuple[str, int], int]:
        shard = self.shard_for(group_id)
        return shard.committed_offsets(group_id) if shard is not None else {}

    def coordinator_for(self, group_id: str) -> str | None:
        """The broker leading (and done loading) the group's offsets partition."""
        shard = self.shard_for(group_id)
        if shard is None or shard.loading:
            return None
        return shard.node
