"""Judging an assignment: validity, Kafka's balance definitions, skew, movement and stickiness.

Pure functions over plain data (``{member: [TopicPartition, ...]}``), usable on any assignor's
output, the simulator's, or a hand-written table. The definitions follow Kafka's own tests:

* **valid**: every member of the group has an entry and nobody else does, every assigned partition
  exists and belongs to a topic its member subscribes to, and no partition is assigned twice;
* **complete**: valid, and every partition of every subscribed, existing topic is assigned
  (a cooperative first round is deliberately incomplete, so completeness is separate);
* **fully balanced** (``AbstractStickyAssignorTest.isFullyBalanced``): member counts differ by at
  most one, counting members with nothing;
* **pairwise balanced** (``verifyValidityAndBalance``): for every pair of members whose counts
  differ by more than one, the topics in their assignments are disjoint. Weaker than the next one;
* **balanced** (``AbstractStickyAssignor.isBalanced``): fully balanced, or no member could take one
  of its subscribed partitions from a member holding at least two more;
* **moved**: partitions whose owner changed between two assignments; **swap moves**: per topic,
  two members that each received a partition the other gave up (``isSticky`` in Kafka's tests
  fails on these 2-cycles).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from attrs import frozen

from assignors.api import ClusterLike, Subscription, TopicPartition, as_cluster

AssignmentLike = Mapping[str, Sequence[TopicPartition]]

__all__ = [
    "Validity",
    "counts",
    "is_balanced",
    "is_fully_balanced",
    "is_pairwise_balanced",
    "moved_partitions",
    "no_swap_moves",
    "owners",
    "pairwise_balance_violations",
    "partitions_moved",
    "per_topic_skew",
    "swap_moves",
    "validity",
]


@frozen
class Validity:
    """What is wrong with an assignment, by kind; empty tuples everywhere means valid and complete."""

    missing_members: tuple[str, ...] = ()
    unknown_members: tuple[str, ...] = ()
    nonexistent: tuple[tuple[str, TopicPartition], ...] = ()
    unsubscribed: tuple[tuple[str, TopicPartition], ...] = ()
    duplicated: tuple[tuple[TopicPartition, tuple[str, ...]], ...] = ()
    unassigned: tuple[TopicPartition, ...] = ()

    @property
    def valid(self) -> bool:
        return not (
            self.missing_members
            or self.unknown_members
            or self.nonexistent
            or self.unsubscribed
            or self.duplicated
        )

    @property
    def complete(self) -> bool:
        return self.valid and not self.unassigned

    def problems(self) -> list[str]:
        """One human-readable line per problem (empty when valid and complete)."""
        out = [f"member {m!r} has no entry in the assignment" for m in self.missing_members]
        out += [f"{m!r} is not a member of the group" for m in self.unknown_members]
        out += [f"{m!r} got {tp}, which does not exist" for m, tp in self.nonexistent]
        out += [
            f"{m!r} got {tp} without subscribing to {tp.topic!r}" for m, tp in self.unsubscribed
        ]
        out += [f"{tp} is assigned to {', '.join(ms)}" for tp, ms in self.duplicated]
        out += [f"{tp} is not assigned" for tp in self.unassigned]
        return out


def validity(
    cluster: ClusterLike, subscriptions: Mapping[str, Subscription], assignment: AssignmentLike
) -> Validity:
    """Check an assignment against the group's subscriptions and the cluster's partitions."""
    meta = as_cluster(cluster)
    sizes = meta.partitions_per_topic
    subscribed = {m: frozenset(s.topics) for m, s in subscriptions.items()}
    holders: dict[TopicPartition, list[str]] = {}
    nonexistent: list[tuple[str, TopicPartition]] = []
    unsubscribed: list[tuple[str, TopicPartition]] = []
    for member, parts in assignment.items():
        topics = subscribed.get(member, frozenset())
        for tp in parts:
            holders.setdefault(tp, []).append(member)
            if not 0 <= tp.partition < sizes.get(tp.topic, 0):
                nonexistent.append((member, tp))
            elif member in subscribed and tp.topic not in topics:
                unsubscribed.append((member, tp))
    all_topics = sorted({t for ts in subscribed.values() for t in ts})
    unassigned = [
        TopicPartition(t, p)
        for t in all_topics
        for p in range(sizes.get(t, 0))
        if TopicPartition(t, p) not in holders
    ]
    return Validity(
        missing_members=tuple(m for m in subscriptions if m not in assignment),
        unknown_members=tuple(m for m in assignment if m not in subscriptions),
        nonexistent=tuple(nonexistent),
        unsubscribed=tuple(unsubscribed),
        duplicated=tuple((tp, tuple(ms)) for tp, ms in sorted(holders.items()) if len(ms) > 1),
        unassigned=tuple(unassigned),
    )


def counts(assignment: AssignmentLike) -> dict[str, int]:
    """Partitions per member."""
    return {m: len(parts) for m, parts in assignment.items()}


def is_fully_balanced(assignment: AssignmentLike) -> bool:
    """Kafka's ``isFullyBalanced``: max count - min count <= 1, members with nothing included."""
    sizes = [len(p) for p in assignment.values()]
    return not sizes or max(sizes) - min(sizes) <= 1


