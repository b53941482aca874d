"""Rebalances as a view of the event log: ``rebalances_from_events(events) -> [RebalanceRecord]``.

A pure function over the list of event dicts (as ``sim.events`` holds them or as they come back
from a JSON-lines log), so the CLI, the reports and the Spark pipeline all compute the same
numbers from the same log. It reads three kinds of events:

* the coordinator's **group state transitions** (any event with ``group_id``, ``state_from`` and a
  group state in ``state_to``): a rebalance starts when the group enters PreparingRebalance from
  Stable or Empty, and its join phase is over when the group reaches Stable (or Empty);
* the consumers' **rebalance callbacks** (``rebalance_callback``: ``callback`` revoked / assigned
  / lost, ``partitions``, ``node``): who owns which partition, and since when nobody does;
* the runner's ``sim_consumer_crashed``: a dead process consumes nothing; and a consumer's
  ``leave_group`` that was not sent (a static member's close): its revocation is the member
  stopping, as a crash is, not the start of the next rebalance.

Rules (deterministic, documented in docs/runner.md):

* **End**: the time of the last ``assigned`` callback of the generation the group reached (the
  followers learn their assignment after the group is already Stable), or the Stable time.
* **Start**: when the group enters PreparingRebalance, or earlier if a member stopped consuming
  for it first (the eager onJoinPrepare revocation of the member whose JoinGroup triggers it, or
  the revocation of a member that is closing).
* **Rounds**: KIP-429's follow-up. A member that revokes partitions in onJoinComplete (revoked,
  then assigned, at the same instant: only the cooperative protocol does that; eager revokes
  before rejoining) rejoins at once, and the next PreparingRebalance is counted as round 2 of the
  same rebalance, not as a new one. A cooperative move is one record with ``rounds == 2``.
* **Moved**: partitions whose owner after the rebalance differs from the owner before it (the
  settled assignment at the end of the previous rebalance). **Revoked**: partitions handed to
  ``onPartitionsRevoked``/``onPartitionsLost`` during the rebalance: eager revokes everything,
  cooperative only what moves.
* **Paused partition-ms**: for every partition that had an owner, the time within [start, end]
  during which no running member owned it: eager pauses every partition, cooperative only the
  moving ones. A partition nobody consumed yet (a new group, new partitions) is not "paused".
* **Coordinator failover**: a group unloaded from a failed broker (``Dead``, reason "partition
  unloaded") mid-rebalance is reloaded elsewhere; the rebalance it was in goes on there and stays
  one record (``coordinator_failovers`` counts the moves). A failover after the group settled
  belongs to no rebalance.
* **Imbalance after**: max - min of partitions per member among the members that received the
  final assignment.
* **Protocol switch** (KIP-848 online migration, ``group_upgraded`` / ``group_downgraded``): one
  group id, one history. An upgrade ends the classic generation: the last classic record (or the
  rebalance it interrupts, then ``outcome`` "upgraded") gets ``ended_by="upgraded"``, and from
  then on the classic tracker follows ownership only (classic members inside a consumer group
  are the consumer group's rebalances; their revocations start no classic one). The consumer
  group's epochs go on from the classic generation (``ConsumerGroup.fromClassicGroup``). A
  downgrade closes the consumer group's history (its last record ``ended_by="downgraded"``) and
  the rebalance the downgrade starts is a classic one (trigger ``group_downgraded``), measured
  against the ownership the consumer group left: moved from the last settled owners, paused from
  the last consumer-protocol member's revocation.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from attrs import asdict, evolve, field, frozen

from coordinator import events as ev
from coordinator.tuples import to_tuple

GROUP_STATES = frozenset({"Empty", "PreparingRebalance", "CompletingRebalance", "Stable", "Dead"})
CALLBACK_EVENT = ev.REBALANCE_CALLBACK
CRASH_EVENT = ev.SIM_CONSUMER_CRASHED
PROTOCOL_EVENT = ev.PROTOCOL_SELECTED
REPLACED_EVENT = ev.MEMBER_REPLACED
LEAVE_EVENT = ev.LEAVE_GROUP
# a ZooKeeper consumer stops fetching everything it owns (the coordinator's consumers say so in
# their revoked/lost callbacks instead)
_ZK_STOPS = frozenset({ev.ZK_REBALANCE_ATTEMPT_FAILED, ev.CONSUMER_CLOSED})


@frozen
class RebalanceRecord:
    """One rebalance of one group, from the first PreparingRebalance to the last assignment."""

    group_id: str
    generation_id: int
    start_ms: int
    end_ms: int
    rounds: int
    partitions_moved: int
    partitions_revoked: int
    paused_partition_ms: int
    imbalance_after: int
    members_after: int
    trigger: str
    reason: str | None
    outcome: str  # "Stable", "Empty", "Dead" or "unfinished" (the log ends mid-rebalance)
    protocol: str | None = None
    generations: tuple[int, ...] = field(default=(), converter=to_tuple)
    coordinator_failovers: int = 0
    # "upgraded" / "downgraded": the group changed type after this record (KIP-848 migration)
    ended_by: str | None = None

    @property
    def duration_ms(self) -> int:
        return self.end_ms - self.start_ms

    @property
    def paused_partition_seconds(self) -> float:
        return self.paused_partition_ms / 1000.0

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["generations"] = list(self.generations)
        out["duration_ms"] = self.duration_ms
        out["paused_partition_seconds"] = self.paused_partition_seconds
        return out


# The coordinator's reason templates (coordinator/shard.py), then Kafka's own wording
# (GroupMetadataManager, and the Scala coordinator's), each matched whole. The ids in a reason are
# user text (client.id, group.instance.id), so only a template's fixed words may decide: looking
# for keywords anywhere read "new member session-leader-1 joined" as a session expiry.
_TRIGGER_TEMPLATES: tuple[tuple[re.Pattern[str], str], ...] = tuple(
    (re.compile(pattern, re.DOTALL), name)
    for pattern, name in (
        (r"new member .+ joined", "member_joined"),
        (r"member .+ rejoined", "member_joined"),
        (r"member .+ changed its metadata", "member_metadata_changed"),
        (r".+: the leader rejoined", "leader_rejoined"),
        (r".+: metadata changed", "member_metadata_changed"),
        (r"static member .+ replaced(; the protocol would change)?", "static_member_replaced"),
        (r"member .+ expired", "member_session_expired"),
        (r"members expired waiting for SyncGroup", "member_sync_timeout"),
        (r"LeaveGroup for .+", "member_left"),
        (r"Adding new member .+", "member_joined"),  # Kafka 2.2 ends at the member id
        (r"[Rr]emoving member .+ on heartbeat expiration\.?", "member_session_expired"),
        (r"Removing member .+ on LeaveGroup(; client reason: .*)?", "member_left"),
        (r"explicit `LeaveGroup` request for \(.+\) members\.", "member_left"),
        (r"Removing .+ on pending sync request expiration", "member_sync_timeout"),
        (r"Leader .+ re-joining group during .+", "leader_rejoined"),
        (r"Updating metadata for static member .+ with instance id .+", "static_member_replaced"),
        (
            r"Group's selectedProtocol will change because static member .+",
            "static_member_replaced",
        ),
        (r"Updating metadata for member .+ during .+", "member_metadata_changed"),
        # GroupMetadataManager.convertToClassicGroup's rebalance reason
        (r"Downgrade group .+ from consumer to classic\.?", "group_downgraded"),
    )
)


def classify_trigger(reason: str | None) -> str:
    """A coarse trigger name for the coordinator's reason, by the template it was made from."""
    if not reason:
        return "unknown"
    for template, name in _TRIGGER_TEMPLATES:
        if template.fullmatch(reason):
            return name
    return "other"


