"""The membership seam: the ``Consumer`` facade uses its membership manager only through the
``MembershipManager`` protocol (members.membership), so a KIP-848 manager can take the classic
one's place. mypy checks it statically (``Consumer.membership`` is typed by the protocol); here a
consumer runs joins, rebalances, commits, a coordinator failover and a close with its manager
wrapped in a guard that refuses every other attribute."""

from __future__ import annotations

import pytest

from members.membership import MembershipManager
from tests.members.test_integration import all_stable, build, covered

#: The protocol's members: its methods, properties and annotated attributes.
ALLOWED = frozenset(
    name
    for name in {*vars(MembershipManager), *MembershipManager.__annotations__}
    if not name.startswith("_")
)


class Guard:
    """Forwards the protocol's members to the manager; anything else is a seam violation."""

    def __init__(self, inner: object, violations: list[str]) -> None:
        object.__setattr__(self, "_inner", inner)
        object.__setattr__(self, "_violations", violations)

    def __getattr__(self, name: str):
        if name not in ALLOWED:
            self._violations.append(name)
            raise AttributeError(f"{name!r} is not part of MembershipManager")
        return getattr(self._inner, name)

    def __setattr__(self, name: str, value) -> None:
        if name not in ALLOWED:
            self._violations.append(name)
            raise AttributeError(f"{name!r} is not part of MembershipManager")
        setattr(self._inner, name, value)


def test_the_protocol_names_the_calls_a_kip848_manager_needs() -> None:
    assert {"join", "leave", "on_response", "on_request_failed", "on_timer"} <= ALLOWED
    assert "heartbeat" not in ALLOWED  # the classic heartbeat thread stays behind the seam


def test_the_guard_refuses_what_the_protocol_lacks() -> None:
    _, _, (c,) = build(1)
    violations: list[str] = []
    guard = Guard(c.membership, violations)
    assert guard.generation_id == -1
    with pytest.raises(AttributeError):
        _ = guard.heartbeat
    assert violations == ["heartbeat"]


@pytest.mark.parametrize("strategy", [("range",), ("cooperative-sticky",)])
def test_the_facade_uses_only_the_protocol(strategy) -> None:
    loop, cluster, cs = build(3, strategy=strategy)
    violations: list[str] = []
    for c in cs:
        c.membership = Guard(c.membership, violations)
        loop.start(c.node)
    loop.run_until(10_000)
    assert all_stable(cluster, cs) and covered(cs)
    loop.call("C0", "commit")
    loop.call("C1", "close")
    loop.run_until(20_000)
    coordinator = cs[0].coordinator
    assert coordinator is not None
    loop.fail_broker(coordinator)
    loop.run_until(60_000)
    live = [c for c in cs if c.alive]
    assert all_stable(cluster, live) and covered(live)
    assert cluster.group("g").generation_id >= 2
    assert violations == []


def test_the_facade_uses_only_the_protocol_with_the_kip848_manager() -> None:
    """The same guard around a ConsumerMembershipManager: join, reconcile (with auto-commit),
    acknowledge, a manual commit, a fencing and a close touch nothing outside the protocol."""
    from coordinator.errors import Errors
    from coordinator.protocol import OffsetCommitRequest
    from members.config import ConsumerConfig
    from tests.members.kip848_harness import Kip848Harness

    h = Kip848Harness(ConsumerConfig(group_id="g", group_protocol="consumer"))
    violations: list[str] = []
    h.consumer.membership = Guard(h.consumer.membership, violations)  # type: ignore[arg-type]
    h.join({"t": [0, 1]})
    h.answer_offset_fetch()
    h.answer_heartbeat(epoch=1)
    h.advance(h.now + 1000)
    h.answer_heartbeat(epoch=2, assignment={"t": [1]})
    h.answer_commit(h.pending(OffsetCommitRequest)[-1])
    h.answer_heartbeat(epoch=2)
    h.call("commit")
    h.answer_commit(h.pending(OffsetCommitRequest)[-1])
    h.advance(h.now + 1000)
    h.answer_heartbeat(error=Errors.FENCED_MEMBER_EPOCH)
    h.close()
    assert h.listener.calls[:3] == [
        ("assigned", ["t-0", "t-1"]),
        ("revoked", ["t-0"]),
        ("assigned", []),
    ]
    assert violations == []
