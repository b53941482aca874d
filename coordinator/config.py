"""Broker-side configuration of the group coordinator (Kafka's names, snake_case, Kafka's defaults)."""

from __future__ import annotations

from collections.abc import Callable, Mapping

from attrs import field, frozen

ServerAssignor = Callable[[str, Mapping[str, bytes]], Mapping[str, bytes]]
"""Seed 004's design 2: ``(group_id, {member_id: subscription}) -> {member_id: assignment}``, the
broker-side strategy (ConsumerProtocol bytes in and out). The coordinator layer cannot import
the assignors, so the runner builds it and hands it over in the config."""

INT32_MAX = 2147483647
#: Long.MAX_VALUE
INT64_MAX = 2**63 - 1

_JAVA_INT = (INT32_MAX, "Integer.MAX_VALUE: a Java int")
_JAVA_LONG = (INT64_MAX, "Long.MAX_VALUE: a Java long")
#: The largest value of each broker setting, as GroupCoordinatorConfig defines it (Type.INT or
#: Type.LONG: ConfigDef rejects a larger value with a ConfigException naming the setting):
#: {dotted name: (CoordinatorConfig field, limit, explanation)}. The simulator's own knobs
#: (new_member_join_timeout_ms, load_time_ms) are not Kafka settings and have no limit.
JAVA_LIMITS: dict[str, tuple[str, int, str]] = {
    "group.min.session.timeout.ms": ("group_min_session_timeout_ms", *_JAVA_INT),
    "group.max.session.timeout.ms": ("group_max_session_timeout_ms", *_JAVA_INT),
    "group.initial.rebalance.delay.ms": ("group_initial_rebalance_delay_ms", *_JAVA_INT),
    "group.max.size": ("group_max_size", *_JAVA_INT),
    "offsets.topic.num.partitions": ("offsets_topic_num_partitions", *_JAVA_INT),
    "offsets.retention.minutes": ("offsets_retention_minutes", *_JAVA_INT),
    "offsets.retention.check.interval.ms": ("offsets_retention_check_interval_ms", *_JAVA_LONG),
    "offset.metadata.max.bytes": ("offset_metadata_max_bytes", *_JAVA_INT),
    "group.consumer.session.timeout.ms": ("group_consumer_session_timeout_ms", *_JAVA_INT),
    "group.consumer.min.session.timeout.ms": ("group_consumer_min_session_timeout_ms", *_JAVA_INT),
    "group.consumer.max.session.timeout.ms": ("group_consumer_max_session_timeout_ms", *_JAVA_INT),
    "group.consumer.heartbeat.interval.ms": ("group_consumer_heartbeat_interval_ms", *_JAVA_INT),
    "group.consumer.min.heartbeat.interval.ms": (
        "group_consumer_min_heartbeat_interval_ms",
        *_JAVA_INT,
    ),
    "group.consumer.max.heartbeat.interval.ms": (
        "group_consumer_max_heartbeat_interval_ms",
        *_JAVA_INT,
    ),
    "group.consumer.max.size": ("group_consumer_max_size", *_JAVA_INT),
}

#: GroupCoordinatorConfig.CONSUMER_GROUP_ASSIGNORS_DEFAULT (Kafka's class names; groupsim also
#: takes the short names ``uniform`` and ``range``).
CONSUMER_GROUP_ASSIGNORS_DEFAULT = (
    "org.apache.kafka.coordinator.group.assignor.UniformAssignor",
    "org.apache.kafka.coordinator.group.assignor.RangeAssignor",
)
#: ConsumerGroupMigrationPolicy's values (group.consumer.migration.policy), lower case as Kafka
#: parses them; the default is BIDIRECTIONAL.
CONSUMER_GROUP_MIGRATION_POLICIES = ("disabled", "upgrade", "downgrade", "bidirectional")


def _assignor_list(value: object) -> tuple[str, ...]:
    """A ConfigDef LIST: a comma-separated string or a sequence of names."""
    if isinstance(value, str):
        return tuple(v.strip() for v in value.split(",") if v.strip())
    if isinstance(value, (list, tuple)):
        return tuple(value)
    raise ValueError(f"group_consumer_assignors must be a list of names, got {value!r}")


# Kafka's CLASSIC_GROUP_NEW_MEMBER_JOIN_TIMEOUT_MS is a constant (not a broker config); it is a
# field here so tests can shorten it, with Kafka's value as the default.
NEW_MEMBER_JOIN_TIMEOUT_MS = 300000