class _Open:
    """The rebalance being tracked for one group."""

    __slots__ = (
        "assigned_nodes",
        "end_ms",
        "failovers",
        "follow_up",
        "generation",
        "generations",
        "join_done",
        "outcome",
        "paused",
        "protocol",
        "reason",
        "resuming",
        "revoked",
        "rounds",
        "start_ms",
    )

    def __init__(self, start_ms: int, reason: str | None) -> None:
        self.start_ms = start_ms
        self.end_ms = start_ms
        self.reason = reason
        self.rounds = 1
        self.generation = -1
        self.generations: list[int] = []
        self.revoked = 0
        self.paused = 0
        self.join_done = False
        self.follow_up = False
        self.failovers = 0
        self.resuming = False
        self.outcome = "unfinished"
        self.protocol: str | None = None
        self.assigned_nodes: dict[str, None] = {}


class _Group:
    __slots__ = (
        "current",
        "last_assigned_ms",
        "member_node",
        "modern",
        "owner",
        "pending_revokes",
        "records",
        "replaced",
        "settled",
        "unowned_since",
    )

    def __init__(self) -> None:
        # KIP-345 takeovers: new member id -> the member id it replaced (until its assignment)
        self.replaced: dict[str, str] = {}
        self.member_node: dict[str, str] = {}  # member id -> node, from the callbacks
        # revocations after the join phase, not yet known to be KIP-429 post-sync revocations
        # (followed at the same instant by the same member's assignment) or a pre-join revocation
        # that belongs to the next rebalance: (node, t_ms, partitions revoked)
        self.pending_revokes: list[tuple[str, int, list[str]]] = []
        self.owner: dict[str, str] = {}  # partition -> node
        self.unowned_since: dict[str, int] = {}  # partition -> t_ms it lost its owner
        self.settled: dict[str, str] = {}  # ownership at the end of the last rebalance
        self.current: _Open | None = None
        self.records: list[RebalanceRecord] = []
        # a consumer group now (after group_upgraded, until group_downgraded): ownership only
        self.modern = False
        self.last_assigned_ms = -1  # the group's last assigned callback


