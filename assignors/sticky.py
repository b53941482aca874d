"""``sticky``: Kafka's ``StickyAssignor`` (KIP-54, generations from KIP-341), eager protocol only.

Under the eager protocol a member has revoked everything before it rejoins, so
``Subscription.owned_partitions`` is ignored: the assignor remembers its last assignment and
generation (``on_assignment``) and sends them in its subscription user data (schema V1, see
:mod:`assignors.sticky_user_data`); the leader reads ownership only from there. Null or empty user
data means "owns nothing, no generation"; unparseable data means "owns nothing, generation -1".

The assignment itself is :class:`~assignors.sticky_common.AbstractStickyAssignor`'s.
"""

from __future__ import annotations

import struct
from bisect import bisect_left, bisect_right
from collections.abc import Callable, Iterable, Sequence
from itertools import repeat
from operator import attrgetter, eq, itemgetter
from typing import Any, NamedTuple

import numpy as np

from assignors.api import RebalanceProtocol, Subscription, TopicPartition
from assignors.sticky_common import AbstractStickyAssignor, MemberData
from assignors.sticky_common_index import PartitionIndex
from assignors.sticky_context import ClaimBatch, Claims, split_by_sizes
from assignors.sticky_user_data import (
    DEFAULT_GENERATION,
    decode_sticky_user_data,
    encode_sticky_user_data,
    scan_sticky_user_data,
)

_EMPTY = np.zeros(0, dtype=np.int64)
_NO_CLAIMS = Claims(_EMPTY, None)  # no user data: owns nothing, no generation
_USER_DATA = attrgetter("user_data")
# below this many bytes of user data in all, plain Python decodes faster than numpy's batch
_PYTHON_BATCH_BYTES = 16384

__all__ = ["StickyAssignor"]


class StickyAssignor(AbstractStickyAssignor):
    name = "sticky"
    supported_protocols = (RebalanceProtocol.EAGER,)
    version = 0

    def __init__(self, prefer_rack_aware_logic: bool = False, logger: Any = None) -> None:
        super().__init__(prefer_rack_aware_logic=prefer_rack_aware_logic, logger=logger)
        self.member_assignment: list[TopicPartition] | None = None
        self.generation: int = DEFAULT_GENERATION

    def on_assignment(self, assignment: Sequence[TopicPartition], generation_id: int) -> None:
        """Remember what this member got, and in which generation, for the next join."""
        self.member_assignment = list(assignment)
        self.generation = generation_id

    def subscription_user_data(self, topics: Iterable[str]) -> bytes | None:
        if self.member_assignment is None:
            return None
        return encode_sticky_user_data(self.member_assignment, self.generation)

    def member_data(self, subscription: Subscription) -> MemberData:
        partitions, generation = decode_sticky_user_data(subscription.user_data)
        return MemberData(partitions, generation)

    def _claim_batch(self, subs: list[Subscription], index: PartitionIndex) -> ClaimBatch | None:
        """A fresh group's claims (nobody sends user data: one C pass); ``None`` otherwise."""
        return None if any(map(_USER_DATA, subs)) else ClaimBatch.nothing(len(subs))

    def _all_claims(
        self, members: list[str], subs: list[Subscription], index: PartitionIndex
    ) -> list[Claims]:
        """Short user data (``bytes``, up to 512) of all members decoded together: as one byte
        matrix when they share a layout (:func:`_same_layout_claims`), else entry by entry
        (:func:`_batch_claims`); the rest, and whatever a batch declines, one by one."""
        datas = list(map(_USER_DATA, subs))
        if not any(datas):  # one C pass: nobody claims anything
            return [_NO_CLAIMS] * len(subs)
        short: list[int] = []
        raws: list[bytes] = []
        for i, data in enumerate(datas):
            if type(data) is bytes and 0 < len(data) <= 512:
                short.append(i)
                raws.append(data)
        batch = _same_layout_claims(raws, index) if len(raws) > 1 else None
        if batch is not None:
            pass
        elif not short:
            batch = []
        elif sum(map(len, raws)) <= _PYTHON_BATCH_BYTES:
            batch = _grouped_claims(raws, index)
        else:
            batch = _batch_claims(raws, index)
        out: list[Claims | None] = [_NO_CLAIMS if not data else None for data in datas]
        for i, c in zip(short, batch, strict=True):
            out[i] = c
        if None in out:
            checked = self._claims_checked
            for i, c in enumerate(out):
                if c is None:
                    out[i] = checked(members[i], subs[i], index)
        return out  # type: ignore[return-value]  # no None left

    def member_claims(self, subscription: Subscription, index: PartitionIndex) -> Claims:
        """Decode the user data straight into partition ids: the leader's hot path.

        Same result as ``member_data`` followed by ``index.pids``; the partition numbers of all
        topics are read from the bytes in one numpy step instead of one tuple per partition.
        Malformed data takes the exact (slow) decoder.
        """
        data = subscription.user_data
        if not data:
            return Claims(_EMPTY, None)
        raw = bytes(data)
        if len(raw) > 512:
            regular = _regular_claims(raw, index)
            if regular is not None:
                return regular
        else:
            small = _small_claims(raw, index)
            if small is not None:
                return small
        scanned = scan_sticky_user_data(raw)
        if scanned is None:
            return super().member_claims(subscription, index)
        names, counts, offsets, generation = scanned
        lookup = index.topic_pos_bytes
        pos = []
        for name in names:
            p = lookup.get(name)
            if p is None:
                try:
                    name.decode("utf-8")
                except UnicodeDecodeError:
                    return super().member_claims(subscription, index)
                p = -1
            pos.append(p)
        if len(raw) <= 512:
            return Claims(_small_pids(raw, index, pos, counts, offsets), generation)
        total = sum(counts)
        if total == 0:
            return Claims(_EMPTY, generation)
        cnt = np.asarray(counts, dtype=np.int64)
        topic = np.repeat(np.asarray(pos, dtype=np.int64), cnt)
        starts = np.repeat(np.asarray(offsets, dtype=np.int64) - 4 * (np.cumsum(cnt) - cnt), cnt)
        at = starts + 4 * np.arange(total, dtype=np.int64)
        b = np.frombuffer(raw, dtype=np.uint8).astype(np.int64)
        value = (b[at] << 24) | (b[at + 1] << 16) | (b[at + 2] << 8) | b[at + 3]
        value -= (value >= 2**31) * 2**32
        known = topic >= 0
        safe = np.where(known, topic, 0)
        ok = known & (value >= 0) & (value < index.counts[safe]) if index.topics else known
        pids = index.offsets[safe] + value if index.topics else value
        return Claims(pids if ok.all() else pids[ok], generation)


