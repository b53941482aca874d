"""The classic group state machine: Kafka's exact table of valid previous states (ClassicGroupState),
and what each request does in each state (``REQUEST_BEHAVIOUR``, ClassicGroupState's javadoc).

One module, the tables. A single shared ``transitions.Machine`` (built with ``model=None``) holds
the table and drives every group: a transition is ``MACHINE.events[trigger].trigger(model)``,
which validates the source state and sets ``model.state``. Groups are never registered with
``add_model``: that binds a dozen ``partial`` callables per model (reference cycles the garbage
collector keeps re-scanning) and checks membership in a list, so its cost grows with the number
of groups. Measured with ``python -m bench.coordinator`` (10000 groups, create + 3 transitions):
80 us per group this way, 466 us with ``add_model``, 786 us with a Machine per group. No Timeout mixin (it starts threads); the
coordinator's timers are sans-I/O effects instead.
"""

from __future__ import annotations

from attrs import frozen
from transitions import Machine, MachineError

EMPTY = "Empty"
PREPARING_REBALANCE = "PreparingRebalance"
COMPLETING_REBALANCE = "CompletingRebalance"
STABLE = "Stable"
DEAD = "Dead"

STATES: tuple[str, ...] = (EMPTY, PREPARING_REBALANCE, COMPLETING_REBALANCE, STABLE, DEAD)

# Target state -> the states it may be entered from (ClassicGroupState's static block).
VALID_PREVIOUS_STATES: dict[str, tuple[str, ...]] = {
    EMPTY: (PREPARING_REBALANCE,),
    PREPARING_REBALANCE: (STABLE, COMPLETING_REBALANCE, EMPTY),
    COMPLETING_REBALANCE: (PREPARING_REBALANCE,),
    STABLE: (COMPLETING_REBALANCE,),
    DEAD: (STABLE, PREPARING_REBALANCE, COMPLETING_REBALANCE, EMPTY, DEAD),
}


def trigger_name(target: str) -> str:
    return f"go_{target}"


class IllegalStateTransition(Exception):
    """A transition Kafka's table forbids (Kafka throws IllegalStateException)."""


class GroupStateModel:
    """A group's state holder, driven by the shared machine's ``go_<State>`` events."""

    __slots__ = ("group_id", "previous_state", "state")

    def __init__(self, group_id: str, initial: str = "Empty") -> None:
        if initial not in STATES:
            raise ValueError(f"unknown group state {initial!r}")
        self.group_id = group_id
        self.state = initial
        self.previous_state: str | None = None

    def transition_to(self, target: str) -> str:
        """Move to ``target``; returns the previous state. Raises IllegalStateTransition."""
        before = self.state
        event = MACHINE.events.get(trigger_name(target))
        try:
            if event is None:
                raise MachineError(f"unknown state {target!r}")
            event.trigger(self)
        except MachineError as exc:
            raise IllegalStateTransition(
                f"group {self.group_id!r}: {before} -> {target} is not a valid transition"
            ) from exc
        self.previous_state = before
        return before


def _build_machine() -> Machine:
    machine = Machine(
        model=None,
        states=list(STATES),
        initial=EMPTY,
        auto_transitions=False,
        ignore_invalid_triggers=False,
        model_override=False,
        send_event=False,
    )
    for target, sources in VALID_PREVIOUS_STATES.items():
        machine.add_transition(trigger_name(target), list(sources), target)
    return machine


MACHINE = _build_machine()


def attach(model: GroupStateModel, initial: str = EMPTY) -> GroupStateModel:
    """Put ``model`` in its initial state (a loaded group starts Stable or Empty: replay)."""
    if initial not in STATES:
        raise ValueError(f"unknown group state {initial!r}")
    model.state = initial
    return model


def detach(model: GroupStateModel) -> None:
    """Nothing to release: models are never registered with the machine (see module doc)."""


def is_valid_transition(source: str, target: str) -> bool:
    return source in VALID_PREVIOUS_STATES.get(target, ())