def _partitions(value: Any) -> list[str]:
    if not value:
        return []
    out = []
    for item in value:
        if isinstance(item, str):
            out.append(item)
        elif isinstance(item, (list, tuple)) and len(item) == 2:
            out.append(f"{item[0]}-{item[1]}")
        else:
            out.append(str(item))
    return out


def rebalances_from_events(events: Iterable[Mapping[str, Any]]) -> list[RebalanceRecord]:
    """Every rebalance in the log, ordered by start time (then group id): classic groups'
    (below) and KIP-848 consumer groups' (``consumer_group_rebalances``)."""
    if not isinstance(events, (list, tuple)):
        events = list(events)
    groups: dict[str, _Group] = {}
    node_group: dict[str, str] = {}

    def group_of(group_id: str) -> _Group:
        state = groups.get(group_id)
        if state is None:
            state = groups[group_id] = _Group()
        return state

    def release(state: _Group, partition: str, t: int) -> None:
        if state.owner.pop(partition, None) is not None:
            state.unowned_since.setdefault(partition, t)

    def paused_until(state: _Group, since: int, t: int) -> int:
        current = state.current
        if current is None:
            return 0
        begin = max(since, current.start_ms)
        return t - begin if t > begin else 0

    def finish(state: _Group, group_id: str) -> None:
        current = state.current
        if current is None:
            return
        end = current.end_ms
        for since in state.unowned_since.values():
            begin = max(since, current.start_ms)
            if begin < end:
                current.paused += end - begin
        # partitions still unowned are counted again only from the next rebalance's start
        for partition in state.unowned_since:
            state.unowned_since[partition] = max(state.unowned_since[partition], end)
        before = state.settled
        after = dict(state.owner)
        moved = sum(1 for p, owner in before.items() if after.get(p) != owner)
        counts = dict.fromkeys(current.assigned_nodes, 0)
        for owner in after.values():
            if owner in counts:
                counts[owner] += 1
        imbalance = (max(counts.values()) - min(counts.values())) if counts else 0
        state.records.append(
            RebalanceRecord(
                group_id=group_id,
                generation_id=current.generation,
                start_ms=current.start_ms,
                end_ms=end,
                rounds=current.rounds,
                partitions_moved=moved,
                partitions_revoked=current.revoked,
                paused_partition_ms=current.paused,
                imbalance_after=imbalance,
                members_after=len(counts),
                trigger=classify_trigger(current.reason),
                reason=current.reason,
                outcome=current.outcome,
                protocol=current.protocol,
                generations=current.generations,
                coordinator_failovers=current.failovers,
            )
        )
        state.settled = after
        state.current = None

    for event in events:
        name = event.get("event")
        t = int(event.get("t_ms", 0) or 0)
        group_id = event.get("group_id")
        node = event.get("node")
        if group_id and node and node not in node_group and not str(node).startswith("broker-"):
            node_group[node] = group_id
        if name == ev.GROUP_UPGRADED and group_id:
            state = group_of(group_id)
            current = state.current
            if current is not None and current.outcome != "Stable":
                # the conversion interrupted a rebalance (not possible in Kafka 4.0, which only
                # converts a group whose members all have an assignment; said if it happens)
                current.outcome = "upgraded"
                current.end_ms = max(current.end_ms, t)
            finish(state, group_id)
            if state.records and state.records[-1].ended_by is None:
                state.records[-1] = evolve(state.records[-1], ended_by="upgraded")
            state.modern = True
            state.pending_revokes.clear()
            continue
        if name == ev.GROUP_DOWNGRADED and group_id:
            state = group_of(group_id)
            state.modern = False
            # the revocations since the consumer group's last assignment (the leaving member's)
            # belong to the classic rebalance the downgrade starts (``settled`` is the
            # ownership after the consumer group's last assignment: moved counts from it)
            keep = [p for p in state.pending_revokes if p[1] >= state.last_assigned_ms]
            state.pending_revokes[:] = keep
            continue
        state_to = event.get("state_to")
        if (
            group_id
            and state_to in GROUP_STATES
            and "state_from" in event
            and name != ev.CONSUMER_GROUP_STATE_CHANGED
        ):
            state = group_of(group_id)
            current = state.current
            state_from = event.get("state_from")
            if state_to == "Dead" and "unload" in str(event.get("reason") or ""):
                # coordinator failover: the group moves to another broker and is reloaded there
                # (Stable at its last persisted generation); the rebalance resumes, not ends.
                # After the group settled there is nothing to resume (the next PreparingRebalance
                # is a new rebalance), unless a cooperative follow-up round is still due.
                if current is not None and current.outcome == "Stable":
                    if current.follow_up:
                        current.failovers += 1
                elif current is not None:
                    current.failovers += 1
                    current.resuming = True
                    current.join_done = False
                    current.outcome = "unfinished"
                continue
            if state_to == "PreparingRebalance":
                if current is not None and (
                    current.follow_up or current.resuming or state_from != "Stable"
                ):
                    # a cooperative follow-up round, the join phase restarting mid-rebalance, or
                    # the rebalance resuming on the new coordinator
                    if current.follow_up:
                        current.rounds += 1
                    current.follow_up = False
                    current.resuming = False
                    current.join_done = False
                    current.assigned_nodes.clear()
                    current.outcome = "unfinished"
                else:
                    finish(state, group_id)
                    opened = state.current = _Open(t, event.get("reason"))
                    # revocations just before (eager onJoinPrepare of the member that triggered
                    # it, or a closing member) are this rebalance's: it started when they did
                    for revoker, at, parts in state.pending_revokes:
                        opened.revoked += len(parts)
                        opened.start_ms = min(opened.start_ms, at)
                        for partition in parts:
                            if state.owner.get(partition) == revoker:
                                release(state, partition, at)
                    state.pending_revokes.clear()
            elif current is not None:
                generation = event.get("generation_id")
                if isinstance(generation, int) and generation >= 0:
                    current.generation = generation
                    if not current.generations or current.generations[-1] != generation:
                        current.generations.append(generation)
                if event.get("protocol_name"):
                    current.protocol = event.get("protocol_name")
                if state_to in ("CompletingRebalance", "Stable", "Empty", "Dead"):
                    current.join_done = True
                if state_to in ("Stable", "Empty", "Dead"):
                    current.outcome = state_to
                    current.end_ms = max(current.end_ms, t)
                    if state_to != "Stable":
                        finish(state, group_id)
            continue
        if name == REPLACED_EVENT and group_id:
            new_member, previous = event.get("member_id"), event.get("previous_member_id")
            if new_member and previous:
                group_of(group_id).replaced[new_member] = previous
            continue
        if name == PROTOCOL_EVENT and group_id:
            current = group_of(group_id).current
            if current is not None and event.get("protocol_name"):
                current.protocol = event.get("protocol_name")
            continue
        if name == CALLBACK_EVENT:
            if node is None:  # a callback is a consumer's: without its node, it has no owner
                continue
            gid = group_id or node_group.get(node)
            if gid is None:
                continue
            state = group_of(gid)
            current = state.current
            callback = event.get("callback")
            parts = _partitions(event.get("partitions"))
            if state.modern:
                # a consumer group's (consumer_group_rebalances measures it): follow ownership
                if callback in ("revoked", "lost") and parts:
                    for partition in parts:
                        if state.owner.get(partition) == node:
                            release(state, partition, t)
                    state.pending_revokes.append((node, t, parts))
                elif callback == "assigned":
                    for partition in parts:
                        state.unowned_since.pop(partition, None)
                        state.owner[partition] = node
                    state.last_assigned_ms = t
                    state.settled = dict(state.owner)
                continue
            if callback in ("revoked", "lost"):
                if not parts:
                    continue
                if current is not None and not current.join_done:
                    current.revoked += len(parts)
                    for partition in parts:
                        if state.owner.get(partition) == node:
                            release(state, partition, t)
                else:
                    # decided by what follows: the same member's assignment at this instant,
                    # or the next rebalance (see _Group.pending_revokes)
                    state.pending_revokes.append((node, t, parts))
            elif callback == "assigned":
                member_id = event.get("member_id")
                if member_id:
                    state.member_node[member_id] = node
                    previous = state.replaced.pop(member_id, None) if state.replaced else None
                    stand_in = state.member_node.get(previous) if previous else None
                    if (
                        current is not None
                        and stand_in is not None
                        and stand_in != node
                        and stand_in in current.assigned_nodes
                    ):
                        # a static member's new process took over its assignment as it is: it
                        # stands in for the old one in this record and ends nothing
                        del current.assigned_nodes[stand_in]
                        current.assigned_nodes[node] = None
                if current is not None and state.pending_revokes:
                    # onJoinComplete: revoked(owned - assigned) then assigned(...) at one instant:
                    # KIP-429's post-sync revocation, which forces a follow-up round
                    keep = []
                    for entry in state.pending_revokes:
                        if entry[0] == node and entry[1] == t:
                            current.revoked += len(entry[2])
                            current.follow_up = True
                            for partition in entry[2]:
                                if state.owner.get(partition) == node:
                                    release(state, partition, t)
                        else:
                            keep.append(entry)
                    state.pending_revokes[:] = keep
                for partition in parts:
                    previous = state.owner.get(partition)
                    if previous is not None and previous != node:
                        release(state, partition, t)
                    since = state.unowned_since.pop(partition, None)
                    if since is not None and current is not None:
                        current.paused += paused_until(state, since, t)
                    state.owner[partition] = node
                if current is not None and current.join_done and node not in current.assigned_nodes:
                    # the SyncGroup answers that end this round; a later assignment of the same
                    # generation (a static member restarted within its session) is no rebalance
                    current.assigned_nodes[node] = None
                    current.end_ms = max(current.end_ms, t)
            continue
        if name == LEAVE_EVENT and not event.get("sent"):
            # a close (or unsubscribe) that sends no LeaveGroup: a static member, or no known
            # coordinator. It starts no rebalance, so its onLeavePrepare revocation just now is
            # the member stopping (as a crash is), not the start of whatever rebalance comes next
            gid = group_id or (node_group.get(node) if node is not None else None)
            leaving = groups.get(gid) if gid else None
            if gid is None or leaving is None or not leaving.pending_revokes:
                continue
            mine = [e for e in leaving.pending_revokes if e[0] == node and e[1] == t]
            if not mine:
                continue
            leaving.pending_revokes[:] = [e for e in leaving.pending_revokes if e not in mine]
            if leaving.current is not None and leaving.current.outcome == "Stable":
                finish(leaving, gid)  # a settled rebalance is over
            for _node, at, parts in mine:
                for partition in parts:
                    if leaving.owner.get(partition) == node:
                        release(leaving, partition, at)
            continue
        if name == CRASH_EVENT:
            gid = node_group.get(node) if node is not None else None
            if gid is None:
                continue
            state = group_of(gid)
            if state.current is not None and state.current.outcome == "Stable":
                finish(state, gid)  # a crash after the rebalance settled is not part of it
            for partition, owner in list(state.owner.items()):
                if owner == node:
                    release(state, partition, t)

    for group_id, state in groups.items():
        if state.current is not None and state.current.outcome != "Stable":
            for _node, _at, parts in state.pending_revokes:
                state.current.revoked += len(parts)
        finish(state, group_id)
    records = [r for state in groups.values() for r in state.records]
    records.extend(consumer_group_rebalances(events))
    records.sort(key=lambda r: (r.start_ms, r.group_id))
    return records


