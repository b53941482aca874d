"""Names holding a lone surrogate (``"g\\ud800"``): legal Java strings, so the coordinator takes
them as Kafka does (hash, length and order over UTF-16 units) instead of raising mid-request."""

from __future__ import annotations

import attrs

from coordinator.errors import Errors
from coordinator.protocol import (
    DescribeGroupsRequest,
    OffsetFetchRequest,
    maybe_truncate_reason,
)
from tests.coordinator.harness import TEST_CONFIG, Driver

S = "\ud800"  # a high surrogate with no low one after it
GROUP = f"g{S}"


def _stable_group(d: Driver) -> tuple[dict[str, str], int]:
    ids, corrs = {}, {}
    for client in (f"c{S}", "d"):
        ids[client], corrs[client] = d.join_dynamic(client, GROUP)
    d.complete_join(GROUP)
    first = d.response(f"c{S}", corrs[f"c{S}"])
    assert first.error_code == Errors.NONE, first
    leader = d.cluster.group(GROUP).leader_id
    for client, member_id in ids.items():
        d.sync(
            client,
            member_id,
            first.generation_id,
            GROUP,
            assignments={m: b"a" for m in ids.values()} if member_id == leader else None,
        )
    return ids, first.generation_id


def test_a_group_of_such_names_joins_syncs_and_commits_through_the_cluster() -> None:
    d = Driver()
    assert d.cluster.partition_for(GROUP) == (31 * ord("g") + 0xD800) % 50
    ids, generation = _stable_group(d)
    assert d.state(GROUP) == "Stable"
    assert ids[f"c{S}"].startswith(f"c{S}-")  # member id = client id + "-" + uuid

    member = ids[f"c{S}"]
    errors = d.commit(f"c{S}", member, generation, {("t", 0): 7}, GROUP, metadata=f"m{S}")
    assert errors == {("t", 0): Errors.NONE}
    # a topic of that kind cannot exist (Topic.validate), so it is unknown, not a crash
    errors = d.commit(f"c{S}", member, generation, {(f"t{S}", 0): 7, ("t", 1): 8}, GROUP)
    assert errors == {(f"t{S}", 0): Errors.UNKNOWN_TOPIC_OR_PARTITION, ("t", 1): Errors.NONE}

    _corr, (fetched,) = d.send("d", OffsetFetchRequest(GROUP))
    got = {
        (t.name, p.partition_index): (p.committed_offset, p.metadata)
        for t in fetched.topics
        for p in t.partitions
    }
    assert got == {("t", 0): (7, f"m{S}"), ("t", 1): (8, "")}
    _corr, (described,) = d.send("d", DescribeGroupsRequest([GROUP]), d.coordinator(GROUP))
    assert {m.member_id for m in described.groups[0].members} == set(ids.values())


def test_offset_metadata_is_measured_in_utf16_units() -> None:
    """OffsetMetadataManager.validateOffsetCommit compares ``metadata.length()`` (UTF-16 units)
    with offset.metadata.max.bytes: a lone surrogate is one unit, a character beyond the BMP two."""
    d = Driver(attrs.evolve(TEST_CONFIG, offset_metadata_max_bytes=4))
    cases = {
        f"ab{S}c": Errors.NONE,  # 4 units
        "ab\U0001f600": Errors.NONE,  # 4 units, 3 characters
        "abc\U0001f600": Errors.OFFSET_METADATA_TOO_LARGE,  # 5 units, 4 characters
        f"abc{S}{S}": Errors.OFFSET_METADATA_TOO_LARGE,  # 5 units
    }
    for i, (metadata, expected) in enumerate(cases.items()):
        errors = d.commit("x", "", -1, {("t", i): 1}, GROUP, metadata=metadata)
        assert errors == {("t", i): expected}, metadata
    _corr, (fetched,) = d.send("x", OffsetFetchRequest(GROUP))
    stored = {p.partition_index: p.metadata for t in fetched.topics for p in t.partitions}
    assert stored == {0: f"ab{S}c", 1: "ab\U0001f600"}


def test_a_reason_is_cut_at_255_utf16_units() -> None:
    """JoinGroupRequest.maybeTruncateReason: ``length() > 255`` then ``substring(0, 255)``; a cut
    inside a surrogate pair keeps the high half alone, as Java's substring does."""
    assert maybe_truncate_reason("a" * 255) == "a" * 255
    assert maybe_truncate_reason("a" * 256) == "a" * 255
    # 127 characters beyond the BMP = 254 units: under the limit
    assert maybe_truncate_reason("\U0001f600" * 127) == "\U0001f600" * 127
    # 128 of them = 256 units: cut after 255 units, through the last pair
    assert maybe_truncate_reason("\U0001f600" * 128) == "\U0001f600" * 127 + "\ud83d"
    assert maybe_truncate_reason(S * 256) == S * 255
