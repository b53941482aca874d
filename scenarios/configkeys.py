"""Kafka's dotted config names, as scenario files write them, and the fields they map onto.

Consumer settings go to ``members.config.ConsumerConfig`` and broker settings to
``coordinator.config.CoordinatorConfig``; both use Kafka's names in snake_case. A few keys are the
simulator's own (how fast the simulated application polls, how long a new coordinator replays its
log); they are marked ``groupsim`` in docs/scenarios.md.
"""

from __future__ import annotations

from enum import Enum


class Kind(Enum):
    DURATION = "a duration (e.g. 10s, 300ms, or an integer of ms)"
    INT = "an integer"
    POSITIVE_INT = "a positive integer"
    FLOAT = "a number"
    BOOL = "true or false"
    STRING = "a string"
    OPTIONAL_STRING = "a string or null"
    STRATEGIES = "a list of assignor names"
    SIZE = "a size in bytes (e.g. 4096 or 4KiB)"


#: consumer setting -> (ConsumerConfig field, kind)
CONSUMER_KEYS: dict[str, tuple[str, Kind]] = {
    "group.instance.id": ("group_instance_id", Kind.OPTIONAL_STRING),
    "client.id": ("client_id", Kind.STRING),
    "client.rack": ("client_rack", Kind.OPTIONAL_STRING),
    "partition.assignment.strategy": ("partition_assignment_strategy", Kind.STRATEGIES),
    "session.timeout.ms": ("session_timeout_ms", Kind.DURATION),
    "heartbeat.interval.ms": ("heartbeat_interval_ms", Kind.DURATION),
    "max.poll.interval.ms": ("max_poll_interval_ms", Kind.DURATION),
    "enable.auto.commit": ("enable_auto_commit", Kind.BOOL),
    "auto.commit.interval.ms": ("auto_commit_interval_ms", Kind.DURATION),
    "request.timeout.ms": ("request_timeout_ms", Kind.DURATION),
    "retry.backoff.ms": ("retry_backoff_ms", Kind.DURATION),
    "retry.backoff.max.ms": ("retry_backoff_max_ms", Kind.DURATION),
    "metadata.max.age.ms": ("metadata_max_age_ms", Kind.DURATION),
    "internal.leave.group.on.close": ("internal_leave_group_on_close", Kind.BOOL),
    "max.poll.records": ("max_poll_records", Kind.POSITIVE_INT),
    "group.protocol": ("group_protocol", Kind.STRING),
    "group.remote.assignor": ("group_remote_assignor", Kind.OPTIONAL_STRING),
    # the application's producer (the exactly-once loop, members.transactions)
    "transactional.id": ("transactional_id", Kind.OPTIONAL_STRING),
    # groupsim: the simulated application's poll loop
    "poll.interval.ms": ("poll_interval_ms", Kind.DURATION),
    "processing.time.ms": ("processing_time_ms", Kind.DURATION),
    "processing.time.per.record.ms": ("processing_time_per_record_ms", Kind.FLOAT),
    "revocation.time.ms": ("revocation_time_ms", Kind.DURATION),
    "transaction.interval.ms": ("transaction_interval_ms", Kind.DURATION),
    # groupsim: other clients' behaviour, opt-in (docs/members.md)
    "heartbeat.thread": ("heartbeat_thread", Kind.BOOL),
    "poll.timer": ("poll_timer", Kind.BOOL),
    "static.leave.group.on.close": ("static_leave_group_on_close", Kind.BOOL),
    "commit.during.rebalance": ("commit_during_rebalance", Kind.BOOL),
    "commit.error.handling": ("commit_error_handling", Kind.STRING),
    "sticky.assignor.ignores.owned": ("sticky_assignor_ignores_owned", Kind.BOOL),
    "keep.member.id.when.leave.suppressed": ("keep_member_id_when_leave_suppressed", Kind.BOOL),
    "join.group.timeout.ms": ("join_group_timeout_ms", Kind.DURATION),
    "pause.pending.revocation": ("pause_pending_revocation", Kind.BOOL),
}

#: Kafka 0.8's ZooKeeper consumer only (``design: zookeeper``) -> (ZkConsumerConfig field, kind)
ZK_CONSUMER_KEYS: dict[str, tuple[str, Kind]] = {
    "num.streams": ("num_streams", Kind.POSITIVE_INT),
    "rebalance.max.retries": ("rebalance_max_retries", Kind.POSITIVE_INT),
    "rebalance.backoff.ms": ("rebalance_backoff_ms", Kind.DURATION),
    "zookeeper.session.timeout.ms": ("zookeeper_session_timeout_ms", Kind.DURATION),
    # groupsim: which server of the ensemble the client is connected to (zk-0, zk-1, ...)
    "zookeeper.server": ("zookeeper_server", Kind.STRING),
}

