"""``groupsim step``: replay a scenario's event log one teaching event at a time.

The run happens first (it is deterministic); the stepper then folds the event log into a small
picture of the world (the group's state-machine position and generation, its members, each
client's state and owned partitions) and shows it after every event the timeline would show.
Interactive on a terminal (Enter = next, q = quit); straight through with ``--auto`` or when
stdin is not a terminal, so it can be piped and tested.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from attrs import define, field
from rich.console import Console
from rich.text import Text

from coordinator import events as ev
from scenarios.model import Scenario
from scenarios.report import describe_event, member_names, shorten_text
from scenarios.units import format_ms


@define
class World:
    """What the log says so far, for one group."""

    group: str
    state: str = "Empty"
    generation: int = 0
    leader: str | None = None
    members: list[str] = field(factory=list)
    clients: dict[str, str] = field(factory=dict)
    owned: dict[str, list[str]] = field(factory=dict)
    #: A KIP-848 group's epoch and each KIP-848 member's epoch (shown only for such groups).
    group_epoch: int | None = None
    epochs: dict[str, int] = field(factory=dict)

    def apply(self, e: Mapping[str, Any], names: Mapping[str, str], consumers: set[str]) -> None:
        name = e.get("event")
        node = str(e.get("node", ""))
        if e.get("group_id") == self.group and node.startswith("broker-"):
            if "state_to" in e:
                self.state = str(e["state_to"])
                if e.get("generation_id") is not None:
                    self.generation = int(e["generation_id"])
            if e.get("group_epoch") is not None:  # a KIP-848 consumer group
                self.group_epoch = int(e["group_epoch"])
            mid = shorten_text(str(e.get("member_id", "")), names) if e.get("member_id") else None
            if name == ev.MEMBER_ADDED and mid and mid not in self.members:
                self.members.append(mid)
            elif name == ev.MEMBER_REMOVED and mid in self.members:
                self.members.remove(mid)
            elif name == ev.LEADER_ELECTED:
                self.leader = mid
        if node in consumers:
            if "state_to" in e and name != ev.GROUP_STATE_CHANGED:
                self.clients[node] = str(e["state_to"])
            if name in _EPOCH_EVENTS and e.get("generation_id") is not None:
                self.epochs[node] = int(e["generation_id"])  # a KIP-848 member's epoch
            if name in (ev.CONSUMER_CRASHED, ev.CONSUMER_CLOSED, ev.CONSUMER_FATAL):
                self.clients[node] = {
                    ev.CONSUMER_CRASHED: "CRASHED",
                    ev.CONSUMER_CLOSED: "CLOSED",
                }.get(str(name), "FAILED")
            if "callback" in e:
                parts = [str(p) for p in e.get("partitions") or []]
                mine = self.owned.setdefault(node, [])
                if e["callback"] == "assigned":
                    mine.extend(p for p in parts if p not in mine)
                else:
                    self.owned[node] = [p for p in mine if p not in parts]

    def position(self) -> str:
        """The group's place in the state machine: ``Empty > [PreparingRebalance] > ...``."""
        cycle = ("Empty", "PreparingRebalance", "CompletingRebalance", "Stable")
        if self.state not in cycle:
            return f"[{self.state}]"
        return " > ".join(f"[{s}]" if s == self.state else s for s in cycle)

    def render(self) -> str:
        if self.group_epoch is not None:
            # KIP-848: the group epoch, and each member's epoch after its state
            clients = "  ".join(
                f"{c}:{s}@{self.epochs.get(c, '-')}[{', '.join(self.owned.get(c, []))}]"
                for c, s in sorted(self.clients.items())
            )
            return f"   [{self.group}: {self.state}, group epoch {self.group_epoch}]  {clients}"
        clients = "  ".join(
            f"{c}:{s}[{', '.join(self.owned.get(c, []))}]" for c, s in sorted(self.clients.items())
        )
        members = ", ".join(self.members) or "-"
        return (
            f"   [{self.group}: {self.state}, generation {self.generation}, leader {self.leader or '-'}, "
            f"members {members}]  {clients}\n   {self.position()}"
        )


#: A KIP-848 member's events that carry its member epoch (as ``generation_id``).
_EPOCH_EVENTS = frozenset({ev.CLIENT_STATE, ev.MEMBER_EPOCH_UPDATED})


def step_through(
    console: Console,
    scenario: Scenario,
    *,
    group: str | None,
    interactive: bool,
    limit: int,
    ask: Callable[[], str] = input,
) -> int:
    from scenarios.runner import run_scenario

    result = run_scenario(scenario)
    gid = group or (scenario.groups[0] if scenario.groups else None)
    consumers = {c.id for c in scenario.consumers}
    names = member_names(result.events, consumers)
    world = World(gid or "-")
    partitions = frozenset(g.offsets_partition for g in result.groups)
    shown = 0
    console.print(Text(f"stepping through {scenario.name} (group {gid})", style="bold"))
    for e in result.events:
        world.apply(e, names, consumers)
        line = describe_event(e, names, verbose=False, partitions=partitions)
        if line is None:
            continue
        shown += 1
        text = Text(f"{format_ms(int(e.get('t_ms', 0) or 0)):>10}  ")
        text.append(line[0], style=line[1] or None)
        console.print(text)
        console.print(world.render(), markup=False, style="dim")
        if limit and shown >= limit:  # 0: no limit
            break
        if interactive:
            try:
                answer = ask()
            except EOFError:
                interactive = False
                continue
            if answer.strip().lower() in ("q", "quit"):
                break
    if result.error:
        console.print(f"RUN FAILED: {result.error}", markup=False, style="bold red")
    if not result.expectations and result.passed:
        verdict = "ran (no expectations)"
    else:
        verdict = "expectations passed" if result.passed else "expectations FAILED"
    console.print(f"{shown} events shown; {verdict}", markup=False)
    return 0 if result.passed else 1
