"""The classic group state machine: Kafka's exact table of valid previous states (ClassicGroupState).

One module, one table. A single shared ``transitions.Machine`` drives every group (``add_model``):
building a Machine per group would cost a Machine's set-up for each of thousands of groups. No
Timeout mixin (it starts threads); the coordinator's timers are sans-I/O effects instead.
"""

from __future__ import annotations

from transitions import Machine, MachineError

EMPTY = "Empty"
PREPARING_REBALANCE = "PreparingRebalance"
COMPLETING_REBALANCE = "CompletingRebalance"
STABLE = "Stable"
DEAD = "Dead"

STATES: tuple[str, ...] = (EMPTY, PREPARING_REBALANCE, COMPLETING_REBALANCE, STABLE, DEAD)

# Target state -> the states it may be entered from (ClassicGroupState's static block; §2.2).
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
    """A group's state holder; the shared machine attaches ``go_<State>`` triggers to it."""

    def __init__(self, group_id: str) -> None:
        self.group_id = group_id
        self.previous_state: str | None = None

    def transition_to(self, target: str) -> str:
        """Move to ``target``; returns the previous state. Raises IllegalStateTransition."""
        before = self.state  # type: ignore[attr-defined]
        try:
            getattr(self, trigger_name(target))()
        except (MachineError, AttributeError) as exc:
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
    MACHINE.add_model(model, initial=initial)
    return model


def detach(model: GroupStateModel) -> None:
    MACHINE.remove_model(model)


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
