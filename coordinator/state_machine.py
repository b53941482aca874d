"""The classic group state machine: Kafka's exact table of valid previous states (ClassicGroupState).

One module, one table. A single shared ``transitions.Machine`` (built with ``model=None``) holds
the table and drives every group: a transition is ``MACHINE.events[trigger].trigger(model)``,
which validates the source state and sets ``model.state``. Groups are never registered with
``add_model``: that binds a dozen ``partial`` callables per model (reference cycles the garbage
collector keeps re-scanning) and checks membership in a list, so its cost grows with the number
of groups. Measured with ``python -m bench.coordinator`` (10000 groups, create + 3 transitions):
80 us per group this way, 466 us with ``add_model``, 786 us with a Machine per group. No Timeout mixin (it starts threads); the
coordinator's timers are sans-I/O effects instead.
"""

from __future__ import annotations

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
