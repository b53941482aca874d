"""StickyAssignorUserData V0/V1 and the cooperative generation, byte for byte."""

from __future__ import annotations

import random
import struct

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from assignors.api import Subscription
from assignors.sticky import (
    StickyAssignor,
    _batch_claims,
    _grouped_claims,
    _python_batch_claims,
    _regular_claims,
    _same_layout_claims,
    _small_claims,
)
from assignors.sticky_common_index import PartitionIndex, partition_index
from assignors.sticky_context import Claims
from assignors.sticky_user_data import (
    DEFAULT_GENERATION,
    decode_cooperative_user_data,
    decode_sticky_user_data,
    encode_cooperative_user_data,
    encode_sticky_user_data,
)
from tests.assignors.sticky_support import tp


def test_v1_layout() -> None:
    data = encode_sticky_user_data([tp("t", 0), tp("t", 1)], 1)
    assert data == bytes.fromhex("0000000100017400000002000000000000000100000001")


def test_v0_layout_has_no_generation() -> None:
    assert encode_sticky_user_data([tp("ab", 7)]) == bytes.fromhex(
        "00000001000261620000000100000007"
    )


def test_topics_in_java_hashmap_order() -> None:
    """Kafka groups by topic in a HashMap: "consumer1..3" iterate as consumer3, consumer2, consumer1."""
    data = encode_sticky_user_data(
        [tp("consumer1", 0), tp("consumer2", 5), tp("consumer3", 9), tp("consumer1", 2)], 4
    )
    expected = struct.pack(">i", 3)
    for topic, parts in (("consumer3", [9]), ("consumer2", [5]), ("consumer1", [0, 2])):
        expected += (
            struct.pack(">h", len(topic))
            + topic.encode()
            + struct.pack(f">i{len(parts)}i", len(parts), *parts)
        )
    expected += struct.pack(">i", 4)
    assert data == expected


def test_round_trips() -> None:
    parts = [tp("orders", 3), tp("orders", 1), tp("päyments", 0)]
    decoded, gen = decode_sticky_user_data(encode_sticky_user_data(parts, 12))
    assert sorted(decoded) == sorted(parts) and gen == 12
    decoded, gen = decode_sticky_user_data(encode_sticky_user_data(parts))
    assert sorted(decoded) == sorted(parts) and gen is None


def test_empty_and_corrupt_data() -> None:
    assert decode_sticky_user_data(None) == ([], None)
    assert decode_sticky_user_data(b"") == ([], None)
    assert decode_sticky_user_data(b"\x00\x00\x00\x05garbage") == ([], DEFAULT_GENERATION)
    assert decode_sticky_user_data(b"\xff\xff\xff\xff") == ([], DEFAULT_GENERATION)


def test_truncated_generation_falls_back_to_v0() -> None:
    data = encode_sticky_user_data([tp("t", 2)], 3)[:-2]
    assert decode_sticky_user_data(data) == ([tp("t", 2)], None)


def test_cooperative_generation() -> None:
    assert encode_cooperative_user_data(-1) == b"\xff\xff\xff\xff"
    assert decode_cooperative_user_data(None) is None
    assert decode_cooperative_user_data(b"") == DEFAULT_GENERATION
    assert decode_cooperative_user_data(b"\x00\x00\x01\x00extra") == 256


@settings(max_examples=50, deadline=None, derandomize=True)
@given(
    st.lists(
        st.tuples(
            st.sampled_from(["t0", "t1", "t2", "tx", "zz", "long-topic"]), st.integers(-2, 9)
        ),
        max_size=12,
    ),
    st.one_of(st.none(), st.integers(-1, 5)),
    st.sampled_from([b"", b"\x00", b"\x00\x00\x00\x07\x01"]),
)
def test_fast_claims_decoding_equals_reference_decoding(parts, generation, trailer) -> None:
    """StickyAssignor decodes user data straight to partition ids (vectorised when the layout is
    regular); it must agree with the reference decoder followed by the id lookup."""
    index = partition_index({"t0": 4, "t1": 6, "t2": 1, "zz": 3})
    data = encode_sticky_user_data([tp(t, p) for t, p in parts], generation) + trailer
    sub = Subscription(["t0"], data)
    fast = StickyAssignor().member_claims(sub, index)
    decoded, gen = decode_sticky_user_data(data)
    assert fast.generation == gen
    assert fast.pids.tolist() == index.pids(decoded).tolist()


