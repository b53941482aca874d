"""Safety invariants checked after every simulation step (``Simulation(check_invariants=True)``).

1. **Exclusive ownership**: no partition is owned by two consumers of one group at the same time,
   cooperative rebalancing included. Ownership is what the consumers themselves hold (their owned
   sets), counted only for running consumers whose member id is still in the coordinator's member
   table: a member the coordinator has already removed (a "zombie" whose session expired behind a
   network partition, or that overran max.poll.interval.ms) may still think it owns partitions in
   real Kafka too, and fencing it is exactly what the generation check on OffsetCommit is for.
   While no coordinator holds the group (its broker failed, the group is unloaded), the member
   table last seen is used: nobody can join, sync or be removed until a coordinator loads the
   group again, so the members then are the members now.
2. **The leader is a member**: a group with members has its leader among them (needs a
   coordinator's view: not checked while none holds the group).
3. **Generation never goes back** while one coordinator serves the group. Kafka itself allows one
   exception, so the check does too: after coordinator failover the group is reloaded at its last
   *persisted* generation (GroupMetadataManager.replay), which is lower than an in-memory
   generation that reached CompletingRebalance but was never written. The baseline therefore
   restarts whenever the group's coordinator changes or no coordinator has the group (a broker
   that fails and comes back reloads it the same way).

**An anomaly is not a violation.** One overlap of owned sets is allowed by Kafka: an EAGER member
in ``ConsumerCoordinator.onJoinPrepare`` waiting for its commit has marked its partitions pending
revocation (``maybeMarkPartitionsPendingRevocation``: the fetcher neither fetches them nor returns
their records) and is blocked inside ``poll()`` until the commit ends or ``joinPrepareTimer`` (its
rebalance timeout) expires. If it learned of the rebalance late, the coordinator's rebalance timer
expires first and completes the join without it; a *static* member that has not rejoined keeps its
slot (``GroupMetadataManager.completeClassicGroupJoin`` removes only dynamic ones), so the member
table still has it while its old partitions are given to others. That case becomes an
``invariant_anomaly`` event (``owned_pending_revocation``), listed in ``sim.anomalies``, and does
not fail ``invariants: true``.

A violation becomes an ``invariant_violated`` event in the log and an entry in
``sim.violations``; with ``raise_on_violation`` it also raises ``InvariantViolation``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from coordinator import events as ev

if TYPE_CHECKING:
    from scenarios.simulation import Simulation


class InvariantViolation(AssertionError):
    """Raised by an invariant check when the simulation was built with ``raise_on_violation``."""


class InvariantChecker:
    """Holds the state the checks need between steps (last generation per group)."""

    def __init__(self, sim: Simulation) -> None:
        self.sim = sim
        self.violations: list[dict[str, Any]] = []
        self.anomalies: list[dict[str, Any]] = []
        # group id -> the member ids a coordinator last showed (used while none holds the group)
        self._members: dict[str, frozenset[str]] = {}
        # group id -> (coordinator node, highest generation seen under it)
        self._generation: dict[str, tuple[str | None, int]] = {}
        self._reported: set[tuple[str, str, str]] = set()

    def _group_ids(self) -> list[str]:
        seen: dict[str, None] = {}
        for slot in self.sim._consumers.values():
            seen.setdefault(slot.consumer.config.group_id, None)
        return list(seen)

    def check(self) -> None:
        for group_id in self._group_ids():
            self._check_group(group_id)

    def _check_group(self, group_id: str) -> None:
        sim = self.sim
        view = sim.cluster.group(group_id)
        if view is None:
            # no coordinator has the group (unloaded, or its broker down): whoever loads it next
            # starts from the last persisted generation, even the same broker after a restart;
            # membership cannot change meanwhile, so ownership is checked against the last table
            self._generation.pop(group_id, None)
            self._check_ownership(group_id, self._members.get(group_id, frozenset()), None)
            return
        member_ids = frozenset(view.member_ids)
        self._members[group_id] = member_ids
        self._check_ownership(group_id, member_ids, view.generation_id)
        if view.members and view.leader_id not in member_ids:
            self._violate(
                "leader_is_member",
                group_id,
                f"leader {view.leader_id!r} is not a member",
                leader_id=view.leader_id,
            )
        coordinator = view.coordinator or sim.cluster.coordinator_for(group_id)
        previous = self._generation.get(group_id)
        if previous is not None and previous[0] == coordinator and view.generation_id < previous[1]:
            self._violate(
                "generation_monotonic",
                group_id,
                f"generation went from {previous[1]} back to {view.generation_id}",
                generation_from=previous[1],
                generation_to=view.generation_id,
            )
        if previous is None or previous[0] != coordinator or view.generation_id > previous[1]:
            self._generation[group_id] = (coordinator, view.generation_id)

    def _check_ownership(
        self, group_id: str, member_ids: frozenset[str], generation: int | None
    ) -> None:
        owners: dict[Any, str] = {}
        pending: set[str] = set()  # consumers whose owned partitions are pending revocation
        for cid, slot in self.sim._consumers.items():
            consumer = slot.consumer
            if not slot.running or slot.closed or consumer.config.group_id != group_id:
                continue
            if consumer.member_id not in member_ids:
                continue
            if _pending_revocation(consumer):
                pending.add(cid)
            for tp in _owned(consumer):
                other = owners.get(tp)
                if other is None:
                    owners[tp] = cid
                    continue
                holders = [c for c in (other, cid) if c in pending]
                if holders:
                    self._anomaly(
                        "owned_pending_revocation",
                        "exclusive_ownership",
                        group_id,
                        f"{tp} owned by {other} and {cid}: {holders[0]} holds it pending "
                        "revocation, blocked in onJoinPrepare's commit (not fetching), while "
                        "the group went on without it",
                        partition=str(tp),
                        owners=[other, cid],
                        holder=holders[0],
                        generation_id=generation,
                    )
                else:
                    self._violate(
                        "exclusive_ownership",
                        group_id,
                        f"{tp} owned by {other} and {cid}",
                        partition=str(tp),
                        owners=[other, cid],
                    )

    def _anomaly(
        self, anomaly: str, invariant: str, group_id: str, detail: str, **fields: Any
    ) -> None:
        key = (anomaly, group_id, detail)
        if key in self._reported:
            return
        self._reported.add(key)
        record = {
            "anomaly": anomaly,
            "invariant": invariant,
            "group_id": group_id,
            "detail": detail,
            "t_ms": self.sim.now,
            **fields,
        }
        self.anomalies.append(record)
        self.sim.logger.warning(
            ev.INVARIANT_ANOMALY,
            t_ms=self.sim.now,
            node="@sim",
            anomaly=anomaly,
            invariant=invariant,
            group_id=group_id,
            detail=detail,
            **fields,
        )

    def _violate(self, invariant: str, group_id: str, detail: str, **fields: Any) -> None:
        key = (invariant, group_id, detail)
        if key in self._reported:
            return  # report a persisting violation once, not after every step
        self._reported.add(key)
        record = {
            "invariant": invariant,
            "group_id": group_id,
            "detail": detail,
            "t_ms": self.sim.now,
            **fields,
        }
        self.violations.append(record)
        self.sim.logger.warning(
            ev.INVARIANT_VIOLATED,
            t_ms=self.sim.now,
            node="@sim",
            invariant=invariant,
            group_id=group_id,
            detail=detail,
            **fields,
        )
        if self.sim.raise_on_violation:
            raise InvariantViolation(f"t={self.sim.now} ms, group {group_id}: {detail}")


def _owned(consumer: Any) -> Any:
    owned = getattr(consumer, "owned", None)
    if owned is None:
        owned = getattr(consumer, "assignment", ())
    return sorted(owned or ())


def _pending_revocation(consumer: Any) -> bool:
    """Its owned partitions are marked pending revocation (EAGER onJoinPrepare's commit is out)."""
    fetch = getattr(consumer, "fetch", None)
    return bool(getattr(fetch, "pending_revocation", False))
