"""The rebalance rules of Kafka's ``ConsumerCoordinator``: which listener callback gets which
partitions in ``onJoinPrepare``, ``onJoinComplete`` and ``onLeavePrepare`` under the EAGER and
COOPERATIVE protocols (KIP-429), whether an assignment matches the subscription, and the leader's
check of a cooperative assignment. Pure functions: the ``Consumer`` invokes the callbacks, changes
the owned partitions and logs the events.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping, Sequence

from attrs import frozen

from assignors.api import COOPERATIVE, EAGER, RebalanceProtocol, Subscription, TopicPartition
from members.state import (
    STATE_COMPLETING_REBALANCE,
    STATE_PREPARING_REBALANCE,
    Generation,
    MemberState,
)

LOST = "lost"
REVOKED = "revoked"
ASSIGNED = "assigned"


@frozen
class Revocation:
    """A callback to invoke before the owned partitions change: ``callback`` (None: nothing to
    call, ownership unchanged) with ``partitions``, after which the member owns ``keep``."""

    callback: str | None
    partitions: list[TopicPartition]
    keep: list[TopicPartition]


NOTHING = Revocation(None, [], [])


def out_of_group(generation: Generation) -> bool:
    """No generation or no member id: the partitions are lost, not revoked."""
    return generation.generation_id == -1 or generation.member_id == ""


def on_join_prepare(
    protocol: RebalanceProtocol,
    generation: Generation,
    owned: Sequence[TopicPartition],
    subscription: Collection[str],
) -> Revocation:
    """ConsumerCoordinator.onJoinPrepare: out of the group, the owned partitions are
    lost; EAGER revokes all of them (the callback runs even when nothing is owned); COOPERATIVE
    revokes only those of topics no longer subscribed."""
    if out_of_group(generation):
        return Revocation(LOST, list(owned), []) if owned else NOTHING
    if protocol is EAGER:
        return Revocation(REVOKED, list(owned), [])
    subscribed = set(subscription)
    revoked = [tp for tp in owned if tp.topic not in subscribed]
    if not revoked:
        return NOTHING
    return Revocation(REVOKED, revoked, [tp for tp in owned if tp.topic in subscribed])


def on_join_complete(
    protocol: RebalanceProtocol,
    owned: Collection[TopicPartition],
    assigned: Collection[TopicPartition],
) -> tuple[list[TopicPartition], list[TopicPartition]]:
    """ConsumerCoordinator.onJoinComplete: (revoked, added). COOPERATIVE revokes what it owned
    and was not assigned (then rejoins, when that is not empty); EAGER has revoked everything in
    onJoinPrepare already. ``added`` goes to onPartitionsAssigned, possibly empty."""
    owned_set = set(owned)
    assigned_set = set(assigned)
    added = sorted(assigned_set - owned_set)
    if protocol is COOPERATIVE:
        return sorted(owned_set - assigned_set), added
    return [], added


def on_leave_prepare(
    generation: Generation, state: MemberState, owned: Collection[TopicPartition]
) -> str | None:
    """ConsumerCoordinator.onLeavePrepare: lost if out of the group or mid-rebalance, else
    revoked; None when nothing is owned."""
    if not owned:
        return None
    rebalancing = state in (STATE_PREPARING_REBALANCE, STATE_COMPLETING_REBALANCE)
    return LOST if out_of_group(generation) or rebalancing else REVOKED


def assignment_matches_subscription(
    assigned: Sequence[TopicPartition],
    pattern: re.Pattern[str] | None,
    subscription: Collection[str],
) -> bool:
    """SubscriptionState.checkAssignmentMatchedSubscription: a pattern subscription accepts any
    topic the pattern matches (the leader may know topics this member has not seen)."""
    if pattern is not None:
        return all(pattern.fullmatch(tp.topic) is not None for tp in assigned)
    subscribed = set(subscription)
    return all(tp.topic in subscribed for tp in assigned)


def cooperative_violations(
    subscriptions: Mapping[str, Subscription], result: Mapping[str, Sequence[TopicPartition]]
) -> list[TopicPartition]:
    """ConsumerCoordinator.validateCooperativeAssignment: nothing may move directly from one
    owner to another (it must be revoked first, then assigned in a later rebalance)."""
    added: set[TopicPartition] = set()
    revoked: set[TopicPartition] = set()
    for member_id, assigned in result.items():
        owned = (
            set(subscriptions[member_id].owned_partitions) if member_id in subscriptions else set()
        )
        got = set(assigned)
        added |= got - owned
        revoked |= owned - got
    return sorted(added & revoked)