#: A KIP-848 consumer group's states while members reconcile toward a new target.
_MODERN_BUSY = frozenset({"Assigning", "Reconciling"})


def _modern_trigger(reason: str | None, joined: bool) -> str:
    if joined:
        return "member_joined"
    text = (reason or "").lower()
    if "session" in text:
        return "member_session_expired"
    if "rebalance timeout" in text or "revocation" in text:
        return "member_rebalance_timeout"
    if "left" in text or "leave" in text:
        return "member_left"
    return "metadata_changed" if reason is None else "other"


def consumer_group_rebalances(events: Sequence[Mapping[str, Any]]) -> list[RebalanceRecord]:
    """KIP-848 consumer groups' rebalances, with the classic ones' measures: one record from the
    group leaving Stable (a group epoch bump: Assigning / Reconciling) until it is Stable (or
    Empty) again, plus the assignments that complete it afterwards (a new owner gets a released
    partition at its next heartbeat, after the coordinator's group is Stable). ``rounds`` counts
    the group epochs bumped meanwhile; moved, revoked and paused (unowned) partition-time come
    from the members' callbacks, as for classic groups (moved: a partition whose owner differs
    from its owner when the window opened; a classic member of a migrating group revokes and
    gets back the same partitions, which is no move); a revocation just before the window
    opens (a leaving member releases first) belongs to it. A group_upgraded starts the history
    (classic revocations before it are the classic tracker's), a group_downgraded ends it."""
    done: list[dict[str, Any]] = []
    owner: dict[str, dict[str, str]] = {}
    unowned_since: dict[str, dict[str, int]] = {}
    members: dict[str, set[str]] = {}
    current: dict[str, dict[str, Any]] = {}  # the open window, or the last one (settling)
    pending_revoked: dict[str, int] = {}
    last_change: dict[str, tuple[str | None, bool]] = {}
    held: dict[str, dict[str, str]] = {}  # partition -> its last owner (kept across a revoke)
    for e in events:
        name = e.get("event")
        gid = e.get("group_id")
        t = int(e.get("t_ms", 0) or 0)
        node = str(e.get("node", ""))
        if not isinstance(gid, str):
            continue
        if name == ev.GROUP_UPGRADED:
            pending_revoked.pop(gid, None)
            current.pop(gid, None)
        elif name == ev.GROUP_DOWNGRADED:
            cur = current.pop(gid, None)
            if cur is not None:
                cur["ended_by"] = "downgraded"
            pending_revoked.pop(gid, None)
        elif name == ev.CONSUMER_GROUP_MEMBER_JOINED:
            members.setdefault(gid, set()).add(str(e.get("member_id")))
            last_change[gid] = (None, True)
        elif name == ev.CONSUMER_GROUP_MEMBER_REMOVED:
            members.setdefault(gid, set()).discard(str(e.get("member_id")))
            last_change[gid] = (e.get("reason"), False)
        elif name == ev.CONSUMER_GROUP_EPOCH_BUMPED:
            cur = current.get(gid)
            if cur is not None and cur["open"]:
                cur["epochs"].append(int(e.get("group_epoch", 0)))
        elif name == ev.CONSUMER_GROUP_STATE_CHANGED:
            to = e.get("state_to")
            cur = current.get(gid)
            if to in _MODERN_BUSY and (cur is None or not cur["open"]):
                reason, joined = last_change.get(gid, (None, False))
                cur = current[gid] = {
                    "group_id": gid,
                    "open": True,
                    "start": t,
                    "end": t,
                    "epochs": [int(e.get("group_epoch", 0))],
                    "revoked": pending_revoked.pop(gid, 0),
                    "paused": 0,
                    "reason": reason,
                    "trigger": _modern_trigger(reason, joined),
                    "outcome": "unfinished",
                    "members_after": 0,
                    "before": dict(held.get(gid, {})),
                    "moved_set": set(),
                    "ended_by": None,
                }
                done.append(cur)
            elif to in ("Stable", "Empty", "Dead") and cur is not None and cur["open"]:
                cur["open"] = False
                cur["end"] = t
                cur["outcome"] = str(to)
                cur["members_after"] = len(members.get(gid, ()))
        elif name == CALLBACK_EVENT and not node.startswith("broker-"):
            parts = _partitions(e.get("partitions"))
            own = owner.setdefault(gid, {})
            since = unowned_since.setdefault(gid, {})
            cur = current.get(gid)
            if e.get("callback") in ("revoked", "lost"):
                for p in parts:
                    if own.get(p) == node:
                        del own[p]
                        since.setdefault(p, t)
                if cur is not None and cur["open"]:
                    cur["revoked"] += len(parts)
                else:
                    pending_revoked[gid] = pending_revoked.get(gid, 0) + len(parts)
            elif e.get("callback") == "assigned":
                for p in parts:
                    lost_at = since.pop(p, None)
                    before = own.get(p)
                    if cur is not None and (lost_at is not None or before not in (None, node)):
                        was = cur["before"].get(p)
                        if was is not None and was != node:
                            cur["moved_set"].add(p)
                        else:
                            cur["moved_set"].discard(p)
                        if lost_at is not None:
                            cur["paused"] += t - max(lost_at, cur["start"])
                        cur["end"] = max(cur["end"], t)
                    own[p] = node
                    held.setdefault(gid, {})[p] = node
    records = []
    for cur in done:
        gid = cur["group_id"]
        counts = [
            sum(1 for o in owner.get(gid, {}).values() if o == n)
            for n in set(owner.get(gid, {}).values())
        ]
        epochs = tuple(dict.fromkeys(cur["epochs"]))
        records.append(
            RebalanceRecord(
                group_id=gid,
                generation_id=epochs[-1],
                start_ms=cur["start"],
                end_ms=cur["end"],
                rounds=len(epochs),
                partitions_moved=len(cur["moved_set"]),
                partitions_revoked=cur["revoked"],
                paused_partition_ms=cur["paused"],
                imbalance_after=(max(counts) - min(counts)) if counts else 0,
                members_after=cur["members_after"],
                trigger=cur["trigger"],
                reason=cur["reason"],
                outcome=cur["outcome"],
                protocol="consumer",
                generations=epochs,
                ended_by=cur["ended_by"],
            )
        )
    return records