def _regular_claims(raw: bytes, index: PartitionIndex) -> Claims | None:
    """Fully vectorised decoding when every topic entry has the same layout.

    A member's user data is usually regular: topic names of one length, the same number of
    partitions per topic (a member of a uniform group owns one or two partitions of each topic).
    Then the entries form a byte matrix, checked and read with numpy. Anything else (or any
    unknown topic name) returns ``None`` and takes the entry-by-entry path.
    """
    n = len(raw)
    if n < 10:
        return None
    entries = int.from_bytes(raw[0:4], "big", signed=True)
    name_len = int.from_bytes(raw[4:6], "big", signed=True)
    if entries <= 0 or name_len <= 0 or 10 + name_len > n:
        return None
    per_topic = int.from_bytes(raw[6 + name_len : 10 + name_len], "big", signed=True)
    size = 6 + name_len + 4 * per_topic
    body = 4 + entries * size
    if per_topic < 0 or body > n:
        return None
    table = index.names_of_length(name_len)
    if table is None:
        return None
    names_sorted, positions = table
    rows = np.frombuffer(raw, dtype=np.uint8, count=entries * size, offset=4).reshape(entries, size)
    lengths = (rows[:, 0].astype(np.int64) << 8) | rows[:, 1]
    counts = np.ascontiguousarray(rows[:, 2 + name_len : 6 + name_len]).view(">i4").ravel()
    if not ((lengths == name_len).all() and (counts == per_topic).all()):
        return None
    names = np.ascontiguousarray(rows[:, 2 : 2 + name_len]).view(f"S{name_len}").ravel()
    at = np.searchsorted(names_sorted, names)
    at_safe = np.minimum(at, names_sorted.size - 1)
    if not (names_sorted[at_safe] == names).all():
        return None
    topic = np.repeat(positions[at_safe], per_topic)
    value = np.ascontiguousarray(rows[:, 6 + name_len :]).view(">i4").ravel().astype(np.int64)
    generation = int.from_bytes(raw[body : body + 4], "big", signed=True) if n - body >= 4 else None
    ok = (value >= 0) & (value < index.counts[topic])
    pids = index.offsets[topic] + value
    return Claims(pids if ok.all() else pids[ok], generation)


