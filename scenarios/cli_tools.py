"""The smaller ``groupsim`` commands: assign, coordinator, diagram, step, lessons."""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from scenarios.console import EXIT_FAILED, EXIT_INVALID, console, print_scenario_error
from scenarios.errors import ScenarioError
from scenarios.summary import FULL_TABLE_MAX_MEMBERS

if TYPE_CHECKING:
    from rich.table import Table

ALLOW_CODE_HELP = (
    "Let the scenario name assignor classes as module:Class (imports and runs that code)."
)


def register(app: typer.Typer) -> None:
    app.command()(assign)
    app.command()(coordinator)
    app.command()(diagram)
    app.command()(step)
    app.command()(lessons)


def _table(title: str) -> Table:
    """A rich table: box drawing on a terminal, plain ASCII rules when piped."""
    from rich import box
    from rich.table import Table

    return Table(title=title, box=box.HEAVY_HEAD if console().is_terminal else box.ASCII)


def _fail(message: str) -> typer.Exit:
    console(stderr=True).print(f"error: {message}", markup=False, style="red")
    return typer.Exit(EXIT_INVALID)


# --- assign ------------------------------------------------------------------------------------


def parse_topics(spec: str) -> dict[str, int]:
    """``"T1:3,T2:3"`` -> ``{"T1": 3, "T2": 3}``."""
    topics: dict[str, int] = {}
    for part in filter(None, (p.strip() for p in spec.split(","))):
        name, sep, count = part.rpartition(":")
        if not sep or not name or not count.isdigit() or int(count) < 1:
            raise ValueError(f"bad topic {part!r}: write NAME:PARTITIONS, e.g. T1:3")
        topics[name] = int(count)
    if not topics:
        raise ValueError("no topics given")
    return topics


_RANGE = re.compile(r"\{(\d+)\.\.(\d+)\}")
MAX_CLI_MEMBERS = 100_000


def expand_names(name: str) -> list[str]:
    """``C{0..2}`` -> ``[C0, C1, C2]`` (one range per name); other names as they are."""
    m = _RANGE.search(name)
    if m is None:
        return [name]
    first, last = int(m.group(1)), int(m.group(2))
    if last < first or last - first >= MAX_CLI_MEMBERS:
        raise ValueError(f"bad range in {name!r}: write C{{0..1999}} (at most {MAX_CLI_MEMBERS:,})")
    return [f"{name[: m.start()]}{i}{name[m.end() :]}" for i in range(first, last + 1)]


def parse_members(spec: str, topics: dict[str, int]) -> dict[str, tuple[tuple[str, ...], int]]:
    """``"C0,C1"`` (all topics) or ``"C0:T1,T2;C1:T1"``; ``C1*2`` gives C1 two streams (legacy);
    ``C{0..1999}`` names 2,000 members at once.

    Returns member -> (subscribed topics, num_streams).
    """
    members: dict[str, tuple[tuple[str, ...], int]] = {}
    entries = spec.split(";") if ";" in spec or ":" in spec else spec.split(",")
    for entry in filter(None, (e.strip() for e in entries)):
        name, sep, subs = entry.partition(":")
        streams = 1
        if "*" in name:
            name, _, n = name.partition("*")
            if not n.isdigit() or int(n) < 1:
                raise ValueError(f"bad stream count in {entry!r}: write C1*2")
            streams = int(n)
        wanted = tuple(t.strip() for t in subs.split(",") if t.strip()) if sep else tuple(topics)
        for t in wanted:
            if t not in topics:
                raise ValueError(f"member {name} subscribes to unknown topic {t!r}")
        for one in expand_names(name.strip()):
            if one in members:
                raise ValueError(f"member {one} given twice")
            members[one] = (wanted, streams)
    if not members:
        raise ValueError("no members given")
    if len(members) > MAX_CLI_MEMBERS:
        raise ValueError(f"{len(members):,} members: at most {MAX_CLI_MEMBERS:,}")
    return members