def state_diagram(format: str = "mermaid") -> str:
    """The transition table as a Mermaid ``stateDiagram-v2`` or a Graphviz DOT digraph."""
    edges = [(src, dst) for dst, srcs in VALID_PREVIOUS_STATES.items() for src in srcs]
    edges.sort(key=lambda e: (STATES.index(e[0]), STATES.index(e[1])))
    if format == "mermaid":
        lines = ["stateDiagram-v2", f"    [*] --> {EMPTY}"]
        lines += [f"    {src} --> {dst}" for src, dst in edges]
        return "\n".join(lines) + "\n"
    if format == "dot":
        lines = ["digraph ClassicGroupState {", "    rankdir=LR;", "    node [shape=box];"]
        lines += [f'    "{s}";' for s in STATES]
        lines += [f'    "{src}" -> "{dst}";' for src, dst in edges]
        return "\n".join(lines) + "\n}\n"
    raise ValueError(f"unknown diagram format {format!r} (use 'mermaid' or 'dot')")


# --- what each request does in each state ---------------------------------------------------------
#
# Kafka documents this on ClassicGroupState ("action:" / "transition:"); this is the same for the
# simulator, as GroupMetadataManager (coordinator/group_metadata_manager.py) implements it. An
# answer is the error a known member of the current generation gets ("parked": no answer yet);
# tests/coordinator/test_requests_by_state.py checks every answer against the coordinator.
# Where Kafka's javadoc differs from its code, the code is followed: a Dead group answers
# COORDINATOR_NOT_AVAILABLE, not UNKNOWN_MEMBER_ID (the group is being removed).


@frozen
class Behaviour:
    """One request in one state: the answer, what the coordinator does, where the group goes."""

    answer: str  # an Errors name, or "parked"
    action: str
    transitions: tuple[str, ...] = ()  # the states the request can move the group to


PARKED = "parked"

