"""ConsumerRebalanceListener order, EAGER and COOPERATIVE (onJoinPrepare/Complete, KIP-429)."""

from __future__ import annotations

from coordinator.errors import Errors
from coordinator.protocol import (
    HeartbeatRequest,
    HeartbeatResponse,
    JoinGroupRequest,
    SyncGroupRequest,
)
from members.config import ConsumerConfig
from members.consumer_protocol import decode_assignment, decode_subscription
from tests.members.harness import CooperativeRange, Harness, tps


def rebalance(h: Harness) -> None:
    """The coordinator starts a rebalance: a heartbeat answered REBALANCE_IN_PROGRESS."""
    h.advance(h.now + h.config.heartbeat_interval_ms)
    h.respond(h.pending(HeartbeatRequest)[-1], HeartbeatResponse(Errors.REBALANCE_IN_PROGRESS))


def events_between(h: Harness, names: set[str]) -> list[str]:
    out = []
    for e in h.log.events:
        if e["event"] == "rebalance_callback":
            out.append(f"{e['callback']}{e['partitions']}")
        elif e["event"] == "request_sent" and e["api"] in names:
            out.append(e["api"])
    return out


def test_eager_order_revoke_all_before_join_then_assign_all() -> None:
    h = Harness()
    h.connect()
    h.join_and_sync(tps("t-0", "t-1"), member_id="m1")
    rebalance(h)
    h.join_and_sync(tps("t-1", "t-2"), member_id="m1", generation_id=2)
    assert events_between(h, {"JoinGroup", "SyncGroup"}) == [
        "JoinGroup",  # first join: no callback before it
        "SyncGroup",
        "assigned['t-0', 't-1']",
        "revoked['t-0', 't-1']",  # all owned, before the JoinGroup
        "JoinGroup",
        "SyncGroup",
        "assigned['t-1', 't-2']",  # everything, since nothing is owned after onJoinPrepare
    ]
    assert h.listener.calls == [
        ("assigned", ["t-0", "t-1"]),
        ("revoked", ["t-0", "t-1"]),
        ("assigned", ["t-1", "t-2"]),
    ]


def test_eager_revokes_even_when_nothing_is_owned_and_assigned_is_always_called() -> None:
    h = Harness()
    h.connect()
    h.join_and_sync([], member_id="m1")
    rebalance(h)
    h.join_and_sync([], member_id="m1", generation_id=2)
    assert h.listener.calls == [("assigned", []), ("revoked", []), ("assigned", [])]


def coop_config(**kw) -> ConsumerConfig:
    return ConsumerConfig(
        group_id="g",
        partition_assignment_strategy=(CooperativeRange(),),
        enable_auto_commit=False,
        **kw,
    )


def test_cooperative_member_keeps_partitions_through_join_and_revokes_only_what_moved() -> None:
    h = Harness(coop_config(), partitions={"t": 4})
    assert h.consumer.rebalance_protocol.name == "COOPERATIVE"
    h.connect()
    h.join_and_sync(tps("t-0", "t-1", "t-2", "t-3"), member_id="A")
    rebalance(h)
    # No revocation before JoinGroup; the subscription carries what A owns.
    assert h.listener.calls == [("assigned", ["t-0", "t-1", "t-2", "t-3"])]
    sub = decode_subscription(h.last(JoinGroupRequest).message.protocols[0].metadata)
    assert sub.owned_partitions == tuple(tps("t-0", "t-1", "t-2", "t-3"))
    assert sub.generation_id == 1
    assert h.consumer.assignment == tps("t-0", "t-1", "t-2", "t-3")  # still consuming
    # Round 1: A keeps t-0, t-1; t-2, t-3 are taken away (not given to anyone yet).
    h.join_and_sync(tps("t-0", "t-1"), member_id="A", generation_id=2)
    assert h.listener.calls[1:] == [("revoked", ["t-2", "t-3"]), ("assigned", [])]
    # ... and A rejoins at once for the follow-up rebalance.
    rejoin = h.last(JoinGroupRequest)
    assert len(h.pending(JoinGroupRequest)) == 1
    assert decode_subscription(rejoin.message.protocols[0].metadata).owned_partitions == tuple(
        tps("t-0", "t-1")
    )
    h.join_and_sync(tps("t-0", "t-1"), member_id="A", generation_id=3)
    assert h.listener.calls[-1] == ("assigned", [])
    assert len(h.pending(JoinGroupRequest)) == 0


def test_cooperative_leader_assignment_leaves_moving_partitions_unassigned() -> None:
    h = Harness(coop_config(), partitions={"t": 4})
    h.connect()
    h.join_and_sync(tps("t-0", "t-1", "t-2", "t-3"), member_id="A")
    rebalance(h)
    (join,) = h.pending(JoinGroupRequest)
    h.respond(join, h.join_response(member_id="A", generation_id=2, others=[("B", ["t"], [])]))
    sync = h.last(SyncGroupRequest).message
    got = {a.member_id: decode_assignment(a.assignment)[0] for a in sync.assignments}
    assert got == {"A": tps("t-0", "t-1"), "B": []}  # t-2, t-3 wait for round 2


def test_cooperative_onjoinprepare_revokes_unsubscribed_topics_only() -> None:
    h = Harness(coop_config(), partitions={"t": 2, "u": 2}, topics=("t", "u"))
    h.connect()
    h.join_and_sync(tps("t-0", "u-0"), member_id="A")
    h.call("subscribe", ["t"])
    h.advance(h.now + 100)
    assert h.listener.calls[-1] == ("revoked", ["u-0"])
    assert h.consumer.assignment == tps("t-0")


def test_lost_replaces_revoked_after_the_generation_is_reset() -> None:
    h = Harness()
    h.connect()
    h.join_and_sync(tps("t-0"), member_id="m1")
    h.advance(h.now + 3000)
    h.respond(h.pending(HeartbeatRequest)[-1], HeartbeatResponse(Errors.UNKNOWN_MEMBER_ID))
    assert h.listener.calls == [("assigned", ["t-0"]), ("lost", ["t-0"])]


def test_listener_without_on_partitions_lost_gets_revoked() -> None:
    class OnlyRevoked:
        def __init__(self) -> None:
            self.seen: list[list[str]] = []

        def on_partitions_revoked(self, partitions):
            self.seen.append([str(p) for p in partitions])

        def on_partitions_assigned(self, partitions):
            pass

    h = Harness()
    listener = OnlyRevoked()
    h.consumer.listener = listener
    h.connect()
    h.join_and_sync(tps("t-0"), member_id="m1")
    h.advance(h.now + 3000)
    h.respond(h.pending(HeartbeatRequest)[-1], HeartbeatResponse(Errors.UNKNOWN_MEMBER_ID))
    assert listener.seen == [["t-0"]]
    assert h.consumer.callback_history()[-1] == ("lost", ["t-0"])


def test_a_failing_listener_is_logged_not_propagated() -> None:
    class Broken:
        def on_partitions_assigned(self, partitions):
            raise RuntimeError("boom")

    h = Harness()
    h.consumer.listener = Broken()
    h.connect()
    h.join_and_sync(tps("t-0"), member_id="m1")
    assert h.consumer.state == "STABLE" and h.consumer.assignment == tps("t-0")
    assert "boom" in h.log.named("listener_error")[0]["error"]
