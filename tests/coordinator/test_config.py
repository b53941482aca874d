import pytest

from coordinator.config import CoordinatorConfig


def test_kafka_defaults():
    c = CoordinatorConfig()
    assert c.group_min_session_timeout_ms == 6000
    assert c.group_max_session_timeout_ms == 1800000
    assert c.group_initial_rebalance_delay_ms == 3000
    assert c.group_max_size == 2147483647
    assert c.offsets_topic_num_partitions == 50
    assert c.offsets_retention_minutes == 10080
    assert c.offsets_retention_ms == 10080 * 60000
    assert c.new_member_join_timeout_ms == 300000


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("group_min_session_timeout_ms", -1),
        ("group_initial_rebalance_delay_ms", -5),
        ("group_max_size", 0),
        ("offsets_topic_num_partitions", 0),
        ("offsets_retention_check_interval_ms", 0),
        ("load_time_ms", -1),
        ("group_max_size", 2**31),
        ("offset_metadata_max_bytes", "4096"),
    ],
)
def test_bad_values_are_rejected(field, value):
    with pytest.raises(ValueError, match=field):
        CoordinatorConfig(**{field: value})


@pytest.mark.parametrize(
    ("name", "field", "limit", "java"),
    [
        ("group.min.session.timeout.ms", "group_min_session_timeout_ms", 2**31 - 1, "int"),
        ("group.max.session.timeout.ms", "group_max_session_timeout_ms", 2**31 - 1, "int"),
        ("group.initial.rebalance.delay.ms", "group_initial_rebalance_delay_ms", 2**31 - 1, "int"),
        ("group.max.size", "group_max_size", 2**31 - 1, "int"),
        ("offsets.topic.num.partitions", "offsets_topic_num_partitions", 2**31 - 1, "int"),
        ("offsets.retention.minutes", "offsets_retention_minutes", 2**31 - 1, "int"),
        (
            "offsets.retention.check.interval.ms",
            "offsets_retention_check_interval_ms",
            2**63 - 1,
            "long",
        ),
        ("offset.metadata.max.bytes", "offset_metadata_max_bytes", 2**31 - 1, "int"),
    ],
)
def test_settings_stop_at_their_java_type(name, field, limit, java):
    """GroupCoordinatorConfig defines these as Type.INT (one as Type.LONG): ConfigDef takes the
    type's largest value and refuses anything larger, naming the setting."""
    big = {"group_max_session_timeout_ms": limit} if "min.session" in name else {}
    assert getattr(CoordinatorConfig(**{field: limit, **big}), field) == limit
    with pytest.raises(ValueError) as info:
        CoordinatorConfig(**{field: limit + 1})
    message = str(info.value)
    assert message.startswith(f"{name} ({field}) must be at most {limit} ")
    assert f"a Java {java}" in message and message.endswith(f"got {limit + 1}")


def test_min_above_max_session_timeout():
    with pytest.raises(ValueError, match="must not exceed"):
        CoordinatorConfig(group_min_session_timeout_ms=10, group_max_session_timeout_ms=5)
