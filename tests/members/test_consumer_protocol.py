"""ConsumerProtocol bytes: hand-computed vectors, kafka-python agreement, round trips."""

from __future__ import annotations

import pytest
from attrs import evolve
from hypothesis import given, settings
from hypothesis import strategies as st

from assignors.api import Subscription, TopicPartition
from members.consumer_protocol import (
    SchemaError,
    decode_assignment,
    decode_subscription,
    encode_assignment,
    encode_subscription,
    encode_subscriptions,
)

TP = TopicPartition

# kafka-python loads its schemas with a deprecated importlib.resources call; not our concern.
pytestmark = pytest.mark.filterwarnings(
    r"ignore:.*is deprecated. Use files\(\) instead:DeprecationWarning"
)


def test_subscription_v3_known_vector_computed_from_the_schema() -> None:
    sub = Subscription(
        topics=("b", "a"),  # Kafka sorts topics before writing them
        user_data=None,
        owned_partitions=(TP("a", 2), TP("a", 0)),  # sorted, grouped by topic
        generation_id=5,
        rack_id="r1",
    )
    expected = bytes.fromhex(
        "0003"  # version 3
        "00000002"
        "0001"
        "61"
        "0001"
        "62"  # topics: ["a", "b"]
        "ffffffff"  # user data: null
        "00000001"
        "0001"
        "61"
        "00000002"
        "00000000"
        "00000002"  # owned: a -> [0, 2]
        "00000005"  # generation id
        "0002"
        "7231"  # rack id "r1"
    )
    assert encode_subscription(sub) == expected


def test_subscription_versions_drop_newer_fields() -> None:
    sub = Subscription(
        topics=("t",), user_data=b"\x01", owned_partitions=(TP("t", 1),), generation_id=7
    )
    v0 = encode_subscription(sub, version=0)
    assert v0 == bytes.fromhex("0000000000010001740000000101")
    v1 = encode_subscription(sub, version=1)
    assert v1 == v0[:0] + bytes.fromhex("0001") + v0[2:] + bytes.fromhex(
        "000000010001740000000100000001"
    )
    v2 = encode_subscription(sub, version=2)
    assert v2 == bytes.fromhex("0002") + v1[2:] + bytes.fromhex("00000007")
    assert encode_subscription(sub, version=3) == bytes.fromhex("0003") + v2[2:] + bytes.fromhex(
        "ffff"
    )


@pytest.mark.parametrize("version", [0, 1, 2, 3, 4])
def test_encode_subscriptions_equals_one_encoding_per_user_data(version: int) -> None:
    sub = Subscription(
        topics=("b", "a"), owned_partitions=(TP("b", 3), TP("a", 1)), generation_id=4, rack_id="r"
    )
    user_data = [None, b"", b"\x00\x01\x02"]
    assert encode_subscriptions(sub, user_data, version) == [
        encode_subscription(evolve(sub, user_data=u), version) for u in user_data
    ]


def test_assignment_known_vector_keeps_first_appearance_order() -> None:
    data = encode_assignment([TP("b", 3), TP("a", 1), TP("b", 0)], user_data=b"")
    assert data == bytes.fromhex(
        "0003"
        "00000002"
        "0001"
        "62"
        "00000002"
        "00000003"
        "00000000"  # b -> [3, 0]
        "0001"
        "61"
        "00000001"
        "00000001"  # a -> [1]
        "00000000"  # user data: empty (not null)
    )
    partitions, user_data = decode_assignment(data)
    assert partitions == [TP("b", 3), TP("b", 0), TP("a", 1)]
    assert user_data == b""


def test_agrees_with_kafka_python() -> None:
    from kafka.protocol.consumer.metadata import (
        ConsumerProtocolAssignment as KA,
    )
    from kafka.protocol.consumer.metadata import (
        ConsumerProtocolSubscription as KS,
    )

    for version in range(4):
        theirs = KS(
            topics=["a", "b"],
            user_data=b"xy",
            owned_partitions=[KS.TopicPartition(topic="a", partitions=[0, 2])],
            generation_id=9,
            rack_id="rack-1",
            version=version,
        ).encode(version=version)
        ours = encode_subscription(
            Subscription(
                topics=("a", "b"),
                user_data=b"xy",
                owned_partitions=(TP("a", 0), TP("a", 2)),
                generation_id=9,
                rack_id="rack-1",
            ),
            version=version,
        )
        assert ours == theirs, version
        kassign = KA(
            assigned_partitions=[KA.TopicPartition(topic="t", partitions=[4, 1])],
            user_data=None,
            version=version,
        ).encode(version=version)
        assert encode_assignment([TP("t", 4), TP("t", 1)], version=version) == kassign


