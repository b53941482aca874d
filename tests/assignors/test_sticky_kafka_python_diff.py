"""Differential tests against kafka-python 3.0.12's sticky assignor, plus Hypothesis properties.

kafka-python ports the *pre-2.6* sticky algorithm (no constrained builder, no KIP-341 conflict
rules), so results are not compared for equality. On the same random inputs we check that both
results are valid and balanced (Kafka's pairwise rule) and that ours keeps at least as many
previous ownerships as kafka-python's. kafka-python reads ownership from its own user-data
object, which we build from the same previous assignment (its byte decoder is not used).
"""

from __future__ import annotations

from types import SimpleNamespace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from assignors.api import Subscription, TopicPartition
from assignors.cooperative_sticky import CooperativeStickyAssignor
from assignors.sticky import StickyAssignor
from assignors.sticky_user_data import encode_sticky_user_data
from tests.assignors.sticky_support import cooperative_revocations, verify_validity_and_balance

kp_sticky = pytest.importorskip("kafka.coordinator.assignors.sticky.sticky_assignor")
kp_user_data = pytest.importorskip("kafka.coordinator.assignors.sticky.user_data")

SETTINGS = settings(max_examples=40, deadline=None, derandomize=True)


@st.composite
def sticky_scenarios(draw: st.DrawFn, uniform: bool | None = None):
    """A cluster, a first group, and a changed second group (members leave/join/resubscribe)."""
    n_topics = draw(st.integers(1, 5))
    topics = [f"t{i}" for i in range(n_topics)]
    counts = {t: draw(st.integers(1, 8)) for t in topics}
    n_members = draw(st.integers(1, 7))
    members = [f"m{i}" for i in range(n_members)]
    is_uniform = draw(st.booleans()) if uniform is None else uniform

    def subscription() -> list[str]:
        return draw(st.lists(st.sampled_from(topics), min_size=1, max_size=n_topics, unique=True))

    common = subscription()
    first = {m: (common if is_uniform else subscription()) for m in members}
    leaving = draw(st.sets(st.sampled_from(members), max_size=max(0, n_members - 1)))
    joining = [f"n{i}" for i in range(draw(st.integers(0, 3)))]
    second = {
        m: (common if is_uniform else (subscription() if draw(st.booleans()) else first[m]))
        for m in members
        if m not in leaving
    }
    for m in joining:
        second[m] = common if is_uniform else subscription()
    return counts, first, second


def _kp_assign(counts, subs, previous):
    cluster = SimpleNamespace(
        partitions_for_topic=lambda t: set(range(counts[t])) if t in counts else None,
        topics=lambda: set(counts),
    )
    members = []
    for m, topics in subs.items():
        owned = previous.get(m)
        if owned is None:
            user_data = b""
        else:
            by_topic: dict[str, list[int]] = {}
            for p in owned:
                by_topic.setdefault(p.topic, []).append(p.partition)
            user_data = kp_user_data.StickyAssignorUserData(list(by_topic.items()), 1)
        members.append(
            SimpleNamespace(
                member_id=m, metadata=SimpleNamespace(topics=list(topics), user_data=user_data)
            )
        )
    result = kp_sticky.StickyPartitionAssignor().assign(cluster, members)
    return {
        m: [TopicPartition(t, p) for t, ps in a.assigned_partitions for p in ps]
        for m, a in result.items()
    }


def _kept(previous, result) -> int:
    return sum(len(set(previous.get(m, ())) & set(parts)) for m, parts in result.items())


@SETTINGS
@given(sticky_scenarios())
def test_valid_balanced_and_at_least_as_sticky_as_kafka_python(scenario) -> None:
    counts, first, second = scenario
    ours1 = StickyAssignor().assign(counts, {m: Subscription(t) for m, t in first.items()})
    verify_validity_and_balance({m: Subscription(t) for m, t in first.items()}, ours1)
    theirs1 = _kp_assign(counts, first, {})
    verify_validity_and_balance({m: Subscription(t) for m, t in first.items()}, theirs1)

    previous = {m: ours1[m] for m in second if m in ours1}
    subs2 = {
        m: Subscription(t, encode_sticky_user_data(previous[m], 1) if m in previous else None)
        for m, t in second.items()
    }
    ours2 = StickyAssignor().assign(counts, subs2)
    theirs2 = _kp_assign(counts, second, previous)
    verify_validity_and_balance(subs2, ours2)
    verify_validity_and_balance(subs2, theirs2)
    assert _kept(previous, ours2) >= _kept(previous, theirs2)


@SETTINGS
@given(sticky_scenarios())
def test_cooperative_never_hands_over_unrevoked_partitions_and_converges(scenario) -> None:
    counts, first, second = scenario
    a = CooperativeStickyAssignor()
    r1 = a.assign(counts, {m: Subscription(t) for m, t in first.items()})
    subs = {
        m: Subscription(t, owned_partitions=r1.get(m, ()), generation_id=1)
        for m, t in second.items()
    }
    result = a.assign(counts, subs)
    for generation in range(2, 7):
        revoked = cooperative_revocations(
            subs, result
        )  # asserts: nothing revoked and added at once
        if not revoked:
            break
        subs = {
            m: Subscription(second[m], owned_partitions=result[m], generation_id=generation)
            for m in second
        }
        result = a.assign(counts, subs)
    else:
        pytest.fail("cooperative rebalancing did not converge in 5 follow-up rounds")
    verify_validity_and_balance(subs, result)
    subscribed = {t for ts in second.values() for t in ts}
    assigned = [p for parts in result.values() for p in parts]
    assert sorted(assigned) == sorted(
        TopicPartition(t, p) for t in subscribed for p in range(counts[t])
    )


@SETTINGS
@given(sticky_scenarios(uniform=True))
def test_uniform_groups_fully_balanced_and_keep_quota_of_ownership(scenario) -> None:
    counts, first, second = scenario
    r1 = StickyAssignor().assign(counts, {m: Subscription(t) for m, t in first.items()})
    subs2 = {
        m: Subscription(t, encode_sticky_user_data(r1[m], 1) if m in r1 else None)
        for m, t in second.items()
    }
    r2 = StickyAssignor().assign(counts, subs2)
    sizes = [len(v) for v in r2.values()]
    assert max(sizes) - min(sizes) <= 1
    total = sum(sizes)
    floor = total // len(r2)
    for m, parts in r2.items():
        owned = set(r1.get(m, ()))
        # a member keeps min(owned, minQuota) of what it had: balance never costs more than that
        assert len(owned & set(parts)) >= min(len(owned), floor)


@SETTINGS
@given(st.data())
def test_cooperative_withholds_even_with_conflicting_claims(data) -> None:
    """Overlapping ownership claims from zombies and stale generations (KIP-341): whatever the
    builder, no partition is revoked from one member and added to another in the same round."""
    n_topics = data.draw(st.integers(1, 4))
    counts = {f"t{i}": data.draw(st.integers(1, 6)) for i in range(n_topics)}
    parts = [TopicPartition(t, p) for t, n in counts.items() for p in range(n)]
    subs = {}
    for i in range(data.draw(st.integers(1, 6))):
        topics = data.draw(st.lists(st.sampled_from(sorted(counts)), min_size=1, unique=True))
        owned = data.draw(st.lists(st.sampled_from(parts), max_size=5, unique=True))
        generation = data.draw(st.sampled_from([-1, 1, 2, 3]))
        subs[f"m{i}"] = Subscription(topics, owned_partitions=owned, generation_id=generation)
    result = CooperativeStickyAssignor().assign(counts, subs)
    cooperative_revocations(subs, result)