def _small_pids(
    raw: bytes, index: PartitionIndex, pos: list[int], counts: list[int], offsets: list[int]
) -> np.ndarray:
    """Plain-Python id conversion for short user data, where numpy's per-call cost dominates."""
    out: list[int] = []
    sizes = index.counts
    starts = index.offsets
    for p, k, off in zip(pos, counts, offsets, strict=True):
        if p < 0 or k == 0:
            continue
        limit = int(sizes[p])
        base = int(starts[p])
        out.extend(base + v for v in struct.unpack_from(f">{k}i", raw, off) if 0 <= v < limit)
    return np.array(out, dtype=np.int64) if out else _EMPTY


_I32 = struct.Struct(">i")
_I16 = struct.Struct(">h")


class _Declined:
    """:func:`_read_claims_into`'s answer for data not of the shape it reads."""


_DECLINED = _Declined()


def _read_claims_into(raw: bytes, index: PartitionIndex, out: list[int]) -> int | _Declined | None:
    """Append the partition ids of short, well-formed user data with known topics to ``out``
    (numbers outside their topic dropped) and return the generation (``None`` when its 4 bytes
    are missing); :data:`_DECLINED`, with ``out`` left partly filled, for any other data."""
    n = len(raw)
    if n < 4:
        return _DECLINED
    unpack_i = _I32.unpack_from
    unpack_h = _I16.unpack_from
    (entries,) = unpack_i(raw, 0)
    if entries < 0 or entries > n - 4:
        return _DECLINED
    lookup = index.topic_pos_bytes
    sizes = index.count_list
    starts = index.offset_list
    pos = 4
    for _ in range(entries):
        if pos + 2 > n:
            return _DECLINED
        (length,) = unpack_h(raw, pos)
        pos += 2
        if length < 0 or pos + length + 4 > n:
            return _DECLINED
        t = lookup.get(raw[pos : pos + length])
        pos += length
        (count,) = unpack_i(raw, pos)
        pos += 4
        if t is None or count < 0 or 4 * count > n - pos:
            return _DECLINED  # unknown topic (validity of its name is checked on the exact path)
        limit = sizes[t]
        base = starts[t]
        if count == 1:
            (v,) = unpack_i(raw, pos)
            if 0 <= v < limit:
                out.append(base + v)
        elif count:
            out.extend(
                base + v for v in struct.unpack_from(f">{count}i", raw, pos) if 0 <= v < limit
            )
        pos += 4 * count
    return unpack_i(raw, pos)[0] if pos + 4 <= n else None


def _small_claims(raw: bytes, index: PartitionIndex) -> Claims | None:
    """One pass over short, well-formed user data with known topics; ``None`` otherwise."""
    out: list[int] = []
    generation = _read_claims_into(raw, index, out)
    if isinstance(generation, _Declined):
        return None
    return Claims(np.array(out, dtype=np.int64) if out else _EMPTY, generation)


def _entry_shapes(raw: bytes) -> tuple[list[tuple[int, int, int]], int] | None:
    """The shape of ``raw``'s entry list, read as :func:`_read_claims_into` reads it: each
    entry's (byte position, name length, partition count) and where the list ends; ``None``
    where the bytes cannot hold what they announce (that decoder declines them)."""
    n = len(raw)
    if n < 4:
        return None
    (entries,) = _I32.unpack_from(raw, 0)
    if entries < 0 or entries > n - 4:
        return None
    shapes: list[tuple[int, int, int]] = []
    pos = 4
    for _ in range(entries):
        if pos + 2 > n:
            return None
        (length,) = _I16.unpack_from(raw, pos)
        if length < 0 or pos + 2 + length + 4 > n:
            return None
        (count,) = _I32.unpack_from(raw, pos + 2 + length)
        if count < 0 or 4 * count > n - (pos + 6 + length):
            return None
        shapes.append((pos, length, count))
        pos += 6 + length + 4 * count
    return shapes, pos