def parse_owned(spec: str, members: Mapping[str, object]) -> dict[str, list[str]]:
    """Current owners: a YAML/JSON file mapping member -> partitions (``T1-0``), or inline
    ``"C0=T1-0,T1-1;C1=T1-2"``. Every partition is owned once; members must be in the group."""
    from assignors.api import TopicPartition
    from scenarios.loader import read_yaml_file
    from scenarios.yamlpos import parse_yaml

    path = Path(spec)
    if path.is_file():
        try:
            raw, _ = parse_yaml(read_yaml_file(path, spec), spec)
        except ScenarioError as exc:
            raise ValueError("--owned: " + "; ".join(i.format() for i in exc.issues)) from None
    else:
        raw = {}
        for entry in filter(None, (e.strip() for e in spec.split(";"))):
            member, sep, parts = entry.partition("=")
            if not sep:
                raise ValueError(
                    f"--owned {spec!r}: not a file, nor MEMBER=T1-0,T1-1;MEMBER=... ({entry!r})"
                )
            raw[member.strip()] = [p.strip() for p in parts.split(",") if p.strip()]
    if not isinstance(raw, dict):
        raise ValueError("--owned: expected a mapping of member -> list of partitions")
    owned: dict[str, list[str]] = {}
    seen: dict[str, str] = {}
    for member, parts in raw.items():
        if member not in members:
            raise ValueError(f"--owned: {member!r} is not one of the members")
        if not isinstance(parts, list):
            raise ValueError(f"--owned: {member}: expected a list of partitions like T1-0")
        for tp in parts:
            TopicPartition.parse(str(tp))  # raises a clear ValueError
            if str(tp) in seen:
                raise ValueError(f"--owned: {tp} is owned by both {seen[str(tp)]} and {member}")
            seen[str(tp)] = member
        owned[member] = [str(tp) for tp in parts]
    return owned


def assign(
    topics: Annotated[
        str, typer.Option("--topics", "-t", help="Topics and partition counts: T1:3,T2:3")
    ],
    members: Annotated[
        str,
        typer.Option(
            "--members",
            "-m",
            help="C0,C1 (all topics) or C0:T1,T2;C1:T1; C1*2 = two streams; C{0..1999} = a range",
        ),
    ],
    assignor: Annotated[
        str,
        typer.Option(
            "--assignor",
            "-a",
            help="range, roundrobin, sticky, cooperative-sticky, legacy-range, legacy-roundrobin, or pkg.mod:Class",
        ),
    ] = "range",
    owned: Annotated[
        str | None,
        typer.Option(
            "--owned",
            help="Current owners (for sticky and cooperative moves): a YAML/JSON file of member -> "
            "[T1-0, ...], or C0=T1-0,T1-1;C1=T1-2",
        ),
    ] = None,
    json_out: Annotated[
        bool, typer.Option("--json", help="Print the assignment and its summary as JSON.")
    ] = False,
    table: Annotated[
        bool,
        typer.Option(
            "--table",
            help=f"Every member's partitions even past {FULL_TABLE_MAX_MEMBERS} members (one row each; "
            "default there: a summary).",
        ),
    ] = False,
    summary: Annotated[
        bool, typer.Option("--summary", help="The summary even for a small group.")
    ] = False,
) -> None:
    """Run one assignor on a quick spec and print the table (one column per member).

    Past 30 members it prints a summary instead (partitions per member, imbalance, topics per
    member, partitions moved when --owned is given); --table forces the full table.

    Examples:

      groupsim assign --topics T1:3,T2:3 --members C0,C1 --assignor range

      groupsim assign -t t0:1,t1:2,t2:3 -m "C0:t0;C1:t0,t1;C2:t0,t1,t2" -a roundrobin

      groupsim assign -t T1:10 -m "C1*1;C2*2" -a legacy-range

      groupsim assign -t T1:4000 -m "C{0..1999}" -a cooperative-sticky --owned owners.yaml --json
    """
    from assignors import Subscription, TopicPartition, get_assignor
    from scenarios.report import assignment_table
    from scenarios.summary import member_rows_table, summarize, summary_table

    if table and summary:
        raise _fail("--table and --summary exclude each other")
    try:
        topic_map = parse_topics(topics)
        member_map = parse_members(members, topic_map)
        owned_map = parse_owned(owned, member_map) if owned is not None else None
        impl = get_assignor(assignor)
        subs = {}
        for m, (t, n) in member_map.items():
            mine = [TopicPartition.parse(tp) for tp in (owned_map or {}).get(m, [])]
            # what ConsumerCoordinator sends after a generation: owned partitions, the generation,
            # and the assignor's own user data once it has seen its assignment (StickyAssignor)
            member_assignor = get_assignor(assignor)
            if owned_map is not None:
                member_assignor.on_assignment(mine, 1)
            subs[m] = Subscription(
                topics=t,
                num_streams=n,
                owned_partitions=mine,
                generation_id=1 if owned_map is not None else -1,
                user_data=member_assignor.subscription_user_data(t),
            )
    except (ValueError, TypeError) as exc:
        raise _fail(str(exc)) from None
    try:
        result = impl.assign(topic_map, subs)
    except Exception as exc:  # a user's assignor, or a legacy precondition
        raise _fail(f"{assignor} failed: {exc}") from None
    assignment = {m: [str(tp) for tp in parts] for m, parts in result.items()}
    figures = summarize(assignment, owned=owned_map)
    if json_out:
        doc = {"assignor": impl.name or assignor, "topics": topic_map, "assignment": assignment}
        doc["summary"] = figures
        sys.stdout.write(json.dumps(doc, indent=2, sort_keys=True) + "\n")
        return
    out = console()
    title = f"{impl.name or assignor}: {topics}"
    if summary or (len(assignment) > FULL_TABLE_MAX_MEMBERS and not table):
        out.print(summary_table(figures, title=f"{title} ({len(assignment)} members)"))
        if not summary:
            out.print(
                f"(a summary past {FULL_TABLE_MAX_MEMBERS} members: --table for every column)"
            )
        return
    if len(assignment) > FULL_TABLE_MAX_MEMBERS:
        out.print(member_rows_table(assignment, title=title))
    else:
        out.print(assignment_table(assignment, title=title))
    if owned_map is not None:
        out.print(f"partitions moved to another member: {figures['moved']}", markup=False)


