"""The server-side assignor registry and GroupMetadataManager's assignor choice (Kafka:
GroupCoordinatorConfig.CONSUMER_GROUP_ASSIGNORS_DEFAULT, GroupMetadataManager's constructor and
throwIfConsumerGroupHeartbeatRequestIsInvalid, ConsumerGroup.computePreferredServerAssignor)."""

from __future__ import annotations

import pytest

from coordinator.assignor.range import RangeAssignor
from coordinator.assignor.registry import (
    CONSUMER_GROUP_ASSIGNORS_DEFAULT,
    ConsumerGroupAssignors,
    UnknownServerAssignorError,
    get_assignor,
    preferred_assignor_name,
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
    assert assignors.preferred({}).name == "range"
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
    assert assignors.preferred({"mine": 2, "range": 1}).name == "mine"


def test_preferred_assignor_is_the_most_requested():
    """ConsumerGroup.computePreferredServerAssignor: max by count; names at 0 are gone
    (Utils.decValue removes them); ties keep the first in the copied map's order."""
    assert preferred_assignor_name({}) is None
    assert preferred_assignor_name({"range": 0}) is None
    assert preferred_assignor_name({"uniform": 1, "range": 2}) == "range"
    # "uniform" and "range" share bucket 1 of the 4-bucket copy: the source order decides.
    assert preferred_assignor_name({"uniform": 1, "range": 1}) == "uniform"
    assert preferred_assignor_name({"range": 1, "uniform": 1}) == "range"


def test_kafka_default_config_is_uniform_then_range():
    """group.consumer.assignors defaults to UniformAssignor, RangeAssignor: uniform is the default."""
    assignors = ConsumerGroupAssignors()
    assert list(assignors.by_name) == ["uniform", "range"]
    assert assignors.default.name == "uniform"
    assert assignors.preferred({"range": 1}).name == "range"
    assert assignors.preferred({"range": 0}).name == "uniform"
