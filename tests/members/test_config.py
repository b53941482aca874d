"""ConsumerConfig: Kafka's defaults and the limits it enforces."""

from __future__ import annotations

import pytest

from assignors.api import RebalanceProtocol
from members.assignor_support import rebalance_protocol_of, resolve_assignors
from members.config import ConfigError, ConsumerConfig


def test_kafka_defaults() -> None:
    c = ConsumerConfig(group_id="g")
    assert c.session_timeout_ms == 45000
    assert c.heartbeat_interval_ms == 3000
    assert c.max_poll_interval_ms == 300000 == c.rebalance_timeout_ms
    assert c.partition_assignment_strategy == ("range", "cooperative-sticky")
    assert c.enable_auto_commit and c.auto_commit_interval_ms == 5000
    assert c.request_timeout_ms == 30000
    assert (c.retry_backoff_ms, c.retry_backoff_max_ms) == (100, 1000)
    assert c.metadata_max_age_ms == 300000
    assert c.internal_leave_group_on_close
    assert c.group_instance_id is None


def test_join_request_timeout_is_rebalance_timeout_plus_five_seconds() -> None:
    assert ConsumerConfig(group_id="g").join_request_timeout_ms == 305000
    small = ConsumerConfig(group_id="g", max_poll_interval_ms=1000)
    assert small.join_request_timeout_ms == 30000  # request.timeout.ms wins
    # Kafka's overflow guard: rebalance + 5 s past Integer.MAX_VALUE keeps the rebalance timeout
    huge = ConsumerConfig(group_id="g", max_poll_interval_ms=2**31 - 1)
    assert huge.join_request_timeout_ms == 2**31 - 1
    near = ConsumerConfig(group_id="g", max_poll_interval_ms=2**31 - 5000)
    assert near.join_request_timeout_ms == 2**31 - 5000
    assert ConsumerConfig(
        group_id="g", max_poll_interval_ms=2**31 - 5001
    ).join_request_timeout_ms == (2**31 - 1)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"heartbeat_interval_ms": 45000}, "lower than session.timeout.ms"),
        ({"session_timeout_ms": 0}, "session.timeout.ms must be a positive"),
        ({"max_poll_interval_ms": -1}, "max.poll.interval.ms"),
        ({"group_id": ""}, "group.id"),
        ({"group_instance_id": "  "}, "group.instance.id"),
        ({"partition_assignment_strategy": ()}, "at least one"),
        ({"partition_assignment_strategy": ("range", "range")}, "twice"),
        ({"retry_backoff_ms": -5}, "retry.backoff.ms"),
        ({"processing_time_ms": -1}, "processing_time_ms"),
    ],
)
def test_invalid_settings_are_rejected_clearly(kwargs, message) -> None:
    with pytest.raises(ConfigError, match=message):
        ConsumerConfig(**{"group_id": "g", **kwargs})


#: ConsumerConfig's settings that Kafka defines as Type.INT (ConfigDef parses them as Java ints).
JAVA_INT_SETTINGS = {
    "session_timeout_ms": "session.timeout.ms",
    "heartbeat_interval_ms": "heartbeat.interval.ms",
    "max_poll_interval_ms": "max.poll.interval.ms",
    "auto_commit_interval_ms": "auto.commit.interval.ms",
    "request_timeout_ms": "request.timeout.ms",
    "max_poll_records": "max.poll.records",
}
#: ... and those it defines as Type.LONG.
JAVA_LONG_SETTINGS = {
    "retry_backoff_ms": "retry.backoff.ms",
    "retry_backoff_max_ms": "retry.backoff.max.ms",
    "metadata_max_age_ms": "metadata.max.age.ms",
}


@pytest.mark.parametrize("field", sorted(JAVA_INT_SETTINGS))
def test_int_settings_stop_at_integer_max_value(field: str) -> None:
    """Kafka's ConfigDef parses a Type.INT setting as a Java int: Integer.MAX_VALUE is the
    largest value it accepts, and anything larger is a ConfigException naming the setting."""
    roomy = {"session_timeout_ms": 2**31 - 1} if field == "heartbeat_interval_ms" else {}
    largest = 2**31 - 2 if field == "heartbeat_interval_ms" else 2**31 - 1  # below the session
    assert getattr(ConsumerConfig(group_id="g", **roomy, **{field: largest}), field) == largest
    with pytest.raises(
        ConfigError, match=rf"{JAVA_INT_SETTINGS[field]} must be at most 2147483647"
    ):
        ConsumerConfig(group_id="g", **roomy, **{field: 2**31})


@pytest.mark.parametrize("field", sorted(JAVA_LONG_SETTINGS))
def test_long_settings_stop_at_long_max_value(field: str) -> None:
    """Type.LONG settings likewise stop at Long.MAX_VALUE."""
    assert getattr(ConsumerConfig(group_id="g", **{field: 2**63 - 1}), field) == 2**63 - 1
    with pytest.raises(
        ConfigError, match=rf"{JAVA_LONG_SETTINGS[field]} must be at most 9223372036854775807"
    ):
        ConsumerConfig(group_id="g", **{field: 2**63})


def test_default_strategy_is_eager_and_cooperative_needs_only_cooperative_assignors() -> None:
    default = resolve_assignors(("range", "cooperative-sticky"))
    assert rebalance_protocol_of(default) is RebalanceProtocol.EAGER
    coop = resolve_assignors(("cooperative-sticky",))
    assert rebalance_protocol_of(coop) is RebalanceProtocol.COOPERATIVE


def test_unknown_assignor_name_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match="rnage"):
        resolve_assignors(("rnage",))


# --- group.protocol (KIP-848) -----------------------------------------------------------------


def test_group_protocol_is_case_insensitive_and_validated() -> None:
    """ConsumerConfig: group.protocol is CaseInsensitiveValidString.in(CLASSIC, CONSUMER)."""
    assert ConsumerConfig(group_id="g", group_protocol="CONSUMER").group_protocol == "consumer"
    assert ConsumerConfig(group_id="g").group_protocol == "classic"
    with pytest.raises(ConfigError, match=r"String must be one of \(case insensitive\): "):
        ConsumerConfig(group_id="g", group_protocol="streams")


def test_group_remote_assignor_refused_under_classic() -> None:
    """ConsumerConfig.checkGroupRemoteAssignor, Kafka's message."""
    with pytest.raises(ConfigError) as err:
        ConsumerConfig(group_id="g", group_remote_assignor="uniform")
    assert str(err.value) == "group.remote.assignor cannot be set when group.protocol=CLASSIC"
    ok = ConsumerConfig(group_id="g", group_protocol="consumer", group_remote_assignor="uniform")
    assert ok.group_remote_assignor == "uniform"


@pytest.mark.parametrize(
    ("name", "field", "value"),
    [
        ("partition.assignment.strategy", "partition_assignment_strategy", ("range",)),
        ("heartbeat.interval.ms", "heartbeat_interval_ms", 1000),
        ("session.timeout.ms", "session_timeout_ms", 10_000),
    ],
)
def test_classic_only_settings_refused_under_consumer_protocol(name, field, value) -> None:
    """ConsumerConfig.checkUnsupportedConfigs(CONSUMER, ...) (KAFKA-17338): Kafka's message."""
    with pytest.raises(ConfigError) as err:
        ConsumerConfig(group_id="g", group_protocol="consumer", **{field: value})
    assert str(err.value) == f"{name} cannot be set when group.protocol=CONSUMER"