def test_decode_reads_newer_versions_as_the_highest_known() -> None:
    sub = Subscription(topics=("t",), generation_id=3, rack_id="r")
    data = bytearray(encode_subscription(sub))
    data[0:2] = (9).to_bytes(2, "big")
    decoded = decode_subscription(bytes(data) + b"extra-fields-of-v9")
    assert decoded.topics == ("t",) and decoded.generation_id == 3 and decoded.rack_id == "r"


def test_decode_defaults_for_old_versions_and_empty_rack() -> None:
    sub = Subscription(topics=("t",), owned_partitions=(TP("t", 0),), generation_id=4, rack_id="")
    v0 = decode_subscription(encode_subscription(sub, version=0))
    assert v0.owned_partitions == () and v0.generation_id == -1 and v0.rack_id is None
    assert decode_subscription(encode_subscription(sub)).rack_id is None  # "" means no rack


@pytest.mark.parametrize("data", [b"", b"\x00", b"\x00\x03\x00\x00\x00\x05", b"\xff\xff\x00\x00"])
def test_truncated_or_invalid_bytes_raise_schema_error(data: bytes) -> None:
    with pytest.raises(SchemaError):
        decode_subscription(data)
    with pytest.raises(SchemaError):
        decode_assignment(data)


topic_names = st.text(alphabet="abcxyz-_.0123456789", min_size=1, max_size=8)


@settings(max_examples=50, deadline=None, derandomize=True)
@given(
    topics=st.lists(topic_names, max_size=5, unique=True),
    owned=st.lists(st.tuples(topic_names, st.integers(0, 1000)), max_size=8, unique=True),
    user_data=st.none() | st.binary(max_size=10),
    generation=st.integers(-1, 2**31 - 1),
    rack=st.none() | topic_names,
)
def test_subscription_round_trip(topics, owned, user_data, generation, rack) -> None:
    sub = Subscription(
        topics=tuple(sorted(topics)),
        user_data=user_data,
        owned_partitions=tuple(sorted(TP(t, p) for t, p in owned)),
        generation_id=generation,
        rack_id=rack,
    )
    assert decode_subscription(encode_subscription(sub)) == sub


@settings(max_examples=50, deadline=None, derandomize=True)
@given(parts=st.lists(st.tuples(topic_names, st.integers(0, 5000)), max_size=12, unique=True))
def test_assignment_round_trip_groups_by_topic(parts) -> None:
    partitions = [TP(t, p) for t, p in parts]
    decoded, user_data = decode_assignment(encode_assignment(partitions))
    assert sorted(decoded) == sorted(partitions)
    assert user_data is None
    # grouped: each topic's partitions are contiguous in the decoded order
    seen: list[str] = []
    for tp in decoded:
        if not seen or seen[-1] != tp.topic:
            assert tp.topic not in seen
            seen.append(tp.topic)


def test_a_topic_name_with_a_lone_surrogate_is_written_as_java_writes_it() -> None:
    """ConsumerProtocol writes topic names with Utils.utf8: a lone surrogate becomes '?'."""
    from assignors.api import Subscription
    from members.consumer_protocol import decode_subscription, encode_subscription

    decoded = decode_subscription(encode_subscription(Subscription(topics=["t\ud800", "u"])))
    assert list(decoded.topics) == ["t?", "u"]


def test_every_truncation_and_null_field_is_a_schema_error() -> None:
    """A cut-off buffer, or a null length where the schema forbids one, names the problem
    (SchemaError), never struct.error or a short read taken as data."""
    sub = Subscription(
        topics=("t1", "t2"),
        user_data=b"ud",
        owned_partitions=(TP("t1", 0), TP("t2", 3)),
        generation_id=7,
        rack_id="rack",
    )
    full = encode_subscription(sub)
    assert decode_subscription(full) == evolve(sub, topics=("t1", "t2"))
    assignment = encode_assignment([TP("t1", 1), TP("t1", 4)], b"x")
    assert decode_assignment(assignment) == ([TP("t1", 1), TP("t1", 4)], b"x")
    for data, decode in ((full, decode_subscription), (assignment, decode_assignment)):
        for cut in range(2, len(data)):
            with pytest.raises(SchemaError, match="buffer underflow"):
                decode(data[:cut])
    # version 0, one topic whose length is -1 (null string), then a null topic array
    with pytest.raises(SchemaError, match="null string"):
        decode_subscription(bytes.fromhex("000000000001ffff"))
    with pytest.raises(SchemaError, match="null array"):
        decode_subscription(bytes.fromhex("0000ffffffff"))
    # a null user data is allowed and read as None
    assert decode_assignment(bytes.fromhex("000000000000ffffffff")) == ([], None)
