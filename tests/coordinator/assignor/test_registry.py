"""The server-side assignor registry and GroupMetadataManager's assignor choice (Kafka:
GroupCoordinatorConfig.CONSUMER_GROUP_ASSIGNORS_DEFAULT, GroupMetadataManager's constructor and
throwIfConsumerGroupHeartbeatRequestIsInvalid)

The preferred-assignor choice (ConsumerGroup.computePreferredServerAssignor) lives in
coordinator/consumer_group.py with Kafka's HashMap.compute order; its tests are there.."""

from __future__ import annotations

import pytest

from coordinator.assignor.range import RangeAssignor
from coordinator.assignor.registry import (
    CONSUMER_GROUP_ASSIGNORS_DEFAULT,
    ConsumerGroupAssignors,
    UnknownServerAssignorError,
    get_assignor,
    register_assignor,
)


def test_names_and_kafka_class_names():
    assert isinstance(get_assignor("range"), RangeAssignor)
    assert isinstance(
        get_assignor("org.apache.kafka.coordinator.group.assignor.RangeAssignor"), RangeAssignor
    )
    assert get_assignor("coordinator.assignor.range:RangeAssignor").name == "range"
    with pytest.raises(UnknownServerAssignorError, match=r"known: .*range"):
        get_assignor("sticky")


def test_default_is_the_first_configured():
    """GroupMetadataManager: defaultConsumerGroupAssignor = consumerGroupAssignors.get(0)."""
    assert CONSUMER_GROUP_ASSIGNORS_DEFAULT[0].endswith("UniformAssignor")
    assignors = ConsumerGroupAssignors(["range"])
    assert assignors.default.name == "range"
    assert assignors.supports(None) and assignors.supports("range")
    assert not assignors.supports("uniform")
    assert assignors.unsupported_message("uniform") == (
        "ServerAssignor uniform is not supported. Supported assignors: range."
    )
    with pytest.raises(ValueError, match="at least one"):
        ConsumerGroupAssignors([])


def test_extension_point():
    class Mine(RangeAssignor):
        name = "mine"

    register_assignor("mine", Mine)
    assignors = ConsumerGroupAssignors(["range", "mine"])
    assert isinstance(assignors.by_name["mine"], Mine)
    assert assignors.supports("mine") and not assignors.supports("uniform")


def test_kafka_default_config_is_uniform_then_range():
    """group.consumer.assignors defaults to UniformAssignor, RangeAssignor: uniform is the default."""
    assignors = ConsumerGroupAssignors()
    assert list(assignors.by_name) == ["uniform", "range"]
    assert assignors.default.name == "uniform"
