"""Kafka's ConsumerProtocol wire format, byte for byte: the JoinGroup metadata and SyncGroup bytes.

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

import struct
from collections.abc import Iterable, Sequence

from assignors.api import Subscription, TopicPartition
from coordinator.java import java_utf8

SUBSCRIPTION_HIGHEST_VERSION = 3
ASSIGNMENT_HIGHEST_VERSION = 3


class SchemaError(ValueError):
    """Bytes that do not parse as the consumer protocol (Kafka's SchemaException)."""


# --- primitive writers ---------------------------------------------------------------------------


_INT16 = struct.Struct(">h")
_INT32 = struct.Struct(">i")
_int16 = _INT16.pack
_int32 = _INT32.pack


def _string(value: str) -> bytes:
    raw = java_utf8(value)
    if len(raw) > 0x7FFF:
        raise SchemaError(f"string too long for the consumer protocol: {len(raw)} bytes")
    return _int16(len(raw)) + raw


def _nullable_string(value: str | None) -> bytes:
    return _int16(-1) if value is None else _string(value)


def _nullable_bytes(value: bytes | None) -> bytes:
    return _int32(-1) if value is None else _int32(len(value)) + bytes(value)


def _topic_partitions(groups: Iterable[tuple[str, list[int]]]) -> bytes:
    groups = list(groups)
    out = [_int32(len(groups))]
    for topic, partitions in groups:
        out.append(_string(topic))
        out.append(struct.pack(f">i{len(partitions)}i", len(partitions), *partitions))
    return b"".join(out)


def _check_version(version: int, highest: int, what: str) -> int:
    if version < 0:
        raise SchemaError(f"unsupported {what} version: {version}")
    return min(version, highest)


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
    version = _check_version(version, ASSIGNMENT_HIGHEST_VERSION, "assignment")
    by_topic: dict[str, list[int]] = {}
    for tp in partitions:
        by_topic.setdefault(tp.topic, []).append(tp.partition)
    return _int16(version) + _topic_partitions(by_topic.items()) + _nullable_bytes(user_data)


# --- decoders ----------------------------------------------------------------------------------


class _Reader:
    def __init__(self, data: bytes, what: str) -> None:
        self.data = bytes(data)
        self.pos = 0
        self.what = what

    def _underflow(self) -> SchemaError:
        return SchemaError(f"buffer underflow while parsing consumer protocol's {self.what}")

    def _advance(self, n: int) -> int:
        """Claim the next ``n`` bytes; returns where they start (numbers are unpacked in place)."""
        start = self.pos
        if n < 0 or start + n > len(self.data):
            raise self._underflow()
        self.pos = start + n
        return start

    def take(self, n: int) -> bytes:
        start = self._advance(n)
        return self.data[start : start + n]

    # The fixed-size numbers let unpack_from do the bounds check (struct.error: too few bytes).

    def int16(self) -> int:
        try:
            (value,) = _INT16.unpack_from(self.data, self.pos)
        except struct.error:
            raise self._underflow() from None
        self.pos += 2
        return value

    def int32(self) -> int:
        try:
            (value,) = _INT32.unpack_from(self.data, self.pos)
        except struct.error:
            raise self._underflow() from None
        self.pos += 4
        return value

    def string(self) -> str:
        n = self.int16()
        if n < 0:
            raise SchemaError(f"null string in a non-nullable field of the {self.what}")
        start = self._advance(n)
        return self.data[start : start + n].decode("utf-8")

    def nullable_string(self) -> str | None:
        n = self.int16()
        return None if n < 0 else self.take(n).decode("utf-8")

    def nullable_bytes(self) -> bytes | None:
        n = self.int32()
        return None if n < 0 else self.take(n)

    def array_len(self) -> int:
        n = self.int32()
        if n < 0:
            raise SchemaError(f"null array in a non-nullable field of the {self.what}")
        return n

    def topic_partitions(self) -> list[TopicPartition]:
        result: list[TopicPartition] = []
        for _ in range(self.array_len()):
            topic = self.string()
            n = self.array_len()
            numbers = struct.unpack_from(f">{n}i", self.data, self._advance(4 * n))
            result.extend([TopicPartition(topic, p) for p in numbers])
        return result


def decode_version(data: bytes) -> int:
    if len(data) < 2:
        raise SchemaError(f"insufficient bytes to read the consumer protocol version ({len(data)})")
    return struct.unpack(">h", data[:2])[0]


def decode_subscription(data: bytes) -> Subscription:
    """ConsumerProtocol.deserializeSubscription (the fields a version lacks get their defaults)."""
    reader = _Reader(data, "subscription")
    version = _check_version(reader.int16(), SUBSCRIPTION_HIGHEST_VERSION, "subscription")
    topics = [reader.string() for _ in range(reader.array_len())]
    user_data = reader.nullable_bytes()
    owned: list[TopicPartition] = reader.topic_partitions() if version >= 1 else []
    generation_id = reader.int32() if version >= 2 else -1
    rack = reader.nullable_string() if version >= 3 else None
    return Subscription(
        topics=tuple(topics),
        user_data=user_data,
        owned_partitions=tuple(owned),
        generation_id=generation_id,
        rack_id=rack or None,
    )


def decode_assignment(data: bytes) -> tuple[list[TopicPartition], bytes | None]:
    """ConsumerProtocol.deserializeAssignment -> (partitions in wire order, user data)."""
    reader = _Reader(data, "assignment")
    _check_version(reader.int16(), ASSIGNMENT_HIGHEST_VERSION, "assignment")
    partitions = reader.topic_partitions()
    user_data = reader.nullable_bytes()
    return partitions, user_data
