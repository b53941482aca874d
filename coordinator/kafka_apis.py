"""The broker's request handling before the group coordinator: Kafka's KafkaApis.

Every request that reaches a live broker is logged, checked for shape (bad input gets Kafka's
error, never a traceback), and then answered by the broker itself (FindCoordinator, Metadata) or
passed to the GroupCoordinatorService after the broker's own checks: OffsetCommit's partitions
the broker does not know and version 0 (handleOffsetCommitRequest), and SyncGroup v5+ without a
protocol type and name (handleSyncGroupRequest).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import attrs

from coordinator.config import CoordinatorConfig
from coordinator.effects import Send
from coordinator.errors import NO_ERROR, Errors
from coordinator.protocol import (
    KEY_TYPE_GROUP,
    REQUEST_TYPES,
    AddOffsetsToTxnRequest,
    AddOffsetsToTxnResponse,
    ConsumerGroupDescribeRequest,
    ConsumerGroupDescribeResponse,
    ConsumerGroupHeartbeatRequest,
    ConsumerGroupHeartbeatResponse,
    DeleteGroupsRequest,
    DeleteGroupsResponse,
    DescribeGroupsRequest,
    DescribeGroupsResponse,
    EndTxnRequest,
    EndTxnResponse,
    FindCoordinatorRequest,
    FindCoordinatorResponse,
    HeartbeatRequest,
    JoinGroupRequest,
    JoinGroupResponse,
    LeaveGroupRequest,
    ListGroupsRequest,
    ListGroupsResponse,
    MetadataRequest,
    MetadataResponse,
    MetadataResponseBroker,
    MetadataResponsePartition,
    MetadataResponseTopic,
    OffsetCommitRequest,
    OffsetCommitRequestTopic,
    OffsetCommitResponse,
    OffsetCommitResponsePartition,
    OffsetCommitResponseTopic,
    OffsetFetchRequest,
    SyncGroupRequest,
    TxnOffsetCommitRequest,
    TxnOffsetCommitRequestTopic,
    TxnOffsetCommitResponse,
    TxnOffsetCommitResponsePartition,
    TxnOffsetCommitResponseTopic,
    api_name,
    api_name_of,
    error_name,
    request_type,
)
from coordinator.result import NO_RESULT, CoordinatorResult, Step
from coordinator.service import GroupCoordinatorService, GroupRequest, error_response
from coordinator.topics import invalid_topic_reason
from coordinator.topology import OFFSETS_TOPIC, Topology, broker_id
from coordinator.transaction_coordinator import TransactionCoordinator
from coordinator.validation import malformed_reason, request_check

BROKER_PORT = 9092

_GROUP_APIS = (
    JoinGroupRequest,
    SyncGroupRequest,
    HeartbeatRequest,
    LeaveGroupRequest,
    OffsetCommitRequest,
    OffsetFetchRequest,
    TxnOffsetCommitRequest,
    ConsumerGroupHeartbeatRequest,
)

# OffsetCommit and TxnOffsetCommit answer per partition: the response, topic, partition and
# request-topic classes KafkaApis' unknown-partition split builds and merges.
_OFFSET_COMMIT_KINDS = (
    OffsetCommitResponse,
    OffsetCommitResponseTopic,
    OffsetCommitResponsePartition,
    OffsetCommitRequestTopic,
)
_TXN_OFFSET_COMMIT_KINDS = (
    TxnOffsetCommitResponse,
    TxnOffsetCommitResponseTopic,
    TxnOffsetCommitResponsePartition,
    TxnOffsetCommitRequestTopic,
)

# The group APIs go through the service to a shard; the others are answered here.
_GROUP_API_TYPES = frozenset(_GROUP_APIS)


def _exact_type(kind: type) -> tuple[Callable[[Any], str | None], str]:
    check = request_check(kind)
    assert check is not None, kind
    return check, api_name_of(kind)


# Each request type itself -> its shape check and its API name.
_EXACT_TYPES = {kind: _exact_type(kind) for kind in REQUEST_TYPES}


class KafkaApis:
    """The request handler of every broker (they share the cluster's metadata)."""

    def __init__(
        self, *, config: CoordinatorConfig, topology: Topology, service: GroupCoordinatorService
    ) -> None:
        self.config = config
        self.topology = topology
        self.service = service
        self.transactions = TransactionCoordinator(service)
        self._metadata_cache: dict[object, MetadataResponse] = {}

    def handle(
        self, dst: str, src: str, correlation_id: int, request: object, now_ms: int
    ) -> CoordinatorResult:
        """A request arriving at broker ``dst`` (a dead or unknown node answers nothing): logged,
        checked, answered or routed."""
        if not self.topology.alive.get(dst, False):
            return NO_RESULT
        # The shape check is pure, so it may run before the request is logged: once it passed on
        # an instance of a request type itself (slotted, so no extra attributes), the logged
        # fields hold str/int/None only, which _loggable would return unchanged.
        exact = _EXACT_TYPES.get(type(request))
        if exact is not None:
            # a request type itself (the common case): its check and its API name in one lookup,
            # and it is routed as its own type
            check, api = exact
            reason = check(request)
            kind: type | None = type(request)
        else:
            reason = malformed_reason(request)
            api = api_name(request)
            kind = request_type(request)
        if reason is None and exact is not None:
            group_id = getattr(request, "group_id", None)
            member_id = getattr(request, "member_id", None)
            generation_id = getattr(request, "generation_id", None)
            group_instance_id = getattr(request, "group_instance_id", None)
        else:
            group_id = _loggable(getattr(request, "group_id", None))
            member_id = _loggable(getattr(request, "member_id", None))
            generation_id = _loggable(getattr(request, "generation_id", None))
            group_instance_id = _loggable(getattr(request, "group_instance_id", None))
        out = Step(now_ms)
        out.events.append(  # out.event, spelled out: every request is logged
            (
                "request_received",
                {
                    "t_ms": now_ms,
                    "node": dst,
                    "api": api,
                    "src": src,
                    "dst": dst,
                    "correlation_id": correlation_id,
                    "group_id": group_id,
                    "member_id": member_id,
                    "generation_id": generation_id,
                    "group_instance_id": group_instance_id,
                },
            )
        )
        if reason is not None:
            response = malformed_response(request, reason)
            if response is None:
                out.event("request_dropped", t_ms=now_ms, node=dst, api=api, reason=reason)
            else:
                self._reply(out, dst, src, correlation_id, response, request)
            return out.result()
        # A subclass passed the check of the request type it extends (only one can be: the
        # types are slotted, so none can extend two); it is routed as that type.
        if kind in _GROUP_API_TYPES:
            self._group_request(out, dst, src, correlation_id, request, kind)  # type: ignore[arg-type]
            return out.result()
        if isinstance(request, FindCoordinatorRequest):
            response = self._find_coordinator(request)
        elif isinstance(request, MetadataRequest):
            response = self._metadata(request)
        elif isinstance(request, ListGroupsRequest):
            response = self.service.list_groups(dst, request)
        elif isinstance(request, DescribeGroupsRequest):
            response = self.service.describe_groups(dst, request)
        elif isinstance(request, ConsumerGroupDescribeRequest):
            response = self.service.consumer_group_describe(dst, request)
        elif isinstance(request, AddOffsetsToTxnRequest):
            response = self.transactions.add_offsets(request)
        elif isinstance(request, EndTxnRequest):
            response = self.transactions.end_txn(out, request)
        elif isinstance(request, DeleteGroupsRequest):
            # each distinct name once (handleDeleteGroupsRequest)
            names = list(dict.fromkeys(request.groups_names))
            response = self.service.delete_groups(out, dst, names)
        else:  # pragma: no cover - malformed_reason names every other type
            raise TypeError(type(request).__name__)
        self._reply(out, dst, src, correlation_id, response, request)
        return out.result()

    def _reply(
        self, out: Step, dst: str, src: str, correlation_id: int, response: object, request: object
    ) -> None:
        out.event(
            "response_sent",
            t_ms=out.now,
            node=dst,
            api=api_name(response),
            error=error_name(response) or NO_ERROR.name,
            src=dst,
            dst=src,
            correlation_id=correlation_id,
            group_id=_loggable(getattr(request, "group_id", None)),
            member_id=_loggable(getattr(request, "member_id", None)),
            generation_id=getattr(response, "generation_id", None),
        )
        out.effects.append(Send(src=dst, dst=src, correlation_id=correlation_id, message=response))

    def _find_coordinator(self, request: FindCoordinatorRequest) -> FindCoordinatorResponse:
        if request.key_type != KEY_TYPE_GROUP:
            return FindCoordinatorResponse(
                Errors.INVALID_REQUEST, error_message="only group coordinators are simulated"
            )
        leader = self.topology.offsets_leader[self.service.partition_for(request.key)]
        if leader is None or not self.topology.alive[leader]:
            return FindCoordinatorResponse(Errors.COORDINATOR_NOT_AVAILABLE)
        return FindCoordinatorResponse(
            NO_ERROR, node_id=broker_id(leader), host=leader, port=BROKER_PORT
        )

    def _metadata(self, request: MetadataRequest) -> MetadataResponse:
        """Memoised per (request, topics, live brokers): responses are immutable, and the
        simulation runner's benchmark has 1,000 consumers fetching a 100,000-partition topic."""
        key = (
            request.topics,
            tuple(sorted(self.topology.topics.items())),
            tuple(sorted(self.topology.topic_ids.items())),
            tuple(self.topology.alive.values()),
        )
        cache = self._metadata_cache
        response = cache.get(key)
        if response is None:
            if len(cache) >= 64:
                cache.clear()
            response = cache[key] = self._build_metadata(request)
        return response

    def _build_metadata(self, request: MetadataRequest) -> MetadataResponse:
        brokers = tuple(
            MetadataResponseBroker(
                broker_id(node), node, BROKER_PORT, self.topology.broker_racks[i]
            )
            for i, node in enumerate(self.topology.broker_nodes)
            if self.topology.alive[node]
        )
        names = sorted(self.topology.topics) if request.topics is None else list(request.topics)
        topics = []
        for name in names:
            if name not in self.topology.topics:
                # KafkaApis.getTopicMetadata: a name that cannot exist is INVALID_TOPIC_EXCEPTION
                error = (
                    Errors.UNKNOWN_TOPIC_OR_PARTITION
                    if invalid_topic_reason(name) is None
                    else Errors.INVALID_TOPIC_EXCEPTION
                )
                topics.append(MetadataResponseTopic(name, error))
                continue
            parts = []
            for p in range(self.topology.topics[name]):
                replicas = self.topology.replicas(p)
                leader = self.topology.leader_among(replicas)
                parts.append(
                    MetadataResponsePartition(
                        p,
                        broker_id(leader) if leader else -1,
                        tuple(broker_id(r) for r in replicas),
                    )
                )
            topics.append(
                MetadataResponseTopic(
                    name, NO_ERROR, tuple(parts), topic_id=self.topology.topic_ids[name]
                )
            )
        return MetadataResponse(brokers=brokers, topics=tuple(topics))

    def _group_request(
        self,
        out: Step,
        dst: str,
        src: str,
        correlation_id: int,
        request: GroupRequest,
        kind: type | None = None,
    ) -> None:
        """The broker's own checks (``KafkaApis.handleJoinGroupRequest`` and its siblings),
        then the service's (``kind``: the request's ``request_type``, if the caller has it)."""
        if kind is None:
            kind = request_type(request)
        # the isinstance after the type test only narrows the type for mypy (it cannot fail)
        if kind is OffsetCommitRequest and isinstance(request, OffsetCommitRequest):
            unknown = self._unknown_partitions(request)
            if request.api_version == 0 and _has_known_partition(request, unknown):
                # KafkaApis sends version 0 to ZooKeeper, which a KRaft broker (the only kind
                # that runs this coordinator) refuses for the whole request.
                response = error_response(request, Errors.UNSUPPORTED_VERSION)
                return self._reply(out, dst, src, correlation_id, response, request)
            if unknown:
                return self._commit_known_partitions(
                    out, dst, src, correlation_id, request, unknown
                )
        if kind is TxnOffsetCommitRequest and isinstance(request, TxnOffsetCommitRequest):
            return self._txn_offset_commit(out, dst, src, correlation_id, request)
        if (
            kind is SyncGroupRequest
            and isinstance(request, SyncGroupRequest)
            and request.api_version >= 5
            and (request.protocol_type is None or request.protocol_name is None)
        ):
            response = error_response(request, Errors.INCONSISTENT_GROUP_PROTOCOL)
            return self._reply(out, dst, src, correlation_id, response, request)
        response = self.service.handle_group_request(out, dst, src, correlation_id, request, kind)
        if response is not None:
            self._reply(out, dst, src, correlation_id, response, request)
        return None

    def _txn_offset_commit(
        self, out: Step, dst: str, src: str, correlation_id: int, request: TxnOffsetCommitRequest
    ) -> None:
        """KafkaApis.handleTxnOffsetCommitRequest: unknown partitions are answered by the broker
        (merged before the coordinator's answer); below v2 a COORDINATOR_LOAD_IN_PROGRESS becomes
        COORDINATOR_NOT_AVAILABLE (producers before 2.0 could not handle it, KAFKA-7296)."""
        start = len(out.effects)
        unknown = self._unknown_partitions(request)
        if unknown:
            self._commit_known_partitions(
                out, dst, src, correlation_id, request, unknown, _TXN_OFFSET_COMMIT_KINDS
            )
        else:
            response = self.service.handle_group_request(out, dst, src, correlation_id, request)
            if response is not None:
                self._reply(out, dst, src, correlation_id, response, request)
        if request.api_version >= 2:
            return
        effects = out.effects
        for i in range(start, len(effects)):
            effect = effects[i]
            if (
                isinstance(effect, Send)
                and effect.dst == src
                and effect.correlation_id == correlation_id
                and isinstance(effect.message, TxnOffsetCommitResponse)
            ):
                effects[i] = attrs.evolve(effect, message=_loading_as_not_available(effect.message))

    def _unknown_partitions(
        self, request: OffsetCommitRequest | TxnOffsetCommitRequest
    ) -> dict[str, set[int]]:
        """The partitions of an OffsetCommit that the broker's metadata does not have (a topic it
        does not know, or an index beyond the topic's partitions), by topic in request order."""
        unknown: dict[str, set[int]] = {}
        for topic in request.topics:
            count = self.topology.topics.get(topic.name)
            if count is None and topic.name == OFFSETS_TOPIC:
                count = self.config.offsets_topic_num_partitions
            for part in topic.partitions:
                if count is None or not 0 <= part.partition_index < count:
                    unknown.setdefault(topic.name, set()).add(part.partition_index)
        return unknown

    def _commit_known_partitions(
        self,
        out: Step,
        dst: str,
        src: str,
        correlation_id: int,
        request: OffsetCommitRequest | TxnOffsetCommitRequest,
        unknown: dict[str, set[int]],
        kinds: tuple[type, type, type, type] = _OFFSET_COMMIT_KINDS,
    ) -> None:
        """KafkaApis.handleOffsetCommitRequest: partitions the broker does not know are answered
        UNKNOWN_TOPIC_OR_PARTITION by the broker itself; only the others reach the coordinator,
        and its answer is merged after the rejected ones (OffsetCommitResponse.Builder.merge).
        With nothing left to commit, the broker answers at once, coordinator or not."""
        response_kind, topic_kind, partition_kind, request_topic_kind = kinds
        rejected: dict[str, list[object]] = {}
        known = []
        for topic in request.topics:
            bad = unknown.get(topic.name)
            if bad is None:
                known.append(topic)
                continue
            kept = []
            for part in topic.partitions:
                if part.partition_index in bad:
                    rejected.setdefault(topic.name, []).append(
                        partition_kind(part.partition_index, Errors.UNKNOWN_TOPIC_OR_PARTITION)
                    )
                else:
                    kept.append(part)
            if kept:
                known.append(request_topic_kind(topic.name, tuple(kept)))
        if not known:
            response = response_kind(
                tuple(topic_kind(name, parts) for name, parts in rejected.items())
            )
            return self._reply(out, dst, src, correlation_id, response, request)
        forwarded = attrs.evolve(request, topics=tuple(known))
        start = len(out.effects)
        if isinstance(forwarded, TxnOffsetCommitRequest):
            response = self.service.handle_group_request(out, dst, src, correlation_id, forwarded)
            if response is not None:
                self._reply(out, dst, src, correlation_id, response, forwarded)
        else:
            self._group_request(out, dst, src, correlation_id, forwarded)
        effects = out.effects
        for i in range(start, len(effects)):
            effect = effects[i]
            if (
                isinstance(effect, Send)
                and effect.dst == src
                and effect.correlation_id == correlation_id
                and isinstance(effect.message, OffsetCommitResponse | TxnOffsetCommitResponse)
                and type(effect.message) is response_kind
            ):
                merged = {name: list(parts) for name, parts in rejected.items()}
                for answered in effect.message.topics:
                    merged.setdefault(answered.name, []).extend(answered.partitions)
                message = response_kind(
                    tuple(topic_kind(name, parts) for name, parts in merged.items())
                )
                effects[i] = attrs.evolve(effect, message=message)
        return None


def _loading_as_not_available(response: TxnOffsetCommitResponse) -> TxnOffsetCommitResponse:
    """TxnOffsetCommit below v2: COORDINATOR_LOAD_IN_PROGRESS answered as COORDINATOR_NOT_AVAILABLE."""
    return TxnOffsetCommitResponse(
        tuple(
            TxnOffsetCommitResponseTopic(
                t.name,
                tuple(
                    TxnOffsetCommitResponsePartition(
                        p.partition_index, Errors.COORDINATOR_NOT_AVAILABLE
                    )
                    if p.error_code == Errors.COORDINATOR_LOAD_IN_PROGRESS
                    else p
                    for p in t.partitions
                ),
            )
            for t in response.topics
        ),
        response.throttle_time_ms,
    )


def _has_known_partition(request: OffsetCommitRequest, unknown: dict[str, set[int]]) -> bool:
    """Whether an OffsetCommit names a partition the broker knows (``unknown`` are the others)."""
    if not unknown:
        return any(topic.partitions for topic in request.topics)
    return any(
        p.partition_index not in unknown.get(topic.name, ())
        for topic in request.topics
        for p in topic.partitions
    )


def _loggable(value: object) -> str | int | None:
    """Request fields go into JSON logs: anything but str/int/None (bad input) becomes its repr."""
    if (
        value is None
        or isinstance(value, str)
        or (isinstance(value, int) and not isinstance(value, bool))
    ):
        return value
    return repr(value)


def malformed_response(request: object, reason: str) -> object | None:
    """INVALID_REQUEST (or INVALID_GROUP_ID) for a request whose fields have the wrong shape."""
    error = Errors.INVALID_GROUP_ID if reason == "group_id" else Errors.INVALID_REQUEST
    if isinstance(request, FindCoordinatorRequest):
        return FindCoordinatorResponse(Errors.INVALID_REQUEST, error_message=reason)
    if isinstance(request, MetadataRequest):
        return MetadataResponse()
    if isinstance(request, ListGroupsRequest):
        return ListGroupsResponse(Errors.INVALID_REQUEST)
    if isinstance(request, DescribeGroupsRequest):
        return DescribeGroupsResponse(())
    if isinstance(request, DeleteGroupsRequest):
        return DeleteGroupsResponse(())
    if isinstance(request, JoinGroupRequest):
        return JoinGroupResponse(error, member_id="")
    if isinstance(request, ConsumerGroupHeartbeatRequest):
        return ConsumerGroupHeartbeatResponse(Errors.INVALID_REQUEST, error_message=reason)
    if isinstance(request, ConsumerGroupDescribeRequest):
        return ConsumerGroupDescribeResponse(())
    if isinstance(request, AddOffsetsToTxnRequest):
        return AddOffsetsToTxnResponse(Errors.INVALID_REQUEST)
    if isinstance(request, EndTxnRequest):
        return EndTxnResponse(Errors.INVALID_REQUEST)
    if isinstance(request, _GROUP_APIS):
        try:
            return error_response(request, error)
        except (TypeError, AttributeError):
            pass
        # The per-partition shape of OffsetCommit is itself broken: answer with no topics.
        if isinstance(request, OffsetCommitRequest):
            return OffsetCommitResponse(())
        if isinstance(request, TxnOffsetCommitRequest):
            return TxnOffsetCommitResponse(())
    return None
