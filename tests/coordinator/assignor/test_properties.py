"""Property tests (Hypothesis, bounded) for the server-side assignors and the Java-order model.

* The Java collection model (``sets.IntHashSet``, ``sets.TopicMap``) against a literal
  simulation of ``java.util.HashMap``'s buckets: lists per bucket, tail insertion for ``put``,
  head insertion for ``computeIfAbsent``, and ``resize`` splitting each bucket into its low and
  high halves in order (OpenJDK 17's algorithm, written out independently).
* Uniform (homogeneous): every subscribed partition assigned once, sizes within one, each member
  keeps at least ``min(previous, total // members)`` of its partitions, and the result is a fixed
  point. Uniform (heterogeneous): validity for any subscriptions, balance inside disjoint
  buckets. Range: Kafka's contiguous quotas in sorted member order.
"""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from coordinator.assignor import (
    GroupSpecImpl,
    MemberSubscriptionAndAssignmentImpl,
    SubscriptionType,
)
from coordinator.assignor.range import RangeAssignor
from coordinator.assignor.sets import IntHashSet, TopicMap, uuid_hashcode
from coordinator.assignor.uniform import UniformAssignor
from coordinator.java import sized_capacity, spread
from coordinator.kafka_uuid import Uuid, topic_id_for

from .helpers import SETTINGS, describer, inverted, mk_assignment

TOPICS = [topic_id_for(f"p{i}") for i in range(6)]


class JavaHashMapSim:
    """java.util.HashMap's table, literally: bucket lists, threshold, resize by lo/hi split."""

    def __init__(self, initial_capacity: int | None = None) -> None:
        self.table: list[list] | None = None
        self.threshold = 0 if initial_capacity is None else _table_size_for(initial_capacity)
        self.size = 0

    def _resize(self) -> None:
        old = self.table
        cap = (self.threshold if self.threshold > 0 else 16) if old is None else len(old) * 2
        self.threshold = int(cap * 0.75)
        new: list[list] = [[] for _ in range(cap)]
        if old is not None:
            for j, bucket in enumerate(old):
                for (
                    key,
                    h,
                ) in bucket:  # split keeps the order: lo stays at j, hi goes to j + old cap
                    new[j if (h & len(old)) == 0 else j + len(old)].append((key, h))
        self.table = new

    def put(self, key: object, h: int) -> None:
        if self.table is None:
            self._resize()
        assert self.table is not None
        bucket = self.table[h & (len(self.table) - 1)]
        if any(k == key for k, _ in bucket):
            return
        bucket.append((key, h))
        self.size += 1
        if self.size > self.threshold:
            self._resize()

    def compute_if_absent(self, key: object, h: int) -> None:
        if self.size > self.threshold or self.table is None:
            self._resize()
        assert self.table is not None
        bucket = self.table[h & (len(self.table) - 1)]
        if any(k == key for k, _ in bucket):
            return
        bucket.insert(0, (key, h))
        self.size += 1

    def remove(self, key: object, h: int) -> None:
        assert self.table is not None
        bucket = self.table[h & (len(self.table) - 1)]
        bucket[:] = [(k, hh) for k, hh in bucket if k != key]
        self.size = sum(len(b) for b in self.table)

    def order(self) -> list:
        return [k for bucket in self.table or [] for k, _ in bucket]


def _table_size_for(cap: int) -> int:
    n = 1
    while n < cap:
        n <<= 1
    return n


int_ops = st.lists(
    st.tuples(st.sampled_from(["add", "remove"]), st.integers(0, 300)), min_size=1, max_size=80
)


@SETTINGS
@given(ops=int_ops, initial=st.sampled_from([1, 2, 16, 64]))
def test_int_hash_set_iterates_like_java(ops, initial):
    ours = IntHashSet(initial)
    sim = JavaHashMapSim(initial)
    present: set[int] = set()
    for op, p in ops:
        if op == "add" and p not in present:
            ours.add(p)
            sim.put(p, spread(p))
            present.add(p)
        elif op == "remove" and p in present:
            ours.remove(p)
            sim.remove(p, spread(p))
            present.discard(p)
    assert list(ours) == sim.order()
    assert len(ours) == len(present) and all(p in ours for p in present)


@SETTINGS
@given(
    ops=st.lists(
        st.tuples(st.sampled_from(["put", "cia", "remove"]), st.integers(0, 40)),
        min_size=1,
        max_size=60,
    ),
    initial=st.sampled_from([0, 1, 3, 16]),
)
def test_topic_map_iterates_like_java(ops, initial):
    ids = [Uuid(i * 7919, -i * 104729) for i in range(41)]
    ours = TopicMap(_table_size_for(initial))
    sim = JavaHashMapSim(initial)
    for op, i in ops:
        key, h = ids[i], spread(uuid_hashcode(ids[i]))
        if op == "put":
            ours.put(key, IntHashSet())
            sim.put(key, h)
        elif op == "cia":
            ours.compute_if_absent(key, 16)
            sim.compute_if_absent(key, h)
        elif key in ours:
            ours.remove(key)
            sim.remove(key, h)
    assert list(ours) == sim.order()


