"""Kafka's ConsumerProtocol wire format, byte for byte: the JoinGroup metadata and SyncGroup bytes.

The wire primitives live in coordinator/consumer_protocol.py (the coordinator reads and writes
these bytes too, for classic members in KIP-848 groups); this module types them for the client.

Schemas (``ConsumerProtocolSubscription.json`` / ``ConsumerProtocolAssignment.json``, versions
0-3, not flexible) are written after a big-endian int16 version prefix
(``MessageUtil.toVersionPrefixedByteBuffer``):

* Subscription: ``Topics [string]``, ``UserData nullable bytes``, v1+ ``OwnedPartitions
  [Topic string, Partitions [int32]]``, v2+ ``GenerationId int32``, v3+ ``RackId nullable string``.
* Assignment: ``AssignedPartitions [Topic string, Partitions [int32]]``, ``UserData nullable bytes``.

Encodings follow ``ConsumerProtocol.serializeSubscription``: topics sorted, owned partitions
sorted by (topic, partition) and grouped by topic. ``serializeAssignment`` groups partitions by
topic in order of first appearance, keeping the caller's partition order. Decoding accepts any
version >= 0 and reads a version above 3 as version 3 (Kafka's forward-compatibility rule); a rack
id of ``""`` decodes as no rack, as in Kafka.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from assignors.api import Subscription, TopicPartition
from coordinator.consumer_protocol import (
    ASSIGNMENT_HIGHEST_VERSION,
    SUBSCRIPTION_HIGHEST_VERSION,
    SchemaError,
    _check_version,
    _int16,
    _int32,
    _nullable_bytes,
    _nullable_string,
    _string,
    _topic_partitions,
    decode_version,
    read_assignment,
    read_subscription,
    write_assignment,
)

__all__ = [
    "ASSIGNMENT_HIGHEST_VERSION",
    "SUBSCRIPTION_HIGHEST_VERSION",
    "SchemaError",
    "decode_assignment",
    "decode_subscription",
    "decode_version",
    "encode_assignment",
    "encode_subscription",
    "encode_subscriptions",
]


# --- encoders ----------------------------------------------------------------------------------


def encode_subscription(
    subscription: Subscription, version: int = SUBSCRIPTION_HIGHEST_VERSION
) -> bytes:
    """ConsumerProtocol.serializeSubscription: version prefix, then the versioned fields.

    The prefix carries the requested version (clamped to 3), exactly as Kafka writes it.
    """
    before, after = _subscription_fields(subscription, version)
    return before + _nullable_bytes(subscription.user_data) + after


def encode_subscriptions(
    subscription: Subscription,
    user_data: Sequence[bytes | None],
    version: int = SUBSCRIPTION_HIGHEST_VERSION,
) -> list[bytes]:
    """``encode_subscription`` of ``subscription`` with each of ``user_data`` in turn (its own
    user data is ignored). A JoinGroup carries one subscription per assignor, differing only in
    user data, so the other fields are encoded once."""
    before, after = _subscription_fields(subscription, version)
    return [before + _nullable_bytes(data) + after for data in user_data]


def _subscription_fields(subscription: Subscription, version: int) -> tuple[bytes, bytes]:
    """The encoded fields before the user data (version, topics) and after it (the rest)."""
    version = _check_version(version, SUBSCRIPTION_HIGHEST_VERSION, "subscription")
    topics = sorted(subscription.topics)
    before = [_int16(version), _int32(len(topics))]
    before.extend(_string(t) for t in topics)
    after = []
    if version >= 1:
        grouped: list[tuple[str, list[int]]] = []
        for tp in sorted(subscription.owned_partitions):
            if not grouped or grouped[-1][0] != tp.topic:
                grouped.append((tp.topic, []))
            grouped[-1][1].append(tp.partition)
        after.append(_topic_partitions(grouped))
    if version >= 2:
        after.append(_int32(subscription.generation_id))
    if version >= 3:
        after.append(_nullable_string(subscription.rack_id))
    return b"".join(before), b"".join(after)


def encode_assignment(
    partitions: Iterable[TopicPartition],
    user_data: bytes | None = None,
    version: int = ASSIGNMENT_HIGHEST_VERSION,
) -> bytes:
    """ConsumerProtocol.serializeAssignment: partitions grouped by topic, first appearance first."""
    return write_assignment(partitions, user_data, version)


# --- decoders ----------------------------------------------------------------------------------


def decode_subscription(data: bytes) -> Subscription:
    """ConsumerProtocol.deserializeSubscription (the fields a version lacks get their defaults)."""
    fields = read_subscription(data)
    return Subscription(
        topics=fields.topics,
        user_data=fields.user_data,
        owned_partitions=tuple([TopicPartition(t, p) for t, p in fields.owned_partitions]),
        generation_id=fields.generation_id,
        rack_id=fields.rack_id,
    )


def decode_assignment(data: bytes) -> tuple[list[TopicPartition], bytes | None]:
    """ConsumerProtocol.deserializeAssignment -> (partitions in wire order, user data)."""
    partitions, user_data = read_assignment(data)
    return [TopicPartition(t, p) for t, p in partitions], user_data
