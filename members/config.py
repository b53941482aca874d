"""Consumer configuration: Kafka's consumer settings (snake_case) plus the simulated poll loop.

The Kafka names and defaults follow ``ConsumerConfig`` / ``CommonClientConfigs`` (Kafka 3.x/4.0):
``session.timeout.ms`` 45000 (KIP-735), ``heartbeat.interval.ms`` 3000, ``max.poll.interval.ms``
300000 (also sent as JoinGroup's ``rebalanceTimeoutMs``), ``partition.assignment.strategy``
``[range, cooperative-sticky]``, and so on.

Kafka has no setting for how fast the application processes records; the simulator needs one to
decide when ``poll()`` is called. ``poll_interval_ms`` is the pause between two ``poll()`` calls
when processing is free, ``processing_time_ms`` + ``processing_time_per_record_ms`` x records is
the time spent on each batch, and ``max_poll_records`` (Kafka's ``max.poll.records``, default 500)
caps a batch. A partition is modelled as an endless log: every owned partition always has records.

A few opt-in settings play other clients' documented behaviour, for the lessons from real
incidents (docs/members.md, "Other clients' behaviour"): no background heartbeat thread
(``heartbeat_thread``), no poll timer (``poll_timer``), LeaveGroup on a static member's close
(``static_leave_group_on_close``), commits during a rebalance (``commit_during_rebalance``), a
JoinGroup timeout of its own (``join_group_timeout_ms``), fetching while the pre-revocation
commit is out (``pause_pending_revocation``), a static member keeping its member id when it
sends no LeaveGroup (``keep_member_id_when_leave_suppressed``), franz-go's handling of a failed
commit (``commit_error_handling``), librdkafka 1.6's cooperative-sticky leader
(``sticky_assignor_ignores_owned``); and how long a revocation callback takes
(``revocation_time_ms``). Their defaults are the Java consumer's, so a scenario that does
not name them runs exactly as before.
"""

from __future__ import annotations

from typing import Any

from attrs import field, frozen

from assignors.api import PartitionAssignor

#: Kafka's default ``partition.assignment.strategy``: RangeAssignor, then CooperativeStickyAssignor.
DEFAULT_STRATEGY: tuple[str, ...] = ("range", "cooperative-sticky")


def _strategy(value: Any) -> tuple[str | PartitionAssignor, ...]:
    if isinstance(value, str | PartitionAssignor):
        return (value,)
    return tuple(value)


def _lower(value: Any) -> Any:
    return value.lower() if isinstance(value, str) else value


#: ``commit_error_handling``'s values: the Java client's, franz-go's before and after 1.4.0.
COMMIT_ERROR_HANDLINGS: tuple[str, ...] = ("java", "franz-go-1.3", "franz-go-1.4")

#: GroupProtocol's constants, as ConfigDef.CaseInsensitiveValidString lists them.
GROUP_PROTOCOLS: tuple[str, ...] = ("classic", "consumer")

#: The settings the consumer protocol refuses when they are set (ConsumerConfig's
#: CONSUMER_PROTOCOL_UNSUPPORTED_CONFIGS, KAFKA-17338, in this order): the heartbeat interval and
#: the session timeout belong to the broker (group.consumer.*), the assignor too.
CLASSIC_ONLY_SETTINGS: tuple[tuple[str, str], ...] = (
    ("partition.assignment.strategy", "partition_assignment_strategy"),
    ("heartbeat.interval.ms", "heartbeat_interval_ms"),
    ("session.timeout.ms", "session_timeout_ms"),
)


def unsupported_setting_message(name: str, group_protocol: str) -> str:
    """ConsumerConfig.checkUnsupportedConfigs / checkGroupRemoteAssignor: the ConfigException
    text for a setting the chosen group protocol does not take."""
    return f"{name} cannot be set when group.protocol={group_protocol.upper()}"


class ConfigError(ValueError):
    """An invalid consumer configuration (Kafka's ConfigException / IllegalArgumentException)."""


