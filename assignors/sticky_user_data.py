"""The sticky assignors' user data, byte for byte as Kafka writes and reads it.

``StickyAssignor`` (eager, KIP-54) cannot rely on ``Subscription.ownedPartitions``: under the eager
protocol a member revokes everything before it rejoins. So it ships its last assignment, and since
Kafka 2.3 (KIP-341) the generation it was received in, inside its subscription user data, using
Kafka's protocol ``Struct`` encoding (big-endian):

* V0 ``previous_assignment: [ {topic: STRING, partitions: [INT32]} ]``
* V1 ``previous_assignment: [...]`` then ``generation: INT32``

``STRING`` is an int16 length plus UTF-8 bytes, ``[X]`` an int32 element count plus the elements.
Kafka groups the partitions by topic in a ``HashMap`` (with ``computeIfAbsent``), so the topics
appear in that map's iteration order, and a topic's partitions in the order they were given.

``CooperativeStickyAssignor`` only needs its generation (V0: a single ``INT32``); ownership comes
from ``Subscription.owned_partitions``.

Decoding mirrors Kafka's forgiving reader: V1 first, then V0 (no generation), and data that parses
as neither yields no partitions and generation ``-1`` (``DEFAULT_GENERATION``).
"""

from __future__ import annotations

import struct
from collections.abc import Iterable

from assignors.api import TopicPartition
from coordinator.java import compute_if_absent_order

__all__ = [
    "DEFAULT_GENERATION",
    "UserDataError",
    "decode_cooperative_user_data",
    "decode_sticky_user_data",
    "encode_cooperative_user_data",
    "encode_sticky_user_data",
    "scan_sticky_user_data",
]

DEFAULT_GENERATION = -1

_I16 = struct.Struct(">h")
_I32 = struct.Struct(">i")


class UserDataError(ValueError):
    """User data that Kafka's schema reader would reject."""


def encode_sticky_user_data(
    partitions: Iterable[TopicPartition], generation: int | None = None
) -> bytes:
    """``StickyAssignor.serializeTopicPartitionAssignment``: V1 with a generation, V0 without.

    Kafka itself always writes V1; ``generation=None`` produces what a pre-2.3 (V0) client sent.
    """
    partitions = list(partitions)
    by_topic: dict[str, list[int]] = {}
    for tp in partitions:
        by_topic.setdefault(tp.topic, []).append(int(tp.partition))
    out = bytearray(_I32.pack(len(by_topic)))
    for topic in compute_if_absent_order([tp.topic for tp in partitions]):
        name = topic.encode("utf-8")
        if len(name) > 0x7FFF:
            raise UserDataError(f"topic name too long for a protocol STRING: {topic[:40]!r}...")
        out += _I16.pack(len(name)) + name
        numbers = by_topic[topic]
        out += _I32.pack(len(numbers))
        out += struct.pack(f">{len(numbers)}i", *numbers)
    if generation is not None:
        out += _I32.pack(generation)
    return bytes(out)


class _Reader:
    """A bounds-checked cursor, failing the way Kafka's ``Type.read`` does."""

    def __init__(self, data: bytes) -> None:
        self.data = data
        self.pos = 0

    def _take(self, n: int) -> bytes:
        if self.pos + n > len(self.data):
            raise UserDataError("buffer underflow")
        chunk = self.data[self.pos : self.pos + n]
        self.pos += n
        return chunk

    def int16(self) -> int:
        return _I16.unpack(self._take(2))[0]

    def int32(self) -> int:
        return _I32.unpack(self._take(4))[0]

    def string(self) -> str:
        n = self.int16()
        if n < 0:
            raise UserDataError(f"string length {n} cannot be negative")
        try:
            return self._take(n).decode("utf-8")
        except UnicodeDecodeError as exc:  # Java would decode with replacement; treat as corrupt
            raise UserDataError("string is not UTF-8") from exc

    def array_size(self) -> int:
        n = self.int32()
        if n < 0:
            raise UserDataError(f"array size {n} cannot be negative")
        if n > len(self.data) - self.pos:
            raise UserDataError(f"array of size {n}, only {len(self.data) - self.pos} bytes left")
        return n


def _read_assignment(reader: _Reader) -> list[TopicPartition]:
    partitions: list[TopicPartition] = []
    for _ in range(reader.array_size()):
        topic = reader.string()
        count = reader.array_size()
        numbers = struct.unpack(f">{count}i", reader._take(4 * count))
        partitions.extend(TopicPartition(topic, p) for p in numbers)
    return partitions


def decode_sticky_user_data(data: bytes | None) -> tuple[list[TopicPartition], int | None]:
    """``StickyAssignor.memberData``: ``(previous partitions, generation or None)``.

    ``None`` or empty data means no ownership and no generation; unparseable data means no
    ownership and generation ``-1``, as in Kafka.
    """
    if not data:
        return [], None
    data = bytes(data)
    try:
        reader = _Reader(data)
        partitions = _read_assignment(reader)
        return partitions, reader.int32()
    except UserDataError:
        pass
    try:
        return _read_assignment(_Reader(data)), None
    except UserDataError:
        return [], DEFAULT_GENERATION


def scan_sticky_user_data(
    data: bytes,
) -> tuple[list[bytes], list[int], list[int], int | None] | None:
    """A fast structural pass over V0/V1 data for the leader's hot path.

    Returns the raw topic-name bytes, each topic's partition count, the byte offset of each
    topic's partition numbers, and the generation (``None`` for V0); the numbers themselves are
    then read in one vectorised step by the caller. Returns ``None`` whenever the data is not
    well-formed, and the caller falls back to :func:`decode_sticky_user_data`, which implements
    Kafka's exact error handling.
    """
    n = len(data)
    if n < 4:
        return None
    unpack_i = _I32.unpack_from
    unpack_h = _I16.unpack_from
    (entries,) = unpack_i(data, 0)
    if entries < 0 or entries > n - 4:
        return None
    pos = 4
    names: list[bytes] = []
    counts: list[int] = []
    offsets: list[int] = []
    for _ in range(entries):
        if pos + 2 > n:
            return None
        (length,) = unpack_h(data, pos)
        pos += 2
        if length < 0 or pos + length + 4 > n:
            return None
        names.append(data[pos : pos + length])
        pos += length
        (count,) = unpack_i(data, pos)
        pos += 4
        if count < 0 or 4 * count > n - pos:
            return None
        counts.append(count)
        offsets.append(pos)
        pos += 4 * count
    generation = unpack_i(data, pos)[0] if pos + 4 <= n else None
    return names, counts, offsets, generation


def encode_cooperative_user_data(generation: int) -> bytes:
    """``CooperativeStickyAssignor.subscriptionUserData``: the generation as one big-endian int32."""
    return _I32.pack(generation)


def decode_cooperative_user_data(data: bytes | None) -> int | None:
    """The generation in a cooperative member's user data: ``None`` without data, ``-1`` if corrupt."""
    if data is None:
        return None
    if len(data) < 4:
        return DEFAULT_GENERATION
    return _I32.unpack(bytes(data[:4]))[0]