@frozen
class CoordinatorConfig:
    """The group.* / offsets.* broker configs the classic coordinator reads (GroupCoordinatorConfig).

    ``load_time_ms`` is the simulator's own knob: how long a broker that just became leader of an
    ``__consumer_offsets`` partition spends replaying it (it answers COORDINATOR_LOAD_IN_PROGRESS
    meanwhile). Real brokers take as long as reading the partition takes.
    """

    group_min_session_timeout_ms: int = 6000
    group_max_session_timeout_ms: int = 1800000
    group_initial_rebalance_delay_ms: int = 3000
    group_max_size: int = INT32_MAX
    offsets_topic_num_partitions: int = 50
    offsets_retention_minutes: int = 10080
    offsets_retention_check_interval_ms: int = 600000
    offset_metadata_max_bytes: int = 4096
    new_member_join_timeout_ms: int = NEW_MEMBER_JOIN_TIMEOUT_MS
    load_time_ms: int = 100
    # KIP-848 consumer groups (GroupCoordinatorConfig's group.consumer.*)
    group_consumer_session_timeout_ms: int = 45000
    group_consumer_min_session_timeout_ms: int = 45000
    group_consumer_max_session_timeout_ms: int = 60000
    group_consumer_heartbeat_interval_ms: int = 5000
    group_consumer_min_heartbeat_interval_ms: int = 5000
    group_consumer_max_heartbeat_interval_ms: int = 15000
    group_consumer_max_size: int = INT32_MAX
    group_consumer_assignors: tuple[str, ...] = field(
        default=CONSUMER_GROUP_ASSIGNORS_DEFAULT, converter=_assignor_list
    )
    group_consumer_migration_policy: str = "bidirectional"
    # seed 004's design 2 (not Kafka): the coordinator assigns with the broker's strategy and
    # answers JoinGroup with it (no leader assignment, no SyncGroup). None: today's protocol.
    server_assignor: ServerAssignor | None = field(default=None, eq=False, repr=False)

    def __attrs_post_init__(self) -> None:
        for name in (
            "group_min_session_timeout_ms",
            "group_max_session_timeout_ms",
            "group_initial_rebalance_delay_ms",
            "offset_metadata_max_bytes",
            "load_time_ms",
        ):
            value = getattr(self, name)
            if not isinstance(value, int) or value < 0:
                raise ValueError(f"{name} must be a non-negative integer, got {value!r}")
        for name in (
            "group_max_size",
            "offsets_topic_num_partitions",
            "offsets_retention_minutes",
            "offsets_retention_check_interval_ms",
            "new_member_join_timeout_ms",
            "group_consumer_session_timeout_ms",
            "group_consumer_min_session_timeout_ms",
            "group_consumer_max_session_timeout_ms",
            "group_consumer_heartbeat_interval_ms",
            "group_consumer_min_heartbeat_interval_ms",
            "group_consumer_max_heartbeat_interval_ms",
            "group_consumer_max_size",
        ):
            value = getattr(self, name)
            if not isinstance(value, int) or value < 1:
                raise ValueError(f"{name} must be a positive integer, got {value!r}")
        # ConfigDef parses the settings before anything compares them
        for name, (field_name, limit, java) in JAVA_LIMITS.items():
            value = getattr(self, field_name)
            if value > limit:
                raise ValueError(
                    f"{name} ({field_name}) must be at most {limit} ({java}), got {value}"
                )
        if self.group_min_session_timeout_ms > self.group_max_session_timeout_ms:
            raise ValueError(
                "group_min_session_timeout_ms "
                f"({self.group_min_session_timeout_ms}) must not exceed "
                f"group_max_session_timeout_ms ({self.group_max_session_timeout_ms})"
            )

        self._check_consumer_group_configs()

    def _check_consumer_group_configs(self) -> None:
        """GroupCoordinatorConfig's ``require`` checks of the group.consumer.* settings, with
        Kafka's messages."""
        hb, hb_min, hb_max = (
            self.group_consumer_heartbeat_interval_ms,
            self.group_consumer_min_heartbeat_interval_ms,
            self.group_consumer_max_heartbeat_interval_ms,
        )
        st, st_min, st_max = (
            self.group_consumer_session_timeout_ms,
            self.group_consumer_min_session_timeout_ms,
            self.group_consumer_max_session_timeout_ms,
        )
        hbk, stk = "group.consumer.heartbeat.interval.ms", "group.consumer.session.timeout.ms"
        checks = (
            (
                hb_max >= hb_min,
                "group.consumer.max.heartbeat.interval.ms must be greater than or equal to "
                "group.consumer.min.heartbeat.interval.ms",
            ),
            (
                hb >= hb_min,
                f"{hbk} must be greater than or equal to group.consumer.min.heartbeat.interval.ms",
            ),
            (
                hb <= hb_max,
                f"{hbk} must be less than or equal to group.consumer.max.heartbeat.interval.ms",
            ),
            (
                st_max >= st_min,
                "group.consumer.max.session.timeout.ms must be greater than or equal to "
                "group.consumer.min.session.timeout.ms",
            ),
            (
                st >= st_min,
                f"{stk} must be greater than or equal to group.consumer.min.session.timeout.ms",
            ),
            (
                st <= st_max,
                f"{stk} must be less than or equal to group.consumer.max.session.timeout.ms",
            ),
            (hb < st, f"{hbk} must be less than {stk}"),
        )
        for ok, message in checks:
            if not ok:
                raise ValueError(message)
        from coordinator.assignor.registry import ConsumerGroupAssignors

        ConsumerGroupAssignors(self.group_consumer_assignors)  # ValueError naming an unknown one
        if self.group_consumer_migration_policy.lower() not in CONSUMER_GROUP_MIGRATION_POLICIES:
            raise ValueError(
                "group.consumer.migration.policy must be one of "
                f"{', '.join(CONSUMER_GROUP_MIGRATION_POLICIES)}, got "
                f"{self.group_consumer_migration_policy!r}"
            )

    @property
    def offsets_retention_ms(self) -> int:
        return self.offsets_retention_minutes * 60_000
