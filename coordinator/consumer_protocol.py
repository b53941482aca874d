"""Kafka's ConsumerProtocol wire format (``ConsumerProtocolSubscription`` /
``ConsumerProtocolAssignment``, versions 0-3, after a big-endian int16 version prefix), in plain
types: what the coordinator reads and writes when classic members live in a KIP-848 consumer
group (GroupMetadataManager's deserializeSubscription and prepareAssignment,
ConsumerGroup.fromClassicGroup, ClassicGroup.fromConsumerGroup). ``members/consumer_protocol.py``
builds the client's typed encoders and decoders on these primitives.

Decoding accepts any version >= 0 and reads a version above 3 as version 3 (Kafka's
forward-compatibility rule); a rack id of ``""`` decodes as no rack, as in Kafka.
"""

from __future__ import annotations

import struct
from collections.abc import Iterable

from attrs import field, frozen

from coordinator.java import java_utf8
from coordinator.memo import Memo
from coordinator.tuples import to_tuple

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

    # string, nullable_bytes and array_len read their length in place (int16/int32 and
    # _advance inlined: several calls per subscription or assignment read), same errors

    def string(self) -> str:
        data = self.data
        try:
            (n,) = _INT16.unpack_from(data, self.pos)
        except struct.error:
            raise self._underflow() from None
        if n < 0:
            raise SchemaError(f"null string in a non-nullable field of the {self.what}")
        start = self.pos + 2
        end = start + n
        if end > len(data):
            raise self._underflow()
        self.pos = end
        return data[start:end].decode("utf-8")

    def nullable_string(self) -> str | None:
        n = self.int16()
        return None if n < 0 else self.take(n).decode("utf-8")

    def nullable_bytes(self) -> bytes | None:
        data = self.data
        try:
            (n,) = _INT32.unpack_from(data, self.pos)
        except struct.error:
            raise self._underflow() from None
        if n < 0:
            self.pos += 4
            return None
        start = self.pos + 4
        end = start + n
        if end > len(data):
            raise self._underflow()
        self.pos = end
        return data[start:end]

    def array_len(self) -> int:
        try:
            (n,) = _INT32.unpack_from(self.data, self.pos)
        except struct.error:
            raise self._underflow() from None
        self.pos += 4
        if n < 0:
            raise SchemaError(f"null array in a non-nullable field of the {self.what}")
        return n

    def topic_partitions(self) -> list[tuple[str, int]]:
        result: list[tuple[str, int]] = []
        for _ in range(self.array_len()):
            topic = self.string()
            n = self.array_len()
            numbers = struct.unpack_from(f">{n}i", self.data, self._advance(4 * n))
            result.extend([(topic, p) for p in numbers])
        return result


def decode_version(data: bytes) -> int:
    """ConsumerProtocol.deserializeVersion."""
    if len(data) < 2:
        raise SchemaError(f"insufficient bytes to read the consumer protocol version ({len(data)})")
    return struct.unpack(">h", data[:2])[0]


@frozen
class SubscriptionFields:
    """ConsumerProtocolSubscription's fields (the ones a version lacks at their defaults)."""

    topics: tuple[str, ...] = field(converter=to_tuple)
    user_data: bytes | None
    owned_partitions: tuple[tuple[str, int], ...] = field(converter=to_tuple)
    generation_id: int
    rack_id: str | None


# Memos of the pure conversions below (coordinator/memo.py), keyed by their immutable input
# (bytes, or a tuple of the partitions): about 9 reads in 10 in the rolling restart repeat an
# earlier one, and groups on the same topic share them (about 110 distinct subscriptions and 100
# assignments at 10 or 100 groups).
_SUBSCRIPTIONS: Memo[bytes, SubscriptionFields] = Memo()
_ASSIGNMENTS: Memo[bytes, tuple[tuple[tuple[str, int], ...], bytes | None]] = Memo()
_ENCODED: Memo[tuple[tuple[tuple[str, int], ...], bytes | None, int], bytes] = Memo()


def read_subscription(data: bytes) -> SubscriptionFields:
    """ConsumerProtocol.deserializeConsumerProtocolSubscription (memoised: the result is frozen)."""
    if type(data) is not bytes:
        return _read_subscription(data)
    fields = _SUBSCRIPTIONS.answers.get(data)
    if fields is None:
        return _SUBSCRIPTIONS.keep(data, _read_subscription(data), len(data))
    return fields


def _read_subscription(data: bytes) -> SubscriptionFields:
    reader = _Reader(data, "subscription")
    version = _check_version(reader.int16(), SUBSCRIPTION_HIGHEST_VERSION, "subscription")
    topics = [reader.string() for _ in range(reader.array_len())]
    user_data = reader.nullable_bytes()
    owned = reader.topic_partitions() if version >= 1 else []
    generation_id = reader.int32() if version >= 2 else -1
    rack = reader.nullable_string() if version >= 3 else None
    return SubscriptionFields(topics, user_data, owned, generation_id, rack or None)


def read_assignment(data: bytes) -> tuple[list[tuple[str, int]], bytes | None]:
    """ConsumerProtocol.deserializeAssignment -> (partitions in wire order, user data); the list
    is the caller's own (memoised as a tuple)."""
    read = _ASSIGNMENTS.answers.get(data) if type(data) is bytes else None
    if read is None:
        reader = _Reader(data, "assignment")
        _check_version(reader.int16(), ASSIGNMENT_HIGHEST_VERSION, "assignment")
        read = (tuple(reader.topic_partitions()), reader.nullable_bytes())
        if type(data) is bytes:
            _ASSIGNMENTS.keep(data, read, len(data))
    return list(read[0]), read[1]


def write_assignment(
    partitions: Iterable[tuple[str, int]],
    user_data: bytes | None = None,
    version: int = ASSIGNMENT_HIGHEST_VERSION,
) -> bytes:
    """ConsumerProtocol.serializeAssignment: partitions grouped by topic, first appearance first
    (memoised by the partitions, the user data and the version)."""
    partitions = tuple(partitions)
    if type(version) is not int:
        return _write_assignment(partitions, user_data, version)
    key = (partitions, user_data, version)
    try:
        encoded = _ENCODED.answers.get(key)
    except TypeError:  # an unhashable partition or user data: not memoised
        return _write_assignment(partitions, user_data, version)
    if encoded is None:
        encoded = _write_assignment(partitions, user_data, version)
        # the key holds what the encoding holds, give or take the framing
        _ENCODED.keep(key, encoded, len(encoded))
    return encoded


def _write_assignment(
    partitions: tuple[tuple[str, int], ...], user_data: bytes | None, version: int
) -> bytes:
    version = _check_version(version, ASSIGNMENT_HIGHEST_VERSION, "assignment")
    by_topic: dict[str, list[int]] = {}
    for topic, partition in partitions:
        by_topic.setdefault(topic, []).append(partition)
    return _int16(version) + _topic_partitions(by_topic.items()) + _nullable_bytes(user_data)