# --- coordinator ---------------------------------------------------------------------------------


def coordinator(
    group_ids: Annotated[list[str], typer.Argument(help="Group ids (quote ids with spaces).")],
    partitions: Annotated[
        int, typer.Option("--partitions", "-p", help="offsets.topic.num.partitions")
    ] = 50,
    brokers: Annotated[int, typer.Option("--brokers", "-b", help="Brokers in the cluster.")] = 3,
) -> None:
    """Which __consumer_offsets partition, and which broker, coordinates each group.

    partition = Utils.abs(groupId.hashCode()) % offsets.topic.num.partitions (Java's String
    hashCode over UTF-16 units; Utils.abs maps Integer.MIN_VALUE to 0). The broker is the leader
    of that partition in a fresh simulated cluster (docs/coordinator.md: replica placement).

    Examples:

      groupsim coordinator my-group test-group polygenelubricants

      groupsim coordinator orders --partitions 3 --brokers 3
    """

    from coordinator.java import java_string_hashcode
    from coordinator.placement import partition_for

    if partitions < 1 or brokers < 1:
        raise _fail("--partitions and --brokers must be positive")
    cluster = None
    try:
        from coordinator.cluster import KafkaCluster
        from coordinator.config import CoordinatorConfig

        cluster = KafkaCluster(
            num_brokers=brokers, config=CoordinatorConfig(offsets_topic_num_partitions=partitions)
        )
    except Exception:  # the cluster model is optional for this arithmetic
        cluster = None
    table = _table(f"coordinators ({partitions} offsets partitions, {brokers} brokers)")
    for col in ("group id", "hashCode", "partition", "broker"):
        table.add_column(col)
    for gid in group_ids:
        p = partition_for(gid, partitions)
        broker = cluster.offsets_partition_leader(p) if cluster is not None else None
        table.add_row(repr(gid), str(java_string_hashcode(gid)), str(p), broker or "?")
    console().print(table)


# --- diagram -------------------------------------------------------------------------------------

CLIENT_TRANSITIONS = (
    ("UNJOINED", "PREPARING_REBALANCE", "JoinGroup sent"),
    ("PREPARING_REBALANCE", "COMPLETING_REBALANCE", "JoinGroup response NONE"),
    ("COMPLETING_REBALANCE", "STABLE", "SyncGroup response NONE"),
    ("STABLE", "PREPARING_REBALANCE", "rejoin (heartbeat REBALANCE_IN_PROGRESS, metadata change)"),
    ("PREPARING_REBALANCE", "UNJOINED", "UNKNOWN_MEMBER_ID / ILLEGAL_GENERATION / leave"),
    ("COMPLETING_REBALANCE", "UNJOINED", "SyncGroup error / leave"),
    ("COMPLETING_REBALANCE", "PREPARING_REBALANCE", "SyncGroup REBALANCE_IN_PROGRESS"),
    ("STABLE", "UNJOINED", "fenced / unknown member / poll timeout / close"),
)