def test_regular_layout_fast_path_is_taken_and_exact() -> None:
    index = partition_index({f"t{i:03d}": 10 for i in range(50)})
    parts = [tp(f"t{i:03d}", (i * 3) % 10) for i in range(50)]
    data = encode_sticky_user_data(parts, 4)
    claims = _regular_claims(data, index)
    assert claims is not None and claims.generation == 4
    assert sorted(claims.pids.tolist()) == sorted(index.pids(parts).tolist())


@pytest.mark.parametrize("seed", range(4))
def test_large_user_data_paths_equal_reference_decoding(seed: int) -> None:
    """Over 512 bytes the decoder goes vectorised: regular layouts as a byte matrix, irregular
    ones entry by entry; both must match the reference decoder."""
    rnd = random.Random(seed)
    index = partition_index({f"topic{i:02d}": 40 for i in range(30)} | {"x": 5})
    if seed % 2:  # regular: one partition of each topic
        parts = [tp(f"topic{i:02d}", rnd.randrange(40)) for i in range(30)]
    else:  # irregular: varying counts, unknown topics, out-of-range numbers
        names = [f"topic{i:02d}" for i in range(30)] + ["x", "unknown-topic"]
        parts = [tp(rnd.choice(names), rnd.randrange(-1, 45)) for _ in range(150)]
    data = encode_sticky_user_data(parts, rnd.choice([None, 3]))
    assert len(data) > 512
    fast = StickyAssignor().member_claims(Subscription(["x"], data), index)
    decoded, gen = decode_sticky_user_data(data)
    assert fast.generation == gen
    assert fast.pids.tolist() == index.pids(decoded).tolist()


def test_bytes_equal_kafkas_for_colliding_topics() -> None:
    """Bytes produced by Kafka's own StickyAssignor.serializeTopicPartitionAssignment (Java 17).
    "t10" and "t6" share a HashMap bucket; computeIfAbsent puts the later one first."""
    owned = (
        "t8:8,t7:11,t5:0,t3:22,t9:3,t3:56,t4:3,t10:13,t4:1,t10:27,t6:14,t2:3,t5:16,t1:24,t6:6,t0:17"
    )
    parts = [tp(s.rsplit(":", 1)[0], int(s.rsplit(":", 1)[1])) for s in owned.split(",")]
    kafka = bytes.fromhex(
        "0000000b000274340000000200000003000000010002743500000002000000000000001000027436000000020000000e000000060003743130000000020000000d0000001b00027437000000010000000b0002743800000001000000080002743900000001000000030002743000000001000000110002743100000001000000180002743200000001000000030002743300000002000000160000003800000001"
    )
    assert encode_sticky_user_data(parts, 1) == kafka


def test_table_grows_lazily_under_compute_if_absent() -> None:
    """Bytes from Kafka: 13 topics, one partition each. ``computeIfAbsent`` only grows the table at
    the start of the *next* call, so the 13th topic leaves it at 16 buckets (``put`` would have
    doubled it to 32), which changes the topic order."""
    owned = "t038:50,t037:0,t026:50,t029:50,t028:0,t034:0,t023:50,t022:0,t025:0,t035:50,t032:50,t031:0,t020:50"
    parts = [tp(s.rsplit(":", 1)[0], int(s.rsplit(":", 1)[1])) for s in owned.split(",")]
    kafka = bytes.fromhex(
        "0000000d0004743033380000000100000032000474303236000000010000003200047430"
        "333700000001000000000004743032390000000100000032000474303238000000010000"
        "000000047430323300000001000000320004743033340000000100000000000474303232"
        "000000010000000000047430323500000001000000000004743033350000000100000032"
        "000474303332000000010000003200047430323000000001000000320004743033310000"
        "00010000000000000001"
    )
    assert encode_sticky_user_data(parts, 1) == kafka