def unowned_partition_ms(
    events: Iterable[Mapping[str, Any]], end_ms: int | None = None
) -> dict[str, int]:
    """Group id -> partition-milliseconds during which a partition that had an owner had none.

    Measured wherever it happens, not only inside rebalance windows (``paused_partition_ms``): a
    static member closed for 5 s (no LeaveGroup, so no rebalance) leaves its partitions unowned
    for those 5 s, and a crashed member's partitions are unowned from the crash until they are
    assigned again. A partition counts from when its owner revoked it, lost it or stopped (crash)
    until a running member is assigned it, or until ``end_ms`` (default: the last event's time).
    Partitions never owned yet (a new group, new partitions) do not count.

    Seed 004's ZooKeeper consumers own partitions the same way, from their own events: from
    ``zk_rebalance_done`` (the fetchers start) until ``zk_partitions_released``, a failed try
    (``zk_rebalance_attempt_failed``), close or crash; so the sweep's ``unowned_partition_ms``
    column has one definition for every design.
    """
    node_group: dict[str, str] = {}
    owner: dict[str, dict[str, str]] = {}  # group -> partition -> node
    since: dict[str, dict[str, int]] = {}  # group -> partition -> t it lost its owner
    total: dict[str, int] = {}
    zk_nodes: set[str] = set()  # ZooKeeper consumers (their close is a release, as a crash)
    last = 0

    def release(gid: str, partition: str, t: int) -> None:
        if owner.setdefault(gid, {}).pop(partition, None) is not None:
            since.setdefault(gid, {}).setdefault(partition, t)

    for event in events:
        name = event.get("event")
        t = int(event.get("t_ms", 0) or 0)
        last = max(last, t)
        group_id = event.get("group_id")
        raw_node = event.get("node")
        node = "" if raw_node is None else str(raw_node)
        if group_id and node and node not in node_group and not node.startswith("broker-"):
            node_group[node] = group_id
        if name == CALLBACK_EVENT:
            gid = group_id or node_group.get(node)
            if gid is None:
                continue
            total.setdefault(gid, 0)
            parts = _partitions(event.get("partitions"))
            if event.get("callback") in ("revoked", "lost"):
                for partition in parts:
                    if owner.get(gid, {}).get(partition) == node:
                        release(gid, partition, t)
            elif event.get("callback") == "assigned":
                for partition in parts:
                    lost_at = since.get(gid, {}).pop(partition, None)
                    if lost_at is not None:
                        total[gid] += t - lost_at
                    owner.setdefault(gid, {})[partition] = node
        elif name == ev.ZK_REBALANCE_DONE and group_id:
            zk_nodes.add(node)
            total.setdefault(group_id, 0)
            done = set(_partitions(event.get("partitions")))
            for partition, holder in list(owner.get(group_id, {}).items()):
                if holder == node and partition not in done:
                    release(group_id, partition, t)
            for partition in sorted(done):
                lost_at = since.get(group_id, {}).pop(partition, None)
                if lost_at is not None:
                    total[group_id] += t - lost_at
                owner.setdefault(group_id, {})[partition] = node
        elif name == ev.ZK_PARTITIONS_RELEASED and group_id:
            for partition in _partitions(event.get("partitions")):
                if owner.get(group_id, {}).get(partition) == node:
                    release(group_id, partition, t)
        elif name == CRASH_EVENT or (name in _ZK_STOPS and node in zk_nodes):
            gid = node_group.get(node)
            if gid is None:
                continue
            for partition, holder in list(owner.get(gid, {}).items()):
                if holder == node:
                    release(gid, partition, t)
    end = last if end_ms is None else end_ms
    for gid, waiting in since.items():
        total[gid] = total.get(gid, 0) + sum(max(0, end - t) for t in waiting.values())
    return total


def unowned_by_group(
    events: Iterable[Mapping[str, Any]],
    rebalances: Iterable[Mapping[str, Any]],
    end_ms: int | None = None,
) -> dict[str, tuple[int, int]]:
    """Group id -> (partition-ms without an owner in all, the part of it inside rebalances).

    The one computation behind ``groupsim run``'s "partitions without an owner" line, the
    ``--json`` result's ``unowned_partition_ms``/``unowned_in_rebalances_partition_ms`` and the
    sweep's ``unowned_partition_seconds`` column: the total is ``unowned_partition_ms``, the inside
    part the rebalance records' ``paused_partition_ms`` summed.
    """
    totals = unowned_partition_ms(events, end_ms)
    inside: dict[str, int] = {}
    for r in rebalances:
        gid = str(r.get("group_id"))
        inside[gid] = inside.get(gid, 0) + int(r.get("paused_partition_ms") or 0)
    order = [*totals, *(gid for gid in inside if gid not in totals)]
    return {gid: (totals.get(gid, 0), inside.get(gid, 0)) for gid in order}