def _layout(
    raw: bytes, index: PartitionIndex
) -> tuple[list[int], list[int], list[int], int] | None:
    """What :func:`_small_claims` reads from ``raw`` besides the partition numbers and the
    generation: (the byte positions it reads the layout from: entry count, name lengths, names,
    partition counts; the byte position of every partition number; each number's topic
    position; where the generation starts). ``None`` where :func:`_small_claims` declines, or
    for an empty entry list."""
    shape = _entry_shapes(raw)
    if shape is None or not shape[0]:
        return None
    entries, end = shape
    fixed = [0, 1, 2, 3]
    value_at: list[int] = []
    value_topic: list[int] = []
    lookup = index.topic_pos_bytes
    for pos, length, count in entries:
        t = lookup.get(raw[pos + 2 : pos + 2 + length])
        if t is None:
            return None
        fixed.extend(range(pos, pos + 6 + length))
        first = pos + 6 + length
        value_at.extend(range(first, first + 4 * count, 4))
        value_topic.extend([t] * count)
    return fixed, value_at, value_topic, end


def _same_layout_claims(raws: list[bytes], index: PartitionIndex) -> list[Claims | None] | None:
    """Every member's claims at once when all user data share one layout: the same length, and
    the same bytes wherever :func:`_small_claims` reads the layout (entry count, topic names,
    partition counts), so only partition numbers and generations differ. A uniform group's
    members (each owning the same number of partitions of the same topics) write such data.

    The data then form a byte matrix: the layout is read from the first row, checked against
    every row in one comparison, and the numbers of all members read as one ``>i4`` view.
    ``None`` (the member-by-member decoders decide) when the layout differs anywhere, or some
    number is outside its topic (the exact decoders drop it)."""
    size = len(raws[0])
    if len(set(map(len, raws))) != 1:
        return None
    layout = _layout(raws[0], index)
    if layout is None:
        return None
    fixed, value_at, value_topic, end = layout
    rows = np.frombuffer(b"".join(raws), dtype=np.uint8).reshape(len(raws), size)
    cols = np.array(fixed, dtype=np.int64)
    if not (rows[:, cols] == rows[0, cols]).all():
        return None
    at = np.array(value_at, dtype=np.int64)
    values = (
        np.ascontiguousarray(rows[:, (at[:, None] + np.arange(4)).ravel()])
        .view(">i4")
        .astype(np.int64)
    )
    topic = np.array(value_topic, dtype=np.int64)
    if values.size and not ((values >= 0) & (values < index.counts[topic])).all():
        return None
    pids = values + index.offsets[topic]
    if end + 4 <= size:
        gens: list[int | None] = (
            np.ascontiguousarray(rows[:, end : end + 4]).view(">i4").ravel().tolist()
        )
    else:
        gens = [None] * len(raws)
    return list(map(tuple.__new__, repeat(Claims), zip(pids, gens, strict=True)))


#: user data of one length shared by at least this many members are read as one layout
_GROUP_MIN = 4


class _Layout(NamedTuple):
    """One user data layout as a ``Struct``: what :func:`_read_claims_into` reads from the
    bytes besides the numbers (entry count, name lengths, partition counts: ``fixed``, expected
    to equal ``expected``), each entry's name field, every partition number, the generation."""

    unpack: Callable[[bytes], tuple[Any, ...]]
    fixed: Callable[[tuple[Any, ...]], Any]
    expected: Any
    names: list[Callable[[tuple[Any, ...]], bytes]]
    repeats: list[int]  # each entry's partition count
    values: Callable[[tuple[Any, ...]], Any] | None
    generation: int | None  # the generation's field, None when its 4 bytes are missing


