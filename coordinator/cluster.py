"""A Kafka cluster as ONE sans-I/O object: brokers, topics, ``__consumer_offsets`` and its coordinators.

The runner delivers requests (``handle_request``) and fired timers (``handle_timer``) and carries
out the returned effects. Every timer key is namespaced by the broker that owns it
(``"broker-1/heartbeat-g1-m1"``, ``"broker-2/load-17"``) so the runner keeps a single timer heap.

Deterministic choices (documented in docs/coordinator.md):

* replica placement: partition ``p`` of every topic (``__consumer_offsets`` included) has replicas
  ``[(p + j) % num_brokers for j in range(min(replication_factor, num_brokers))]``; the first one
  is the preferred leader;
* leader election: the first live replica in that order (every live replica is in sync);
* a restarted broker comes back as a follower; it becomes leader only of partitions that had no
  live replica (as Kafka's unclean-free election would) or when ``elect_preferred_leaders`` runs
  (Kafka's ``auto.leader.rebalance.enable`` does that every 300 s; here it is explicit);
* ``__consumer_offsets`` exists from the start (Kafka creates it on the first FindCoordinator);
* a new leader of an offsets partition replays it for ``config.load_time_ms``.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence

import attrs
import structlog

from coordinator.config import CoordinatorConfig
from coordinator.effects import Effect, Send
from coordinator.errors import Errors
from coordinator.java_hashmap import iteration_order_by_hash
from coordinator.log import OffsetsLog
from coordinator.placement import java_string_hashcode, partition_for
from coordinator.protocol import (
    KEY_TYPE_GROUP,
    DeletableGroupResult,
    DeleteGroupsRequest,
    DeleteGroupsResponse,
    DescribedGroup,
    DescribeGroupsRequest,
    DescribeGroupsResponse,
    FindCoordinatorRequest,
    FindCoordinatorResponse,
    HeartbeatRequest,
    HeartbeatResponse,
    JoinGroupRequest,
    JoinGroupResponse,
    LeaveGroupRequest,
    LeaveGroupResponse,
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
    OffsetFetchResponse,
    SyncGroupRequest,
    SyncGroupResponse,
    api_name,
    offset_commit_response,
    response_error,
)
from coordinator.shard import GroupShard
from coordinator.topics import invalid_topic_reason
from coordinator.validation import malformed_reason
from coordinator.views import GroupView

OFFSETS_TOPIC = "__consumer_offsets"
_OFFSETS_TOPIC_HASH = java_string_hashcode(OFFSETS_TOPIC)
DEFAULT_CONFIG = CoordinatorConfig()
BROKER_PORT = 9092

_GROUP_APIS = (
    JoinGroupRequest,
    SyncGroupRequest,
    HeartbeatRequest,
    LeaveGroupRequest,
    OffsetCommitRequest,
    OffsetFetchRequest,
)

GroupRequest = (
    JoinGroupRequest
    | SyncGroupRequest
    | HeartbeatRequest
    | LeaveGroupRequest
    | OffsetCommitRequest
    | OffsetFetchRequest
)

# Every request type (exactly; subclasses are checked and routed as the type they extend).
_REQUEST_TYPES = frozenset(
    (
        *_GROUP_APIS,
        FindCoordinatorRequest,
        MetadataRequest,
        ListGroupsRequest,
        DescribeGroupsRequest,
        DeleteGroupsRequest,
    )
)

# OffsetCommit/OffsetFetch accept "" as a group id; these four reject it (INVALID_GROUP_ID).
_ID_CHECKED_APIS = frozenset(
    (JoinGroupRequest, SyncGroupRequest, HeartbeatRequest, LeaveGroupRequest)
)


def broker_name(node_id: int) -> str:
    return f"broker-{node_id}"


def broker_id(node: str) -> int:
    """``"broker-3"`` -> 3; -1 for anything that is not a broker name."""
    prefix, _, number = node.partition("-")
    if prefix != "broker" or not number.isdigit():
        return -1
    return int(number)


class KafkaCluster:
    """N brokers, user topics and the ``__consumer_offsets`` coordinators, driven by the runner."""

    def __init__(
        self,
        *,
        num_brokers: int = 3,
        config: CoordinatorConfig = DEFAULT_CONFIG,
        topics: Mapping[str, int] | None = None,
        broker_racks: Sequence[str | None] | None = None,
        replication_factor: int = 3,
        seed: int = 0,
        logger=None,
        rng: random.Random | None = None,
    ) -> None:
        """``rng`` draws the member ids' UUIDs (default ``random.Random(seed)``); a replay of
        Kafka's recorded answers passes one that repeats the recording's ids."""
        if not isinstance(num_brokers, int) or num_brokers < 1:
            raise ValueError(f"num_brokers must be a positive integer, got {num_brokers!r}")
        if not isinstance(replication_factor, int) or replication_factor < 1:
            raise ValueError(f"replication_factor must be positive, got {replication_factor!r}")
        if broker_racks is not None and len(broker_racks) != num_brokers:
            raise ValueError(
                f"broker_racks has {len(broker_racks)} entries for {num_brokers} brokers"
            )
        self.config = config
        self.broker_nodes: tuple[str, ...] = tuple(broker_name(i) for i in range(num_brokers))
        self.broker_racks: tuple[str | None, ...] = (
            tuple(broker_racks) if broker_racks is not None else (None,) * num_brokers
        )
        self.replication_factor = min(replication_factor, num_brokers)
        self.rng = rng if rng is not None else random.Random(seed)
        logger = logger if logger is not None else structlog.get_logger("groupsim")
        # A lazy proxy (wrap_logger/get_logger) re-binds on every call; bind it once.
        self.log = logger.bind() if hasattr(logger, "bind") else logger
        self._partition_cache: dict[str, int] = {}
        self.offsets_log = OffsetsLog(config.offsets_topic_num_partitions)
        self._alive: dict[str, bool] = {node: True for node in self.broker_nodes}
        self._topics: dict[str, int] = {}
        n = config.offsets_topic_num_partitions
        # Leader of each __consumer_offsets partition (a node name, or None when no replica lives).
        self._offsets_leader: list[str | None] = [self._replicas(p)[0] for p in range(n)]
        # The coordinator shard of each partition, on its leader; loaded from the start.
        self._shards: dict[int, GroupShard] = {}
        for p in range(n):
            shard = self._new_shard(p, self._offsets_leader[p])
            shard.finish_load(0, quiet=True)
            self._shards[p] = shard
        for name, count in (topics or {}).items():
            self.create_topic(name, count)

    # --- topology ------------------------------------------------------------------------------

    def _replicas(self, partition: int) -> tuple[str, ...]:
        n = len(self.broker_nodes)
        return tuple(self.broker_nodes[(partition + j) % n] for j in range(self.replication_factor))

    def replicas_of(self, topic: str, partition: int) -> tuple[str, ...]:
        """Replica nodes of a partition, preferred leader first (the same rule for every topic)."""
        return self._replicas(partition)

    def _leader_among(self, replicas: Sequence[str]) -> str | None:
        for node in replicas:
            if self._alive[node]:
                return node
        return None

    def is_alive(self, node: str) -> bool:
        return self._alive.get(node, False)

    def offsets_partition_leader(self, partition: int) -> str | None:
        return self._offsets_leader[partition]

    def partition_for(self, group_id: str) -> int:
        p = self._partition_cache.get(group_id)
        if p is None:
            p = partition_for(group_id, self.config.offsets_topic_num_partitions)
            if len(self._partition_cache) < 1_000_000:
                self._partition_cache[group_id] = p
        return p

    def coordinator_for(self, group_id: str) -> str | None:
        """The broker currently leading (and done loading) the group's offsets partition."""
        p = self.partition_for(group_id)
        shard = self._shards.get(p)
        if shard is None or shard.loading:
            return None
        return shard.node

    # --- topics --------------------------------------------------------------------------------

    def create_topic(self, name: str, partitions: int) -> None:
        """CreateTopics: an illegal name is refused as Kafka's controller refuses it
        (Topic.validate: INVALID_TOPIC_EXCEPTION), with the reason in Kafka's words."""
        if not isinstance(name, str):
            raise ValueError(f"a topic name must be a string, got {name!r}")
        reason = invalid_topic_reason(name)
        if reason is not None:
            raise ValueError(f"cannot create topic {name!r}: {reason} (INVALID_TOPIC_EXCEPTION)")
        if name == OFFSETS_TOPIC:
            raise ValueError(f"cannot create topic {name!r}: it is the internal offsets topic")
        if not isinstance(partitions, int) or partitions < 1:
            raise ValueError(f"a topic needs at least one partition, got {partitions!r}")
        if name in self._topics:
            raise ValueError(f"topic {name!r} already exists")
        self._topics[name] = partitions

    def add_partitions(self, name: str, count: int) -> None:
        """Grow a topic to ``count`` partitions in total (Kafka's CreatePartitions semantics)."""
        if name not in self._topics:
            raise ValueError(f"unknown topic {name!r}")
        if not isinstance(count, int) or count <= self._topics[name]:
            raise ValueError(
                f"topic {name!r} has {self._topics[name]} partitions; the new total must be "
                f"larger, got {count!r}"
            )
        self._topics[name] = count

    def delete_topic(self, name: str, now_ms: int = 0) -> list[Effect]:
        """Delete a topic; every group's committed offsets of it get tombstones.

        Kafka's broker tells the group coordinator of the deleted partitions
        (GroupCoordinatorService.onPartitionsDeleted), and each loaded coordinator writes the
        tombstones (OffsetMetadataManager.onPartitionsDeleted).
        """
        if name not in self._topics:
            raise ValueError(f"unknown topic {name!r}")
        del self._topics[name]
        effects: list[Effect] = []
        for p in sorted(self._shards):
            shard = self._shards[p]
            if self._alive[shard.node]:
                effects += shard.delete_offsets_of_topic(name, now_ms)
        return effects

    def topics(self) -> dict[str, int]:
        return dict(self._topics)

    # --- queries -------------------------------------------------------------------------------

    def group(self, group_id: str) -> GroupView | None:
        shard = self._shards.get(self.partition_for(group_id))
        if shard is None:
            return None
        return shard.view(group_id)

    def groups(self) -> list[GroupView]:
        out: list[GroupView] = []
        for p in sorted(self._shards):
            out.extend(self._shards[p].views())
        return sorted(out, key=lambda v: v.group_id)

    def committed_offsets(self, group_id: str) -> dict[tuple[str, int], int]:
        """The group's committed offsets as the coordinator holds them ({(topic, p): offset})."""
        shard = self._shards.get(self.partition_for(group_id))
        if shard is None:
            return {}
        return shard.committed_offsets(group_id)

    # --- fault injection -----------------------------------------------------------------------

    def fail_next_append(self, error: Errors, count: int = 1) -> None:
        """Make the next ``count`` appends to ``__consumer_offsets`` fail with ``error``."""
        self.offsets_log.fail_next_append(error, count)

    # --- brokers -------------------------------------------------------------------------------

    def fail_broker(self, node: str, now_ms: int) -> list[Effect]:
        """Kill ``node``: leadership of its offsets partitions moves to the next live replica."""
        if node not in self._alive:
            raise ValueError(f"unknown broker {node!r}")
        if not self._alive[node]:
            return []
        self._alive[node] = False
        self.log.info("broker_failed", t_ms=now_ms, node=node)
        return self._reelect(now_ms, lost=node)

    def restart_broker(self, node: str, now_ms: int) -> list[Effect]:
        """Bring ``node`` back as a follower; it leads only partitions that had no live replica."""
        if node not in self._alive:
            raise ValueError(f"unknown broker {node!r}")
        if self._alive[node]:
            return []
        self._alive[node] = True
        self.log.info("broker_restarted", t_ms=now_ms, node=node)
        return self._reelect(now_ms, lost=None)

    def elect_preferred_leaders(self, now_ms: int) -> list[Effect]:
        """Move every offsets partition back to its preferred (first) replica if it is alive."""
        effects: list[Effect] = []
        for p in range(len(self._offsets_leader)):
            preferred = self._replicas(p)[0]
            if self._alive[preferred] and self._offsets_leader[p] != preferred:
                effects += self._move_leadership(p, preferred, now_ms)
        return effects

    def _reelect(self, now_ms: int, lost: str | None) -> list[Effect]:
        effects: list[Effect] = []
        for p, current in enumerate(self._offsets_leader):
            if current is not None and current != lost:
                continue
            new = self._leader_among(self._replicas(p))
            if new != current:
                effects += self._move_leadership(p, new, now_ms)
        return effects

    def _move_leadership(self, p: int, new: str | None, now_ms: int) -> list[Effect]:
        effects: list[Effect] = []
        old_shard = self._shards.pop(p, None)
        if old_shard is not None:
            unloaded = old_shard.unload(now_ms)
            if not self._alive[old_shard.node]:
                # A dead broker answers nobody: its parked requests die with its connections.
                unloaded = [e for e in unloaded if not isinstance(e, Send)]
            effects += unloaded
        self._offsets_leader[p] = new
        self.log.info(
            "partition_leader_changed",
            t_ms=now_ms,
            node=new or "-",
            partition=p,
            leader_from=old_shard.node if old_shard else None,
            leader_to=new,
        )
        if new is not None:
            shard = self._new_shard(p, new)
            self._shards[p] = shard
            effects += shard.begin_load(now_ms)
        return effects

    def _new_shard(self, p: int, node: str | None) -> GroupShard:
        assert node is not None
        return GroupShard(
            partition=p,
            node=node,
            config=self.config,
            log=self.offsets_log,
            rng=self.rng,
            logger=self.log,
        )

    # --- timers --------------------------------------------------------------------------------

    def handle_timer(self, key: str, now_ms: int) -> list[Effect]:
        node, sep, _ = key.partition("/")
        if not sep or not self._alive.get(node, False):
            return []
        for shard in self._shards.values():
            if shard.node == node and shard.owns_timer(key):
                return shard.fire_timer(key, now_ms)
        return []

    # --- requests ------------------------------------------------------------------------------

    def handle_request(
        self, dst: str, src: str, correlation_id: int, request: object, now_ms: int
    ) -> list[Effect]:
        if not self._alive.get(dst, False):
            return []
        # The shape check is pure, so it may run before the request is logged: once it passed on
        # an instance of a request type itself (slotted, so no extra attributes), the logged
        # fields hold str/int/None only, which _loggable would return unchanged.
        reason = malformed_reason(request)
        if reason is None and type(request) in _REQUEST_TYPES:
            group_id = getattr(request, "group_id", None)
            member_id = getattr(request, "member_id", None)
            generation_id = getattr(request, "generation_id", None)
            group_instance_id = getattr(request, "group_instance_id", None)
        else:
            group_id = _loggable(getattr(request, "group_id", None))
            member_id = _loggable(getattr(request, "member_id", None))
            generation_id = _loggable(getattr(request, "generation_id", None))
            group_instance_id = _loggable(getattr(request, "group_instance_id", None))
        api = api_name(request)
        self.log.info(
            "request_received",
            t_ms=now_ms,
            node=dst,
            api=api,
            src=src,
            dst=dst,
            correlation_id=correlation_id,
            group_id=group_id,
            member_id=member_id,
            generation_id=generation_id,
            group_instance_id=group_instance_id,
        )
        if reason is not None:
            response = _malformed_response(request, reason)
            if response is None:
                self.log.info("request_dropped", t_ms=now_ms, node=dst, api=api, reason=reason)
                return []
            return [self._reply(dst, src, correlation_id, response, now_ms, request)]
        kind = type(request)
        if kind not in _REQUEST_TYPES:
            # A subclass passed the check of the request type it extends (only one can be: the
            # types are slotted, so none can extend two); it is routed as that type.
            kind = next(c for c in kind.__mro__ if c in _REQUEST_TYPES)
        if kind in _GROUP_APIS:
            return self._group_request(dst, src, correlation_id, request, kind, now_ms)
        if kind is FindCoordinatorRequest:
            response = self._find_coordinator(request)
        elif kind is MetadataRequest:
            response = self._metadata(request)
        elif kind is ListGroupsRequest:
            response = self._list_groups(dst, request)
        elif kind is DescribeGroupsRequest:
            response = self._describe_groups(dst, request)
        else:  # DeleteGroupsRequest
            return self._delete_groups(dst, src, correlation_id, request, now_ms)
        return [self._reply(dst, src, correlation_id, response, now_ms, request)]

    def _reply(
        self, dst: str, src: str, correlation_id: int, response: object, now_ms: int, request
    ) -> Send:
        self.log.info(
            "response_sent",
            t_ms=now_ms,
            node=dst,
            api=api_name(response),
            error=_error_name(response),
            src=dst,
            dst=src,
            correlation_id=correlation_id,
            group_id=_loggable(getattr(request, "group_id", None)),
            member_id=_loggable(getattr(request, "member_id", None)),
            generation_id=getattr(response, "generation_id", None),
        )
        return Send(src=dst, dst=src, correlation_id=correlation_id, message=response)

    def _find_coordinator(self, request: FindCoordinatorRequest) -> FindCoordinatorResponse:
        if request.key_type != KEY_TYPE_GROUP:
            return FindCoordinatorResponse(
                Errors.INVALID_REQUEST, error_message="only group coordinators are simulated"
            )
        leader = self._offsets_leader[self.partition_for(request.key)]
        if leader is None or not self._alive[leader]:
            return FindCoordinatorResponse(Errors.COORDINATOR_NOT_AVAILABLE)
        return FindCoordinatorResponse(
            Errors.NONE, node_id=broker_id(leader), host=leader, port=BROKER_PORT
        )

    def _metadata(self, request: MetadataRequest) -> MetadataResponse:
        """Memoised per (request, topics, live brokers): responses are immutable, and the
        simulation runner's benchmark has 1,000 consumers fetching a 100,000-partition topic."""
        key = (request.topics, tuple(sorted(self._topics.items())), tuple(self._alive.values()))
        cache = self.__dict__.setdefault("_metadata_cache", {})
        response = cache.get(key)
        if response is None:
            if len(cache) >= 64:
                cache.clear()
            response = cache[key] = self._build_metadata(request)
        return response

    def _build_metadata(self, request: MetadataRequest) -> MetadataResponse:
        brokers = tuple(
            MetadataResponseBroker(broker_id(node), node, BROKER_PORT, self.broker_racks[i])
            for i, node in enumerate(self.broker_nodes)
            if self._alive[node]
        )
        names = sorted(self._topics) if request.topics is None else list(request.topics)
        topics = []
        for name in names:
            if name not in self._topics:
                # KafkaApis.getTopicMetadata: a name that cannot exist is INVALID_TOPIC_EXCEPTION
                error = (
                    Errors.UNKNOWN_TOPIC_OR_PARTITION
                    if invalid_topic_reason(name) is None
                    else Errors.INVALID_TOPIC_EXCEPTION
                )
                topics.append(MetadataResponseTopic(name, error))
                continue
            parts = []
            for p in range(self._topics[name]):
                replicas = self.replicas_of(name, p)
                leader = self._leader_among(replicas)
                parts.append(
                    MetadataResponsePartition(
                        p,
                        broker_id(leader) if leader else -1,
                        tuple(broker_id(r) for r in replicas),
                    )
                )
            topics.append(MetadataResponseTopic(name, Errors.NONE, tuple(parts)))
        return MetadataResponse(brokers=brokers, topics=tuple(topics))

    def _list_groups(self, dst: str, request: ListGroupsRequest) -> ListGroupsResponse:
        """GroupCoordinatorService.listGroups: every coordinator this broker runs is read.

        One that is still loading fails the whole request: the combined future fails and the
        response is the error alone, without the other coordinators' groups.
        """
        listed = []
        for p in sorted(self._shards):
            shard = self._shards[p]
            if shard.node != dst:
                continue
            if shard.loading:
                return ListGroupsResponse(Errors.COORDINATOR_LOAD_IN_PROGRESS)
            listed.extend(shard.list_groups(request.states_filter))
        return ListGroupsResponse(Errors.NONE, tuple(sorted(listed, key=lambda g: g.group_id)))

    def _routed_shard(self, dst: str, group_id: str) -> tuple[GroupShard | None, Errors]:
        p = self._partition_cache.get(group_id)  # partition_for's cache: no call when it hits
        shard = self._shards.get(p if p is not None else self.partition_for(group_id))
        if shard is None or shard.node != dst:
            return None, Errors.NOT_COORDINATOR
        if shard.loading:
            return None, Errors.COORDINATOR_LOAD_IN_PROGRESS
        return shard, Errors.NONE

    def _by_partition(self, group_ids: Sequence[str]) -> list[list[str]]:
        """The group ids by ``__consumer_offsets`` partition, each list in the given order.

        GroupCoordinatorService.describeGroups/deleteGroups collect them in a
        ``HashMap<TopicPartition, List<String>>`` and answer partition by partition in that map's
        iteration order (TopicPartition.hashCode is ``31 * (31 + partition) + topic.hashCode()``).
        """
        by_partition: dict[int, list[str]] = {}
        for group_id in group_ids:
            by_partition.setdefault(self.partition_for(group_id), []).append(group_id)
        lists = list(by_partition.values())
        if len(lists) < 2:
            return lists
        hashes = [31 * (31 + p) + _OFFSETS_TOPIC_HASH for p in by_partition]  # spread() wraps it
        return [lists[i] for i in iteration_order_by_hash(hashes)]

    def _describe_groups(self, dst: str, request: DescribeGroupsRequest) -> DescribeGroupsResponse:
        out = []
        for group_ids in self._by_partition(request.groups):
            shard, error = self._routed_shard(dst, group_ids[0])
            if shard is None:
                out.extend(DescribedGroup(error, group_id) for group_id in group_ids)
            else:
                out.extend(shard.describe_group(group_id) for group_id in group_ids)
        return DescribeGroupsResponse(tuple(out))

    def _delete_groups(
        self, dst: str, src: str, correlation_id: int, request: DeleteGroupsRequest, now_ms: int
    ) -> list[Effect]:
        """KafkaApis.handleDeleteGroupsRequest (each distinct name once), then
        GroupCoordinatorService.deleteGroups: one write operation per coordinator, for all of
        its groups (GroupCoordinatorShard.deleteGroups)."""
        effects: list[Effect] = []
        names = list(dict.fromkeys(request.groups_names))
        errors: dict[str, Errors] = {}
        for group_ids in self._by_partition(names):
            shard, error = self._routed_shard(dst, group_ids[0])
            if shard is None:
                errors.update(dict.fromkeys(group_ids, error))
                continue
            results, more = shard.delete_groups(group_ids, now_ms)
            effects += more
            errors.update(zip(group_ids, results, strict=True))
        response = DeleteGroupsResponse(
            tuple(DeletableGroupResult(group_id, error) for group_id, error in errors.items())
        )
        return [*effects, self._reply(dst, src, correlation_id, response, now_ms, request)]

    def _group_request(
        self,
        dst: str,
        src: str,
        correlation_id: int,
        request: GroupRequest,
        kind: type[GroupRequest],
        now_ms: int,
    ) -> list[Effect]:
        """The up-front checks of GroupCoordinatorService (§1.3), then the shard.

        ``kind`` is the group API's request type (``request`` is one, or extends it).
        """
        if kind is OffsetCommitRequest:
            unknown = self._unknown_partitions(request)
            if request.api_version == 0 and _has_known_partition(request, unknown):
                # KafkaApis sends version 0 to ZooKeeper, which a KRaft broker (the only kind
                # that runs this coordinator) refuses for the whole request.
                response = _error_response(request, Errors.UNSUPPORTED_VERSION)
                return [self._reply(dst, src, correlation_id, response, now_ms, request)]
            if unknown:
                return self._commit_known_partitions(
                    dst, src, correlation_id, request, unknown, now_ms
                )
        error = self._up_front_error(request, kind)
        if error is not None:
            response = _error_response(request, error)
            return [self._reply(dst, src, correlation_id, response, now_ms, request)]
        shard, error = self._routed_shard(dst, request.group_id)
        if shard is None:
            if kind is HeartbeatRequest and error == Errors.COORDINATOR_LOAD_IN_PROGRESS:
                error = Errors.NONE  # "respond blindly" while loading (GroupCoordinatorService)
            response = _error_response(request, error, failed_operation=True)
            return [self._reply(dst, src, correlation_id, response, now_ms, request)]
        return shard.handle(src, correlation_id, request, now_ms)

    def _unknown_partitions(self, request: OffsetCommitRequest) -> dict[str, set[int]]:
        """The partitions of an OffsetCommit that the broker's metadata does not have (a topic it
        does not know, or an index beyond the topic's partitions), by topic in request order."""
        unknown: dict[str, set[int]] = {}
        for topic in request.topics:
            count = self._topics.get(topic.name)
            if count is None and topic.name == OFFSETS_TOPIC:
                count = self.config.offsets_topic_num_partitions
            for part in topic.partitions:
                if count is None or not 0 <= part.partition_index < count:
                    unknown.setdefault(topic.name, set()).add(part.partition_index)
        return unknown

    def _commit_known_partitions(
        self,
        dst: str,
        src: str,
        correlation_id: int,
        request: OffsetCommitRequest,
        unknown: dict[str, set[int]],
        now_ms: int,
    ) -> list[Effect]:
        """KafkaApis.handleOffsetCommitRequest: partitions the broker does not know are answered
        UNKNOWN_TOPIC_OR_PARTITION by the broker itself; only the others reach the coordinator,
        and its answer is merged after the rejected ones (OffsetCommitResponse.Builder.merge).
        With nothing left to commit, the broker answers at once, coordinator or not."""
        rejected: dict[str, list[OffsetCommitResponsePartition]] = {}
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
                        OffsetCommitResponsePartition(
                            part.partition_index, Errors.UNKNOWN_TOPIC_OR_PARTITION
                        )
                    )
                else:
                    kept.append(part)
            if kept:
                known.append(OffsetCommitRequestTopic(topic.name, tuple(kept)))
        if not known:
            response = OffsetCommitResponse(
                tuple(OffsetCommitResponseTopic(name, parts) for name, parts in rejected.items())
            )
            return [self._reply(dst, src, correlation_id, response, now_ms, request)]
        forwarded = attrs.evolve(request, topics=tuple(known))
        effects = self._group_request(
            dst, src, correlation_id, forwarded, OffsetCommitRequest, now_ms
        )
        for i, effect in enumerate(effects):
            if (
                isinstance(effect, Send)
                and effect.dst == src
                and effect.correlation_id == correlation_id
                and isinstance(effect.message, OffsetCommitResponse)
            ):
                merged = {name: list(parts) for name, parts in rejected.items()}
                for topic in effect.message.topics:
                    merged.setdefault(topic.name, []).extend(topic.partitions)
                message = OffsetCommitResponse(
                    tuple(OffsetCommitResponseTopic(name, parts) for name, parts in merged.items())
                )
                effects[i] = attrs.evolve(effect, message=message)
        return effects

    def _up_front_error(self, request: GroupRequest, kind: type[GroupRequest]) -> Errors | None:
        """Checks made before routing: KafkaApis's SyncGroup v5+ rule, group id, session timeout."""
        if (
            kind is SyncGroupRequest
            and request.api_version >= 5
            and (request.protocol_type is None or request.protocol_name is None)
        ):
            return Errors.INCONSISTENT_GROUP_PROTOCOL
        if kind in _ID_CHECKED_APIS and request.group_id == "":
            return Errors.INVALID_GROUP_ID
        if kind is JoinGroupRequest and not (
            self.config.group_min_session_timeout_ms
            <= request.session_timeout_ms
            <= self.config.group_max_session_timeout_ms
        ):
            return Errors.INVALID_SESSION_TIMEOUT
        return None


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


def _error_name(response: object) -> str:
    code = response_error(response)
    return code.name if isinstance(code, Errors) else Errors.NONE.name


def _error_response(request: object, error: Errors, *, failed_operation: bool = False) -> object:
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
    raise TypeError(f"no error response for {type(request).__name__}")


def _malformed_response(request: object, reason: str) -> object | None:
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
    if isinstance(request, _GROUP_APIS):
        try:
            return _error_response(request, error)
        except (TypeError, AttributeError):
            pass
        # The per-partition shape of OffsetCommit is itself broken: answer with no topics.
        if isinstance(request, OffsetCommitRequest):
            return OffsetCommitResponse(())
    return None