# What causes each ClassicGroupState transition, from GroupMetadataManager and ClassicGroup
# (Kafka 1eb7644): the coordinator's table (coordinator.state_machine) says only which edges exist.
_DEAD = "unloaded when the coordinator moves (onUnloaded), or deleted"
COORDINATOR_CAUSES: dict[tuple[str, str], str] = {
    ("Empty", "PreparingRebalance"): "first JoinGroup, prepareRebalance after the initial delay",
    ("PreparingRebalance", "CompletingRebalance"): (
        "join phase completes with members (initNextGeneration), JoinGroup answers sent"
    ),
    ("PreparingRebalance", "Empty"): "join phase completes with no members (initNextGeneration)",
    ("CompletingRebalance", "Stable"): "leader's SyncGroup assignment stored",
    ("CompletingRebalance", "PreparingRebalance"): (
        "member joins, leaves or times out before the assignment (prepareRebalance)"
    ),
    ("Stable", "PreparingRebalance"): (
        "member joins or leaves, session timeout, new metadata from the leader (prepareRebalance)"
    ),
    ("Empty", "Dead"): _DEAD,
    ("PreparingRebalance", "Dead"): _DEAD,
    ("CompletingRebalance", "Dead"): _DEAD,
    ("Stable", "Dead"): _DEAD,
    ("Dead", "Dead"): "unloaded again",
}


def coordinator_diagram(fmt: str) -> str:
    """ClassicGroupState's transitions (coordinator.state_machine) labelled with their causes."""
    from coordinator.state_machine import EMPTY, STATES, VALID_PREVIOUS_STATES

    edges = [(src, dst) for dst, srcs in VALID_PREVIOUS_STATES.items() for src in srcs]
    edges.sort(key=lambda e: (STATES.index(e[0]), STATES.index(e[1])))
    cause = {e: COORDINATOR_CAUSES.get(e, "") for e in edges}
    if fmt == "mermaid":
        lines = ["stateDiagram-v2", f"    [*] --> {EMPTY}"]
        lines += [
            f"    {a} --> {b}: {_mermaid_text(why)}" if why else f"    {a} --> {b}"
            for (a, b), why in cause.items()
        ]
        return "\n".join(lines) + "\n"
    lines = ["digraph ClassicGroupState {", "    rankdir=LR;", "    node [shape=box];"]
    lines += [f'    "{st}";' for st in STATES]
    lines += [f'    "{a}" -> "{b}" [label="{_dot_text(why)}"];' for (a, b), why in cause.items()]
    return "\n".join([*lines, "}"]) + "\n"


def _mermaid_text(text: str) -> str:
    """Text safe after a Mermaid ``:`` label separator (``:`` and ``;`` as entity codes)."""
    return text.replace(";", "#59;").replace(":", "#58;")


def _dot_text(text: str) -> str:
    return text.replace("\\", "\\\\").replace('"', '\\"')


def client_diagram(fmt: str) -> str:
    """The Java consumer's MemberState machine (AbstractCoordinator)."""
    if fmt == "mermaid":
        lines = ["stateDiagram-v2", "    [*] --> UNJOINED"]
        lines += [f"    {a} --> {b}: {why}" for a, b, why in CLIENT_TRANSITIONS]
        return "\n".join(lines) + "\n"
    lines = ["digraph ClassicMemberState {", "    rankdir=LR;", "    node [shape=box];"]
    lines += [f'    "{a}" -> "{b}" [label="{why}"];' for a, b, why in CLIENT_TRANSITIONS]
    return "\n".join([*lines, "}"]) + "\n"