def _struct_layout(raw: bytes) -> _Layout | None:
    """``raw``'s layout, read where :func:`_read_claims_into` reads it; ``None`` for data it
    declines for its shape."""
    shape = _entry_shapes(raw)
    if shape is None:
        return None
    entries, pos = shape
    n = len(raw)
    fmt = [">i"]
    fixed = [0]
    expected = [len(entries)]
    names: list[int] = []
    values: list[int] = []
    repeats: list[int] = []
    field = 1
    for _, length, count in entries:
        fmt.append(f"h{length}si{count}i")
        fixed += [field, field + 2]
        expected += [length, count]
        names.append(field + 1)
        values.extend(range(field + 3, field + 3 + count))
        repeats.append(count)
        field += 3 + count
    generation = None
    if n - pos >= 4:
        fmt.append("i")
        generation = field
        pos += 4
    if n > pos:
        fmt.append(f"{n - pos}x")
    getter = itemgetter(*fixed)
    return _Layout(
        struct.Struct("".join(fmt)).unpack,
        getter,
        tuple(expected) if len(fixed) > 1 else len(entries),  # one field: itemgetter gives it bare
        [itemgetter(f) for f in names],
        repeats,
        itemgetter(*values) if values else None,
        generation,
    )


def _read_layout_group(
    raws: list[bytes], members: list[int], index: PartitionIndex, out: list[Claims | None]
) -> bool:
    """Claims of ``members`` (whose data have one length) into ``out`` when all their data have
    the first one's layout, known topics and numbers inside their topics; else ``False``
    (:func:`_python_batch_claims` decides, member by member). One ``Struct.unpack`` per member
    and one numpy step per group, instead of a dozen reads per member."""
    layout = _struct_layout(raws[members[0]])
    if layout is None:
        return False
    rows = list(map(layout.unpack, map(raws.__getitem__, members)))
    if not all(map(eq, map(layout.fixed, rows), repeat(layout.expected))):
        return False
    lookup = index.topic_pos_bytes.get
    topics = [list(map(lookup, map(name, rows))) for name in layout.names]
    if any(None in column for column in topics):
        return False  # an unknown topic: the exact decoder checks its name
    n = len(rows)
    if layout.values is None:
        pids: list[np.ndarray] = [_EMPTY] * n
    else:
        value = np.array(list(map(layout.values, rows)), dtype=np.int64).reshape(n, -1)
        topic = np.repeat(np.array(topics, dtype=np.int64).T, layout.repeats, axis=1)
        if not ((value >= 0) & (value < index.counts[topic])).all():
            return False  # the exact decoders drop numbers outside their topic
        pids = list(index.offsets[topic] + value)
    gens = (
        list(map(itemgetter(layout.generation), rows))
        if layout.generation is not None
        else [None] * n
    )
    # C-level maps: the tuples (``Claims`` adds nothing to ``tuple.__new__``) and their places
    claims = map(tuple.__new__, repeat(Claims), zip(pids, gens, strict=True))
    list(map(out.__setitem__, members, claims))
    return True


def _grouped_claims(raws: list[bytes], index: PartitionIndex) -> list[Claims | None]:
    """Short user data of many members, :func:`_python_batch_claims`' results: the data of each
    length shared by ``_GROUP_MIN`` or more members read as one layout
    (:func:`_read_layout_group`: members owning one partition of one topic, say, all write the
    same layout with other names and numbers), the rest by :func:`_python_batch_claims`."""
    lengths = list(map(len, raws))
    by_length = sorted(range(len(raws)), key=lengths.__getitem__)  # stable: members in order
    sorted_lengths = list(map(lengths.__getitem__, by_length))
    out: list[Claims | None] = [None] * len(raws)
    rest: list[int] = []
    for length in sorted(set(lengths)):
        members = by_length[
            bisect_left(sorted_lengths, length) : bisect_right(sorted_lengths, length)
        ]
        if len(members) < _GROUP_MIN or not _read_layout_group(raws, members, index, out):
            rest.extend(members)
    if rest:
        batch = _python_batch_claims(list(map(raws.__getitem__, rest)), index)
        for m, c in zip(rest, batch, strict=True):
            out[m] = c
    return out


def _python_batch_claims(raws: list[bytes], index: PartitionIndex) -> list[Claims | None]:
    """:func:`_batch_claims` in plain Python, for few short user data where numpy's per-call
    cost dominates: every member's data read by :func:`_read_claims_into` into one flat list
    turned into one array, then cut into per-member views. Same results (``None`` where
    :func:`_small_claims` declines)."""
    out: list[int] = []
    bounds: list[tuple[int, int, int | None] | None] = []
    for raw in raws:
        first = len(out)
        generation = _read_claims_into(raw, index, out)
        if isinstance(generation, _Declined):
            del out[first:]
            bounds.append(None)
        else:
            bounds.append((first, len(out), generation))
    flat = np.array(out, dtype=np.int64)
    return [
        None if b is None else Claims(flat[b[0] : b[1]] if b[1] > b[0] else _EMPTY, b[2])
        for b in bounds
    ]