_BATCH_INDEX = {"t0": 4, "t1": 6, "t2": 1, "zz": 3, "päy": 2}


def _same_as_one_by_one(claims: Claims | None, raw: bytes, index: PartitionIndex) -> bool:
    """Assert that a batch decoder's ``claims`` for ``raw`` are the one-member decoder's
    (``None`` where it declines); True when there were claims to compare."""
    one = _small_claims(raw, index)
    assert (claims is None) == (one is None)
    if claims is None:
        return False
    assert claims.generation == one.generation
    assert claims.pids.tolist() == one.pids.tolist()
    return True


@settings(max_examples=150, deadline=None, derandomize=True)
@given(
    st.lists(
        st.tuples(
            st.lists(
                st.tuples(
                    st.sampled_from(["t0", "t1", "t2", "zz", "päy", "nope"]), st.integers(-2, 7)
                ),
                max_size=6,
            ),
            st.one_of(st.none(), st.integers(-1, 5)),
            st.sampled_from([b"", b"", b"\x00", b"\x00\x00\x00\x07\x01", b"\xff\xff\xff\xff"]),
            st.integers(0, 40),
        ),
        min_size=1,
        max_size=8,
    )
)
def test_plain_python_batch_equals_numpy_batch_and_reference(members) -> None:
    """Few short user data are decoded in plain Python (``_python_batch_claims``, numpy's per-call
    cost dominating there): same claims as the numpy batch, ``None`` (the exact path) wherever
    the one-member decoder declines, and the reference decoder's result otherwise. Malformed
    data is made by cutting a member's bytes short."""
    index = partition_index(_BATCH_INDEX)
    raws = []
    for parts, generation, trailer, cut in members:
        data = encode_sticky_user_data([tp(t, p) for t, p in parts], generation) + trailer
        raws.append(data[: max(1, len(data) - cut)] if cut > 30 else data)
    plain = _python_batch_claims(raws, index)
    numpy_batch = _batch_claims(raws, index)
    for raw, got, other in zip(raws, plain, numpy_batch, strict=True):
        if not _same_as_one_by_one(got, raw, index):
            continue
        if other is not None:
            assert (other.generation, other.pids.tolist()) == (got.generation, got.pids.tolist())
        decoded, gen = decode_sticky_user_data(raw)
        assert got.generation == gen
        assert got.pids.tolist() == index.pids(decoded).tolist()


@settings(max_examples=150, deadline=None, derandomize=True)
@given(
    st.lists(
        st.tuples(
            st.sampled_from(["t0", "t1", "t2", "zz", "päy", "t0", "t1", "nope"]), st.integers(0, 3)
        ),
        max_size=5,
    ),
    st.lists(
        st.tuples(
            st.integers(0, 7),
            st.one_of(st.none(), st.integers(-1, 5)),
            st.sampled_from(["same"] * 12 + ["rename", "cut", "recount", "outside"]),
        ),
        min_size=2,
        max_size=8,
    ),
)
def test_same_layout_batch_equals_one_by_one(template, members) -> None:
    """User data sharing one layout (same topics, partition counts and length: a uniform
    group's) are decoded as one byte matrix (``_same_layout_claims``): each member's claims are
    the one-member decoder's. Any member whose layout differs (another topic name, a cut,
    another partition count), or any number outside its topic, sends the whole batch back
    (``None``) to the member-by-member decoders."""
    index = partition_index(_BATCH_INDEX)
    same_generation_kind = len({gen is None for _, gen, _ in members}) == 1
    raws = []
    for value, gen, change in members:
        parts = [
            tp(t, (value + i) % _BATCH_INDEX.get(t, 1) if change != "outside" else 9)
            for t, k in template
            for i in range(k)
        ]
        if change == "rename" and parts:
            parts[0] = tp("t1" if parts[0].topic != "t1" else "t0", parts[0].partition)
        if change == "recount" and parts:
            parts.append(parts[0])
        data = encode_sticky_user_data(parts, gen if same_generation_kind else 3)
        raws.append(data[:-1] if change == "cut" and len(data) > 4 else data)
    got = _same_layout_claims(raws, index)
    if got is None:
        return  # declined: the member-by-member decoders decide
    for raw, claims in zip(raws, got, strict=True):
        one = _small_claims(raw, index)
        assert one is not None
        assert claims.generation == one.generation
        assert claims.pids.tolist() == one.pids.tolist()
        decoded, gen = decode_sticky_user_data(raw)
        assert (claims.generation, claims.pids.tolist()) == (gen, index.pids(decoded).tolist())