def diagram(
    machine: Annotated[
        str,
        typer.Option("--machine", "-m", help="coordinator (the group) or client (the consumer)"),
    ] = "coordinator",
    fmt: Annotated[str, typer.Option("--format", "-f", help="mermaid or dot")] = "mermaid",
    scenario: Annotated[
        str | None,
        typer.Option(
            "--scenario", "-s", help="Draw this scenario's run as a Mermaid sequence diagram."
        ),
    ] = None,
    heartbeats: Annotated[
        bool, typer.Option("--heartbeats", help="Include heartbeats in the sequence diagram.")
    ] = False,
    allow_code: Annotated[bool, typer.Option("--allow-code", help=ALLOW_CODE_HELP)] = False,
) -> None:
    """The group's or the client's state machine (Mermaid/Graphviz), or a run as a sequence diagram.

    Examples:

      groupsim diagram                         # the coordinator's group states, Mermaid

      groupsim diagram --machine client --format dot | dot -Tpng > client.png

      groupsim diagram --scenario seed001-protocol-by-hand
    """
    if fmt not in ("mermaid", "dot"):
        raise _fail("--format must be mermaid or dot")
    if scenario is not None and fmt != "mermaid":
        raise _fail("a run is drawn as a Mermaid sequence diagram only: leave out --format dot")
    if scenario is not None:
        from scenarios.loader import load_scenario
        from scenarios.report import sequence_diagram
        from scenarios.runner import run_scenario

        try:
            s = load_scenario(scenario, allow_code=allow_code)
        except ScenarioError as err:
            print_scenario_error(err)
            raise typer.Exit(EXIT_INVALID) from None
        result = run_scenario(s)
        sys.stdout.write(sequence_diagram(s, result.events, heartbeats=heartbeats))
        if not result.passed:
            sys.stdout.flush()
            why = result.error or "an expectation failed"
            console(stderr=True).print(f"the run failed: {why}", markup=False, style="red")
            raise typer.Exit(EXIT_FAILED)
        return
    if machine == "coordinator":
        sys.stdout.write(coordinator_diagram(fmt))
    elif machine == "client":
        sys.stdout.write(client_diagram(fmt))
    else:
        raise _fail("--machine must be coordinator or client")


# --- step ----------------------------------------------------------------------------------------


def step(
    file: Annotated[str, typer.Argument(help="A scenario file (or library lesson name).")],
    auto: Annotated[
        bool, typer.Option("--auto", help="Do not wait for Enter between events.")
    ] = False,
    group: Annotated[
        str | None, typer.Option("--group", "-g", help="The group to follow (default: the first).")
    ] = None,
    limit: Annotated[
        int, typer.Option("--limit", min=0, help="Stop after this many shown events (0: all).")
    ] = 10_000,
    allow_code: Annotated[bool, typer.Option("--allow-code", help=ALLOW_CODE_HELP)] = False,
) -> None:
    """Step through a scenario one event at a time: the group's state, members and assignments.

    Press Enter for the next event, q then Enter to stop. With --auto, or when stdin is not a
    terminal, it runs straight through (so it can be piped or tested).

    Example: groupsim step seed001-protocol-by-hand
    """
    from scenarios.loader import load_scenario
    from scenarios.stepper import step_through

    try:
        s = load_scenario(file, allow_code=allow_code)
    except ScenarioError as err:
        print_scenario_error(err)
        raise typer.Exit(EXIT_INVALID) from None
    if group is not None and group not in s.groups:
        raise _fail(f"unknown group {group!r}; the scenario has {', '.join(s.groups) or 'none'}")
    interactive = not auto and sys.stdin.isatty()
    code = step_through(console(), s, group=group, interactive=interactive, limit=limit)
    raise typer.Exit(code)


# --- lessons -------------------------------------------------------------------------------------


def lessons() -> None:
    """List the lesson library (scenarios/library) with each lesson's first line.

    Example: groupsim lessons
    """

    from scenarios.loader import library_scenarios, load_scenario

    table = _table("lessons (groupsim run <name>)")
    table.add_column("name")
    table.add_column("what it shows")
    for path in library_scenarios():
        try:
            s = load_scenario(path)
        except ScenarioError:
            table.add_row(path.stem, "(invalid!)")
            continue
        table.add_row(path.stem, first_sentence(s.description))
    console().print(table)


_SENTENCE_END = re.compile(r"(?<!\be\.g)(?<!\bi\.e)(?<!\bvs)[.!?](?=\s|$)")


def first_sentence(text: str) -> str:
    """A description's first sentence, across line breaks (a lesson's first line often stops
    mid-sentence); the whole text when it has no sentence end."""
    flat = " ".join(text.split())
    end = _SENTENCE_END.search(flat)
    return flat[: end.end()] if end else flat
