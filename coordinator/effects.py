"""What a sans-I/O state machine asks its driver to do.

The coordinator and the simulated consumers never touch a clock, a socket or a thread: every call
takes the current simulated time and returns a list of effects. The runner in ``scenarios/`` owns
the clock, the network and the timer heap and carries the effects out. Timers are owned by the
node that returned them; setting a key again replaces the earlier timer (as Kafka's
CoordinatorTimer does), cancelling an unknown key is a no-op.
"""

from __future__ import annotations

from collections.abc import Hashable

from attrs import frozen


@frozen
class Send:
    """Put ``message`` on the network from node ``src`` to node ``dst``.

    Requests and their responses share ``correlation_id`` (unique per sending node), exactly as
    in Kafka's request header, so a client can match a late response to what it asked.
    """

    src: str
    dst: str
    correlation_id: int
    message: object


@frozen
class SetTimer:
    """Fire ``key`` on the owning node at absolute simulated time ``deadline_ms``.

    A key is any hashable value: the consumers use strings, the coordinator typed keys
    (``coordinator.timers``) whose ``str`` is the name the event log shows.
    """

    key: Hashable
    deadline_ms: int


@frozen
class CancelTimer:
    key: Hashable


Effect = Send | SetTimer | CancelTimer