@frozen
class ConsumerConfig:
    group_id: str
    client_id: str = "consumer"
    group_instance_id: str | None = None
    client_rack: str | None = None
    #: Names (resolved with ``assignors.get_assignor``) or assignor objects; the order is the vote.
    partition_assignment_strategy: tuple[str | PartitionAssignor, ...] = field(
        default=DEFAULT_STRATEGY, converter=_strategy
    )
    session_timeout_ms: int = 45000
    heartbeat_interval_ms: int = 3000
    max_poll_interval_ms: int = 300000
    enable_auto_commit: bool = True
    auto_commit_interval_ms: int = 5000
    request_timeout_ms: int = 30000
    retry_backoff_ms: int = 100
    retry_backoff_max_ms: int = 1000
    metadata_max_age_ms: int = 300000
    internal_leave_group_on_close: bool = True
    max_poll_records: int = 500
    #: ``group.protocol``: ``classic`` (JoinGroup / SyncGroup, ClassicKafkaConsumer) or
    #: ``consumer`` (KIP-848's ConsumerGroupHeartbeat, AsyncKafkaConsumer); case-insensitive,
    #: kept lower-case.
    group_protocol: str = field(default="classic", converter=_lower)
    #: ``group.remote.assignor``: the server-side assignor a KIP-848 member asks for (None: the
    #: coordinator's default).
    group_remote_assignor: str | None = None
    #: The application's producer's ``transactional.id``: set, the consumer runs the
    #: exactly-once read-process-write loop (members.transactions), committing its offsets in
    #: transactions (TxnOffsetCommit) instead of OffsetCommit; ``enable.auto.commit`` must be
    #: false, as Kafka Streams sets it under exactly-once.
    transactional_id: str | None = None
    # --- the simulated application (not Kafka settings) ---
    #: How often the exactly-once loop commits its transaction (Kafka Streams'
    #: ``commit.interval.ms``, 100 ms under exactly-once).
    transaction_interval_ms: int = 100
    poll_interval_ms: int = 100
    processing_time_ms: int = 0
    processing_time_per_record_ms: float = 0.0
    #: How long the application's onPartitionsRevoked / onPartitionsLost blocks the application
    #: thread (draining in-flight work, a handler that does not return). 0: returns at once.
    revocation_time_ms: int = 0
    # --- other clients' behaviour, opt-in (the defaults are the Java consumer's) -------------
    #: False: no background heartbeat thread (kafkajs): the application's own loop heartbeats,
    #: between two records of a batch or inside poll(), never during a stall or one record; a
    #: rebalance it learns of is joined once the batch is done.
    heartbeat_thread: bool = True
    #: False: no client-side poll timer (kafkajs, sarama): the client never leaves the group
    #: because poll() is late; max.poll.interval.ms is then only the JoinGroup rebalance timeout
    #: (kafkajs's rebalanceTimeout, sarama's Consumer.Group.Rebalance.Timeout).
    poll_timer: bool = True
    #: True: close() of a static member sends LeaveGroup with its group.instance.id (librdkafka
    #: 1.6 to 1.7's close(), Kafka 4.x's close(CloseOptions LEAVE_GROUP)); Java's default: none.
    static_leave_group_on_close: bool = False
    #: True: a static member that does not send LeaveGroup (maybeLeaveGroup: poll timeout,
    #: unsubscribe) keeps its member id, so its rejoin is not a replacement of itself (the fix
    #: proposed for KAFKA-20985, apache/kafka#23266, open); Kafka at 1eb7644 wipes it.
    keep_member_id_when_leave_suppressed: bool = False
    #: True: commit() during a rebalance goes out with the last generation instead of failing
    #: locally (franz-go before 1.4.0, librdkafka); Java fails it with REBALANCE_IN_PROGRESS.
    commit_during_rebalance: bool = False
    #: True: the leader's cooperative-sticky assignment ignores the partitions the members own
    #: (librdkafka before 1.7.0: prepopulateCurrentAssignments read the empty output list, fixed
    #: by commit 168a88ca5, librdkafka#3306), and librdkafka's cooperative step then withholds
    #: what moved between owners (members/librdkafka_assignor.py); False: Kafka's assignor.
    sticky_assignor_ignores_owned: bool = False
    #: How an OffsetCommit answered REBALANCE_IN_PROGRESS, ILLEGAL_GENERATION, UNKNOWN_MEMBER_ID
    #: or FENCED_INSTANCE_ID is handled: ``java`` (OffsetCommitResponseHandler: reset, rejoin,
    #: fail), ``franz-go-1.3`` (franz-go before 1.4.0: the error goes to the caller, the group
    #: membership is left alone) or ``franz-go-1.4`` (commitAcrossRebalance, commit d11066f: a
    #: cooperative member that still owns every committed partition sends the commit again,
    #: with the generation it has then, up to three tries, when every partition failed with
    #: REBALANCE_IN_PROGRESS or ILLEGAL_GENERATION; else as 1.3).
    commit_error_handling: str = "java"
    #: How long a JoinGroup waits for its answer; None: Kafka's max(request.timeout.ms,
    #: rebalance timeout + 5 s). sarama waits Net.ReadTimeout (30 s), less than its 60 s
    #: Rebalance.Timeout.
    join_group_timeout_ms: int | None = None
    #: False: EAGER partitions keep being fetched while onJoinPrepare's auto-commit is out
    #: (Kafka 3.2.0 to 3.2.2, before KAFKA-14196's fix): records fetched then are revoked
    #: uncommitted.
    #: None (the default) and True: paused, as Kafka does since the fix. Set either way, the
    #: consumer also logs ``revoked_uncommitted`` at each onJoinPrepare revocation (what its
    #: next owner consumes again), so that the two can be compared.
    pause_pending_revocation: bool | None = None

    def __attrs_post_init__(self) -> None:
        self.validate()

    def validate(self) -> None:
        """Reject what Kafka rejects, with a message naming the setting (never a traceback)."""
        if self.group_protocol not in GROUP_PROTOCOLS:
            # ConfigDef.CaseInsensitiveValidString.in(Utils.enumOptions(GroupProtocol.class))
            raise ConfigError(
                f"Invalid value {self.group_protocol} for configuration group.protocol: String "
                "must be one of (case insensitive): CLASSIC, CONSUMER"
            )
        if self.group_protocol == "classic" and self.group_remote_assignor:
            # ConsumerConfig.checkGroupRemoteAssignor
            raise ConfigError(unsupported_setting_message("group.remote.assignor", "classic"))
        if self.group_protocol == "consumer":
            # ConsumerConfig.checkUnsupportedConfigs(CONSUMER, ...) refuses these when they are
            # set at all; a Python ConsumerConfig cannot tell a default from a value set to it,
            # so it refuses values other than Kafka's default (a scenario refuses the key itself).
            for name, attr in CLASSIC_ONLY_SETTINGS:
                if getattr(self, attr) != _DEFAULTS[attr]:
                    raise ConfigError(unsupported_setting_message(name, "consumer"))
        if not isinstance(self.group_id, str) or not self.group_id:
            raise ConfigError("group.id must be a non-empty string for a group-managed consumer")
        if self.group_instance_id is not None and (
            not isinstance(self.group_instance_id, str) or not self.group_instance_id.strip()
        ):
            raise ConfigError("group.instance.id must be null or a non-blank string")
        positive = {
            "session.timeout.ms": self.session_timeout_ms,
            "heartbeat.interval.ms": self.heartbeat_interval_ms,
            "max.poll.interval.ms": self.max_poll_interval_ms,
            "auto.commit.interval.ms": self.auto_commit_interval_ms,
            "request.timeout.ms": self.request_timeout_ms,
            "max.poll.records": self.max_poll_records,
            "poll_interval_ms": self.poll_interval_ms,
            "transaction.interval.ms": self.transaction_interval_ms,
        }
        for name, value in positive.items():
            if not isinstance(value, int) or isinstance(value, bool) or value <= 0:
                raise ConfigError(f"{name} must be a positive integer, got {value!r}")
        non_negative = {
            "retry.backoff.ms": self.retry_backoff_ms,
            "retry.backoff.max.ms": self.retry_backoff_max_ms,
            "metadata.max.age.ms": self.metadata_max_age_ms,
            "processing_time_ms": self.processing_time_ms,
            "revocation_time_ms": self.revocation_time_ms,
        }
        for name, value in non_negative.items():
            if not isinstance(value, int) or isinstance(value, bool) or value < 0:
                raise ConfigError(f"{name} must be a non-negative integer, got {value!r}")
        # ConfigDef parses Type.INT settings as Java ints and Type.LONG ones as Java longs: a
        # larger value is a ConfigException naming the setting.
        for name, (limit, java) in JAVA_LIMITS.items():
            value = positive[name] if name in positive else non_negative[name]
            if value > limit:
                raise ConfigError(f"{name} must be at most {limit} ({java}), got {value}")
        if self.join_group_timeout_ms is not None and (
            not isinstance(self.join_group_timeout_ms, int)
            or isinstance(self.join_group_timeout_ms, bool)
            or self.join_group_timeout_ms <= 0
        ):
            got = self.join_group_timeout_ms
            raise ConfigError(f"join.group.timeout.ms must be a positive integer, got {got!r}")
        if self.commit_error_handling not in COMMIT_ERROR_HANDLINGS:
            raise ConfigError(
                f"commit.error.handling must be one of {', '.join(COMMIT_ERROR_HANDLINGS)}, "
                f"got {self.commit_error_handling!r}"
            )
        if self.processing_time_per_record_ms < 0:
            raise ConfigError("processing_time_per_record_ms must be >= 0")
        if self.metadata_max_age_ms == 0:
            raise ConfigError("metadata.max.age.ms must be positive")
        if self.heartbeat_interval_ms >= self.session_timeout_ms:
            # Heartbeat's constructor: "Heartbeat must be set lower than the session timeout".
            raise ConfigError(
                f"heartbeat.interval.ms ({self.heartbeat_interval_ms}) must be lower than "
                f"session.timeout.ms ({self.session_timeout_ms})"
            )
        if self.transactional_id is not None:
            if not isinstance(self.transactional_id, str) or not self.transactional_id.strip():
                raise ConfigError("transactional.id must be null or a non-blank string")
            if self.enable_auto_commit:
                raise ConfigError(
                    "transactional.id is set (the exactly-once read-process-write loop commits "
                    "its offsets in transactions): enable.auto.commit must be false"
                )
        if not self.partition_assignment_strategy:
            raise ConfigError("partition.assignment.strategy must name at least one assignor")
        names = [_name_of(s) for s in self.partition_assignment_strategy]
        for entry, name in zip(self.partition_assignment_strategy, names, strict=True):
            if not name:
                raise ConfigError(f"partition.assignment.strategy entry {entry!r} has no name")
        if len(set(names)) != len(names):
            raise ConfigError(f"partition.assignment.strategy lists an assignor twice: {names}")

    @property
    def strategy_names(self) -> tuple[str, ...]:
        return tuple(_name_of(s) for s in self.partition_assignment_strategy)

    @property
    def rebalance_timeout_ms(self) -> int:
        """What the consumer sends as JoinGroup ``rebalanceTimeoutMs`` (GroupRebalanceConfig)."""
        return self.max_poll_interval_ms

    @property
    def join_request_timeout_ms(self) -> int:
        """AbstractCoordinator.sendJoinGroupRequest: JoinGroup waits max(request.timeout.ms,
        rebalance timeout + 5 s). Kafka adds in Java ints and guards against the overflow with
        max(rebalance + 5 s, rebalance): a rebalance timeout within 5 s of Integer.MAX_VALUE
        (max.poll.interval.ms may be as large as that) waits the rebalance timeout itself."""
        if self.join_group_timeout_ms is not None:
            return self.join_group_timeout_ms
        lapsed = self.rebalance_timeout_ms + JOIN_GROUP_TIMEOUT_LAPSE_MS
        if lapsed > JAVA_INT_MAX:
            lapsed = self.rebalance_timeout_ms
        return max(self.request_timeout_ms, lapsed)