@st.composite
def groups(draw, homogeneous: bool):
    n_topics = draw(st.integers(1, 4))
    counts = {t: draw(st.integers(0, 12)) for t in TOPICS[:n_topics]}
    n_members = draw(st.integers(1, 6))
    member_ids = [f"m{i}" for i in range(n_members)]
    if homogeneous:
        subs = {m: list(counts) for m in member_ids}
    else:
        subs = {
            m: draw(st.lists(st.sampled_from(list(counts)), unique=True, max_size=n_topics))
            for m in member_ids
        }
    # A valid previous assignment: each partition to at most one member (any topic).
    owned: dict[str, dict] = {m: {} for m in member_ids}
    for t, n in counts.items():
        for p in range(n):
            owner = draw(st.sampled_from([None, *member_ids]))
            if owner is not None:
                owned[owner].setdefault(t, []).append(p)
    members = {
        m: MemberSubscriptionAndAssignmentImpl(
            None, None, frozenset(subs[m]), mk_assignment(*owned[m].items())
        )
        for m in member_ids
    }
    kind = SubscriptionType.HOMOGENEOUS if homogeneous else SubscriptionType.HETEROGENEOUS
    spec = GroupSpecImpl(
        members, subscription_type=kind, inverted_member_assignment=inverted(members)
    )
    return spec, counts


def _validate(spec, counts, result) -> dict[str, int]:
    seen: set[tuple[Uuid, int]] = set()
    sizes = {}
    for m, assignment in result.members.items():
        size = 0
        for t, ps in assignment.partitions.items():
            assert t in spec.member_subscription(m).subscribed_topic_ids
            for p in ps:
                assert 0 <= p < counts[t] and (t, p) not in seen
                seen.add((t, p))
            size += len(ps)
        sizes[m] = size
    subscribed = {
        t for m in spec.member_ids() for t in spec.member_subscription(m).subscribed_topic_ids
    }
    assert seen == {(t, p) for t in subscribed for p in range(counts[t])}
    return sizes


def _respec(spec, result):
    members = {
        m: MemberSubscriptionAndAssignmentImpl(
            None,
            None,
            spec.member_subscription(m).subscribed_topic_ids,
            result.members[m].partitions if m in result.members else {},
        )
        for m in spec.member_ids()
    }
    return GroupSpecImpl(members, spec.subscription_type(), inverted(members))


def _plain(result):
    return {m: {t: set(ps) for t, ps in a.partitions.items()} for m, a in result.members.items()}


@SETTINGS
@given(groups(homogeneous=True))
def test_uniform_homogeneous_is_valid_balanced_sticky_and_stable(group):
    spec, counts = group
    result = UniformAssignor().assign(spec, describer(counts))
    if not result.members:
        return
    sizes = _validate(spec, counts, result)
    assert max(sizes.values()) - min(sizes.values()) <= 1
    floor = sum(counts.values()) // len(sizes)
    for m in spec.member_ids():
        before = {(t, p) for t, ps in spec.member_assignment(m).partitions.items() for p in ps}
        after = {(t, p) for t, ps in result.members[m].partitions.items() for p in ps}
        assert len(before & after) >= min(len(before), floor)
    again = UniformAssignor().assign(_respec(spec, result), describer(counts))
    assert _plain(again) == _plain(result)


@SETTINGS
@given(groups(homogeneous=False))
def test_uniform_heterogeneous_is_valid(group):
    spec, counts = group
    result = UniformAssignor().assign(spec, describer(counts))
    if result.members:
        _validate(spec, counts, result)


@SETTINGS
@given(st.integers(1, 5), st.integers(1, 5), st.integers(0, 30), st.integers(0, 30))
def test_uniform_heterogeneous_balances_disjoint_buckets(left, right, n1, n2):
    a, b = TOPICS[0], TOPICS[1]
    members = {
        **{
            f"a{i}": MemberSubscriptionAndAssignmentImpl(None, None, frozenset({a}))
            for i in range(left)
        },
        **{
            f"b{i}": MemberSubscriptionAndAssignmentImpl(None, None, frozenset({b}))
            for i in range(right)
        },
    }
    spec = GroupSpecImpl(members, subscription_type=SubscriptionType.HETEROGENEOUS)
    result = UniformAssignor().assign(spec, describer({a: n1, b: n2}))
    sizes = _validate(spec, {a: n1, b: n2}, result)
    for prefix in "ab":
        bucket = [s for m, s in sizes.items() if m.startswith(prefix)]
        assert max(bucket) - min(bucket) <= 1


@SETTINGS
@given(groups(homogeneous=True))
def test_range_gives_kafkas_contiguous_quotas(group):
    spec, counts = group
    result = RangeAssignor().assign(spec, describer(counts))
    ordered = sorted(spec.member_ids())
    for t, n in counts.items():
        quota, extra = divmod(n, len(ordered))
        start = 0
        for k, m in enumerate(ordered):
            size = quota + (1 if k < extra else 0)
            got = result.members[m].partitions.get(t)
            assert (list(got) if got is not None else []) == list(range(start, start + size))
            start += size
    assert sized_capacity(3) == 8  # (int) (3 / 0.75f + 1) = 5 -> 8 buckets
