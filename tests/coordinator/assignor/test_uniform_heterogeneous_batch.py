"""The heterogeneous builder reads a previous round's maps from their batch's arrays.

Maps a round made in one batch (``_Builder._fresh_maps``) carry a ``_Batch``; the next round's
revoke phase reads the arrays instead of the maps. Here, over random groups and random changes
between rounds (subscriptions changed, members gone or new, the member order shuffled, one map
held by two members, topics grown or shrunk, topic ids as equal but distinct objects), the
result of a round given those maps against the same round given plain dict copies of them (the
entry walk, the old path): the same assignment in the same iteration order, or the same error,
over three rounds (Hypothesis, bounded)."""

from __future__ import annotations

from unittest import mock

from hypothesis import given
from hypothesis import strategies as st

from coordinator.assignor import (
    GroupSpecImpl,
    MemberSubscriptionAndAssignmentImpl,
    SubscriptionType,
    uniform_heterogeneous,
)
from coordinator.assignor.uniform_heterogeneous import build_heterogeneous
from coordinator.kafka_uuid import Uuid, topic_id_for

from .helpers import SETTINGS, describer

TOPICS = [topic_id_for(f"b{i}") for i in range(5)]


def _read(result) -> list:
    return [(m, [(t, list(ps)) for t, ps in a.partitions.items()]) for m, a in result.items()]


def _run(members: dict, counts: dict) -> tuple[list | str, dict]:
    """(The result read in iteration order, or the error's type; member id -> its map)."""
    spec = GroupSpecImpl(members, subscription_type=SubscriptionType.HETEROGENEOUS)
    try:
        result = build_heterogeneous(spec, describer(counts)).members
        return _read(result), {m: a.partitions for m, a in result.items()}
    except IndexError as exc:
        return type(exc).__name__, {}


@st.composite
def rounds(draw):
    n_topics = draw(st.integers(1, len(TOPICS)))
    counts = [{t: draw(st.integers(0, 12)) for t in TOPICS[:n_topics]}]
    names = [f"m{i}" for i in range(draw(st.integers(1, 9)))]
    topics = st.lists(st.sampled_from(TOPICS[:n_topics]), unique=True, max_size=n_topics)
    subs = [{m: draw(topics) for m in names}]
    changes = []
    for _ in range(2):
        previous = subs[-1]
        kept = [m for m in previous if draw(st.booleans()) or draw(st.booleans())]
        new = [f"n{len(changes)}-{i}" for i in range(draw(st.integers(0, 3)))]
        order = draw(st.permutations(kept + new))
        now = {
            m: previous[m] if m in previous and draw(st.booleans()) else draw(topics) for m in order
        }
        subs.append(now)
        grown = {t: max(0, n + draw(st.integers(-2, 3))) for t, n in counts[-1].items()}
        counts.append(grown if draw(st.booleans()) else dict(counts[-1]))
        shared = draw(st.sampled_from([None, *[(a, b) for a in kept for b in kept if a != b]]))
        changes.append((shared, draw(st.booleans())))
    return subs, counts, changes


def _copy_ids(topic_ids: list[Uuid]) -> list[Uuid]:
    return [Uuid(t.most_significant_bits, t.least_significant_bits) for t in topic_ids]


@SETTINGS
@given(rounds())
def test_batch_read_equals_entry_walk_over_rounds(plan):
    subs, counts, changes = plan
    with mock.patch.object(uniform_heterogeneous, "SMALL_BATCH", 1):  # batch any fresh members
        empty: dict = {}
        first = {
            m: MemberSubscriptionAndAssignmentImpl(None, None, frozenset(ts), empty)
            for m, ts in subs[0].items()
        }
        read, maps = _run(first, counts[0])
        for now, topic_counts, (shared, distinct_ids) in zip(
            subs[1:], counts[1:], changes, strict=True
        ):
            if distinct_ids:  # equal topic ids, other objects: found by value
                renamed = dict(zip(TOPICS, _copy_ids(TOPICS), strict=True))
                now = {m: [renamed[t] for t in ts] for m, ts in now.items()}
                topic_counts = {renamed[t]: n for t, n in topic_counts.items()}
            held = {m: maps.get(m, empty) for m in now}
            if shared is not None:
                held[shared[0]] = held[shared[1]]
            batched = {
                m: MemberSubscriptionAndAssignmentImpl(None, None, frozenset(now[m]), held[m])
                for m in now
            }
            walked = {
                m: MemberSubscriptionAndAssignmentImpl(None, None, frozenset(now[m]), dict(held[m]))
                for m in now
            }
            assert not any(hasattr(a.partitions, "row") for a in walked.values())
            read, maps = _run(batched, topic_counts)
            assert read == _run(walked, topic_counts)[0]
            if not maps:
                return


def test_a_first_assignment_is_one_batch_and_the_next_round_reads_it():
    topics = {TOPICS[0]: 40, TOPICS[1]: 40}
    members = {
        f"m{i}": MemberSubscriptionAndAssignmentImpl(None, None, frozenset(TOPICS[: 1 + i % 2]), {})
        for i in range(40)
    }
    read, maps = _run(members, topics)
    batches = {id(m.batch) for m in maps.values()}  # type: ignore[attr-defined]
    assert len(batches) == 1
    again = {
        m: MemberSubscriptionAndAssignmentImpl(None, None, s.subscribed_topic_ids, maps[m])
        for m, s in members.items()
    }
    walked = {
        m: MemberSubscriptionAndAssignmentImpl(None, None, s.subscribed_topic_ids, dict(maps[m]))
        for m, s in members.items()
    }
    builder = uniform_heterogeneous._Builder(
        GroupSpecImpl(again, subscription_type=SubscriptionType.HETEROGENEOUS), describer(topics)
    )
    with mock.patch.object(builder, "_walk", side_effect=AssertionError("walked")):
        builder.revoke()  # every member read from the batch: nothing walked
    assert _run(again, topics)[0] == _run(walked, topics)[0] == read