#: broker setting -> (CoordinatorConfig field, kind)
BROKER_KEYS: dict[str, tuple[str, Kind]] = {
    "group.min.session.timeout.ms": ("group_min_session_timeout_ms", Kind.DURATION),
    "group.max.session.timeout.ms": ("group_max_session_timeout_ms", Kind.DURATION),
    "group.initial.rebalance.delay.ms": ("group_initial_rebalance_delay_ms", Kind.DURATION),
    "group.max.size": ("group_max_size", Kind.POSITIVE_INT),
    "offsets.topic.num.partitions": ("offsets_topic_num_partitions", Kind.POSITIVE_INT),
    "offsets.retention.minutes": ("offsets_retention_minutes", Kind.POSITIVE_INT),
    "offsets.retention.check.interval.ms": ("offsets_retention_check_interval_ms", Kind.DURATION),
    "offset.metadata.max.bytes": ("offset_metadata_max_bytes", Kind.SIZE),
    # groupsim: the constant CLASSIC_GROUP_NEW_MEMBER_JOIN_TIMEOUT_MS, and log replay time
    "group.new.member.join.timeout.ms": ("new_member_join_timeout_ms", Kind.DURATION),
    "coordinator.load.time.ms": ("load_time_ms", Kind.DURATION),
    # KIP-848 consumer groups
    "group.consumer.session.timeout.ms": ("group_consumer_session_timeout_ms", Kind.DURATION),
    "group.consumer.min.session.timeout.ms": (
        "group_consumer_min_session_timeout_ms",
        Kind.DURATION,
    ),
    "group.consumer.max.session.timeout.ms": (
        "group_consumer_max_session_timeout_ms",
        Kind.DURATION,
    ),
    "group.consumer.heartbeat.interval.ms": (
        "group_consumer_heartbeat_interval_ms",
        Kind.DURATION,
    ),
    "group.consumer.min.heartbeat.interval.ms": (
        "group_consumer_min_heartbeat_interval_ms",
        Kind.DURATION,
    ),
    "group.consumer.max.heartbeat.interval.ms": (
        "group_consumer_max_heartbeat_interval_ms",
        Kind.DURATION,
    ),
    "group.consumer.max.size": ("group_consumer_max_size", Kind.POSITIVE_INT),
    "group.consumer.assignors": ("group_consumer_assignors", Kind.STRING),
    "group.consumer.migration.policy": ("group_consumer_migration_policy", Kind.STRING),
}

#: Kafka's defaults for the checks the loader makes across settings (GroupCoordinatorConfig)
BROKER_DEFAULTS = {
    "group_min_session_timeout_ms": 6000,
    "group_max_session_timeout_ms": 1800000,
    "group_max_size": 2147483647,
    "offsets_topic_num_partitions": 50,
}
CONSUMER_DEFAULTS = {
    "session_timeout_ms": 45000,
    "heartbeat_interval_ms": 3000,
    "max_poll_interval_ms": 300000,
    "partition_assignment_strategy": ("range", "cooperative-sticky"),
}

#: assignor names and Kafka's class names for them
BUILTIN_ASSIGNORS = (
    "range",
    "roundrobin",
    "sticky",
    "cooperative-sticky",
    "legacy-range",
    "legacy-roundrobin",
)
KAFKA_CLASS_NAMES = {
    "org.apache.kafka.clients.consumer.RangeAssignor": "range",
    "org.apache.kafka.clients.consumer.RoundRobinAssignor": "roundrobin",
    "org.apache.kafka.clients.consumer.StickyAssignor": "sticky",
    "org.apache.kafka.clients.consumer.CooperativeStickyAssignor": "cooperative-sticky",
}


def known_assignor(name: str) -> bool:
    """A built-in or installed assignor, a Kafka class name, or a ``module:Class`` name."""
    if name in BUILTIN_ASSIGNORS or name in KAFKA_CLASS_NAMES:
        return True
    if ":" in name:  # a user's own assignor, "package.module:Class": resolved when the run starts
        return True
    try:
        from assignors import get_assignor
    except ImportError:
        return False
    try:
        get_assignor(name)
    except Exception:
        return False
    return True


def canonical_assignor(name: str) -> str:
    """The protocol name of an assignor given by its Kafka class name (or the name itself)."""
    return KAFKA_CLASS_NAMES.get(name, name)