REQUEST_BEHAVIOUR: dict[str, dict[str, Behaviour]] = {
    "JoinGroup (new member)": {
        EMPTY: Behaviour(
            "MEMBER_ID_REQUIRED",
            "v4+: hand out a member id to come back with (KIP-394); a static member or v0-3 is "
            "added at once and starts the initial rebalance",
            (PREPARING_REBALANCE,),
        ),
        PREPARING_REBALANCE: Behaviour(
            "MEMBER_ID_REQUIRED", "hand out a member id; with it the member joins the phase"
        ),
        COMPLETING_REBALANCE: Behaviour(
            "MEMBER_ID_REQUIRED",
            "hand out a member id; its JoinGroup with it starts a new rebalance",
            (PREPARING_REBALANCE,),
        ),
        STABLE: Behaviour(
            "MEMBER_ID_REQUIRED",
            "hand out a member id (a known static member is replaced in place instead)",
            (PREPARING_REBALANCE,),
        ),
        DEAD: Behaviour("COORDINATOR_NOT_AVAILABLE", "none: the group is being removed"),
    },
    "JoinGroup (existing member)": {
        EMPTY: Behaviour("UNKNOWN_MEMBER_ID", "none: the member id is stale"),
        PREPARING_REBALANCE: Behaviour(
            PARKED,
            "update the member and park the request until every expected member has joined",
            (COMPLETING_REBALANCE,),
        ),
        COMPLETING_REBALANCE: Behaviour(
            "NONE",
            "same metadata: answer with the current generation; new metadata: rebalance",
            (PREPARING_REBALANCE,),
        ),
        STABLE: Behaviour(
            "NONE",
            "a follower with the same metadata gets the current generation; the leader or new "
            "metadata rebalances",
            (PREPARING_REBALANCE,),
        ),
        DEAD: Behaviour("COORDINATOR_NOT_AVAILABLE", "none: the group is being removed"),
    },
    "SyncGroup": {
        EMPTY: Behaviour("UNKNOWN_MEMBER_ID", "none"),
        PREPARING_REBALANCE: Behaviour("REBALANCE_IN_PROGRESS", "none"),
        COMPLETING_REBALANCE: Behaviour(
            PARKED,
            "park until the leader's assignment is written; the leader's write answers all",
            (STABLE,),
        ),
        STABLE: Behaviour("NONE", "answer with the member's current assignment"),
        DEAD: Behaviour("COORDINATOR_NOT_AVAILABLE", "none"),
    },
    "Heartbeat": {
        EMPTY: Behaviour("UNKNOWN_MEMBER_ID", "none"),
        PREPARING_REBALANCE: Behaviour(
            "REBALANCE_IN_PROGRESS", "refresh the session; the member must rejoin"
        ),
        COMPLETING_REBALANCE: Behaviour("NONE", "refresh the session"),
        STABLE: Behaviour("NONE", "refresh the session"),
        DEAD: Behaviour("COORDINATOR_NOT_AVAILABLE", "none"),
    },
    "LeaveGroup": {
        EMPTY: Behaviour("UNKNOWN_MEMBER_ID", "none"),
        PREPARING_REBALANCE: Behaviour(
            "NONE",
            "remove the member; the join phase ends if everyone left has rejoined",
            (COMPLETING_REBALANCE, EMPTY),
        ),
        COMPLETING_REBALANCE: Behaviour(
            "NONE", "remove the member and rebalance", (PREPARING_REBALANCE,)
        ),
        STABLE: Behaviour("NONE", "remove the member and rebalance", (PREPARING_REBALANCE,)),
        DEAD: Behaviour("COORDINATOR_NOT_AVAILABLE", "none"),
    },
    "OffsetCommit": {
        EMPTY: Behaviour(
            "UNKNOWN_MEMBER_ID",
            "only a simple commit (generation -1, no member) is written",
        ),
        PREPARING_REBALANCE: Behaviour(
            "NONE", "write the offsets of the previous generation; refresh the session"
        ),
        COMPLETING_REBALANCE: Behaviour("REBALANCE_IN_PROGRESS", "none"),
        STABLE: Behaviour("NONE", "write the offsets; refresh the session"),
        DEAD: Behaviour("COORDINATOR_NOT_AVAILABLE", "none"),
    },
    "OffsetFetch": {state: Behaviour("NONE", "answer the committed offsets") for state in STATES},
    "DeleteGroups": {
        EMPTY: Behaviour(
            "NONE",
            "write tombstones for its offsets and the group, and remove it (no Dead state, as in "
            "Kafka's new coordinator)",
        ),
        PREPARING_REBALANCE: Behaviour("NON_EMPTY_GROUP", "none"),
        COMPLETING_REBALANCE: Behaviour("NON_EMPTY_GROUP", "none"),
        STABLE: Behaviour("NON_EMPTY_GROUP", "none"),
        DEAD: Behaviour("GROUP_ID_NOT_FOUND", "none"),
    },
}
"""Request -> state -> what the coordinator answers and does (ClassicGroupState's javadoc)."""

# What moves a group without a request (timers and partition moves), by source state.
OTHER_TRANSITIONS: dict[str, tuple[tuple[str, str], ...]] = {
    EMPTY: (("partition unloaded", DEAD),),  # expiry of its last offset removes it instead
    PREPARING_REBALANCE: (
        (
            "join phase ends (initial delay chain, everyone rejoined, or rebalance timeout)",
            COMPLETING_REBALANCE,
        ),
        ("join phase ends with no member left", EMPTY),
        ("partition unloaded", DEAD),
    ),
    COMPLETING_REBALANCE: (
        (
            "session expiry, or members that never synced (pending-sync timeout)",
            PREPARING_REBALANCE,
        ),
        ("partition unloaded", DEAD),
    ),
    STABLE: (
        (
            "session expiry, or members that never synced (pending-sync timeout)",
            PREPARING_REBALANCE,
        ),
        ("partition unloaded", DEAD),
    ),
    DEAD: (),
}