JOIN_GROUP_TIMEOUT_LAPSE_MS = 5000
#: Integer.MAX_VALUE: the largest value of Kafka's int settings.
JAVA_INT_MAX = 2**31 - 1
#: Long.MAX_VALUE: the largest value of Kafka's long settings.
JAVA_LONG_MAX = 2**63 - 1

_JAVA_INT = (JAVA_INT_MAX, "Integer.MAX_VALUE: a Java int")
_JAVA_LONG = (JAVA_LONG_MAX, "Long.MAX_VALUE: a Java long")
#: The largest value of each setting Kafka's ConsumerConfig defines as Type.INT or Type.LONG
#: (ConfigDef rejects anything larger), and why: {dotted name: (limit, explanation)}.
JAVA_LIMITS: dict[str, tuple[int, str]] = {
    "session.timeout.ms": _JAVA_INT,
    "heartbeat.interval.ms": _JAVA_INT,
    "max.poll.interval.ms": _JAVA_INT,
    "auto.commit.interval.ms": _JAVA_INT,
    "request.timeout.ms": _JAVA_INT,
    "max.poll.records": _JAVA_INT,
    "retry.backoff.ms": _JAVA_LONG,
    "retry.backoff.max.ms": _JAVA_LONG,
    "metadata.max.age.ms": _JAVA_LONG,
}


#: Kafka's defaults of the settings the consumer protocol refuses.
_DEFAULTS: dict[str, Any] = {
    "partition_assignment_strategy": DEFAULT_STRATEGY,
    "heartbeat_interval_ms": 3000,
    "session_timeout_ms": 45000,
}


def _name_of(entry: str | PartitionAssignor) -> str:
    return entry if isinstance(entry, str) else getattr(entry, "name", "")
