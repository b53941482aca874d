"""Kafka's Uuid rendering and order (UuidTest), and groupsim's deterministic topic ids."""

from __future__ import annotations

import pytest

from coordinator.kafka_uuid import ZERO_UUID, Uuid, topic_id_for


def test_zero_uuid_renders_as_kafka_does():
    # UuidTest.testToString: the zero id is 22 'A's (16 zero bytes, base64 without padding)
    assert str(ZERO_UUID) == "AAAAAAAAAAAAAAAAAAAAAA"


def test_round_trip_keeps_signed_halves():
    u = Uuid(-1, -(2**63))
    text = str(u)
    assert text == "__________-AAAAAAAAAAA"  # ff x8, then 80 00 .. in base64url
    assert Uuid.from_string(text) == u


def test_order_compares_most_significant_half_first_as_signed_longs():
    assert Uuid(-1, 5) < Uuid(0, 0) < Uuid(0, 1) < Uuid(1, -5)


def test_from_string_refuses_wrong_length():
    with pytest.raises(ValueError, match="16 bytes"):
        Uuid.from_string("AAAA")


def test_topic_ids_are_stable_distinct_and_change_with_incarnation():
    assert topic_id_for("orders") == topic_id_for("orders")
    assert topic_id_for("orders") != topic_id_for("payments")
    assert topic_id_for("orders", 1) != topic_id_for("orders", 0)
    assert topic_id_for("t\ud800") != ZERO_UUID  # lone surrogates are legal Java strings


def test_metadata_carries_each_topics_id_and_a_recreated_topic_gets_a_new_one():
    from coordinator.cluster import KafkaCluster
    from coordinator.protocol import MetadataRequest

    cluster = KafkaCluster(num_brokers=1, topics={"orders": 2})

    def ids(topics: tuple[str, ...] | None = None) -> dict[str, Uuid]:
        result = cluster.handle_request("broker-0", "c", 1, MetadataRequest(topics), 0)
        (send,) = result.effects
        return {t.name: t.topic_id for t in send.message.topics}

    assert ids() == {"orders": topic_id_for("orders", 0)}
    assert ids(("missing",)) == {"missing": ZERO_UUID}
    cluster.delete_topic("orders")
    cluster.create_topic("orders", 2)
    assert ids() == {"orders": topic_id_for("orders", 1)}
    assert cluster.topology.topic_name(topic_id_for("orders", 1)) == "orders"
    assert cluster.topology.topic_name(topic_id_for("orders", 0)) is None