def pairwise_balance_violations(assignment: AssignmentLike) -> list[tuple[str, str]]:
    """Member pairs (sorted by id) that break ``verifyValidityAndBalance``'s balance rule.

    For members i < j whose counts differ by more than one, Kafka requires the *topics present in
    their assignments* to be disjoint: otherwise a partition could have moved to the smaller one.
    """
    members = sorted(assignment)
    topics = {m: {tp.topic for tp in assignment[m]} for m in members}
    out = []
    for i, a in enumerate(members):
        for b in members[i + 1 :]:
            if abs(len(assignment[a]) - len(assignment[b])) > 1 and not topics[a].isdisjoint(
                topics[b]
            ):
                out.append((a, b))
    return out


def is_pairwise_balanced(assignment: AssignmentLike) -> bool:
    return not pairwise_balance_violations(assignment)


def is_balanced(subscriptions: Mapping[str, Subscription], assignment: AssignmentLike) -> bool:
    """Kafka's ``isBalanced`` (3.6+): fully balanced, or no partition could move to a subscriber of
    its topic that holds at least two fewer partitions than its current owner."""
    if is_fully_balanced(assignment):
        return True
    sizes = counts(assignment)
    # The smallest count among each topic's subscribers decides whether its partitions can move.
    smallest: dict[str, int] = {}
    for member, sub in subscriptions.items():
        n = sizes.get(member, 0)
        for t in sub.topics:
            if n < smallest.get(t, n + 1):
                smallest[t] = n
    return all(
        smallest.get(tp.topic, sizes[m]) >= sizes[m] - 1
        for m, parts in assignment.items()
        for tp in parts
    )


def per_topic_skew(
    subscriptions: Mapping[str, Subscription], assignment: AssignmentLike
) -> dict[str, int]:
    """For each subscribed topic: max - min partitions of it held by its subscribers."""
    held: dict[str, dict[str, int]] = {}
    for member, sub in subscriptions.items():
        for t in sub.topics:
            held.setdefault(t, {})[member] = 0
    for member, parts in assignment.items():
        for tp in parts:
            per_member = held.get(tp.topic)
            if per_member is not None and member in per_member:
                per_member[member] += 1
    return {t: max(c.values()) - min(c.values()) for t, c in sorted(held.items())}


def owners(assignment: AssignmentLike) -> dict[TopicPartition, str]:
    """``{partition: member}`` (the last holder wins if a partition is assigned twice)."""
    return {tp: m for m, parts in assignment.items() for tp in parts}


def moved_partitions(
    previous: AssignmentLike, current: AssignmentLike
) -> dict[TopicPartition, tuple[str, str | None]]:
    """Partitions owned before whose owner changed: ``{tp: (old_owner, new_owner or None)}``."""
    now = owners(current)
    return {
        tp: (old, now.get(tp)) for tp, old in sorted(owners(previous).items()) if now.get(tp) != old
    }


def partitions_moved(previous: AssignmentLike, current: AssignmentLike) -> int:
    """How many previously owned partitions changed owner (or lost their owner)."""
    return len(moved_partitions(previous, current))


def swap_moves(
    previous: AssignmentLike, current: AssignmentLike
) -> dict[str, list[tuple[str, str]]]:
    """Per topic, member pairs ``(a, b)`` with ``a < b`` where a partition moved a -> b and another
    moved b -> a: a 2-cycle that a sticky assignor should never produce."""
    edges: dict[str, set[tuple[str, str]]] = {}
    for tp, (old, new) in moved_partitions(previous, current).items():
        if new is not None:
            edges.setdefault(tp.topic, set()).add((old, new))
    out: dict[str, list[tuple[str, str]]] = {}
    for topic in sorted(edges):
        pairs = sorted((a, b) for a, b in edges[topic] if a < b and (b, a) in edges[topic])
        if pairs:
            out[topic] = pairs
    return out


def no_swap_moves(previous: AssignmentLike, current: AssignmentLike) -> bool:
    return not swap_moves(previous, current)
