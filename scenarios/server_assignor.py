"""Seed 004's design 2: the broker-side strategy the coordinator runs (``design:
coordinator-assigns``).

The coordinator layer may not import the assignors or the consumer protocol, so the runner builds
the function here and hands it to ``CoordinatorConfig.server_assignor``: it decodes each member's
``ConsumerProtocolSubscription``, runs the named assignor on the cluster's topics as they are at
that moment, and encodes each member's ``ConsumerProtocolAssignment``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from assignors import get_assignor
from coordinator.config import ServerAssignor
from members.consumer_protocol import decode_subscription, encode_assignment


def server_assignor(name: str, topics: Callable[[], Mapping[str, int]]) -> ServerAssignor:
    """The broker's ``name`` strategy over the topics ``topics()`` returns when it runs."""
    assignor = get_assignor(name)

    def assign(group_id: str, subscriptions: Mapping[str, bytes]) -> Mapping[str, bytes]:
        decoded = {mid: decode_subscription(data) for mid, data in subscriptions.items()}
        result = assignor.assign(dict(topics()), decoded)
        return {mid: encode_assignment(result.get(mid, [])) for mid in subscriptions}

    return assign
