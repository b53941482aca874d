"""A deliberately literal, slow port of Kafka's AbstractStickyAssignor (no racks), for testing.

The production code (``assignors/sticky_common*``) replaces Kafka's loops with closed forms and
integer arrays. This module keeps Kafka's structure statement by statement (TreeSet as a sorted
list, ``isBalanced()`` re-evaluated in the loop, lists with ``remove``), so that differential
tests can check the fast version gives the *same lists in the same order*.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from assignors.api import Subscription, TopicPartition
from coordinator.java import java_hashmap_order, java_string_hashcode, java_string_key

Claim = tuple[list[TopicPartition], int | None]


class _HashSet:
    """Java HashSet<TopicPartition> first-element order (bucket, then insertion)."""

    def __init__(self) -> None:
        self.items: dict[TopicPartition, int] = {}
        self.cap = 16
        self.seq = 0

    @staticmethod
    def _spread(tp: TopicPartition) -> int:
        h = (31 * (31 + tp.partition) + java_string_hashcode(tp.topic)) & 0xFFFFFFFF
        return h ^ (h >> 16)

    def add(self, tp: TopicPartition) -> None:
        if tp not in self.items:
            self.items[tp] = self.seq
            self.seq += 1
            if len(self.items) > 0.75 * self.cap:
                self.cap *= 2

    def first(self) -> TopicPartition:
        return min(self.items, key=lambda tp: (self._spread(tp) & (self.cap - 1), self.items[tp]))


class _Movements:
    def __init__(self) -> None:
        self.moves: dict[TopicPartition, tuple[str, str]] = {}
        self.by_topic: dict[str, dict[tuple[str, str], _HashSet]] = {}

    def _remove(self, tp: TopicPartition) -> tuple[str, str]:
        pair = self.moves.pop(tp)
        pairs = self.by_topic[tp.topic]
        del pairs[pair].items[tp]
        if not pairs[pair].items:
            del pairs[pair]
        if not pairs:
            del self.by_topic[tp.topic]
        return pair

    def _add(self, tp: TopicPartition, pair: tuple[str, str]) -> None:
        self.moves[tp] = pair
        self.by_topic.setdefault(tp.topic, {}).setdefault(pair, _HashSet()).add(tp)

    def move(self, tp: TopicPartition, old: str, new: str) -> None:
        if tp in self.moves:
            src, _ = self._remove(tp)
            if src != new:
                self._add(tp, (src, new))
        else:
            self._add(tp, (old, new))

    def actual(self, tp: TopicPartition, old: str, new: str) -> TopicPartition:
        if tp.topic not in self.by_topic:
            return tp
        if tp in self.moves:
            old = self.moves[tp][0]
        pairs = self.by_topic[tp.topic]
        if (new, old) not in pairs:
            return tp
        return pairs[(new, old)].first()


class ReferenceSticky:
    """One assignor instance (``max_generation`` persists, as in Kafka)."""

    def __init__(self, claims_of: Callable[[Subscription], Claim]) -> None:
        self.claims_of = claims_of
        self.max_generation = -1
        self.transferring: dict[TopicPartition, str] | None = {}

    def assign(self, counts: Mapping[str, int], subs: Mapping[str, Subscription]):
        wanted = {t for s in subs.values() for t in s.topics}
        ppt = {t: n for t, n in counts.items() if t in wanted and n > 0}
        order = java_hashmap_order(list(subs))
        equal = True
        common: set[str] = set()
        owned: dict[str, list[TopicPartition]] = {}
        multi: set[TopicPartition] = set()
        prev_owner: dict[TopicPartition, str] = {}
        for c in order:
            s = subs[c]
            if not common:
                common |= set(s.topics)
            elif equal and not (len(s.topics) == len(common) and common.issuperset(s.topics)):
                equal = False
            parts, gen = self.claims_of(s)
            mg = -1 if gen is None else gen
            self.max_generation = max(self.max_generation, mg)
            mine: list[TopicPartition] = []
            owned[c] = mine
            for tp in parts:
                if tp.topic not in ppt or not 0 <= tp.partition < ppt[tp.topic]:
                    continue
                other = prev_owner.get(tp)
                if other is None:
                    mine.append(tp)
                    prev_owner[tp] = c
                    continue
                og = subs[other].generation_id if subs[other].generation_id >= 0 else -1
                if mg == og:
                    multi.add(tp)
                    if tp in owned[other]:
                        owned[other].remove(tp)
                    prev_owner[tp] = c
                elif mg > og:
                    mine.append(tp)
                    if tp in owned[other]:
                        owned[other].remove(tp)
                    prev_owner[tp] = c
        if equal:
            self.transferring = {}
            return self._constrained(ppt, owned, multi)
        self.transferring = None
        return self._general(ppt, owned, subs, order)

    # -- constrained ----------------------------------------------------------------------------
    def _constrained(self, ppt, owned, multi):
        total = sum(ppt.values())
        n = len(owned)
        min_q, max_q, expected = total // n, -(-total // n), total % n
        current = 0
        assignment = {c: [] for c in owned}
        maybe_revoked: dict[TopicPartition, str] = {}
        under: list[str] = []
        exact: list[str] = []
        assigned: set[TopicPartition] = set()
        for c, parts in owned.items():
            mine = sorted(parts, key=lambda tp: (tp.partition, java_string_key(tp.topic)))
            for d in multi:
                if d in mine:
                    mine.remove(d)
            if len(mine) < min_q:
                assignment[c].extend(mine)
                assigned.update(mine)
                under.append(c)
            elif len(mine) >= max_q and current < expected:
                current += 1
                if current == expected:
                    exact.clear()
                assignment[c].extend(mine[:max_q])
                assigned.update(mine[:max_q])
                for tp in mine[max_q:]:
                    maybe_revoked[tp] = c
            else:
                assignment[c].extend(mine[:min_q])
                assigned.update(mine[:min_q])
                for tp in mine[min_q:]:
                    maybe_revoked[tp] = c
                if current < expected:
                    exact.append(c)
        unassigned = [
            TopicPartition(t, p)
            for t in sorted(ppt, key=java_string_key)
            for p in range(ppt[t])
            if TopicPartition(t, p) not in assigned
        ]
        under.sort(key=java_string_key)
        exact.sort(key=java_string_key)
        i = 0  # Java's iterator cursor over `under` (index of the next element)
        for tp in unassigned:
            if i < len(under):
                c = under[i]
                i += 1
            elif not under and not exact:
                raise AssertionError("no more unfilled consumers")
            elif not under:
                c = exact.pop(0)
            else:
                c = under[0]
                i = 1
            assignment[c].append(tp)
            if (tp in maybe_revoked and maybe_revoked[tp] != c) or tp in multi:
                self.transferring[tp] = c
            size = len(assignment[c])
            if size == min_q:
                under.pop(i - 1)
                i -= 1
                exact.append(c)
            elif size == max_q:
                current += 1
        return assignment

    # -- general --------------------------------------------------------------------------------
    def _general(self, ppt, current, subs, order):
        topic_consumers: dict[str, list[str]] = {t: [] for t in ppt}
        consumer_topics: dict[str, list[str]] = {}
        for c in order:
            ts = [t for t in subs[c].topics if t in ppt]
            consumer_topics[c] = ts
            for t in ts:
                topic_consumers[t].append(c)
        owner: dict[TopicPartition, str] = {}
        for c, parts in current.items():
            for tp in parts:
                owner[tp] = c
        sorted_topics = sorted(ppt, key=lambda t: (len(topic_consumers[t]), java_string_key(t)))
        all_parts = [TopicPartition(t, p) for t in sorted_topics for p in range(ppt[t])]
        prev: dict[TopicPartition, tuple[str, int]] = {}
        for c in order:
            parts, gen = self.claims_of(subs[c])
            if gen is not None and gen < self.max_generation:
                g = gen
            elif gen is None and self.max_generation > -1:
                g = -1
            else:
                continue
            for tp in parts:
                if tp not in prev or g > prev[tp][1]:
                    prev[tp] = (c, g)
        revocation = False
        assigned: set[TopicPartition] = set()
        for c, parts in current.items():
            keep = []
            for tp in parts:
                if tp.topic not in subs[c].topics:
                    revocation = True
                else:
                    keep.append(tp)
                    assigned.add(tp)
            current[c] = keep
        unassigned = [tp for tp in all_parts if tp not in assigned]

        def key(c: str):
            return (len(current[c]), java_string_key(c))

        load = sorted(current, key=key)

        def reload() -> None:
            load.sort(key=key)

        movements = _Movements()
        initializing = len(current[load[-1]]) == 0 if load else True
        for tp in unassigned:
            for c in load:
                if tp.topic in consumer_topics[c]:
                    current[c].append(tp)
                    owner[tp] = c
                    reload()
                    break
        fixed_topics = {t for t in ppt if len(topic_consumers[t]) < 2}
        all_parts = [tp for tp in all_parts if tp.topic not in fixed_topics]
        unassigned = [tp for tp in unassigned if tp.topic not in fixed_topics]

        def max_size(c: str) -> int:
            ts = consumer_topics[c]
            return sum(ppt.values()) if len(ts) == len(ppt) else sum(ppt[t] for t in ts)

        fixed: dict[str, list[TopicPartition]] = {}
        for c in list(consumer_topics):
            parts = current[c]
            if len(parts) < max_size(c):
                continue
            if any(len(topic_consumers[tp.topic]) >= 2 for tp in parts):
                continue
            fixed[c] = current.pop(c)
            load.remove(c)

        def balanced() -> bool:
            if not load:
                return True
            if len(current[load[0]]) >= len(current[load[-1]]) - 1:
                return True
            where = {tp: c for c, parts in current.items() for tp in parts}
            for c in load:
                size = len(current[c])
                if size == max_size(c):
                    continue
                for t in consumer_topics[c]:
                    for p in range(ppt[t]):
                        tp = TopicPartition(t, p)
                        if tp not in current[c] and size + 1 < len(current[where[tp]]):
                            return False
            return True

        def process(tp: TopicPartition, new: str) -> None:
            old = owner[tp]
            movements.move(tp, old, new)
            current[old].remove(tp)
            current[new].append(tp)
            owner[tp] = new
            reload()

        def reassign(tp: TopicPartition, new: str | None = None) -> None:
            if new is None:
                new = next(c for c in load if tp.topic in consumer_topics[c])
            process(movements.actual(tp, owner[tp], new), new)

        def perform(parts: list[TopicPartition]) -> bool:
            performed = False
            while True:
                modified = False
                for tp in parts:
                    if balanced():
                        break
                    c = owner[tp]
                    pv = prev.get(tp)
                    if (
                        pv is not None
                        and pv[0] in current
                        and len(current[c]) > len(current[pv[0]]) + 1
                    ):
                        reassign(tp, pv[0])
                        performed = modified = True
                        continue
                    for other in topic_consumers[tp.topic]:
                        if len(current[c]) > len(current[other]) + 1:
                            reassign(tp)
                            performed = modified = True
                            break
                if not modified:
                    return performed

        def score(sizes: list[int]) -> int:
            return sum(abs(a - b) for i, a in enumerate(sizes) for b in sizes[i + 1 :])

        snapshot = {c: list(parts) for c, parts in current.items()}
        if not revocation:
            perform(unassigned)
        performed = perform(all_parts)
        if (
            not initializing
            and performed
            and score([len(v) for v in current.values()])
            >= score([len(v) for v in snapshot.values()])
        ):
            current.clear()
            current.update(snapshot)
        current.update(fixed)
        self.movements = movements
        return current


def sticky_claims(sub: Subscription) -> Claim:
    from assignors.sticky_user_data import decode_sticky_user_data

    return decode_sticky_user_data(sub.user_data)


def cooperative_claims(sub: Subscription) -> Claim:
    from assignors.sticky_user_data import decode_cooperative_user_data

    if sub.generation_id >= 0:
        return list(sub.owned_partitions), sub.generation_id
    return list(sub.owned_partitions), decode_cooperative_user_data(sub.user_data)