def _batch_claims(raws: list[bytes], index: PartitionIndex) -> list[Claims | None]:
    """Many members' short user data decoded at once: entry ``k`` of every member per step.

    Handles the usual shape: well-formed V1 data whose topic names all have the byte length of
    the first one and are known to the index. The result for such data is the exact decoder's
    (partition numbers outside the topic dropped; generation absent when its 4 bytes are
    missing); any member whose data is otherwise gets ``None`` and takes the exact path.
    """
    n = len(raws)
    lens = np.fromiter(map(len, raws), dtype=np.int64, count=n)
    buf = np.frombuffer(b"".join(raws), dtype=np.uint8)
    top = buf.size - 4
    end = np.cumsum(lens)
    start = end - lens
    if top < 0:
        return [None] * n

    four = np.arange(4, dtype=np.int64)

    def i32(at: np.ndarray) -> np.ndarray:
        rows = buf[np.minimum(np.maximum(at, 0), top)[:, None] + four]
        return rows.view(">i4").ravel().astype(np.int64)

    entries = i32(start)
    ok = (lens >= 4) & (entries >= 0) & (entries <= lens - 4)
    entries = np.where(ok, entries, 0)
    pos = start + 4
    first = np.flatnonzero(entries > 0)
    name_len = 0
    if first.size:
        at = int(pos[first[0]])
        name_len = (int(buf[at]) << 8) | int(buf[at + 1]) if at + 2 <= buf.size else 0
    table = index.names_of_length(name_len) if name_len > 0 else None
    if table is None:
        ok &= entries == 0
    names_sorted, positions = table if table is not None else (None, None)
    sizes = index.counts
    offsets = index.offsets
    pid_parts: list[np.ndarray] = []
    owner_parts: list[np.ndarray] = []
    span = np.arange(name_len, dtype=np.int64)
    for k in range(int(entries.max()) if ok.any() and table is not None else 0):
        assert names_sorted is not None and positions is not None  # the loop needs a table
        idx = np.flatnonzero(ok & (entries > k))
        if not idx.size:
            break
        p = pos[idx]
        e = end[idx]
        good = p + 6 + name_len <= e
        length = (buf[np.minimum(p, top)].astype(np.int64) << 8) | buf[np.minimum(p + 1, top)]
        good &= length == name_len
        count = i32(p + 2 + name_len)
        body = p + 6 + name_len
        good &= (count >= 0) & (4 * count <= e - body)
        names = (
            np.ascontiguousarray(buf[np.minimum((p + 2)[:, None] + span, buf.size - 1)])
            .view(f"S{name_len}")
            .ravel()
        )
        found = np.searchsorted(names_sorted, names)
        found = np.minimum(found, names_sorted.size - 1)
        good &= names_sorted[found] == names
        ok[idx[~good]] = False
        idx, count, body, topic = idx[good], count[good], body[good], positions[found[good]]
        pos[idx] = body + 4 * count
        total = int(count.sum())
        if total:
            first_at = np.repeat(body - 4 * (np.cumsum(count) - count), count)
            value = i32(first_at + 4 * np.arange(total, dtype=np.int64))
            topic_each = np.repeat(topic, count)
            owner = np.repeat(idx, count)
            keep = (value >= 0) & (value < sizes[topic_each])
            pid_parts.append((offsets[topic_each] + value)[keep])
            owner_parts.append(owner[keep])
    has_gen = pos + 4 <= end
    generation = np.where(has_gen, i32(pos), 0).tolist()
    has_gen_list = has_gen.tolist()
    if pid_parts:
        pids = np.concatenate(pid_parts)
        owners = np.concatenate(owner_parts)
        order = np.argsort(owners, kind="stable")
        pids = pids[order]
        per_member = split_by_sizes(pids, np.bincount(owners, minlength=n).tolist())
    else:
        per_member = [_EMPTY] * n
    return [
        Claims(
            per_member[i] if per_member[i].size else _EMPTY,
            generation[i] if has_gen_list[i] else None,
        )
        if good_i
        else None
        for i, good_i in enumerate(ok.tolist())
    ]