def test_same_layout_batch_reads_uniform_group_data() -> None:
    """The shape it is for: every member owns one partition of each topic."""
    index = partition_index({"a": 4, "b": 4})
    raws = [encode_sticky_user_data([tp("a", m), tp("b", 3 - m)], 2) for m in range(4)]
    got = _same_layout_claims(raws, index)
    assert got is not None
    assert [(c.pids.tolist(), c.generation) for c in got] == [
        (index.pids([tp("a", m), tp("b", 3 - m)]).tolist(), 2) for m in range(4)
    ]
    raws[2] = encode_sticky_user_data([tp("a", 2), tp("b", 9)], 2)  # 9: not a partition of b
    assert _same_layout_claims(raws, index) is None


@settings(max_examples=150, deadline=None, derandomize=True)
@given(
    st.lists(
        st.tuples(
            st.lists(
                st.tuples(
                    st.sampled_from(["t0", "t1", "zz"] * 4 + ["päy", "nope"]),
                    st.sampled_from([0, 1, 2] * 5 + [-1, 5]),
                ),
                min_size=1,
                max_size=2,
            ),
            st.sampled_from([None, -1, 1, 2, 2, 2]),
            st.sampled_from([b""] * 8 + [b"\x00", b"\x00\x00\x00\x07\x01"]),
            st.sampled_from(["keep"] * 8 + ["cut", "count"]),
        ),
        min_size=1,
        max_size=30,
    )
)
def test_grouped_batch_equals_one_by_one(members) -> None:
    """Short user data grouped by length (``_grouped_claims``: a length shared by a few members
    is read as one layout, with each member's own topic names and numbers) give the one-member
    decoder's claims, ``None`` (the exact path) wherever it declines. Few distinct topics and
    numbers make lengths collide; mutations keep the length but break the layout (a cut entry
    count, a partition count changed in place) or a number (outside its topic)."""
    index = partition_index(_BATCH_INDEX)
    raws = []
    for parts, generation, trailer, change in members:
        data = encode_sticky_user_data([tp(t, p) for t, p in parts], generation) + trailer
        if change == "cut":
            data = struct.pack(">i", len(data)) + data[4:]  # an entry count beyond the data
        elif change == "count" and len(data) >= 10:
            name_len = struct.unpack_from(">h", data, 4)[0]
            at = 6 + name_len
            if at + 4 <= len(data):
                data = data[:at] + struct.pack(">i", 0) + data[at + 4 :]
        raws.append(data)
    got = _grouped_claims(raws, index)
    for raw, claims in zip(raws, got, strict=True):
        _same_as_one_by_one(claims, raw, index)


def test_grouped_batch_reads_a_shared_layout_with_other_names() -> None:
    """The shape it is for: members owning one partition of one topic each (another topic,
    another number, one length) are read together, and out-of-topic numbers still drop."""
    index = partition_index({"t1": 3, "t2": 5, "t3": 2})
    owned = [("t1", 0), ("t2", 4), ("t3", 1), ("t1", 2), ("t2", 0)]
    raws = [encode_sticky_user_data([tp(t, p)], 1) for t, p in owned]
    got = _grouped_claims(raws, index)
    assert [(c.pids.tolist(), c.generation) for c in got] == [
        (index.pids([tp(t, p)]).tolist(), 1) for t, p in owned
    ]
    raws[1] = encode_sticky_user_data([tp("t2", 7)], 1)  # 7: not a partition of t2
    got = _grouped_claims(raws, index)
    assert got[1] is not None and got[1].pids.tolist() == []
