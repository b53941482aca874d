"""The timeline's actions: one class per kind, each parsing, checking and applying itself.

A timeline step ``{at: 5s, crash: C1}`` names one action kind (``crash``) with its argument. Each
kind is a frozen attrs class here, registered in ``ACTION_KINDS`` under its YAML key:

- ``parse(v, raw, path)`` (a classmethod) checks the step's argument with the validator ``v``'s
  helpers, reports every problem through ``v.err`` (file:line:col, field path, did-you-mean) and
  returns the typed arguments, or None when they are unusable;
- ``apply(player, action)`` carries the step out on the run (``scenarios.play.Player``).

``scenarios.validate`` and ``scenarios.play`` both look kinds up here; neither names a kind.
Adding a kind means adding one class and one ``ACTION_KINDS`` entry (docs/scenarios.md).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, ClassVar

import attrs
from attrs import frozen

from coordinator import events as ev
from coordinator import protocol as proto
from scenarios import raw as rawreq
from scenarios.hints import TOPIC_NAME_HINT, did_you_mean, legal_topic_name
from scenarios.result import CheckResult, ExpectationResult
from scenarios.yamlpos import PathT

if TYPE_CHECKING:
    from scenarios.model import Action
    from scenarios.play import Player
    from scenarios.validate import Validator

SERVER_ASSIGNORS = ("range", "roundrobin", "sticky")
"""Design 2's broker strategies (``group.server.assignor``, ``restart_broker``'s ``strategy``)."""

BrokerRef = str | Mapping[str, str]
"""``broker-1``, or ``{coordinator_of: g1}``: whichever broker coordinates g1 when it applies."""


class ScenarioRuntimeError(Exception):
    """A step that cannot be carried out in the state the run reached (e.g. no coordinator)."""


@frozen
class ActionArgs:
    """The typed argument of one action kind (subclasses are the kinds)."""

    kind: ClassVar[str] = ""

    @classmethod
    def parse(cls, v: Validator, raw: Any, path: PathT) -> ActionArgs | None:
        raise NotImplementedError

    @classmethod
    def parse_meta(
        cls, v: Validator, step: Mapping[str, Any], path: PathT, args: ActionArgs
    ) -> tuple[Mapping[str, Any] | None, str | None]:
        """The step's ``expect:`` and ``as:``; only ``send`` has them."""
        for meta in ("expect", "as"):
            if meta in step:
                v.err((*path, meta), f"`{meta}` belongs to a `send` step", key=True)
        return None, None

    @classmethod
    def declare_topics(cls, v: Validator, raw: Any) -> None:
        """Before consumers are checked: topics this step brings into being."""

    @classmethod
    def declare_groups(cls, v: Validator, raw: Any) -> None:
        """After consumers are checked: groups this step uses that no consumer joins."""

    def apply(self, player: Player, action: Action) -> None:
        raise NotImplementedError


@frozen
class NoteOnly(ActionArgs):
    """A step with only a ``note:`` (logged as ``scenario_note``, like every step's note)."""

    kind: ClassVar[str] = "note"

    @classmethod
    def parse(cls, v: Validator, raw: Any, path: PathT) -> NoteOnly:
        return cls()

    def apply(self, player: Player, action: Action) -> None:
        pass


# -- consumers --------------------------------------------------------------------------------


@frozen
class _EachConsumer(ActionArgs):
    """``start: C1`` / ``[C1, C2]`` / ``all``: the Simulation method of the same name, per consumer."""

    consumers: tuple[str, ...]

    @classmethod
    def parse(cls, v: Validator, raw: Any, path: PathT) -> _EachConsumer | None:
        c = v.consumer_refs(raw, path)
        return None if c is None else cls(tuple(c))

    def apply(self, player: Player, action: Action) -> None:
        call = getattr(player.sim, self.kind)
        for cid in self.consumers:
            call(cid)


@frozen
class Start(_EachConsumer):
    kind: ClassVar[str] = "start"


@frozen
class Crash(_EachConsumer):
    kind: ClassVar[str] = "crash"


@frozen
class Restart(ActionArgs):
    """``restart: C1`` / ``[C1, C2]`` / ``all``: a new incarnation with the configuration it
    had; ``restart: {C1: {group.protocol: consumer}}``: the new process runs the consumer's
    configuration (``consumers:`` and ``defaults:``) with these settings changed, checked as a
    consumer's are (one step of a rolling upgrade to KIP-848, or of a downgrade back)."""

    kind: ClassVar[str] = "restart"
    consumers: tuple[str, ...]
    # per consumer: its merged configuration (ConsumerConfig fields), or None to keep its own
    configs: tuple[Mapping[str, Any] | None, ...] = ()

    @classmethod
    def parse(cls, v: Validator, raw: Any, path: PathT) -> Restart | None:
        if not isinstance(raw, dict):
            c = v.consumer_refs(raw, path)
            return None if c is None else cls(tuple(c), (None,) * len(c))
        ids: list[str] = []
        configs: list[Mapping[str, Any] | None] = []
        ok = True
        for cid, settings in raw.items():
            if not v.ref(cid, (*path, cid), v.consumer_ids, "consumer"):
                ok = False
                continue
            spec = v.consumer_specs.get(cid)
            changes = v.consumer_settings(settings, (*path, cid), allow_group_id=False)
            if spec is None:
                ok = False
                continue
            before = len(v.issues)
            merged = {**spec.config, **changes}
            v.consumer_limits(
                merged, (*path, cid), changes, v.consumer_defaults, own_path=(*path, cid)
            )
            if len(v.issues) > before:
                ok = False
                continue
            ids.append(cid)
            configs.append(merged)
            # a restart may switch protocols (migration): the group is then not consumer-only
            v.group_protocols.setdefault(spec.group, set()).add(
                str(merged.get("group_protocol") or "classic").lower()
            )
        if not ok:
            return None
        return cls(tuple(ids), tuple(configs))

    def apply(self, player: Player, action: Action) -> None:
        for cid, config in zip(self.consumers, self.configs, strict=True):
            if config is None:
                player.sim.restart(cid)
            else:
                player.sim.restart(cid, player.consumer_config(config))


@frozen
class Commit(_EachConsumer):
    kind: ClassVar[str] = "commit"


@frozen
class Close(ActionArgs):
    """``close: C1`` / ``[C1, C2]`` / ``all`` (close()), or ``{C1: 5s}`` (close(Duration))."""

    kind: ClassVar[str] = "close"
    consumers: tuple[str, ...]
    timeouts: tuple[int | None, ...]

    @classmethod
    def parse(cls, v: Validator, raw: Any, path: PathT) -> Close | None:
        if not isinstance(raw, dict):
            c = v.consumer_refs(raw, path)
            return None if c is None else cls(tuple(c), (None,) * len(c))
        ids: list[str] = []
        timeouts: list[int | None] = []
        ok = True
        for cid, d in raw.items():
            if not v.ref(cid, (*path, cid), v.consumer_ids, "consumer"):
                ok = False
                continue
            ms = v.duration(d, (*path, cid))
            if ms is None:
                ok = False
                continue
            ids.append(cid)
            timeouts.append(ms)
        if not ok:
            return None
        return cls(tuple(ids), tuple(timeouts))

    def apply(self, player: Player, action: Action) -> None:
        for cid, timeout_ms in zip(self.consumers, self.timeouts, strict=True):
            player.sim.close(cid, timeout_ms)


@frozen
class Subscribe(ActionArgs):
    """``subscribe: {C1: [T1, T2]}``: KafkaConsumer.subscribe with a new topic list."""

    kind: ClassVar[str] = "subscribe"
    subscriptions: tuple[tuple[str, tuple[str, ...]], ...]

    @classmethod
    def parse(cls, v: Validator, raw: Any, path: PathT) -> Subscribe | None:
        m = v.mapping(raw, path, "subscribe (consumer: [topics])")
        if m is None:
            return None
        subs = []
        for cid, topics in m.items():
            if not v.ref(cid, (*path, cid), v.consumer_ids, "consumer"):
                continue
            names = v.string_list(topics, (*path, cid))
            if names is None:
                continue
            for i, t in enumerate(names):
                v.ref(
                    t,
                    (*path, cid, i) if isinstance(topics, list) else (*path, cid),
                    sorted(v.all_topics),
                    "topic",
                )
            subs.append((cid, tuple(names)))
        return cls(tuple(subs))

    def apply(self, player: Player, action: Action) -> None:
        for cid, topics in self.subscriptions:
            player.sim.subscribe(cid, list(topics))


@frozen
class Stall(ActionArgs):
    """``stall: {C1: 40s}``: the application blocks before its next poll()."""

    kind: ClassVar[str] = "stall"
    stalls: tuple[tuple[str, int], ...]

    @classmethod
    def parse(cls, v: Validator, raw: Any, path: PathT) -> Stall | None:
        m = v.mapping(raw, path, "stall (consumer: duration)")
        if m is None:
            return None
        out = []
        for cid, d in m.items():
            if v.ref(cid, (*path, cid), v.consumer_ids, "consumer"):
                ms = v.duration(d, (*path, cid))
                if ms is not None:
                    out.append((cid, ms))
        return cls(tuple(out))

    def apply(self, player: Player, action: Action) -> None:
        for cid, ms in self.stalls:
            player.sim.stall(cid, ms)


# -- topics -----------------------------------------------------------------------------------


@frozen
class AddPartitions(ActionArgs):
    """``add_partitions: {T1: 2}``: how many partitions to add (Admin createPartitions)."""

    kind: ClassVar[str] = "add_partitions"
    topics: tuple[tuple[str, int], ...]

    @classmethod
    def parse(cls, v: Validator, raw: Any, path: PathT) -> AddPartitions | None:
        m = v.mapping(raw, path, "add_partitions (topic: how many to add)")
        if m is None:
            return None
        out = []
        for t, n in m.items():
            if v.ref(t, (*path, t), sorted(v.all_topics), "topic"):
                count = v.integer(n, (*path, t), minimum=1, maximum=1_000_000)
                if count is not None:
                    out.append((t, count))
        return cls(tuple(out))

    def apply(self, player: Player, action: Action) -> None:
        sim = player.sim
        for topic, more in self.topics:
            current = sim.cluster.topics().get(topic)
            if current is None:
                raise ScenarioRuntimeError(
                    f"{action.where}: topic {topic} does not exist at {sim.now}ms"
                )
            sim.add_partitions(topic, current + more)


@frozen
class CreateTopic(ActionArgs):
    """``create_topic: {T3: 4}``: a new topic with that many partitions."""

    kind: ClassVar[str] = "create_topic"
    topics: tuple[tuple[str, int], ...]

    @classmethod
    def declare_topics(cls, v: Validator, raw: Any) -> None:
        # topics created by the timeline may be referenced by consumers and expectations
        if isinstance(raw, dict):
            v.all_topics.update(str(k) for k in raw)

    @classmethod
    def parse(cls, v: Validator, raw: Any, path: PathT) -> CreateTopic | None:
        m = v.mapping(raw, path, "create_topic (name: partitions)")
        if m is None:
            return None
        out = []
        for t, n in m.items():
            if t in v.topics:
                v.err(
                    (*path, t),
                    f"topic `{t}` already exists in cluster.topics",
                    hint="Kafka would answer TOPIC_ALREADY_EXISTS",
                    key=True,
                )
                continue
            if not legal_topic_name(t):
                v.err((*path, t), f"illegal topic name `{t}`", hint=TOPIC_NAME_HINT, key=True)
                continue
            count = v.integer(n, (*path, t), minimum=1, maximum=1_000_000)
            if count is not None:
                out.append((t, count))
        return cls(tuple(out))

    def apply(self, player: Player, action: Action) -> None:
        for topic, n in self.topics:
            player.sim.create_topic(topic, n)


@frozen
class DeleteTopic(ActionArgs):
    """``delete_topic: T1`` / ``[T1, T2]``."""

    kind: ClassVar[str] = "delete_topic"
    topics: tuple[str, ...]

    @classmethod
    def parse(cls, v: Validator, raw: Any, path: PathT) -> DeleteTopic | None:
        names = v.string_list(raw, path)
        if names is None:
            return None
        for i, t in enumerate(names):
            v.ref(t, (*path, i) if isinstance(raw, list) else path, sorted(v.all_topics), "topic")
        return cls(tuple(names))

    def apply(self, player: Player, action: Action) -> None:
        for topic in self.topics:
            player.sim.delete_topic(topic)


# -- brokers and the network ------------------------------------------------------------------


@frozen
class _OneBroker(ActionArgs):
    broker: BrokerRef

    @classmethod
    def parse(cls, v: Validator, raw: Any, path: PathT) -> _OneBroker | None:
        b = v.broker_ref(raw, path)
        return None if b is None else cls(b)


@frozen
class CrashBroker(_OneBroker):
    """``crash_broker: broker-1`` / ``{coordinator_of: g1}``."""

    kind: ClassVar[str] = "crash_broker"

    def apply(self, player: Player, action: Action) -> None:
        player.sim.fail_broker(player.broker(self.broker, action))


@frozen
class RestartBroker(ActionArgs):
    """``restart_broker: broker-1`` / ``{coordinator_of: g1}``: a failed broker comes back.

    ``restart_broker: {broker: broker-1, strategy: roundrobin}`` (design 2 only) is one step of a
    rolling restart: the broker stops if it runs (its coordinators fail over to the other
    replicas, which keep *their* strategy), and comes back with ``group.server.assignor`` set to
    ``strategy``; a coordinator elected on it from then on assigns with it."""

    kind: ClassVar[str] = "restart_broker"
    broker: BrokerRef
    strategy: str | None = None

    @classmethod
    def parse(cls, v: Validator, raw: Any, path: PathT) -> RestartBroker | None:
        if not (isinstance(raw, dict) and ("broker" in raw or "strategy" in raw)):
            b = v.broker_ref(raw, path)
            return None if b is None else cls(b)
        v.check_keys(raw, path, ("broker", "strategy"), "restart_broker")
        if "broker" not in raw:
            v.err(path, "name the broker: `restart_broker: {broker: broker-0, strategy: ...}`")
            return None
        b = v.broker_ref(raw["broker"], (*path, "broker"))
        strategy = raw.get("strategy")
        if "strategy" not in raw:
            return None if b is None else cls(b)
        if v.design != "coordinator-assigns":
            v.err(
                (*path, "strategy"),
                "a broker's strategy (group.server.assignor) belongs to design 2",
                hint="add `design: coordinator-assigns` at the top of the file; under "
                "`design: client-side` the strategy is the consumers' partition.assignment.strategy",
                key=True,
            )
            return None
        if strategy not in SERVER_ASSIGNORS:
            v.err(
                (*path, "strategy"),
                f"unknown server-side strategy {strategy!r}",
                hint=did_you_mean(str(strategy), SERVER_ASSIGNORS)
                or f"strategies: {', '.join(SERVER_ASSIGNORS)}",
            )
            return None
        return None if b is None else cls(b, str(strategy))

    def apply(self, player: Player, action: Action) -> None:
        node = player.broker(self.broker, action)
        if self.strategy is None:
            player.sim.restart_broker(node)
            return
        if player.sim.cluster.is_alive(node):  # stop it first: its coordinators move away
            player.sim.fail_broker(node)
        config = attrs.evolve(
            player.sim.cluster.config, server_assignor=player.server_assignor_named(self.strategy)
        )
        player.sim.restart_broker(node, config, {"group.server.assignor": self.strategy})


@frozen
class Network(ActionArgs):
    """``network: {partition: [[C1], [broker-0]], for: 10s}`` or ``{isolate: C1, for: 10s}``."""

    kind: ClassVar[str] = "network"
    sides: tuple[tuple[str, ...], ...]
    isolate: bool
    for_ms: int

    @classmethod
    def parse(cls, v: Validator, raw: Any, path: PathT) -> Network | None:
        m = v.mapping(raw, path, "network")
        if m is None:
            return None
        v.check_keys(m, path, ("partition", "isolate", "for"), "network")
        if "for" not in m:
            v.err(path, "a network fault needs `for` (how long it lasts, e.g. `for: 10s`)")
            return None
        duration = v.duration(m["for"], (*path, "for"))
        if v.design == "zookeeper":  # the 0.8 consumers talk to ZooKeeper, not to a coordinator
            nodes = [*v.consumer_ids, *v.zk_servers]
        else:
            nodes = [*v.consumer_ids, *(f"broker-{i}" for i in range(v.brokers))]
        sides: list[tuple[str, ...]] = []
        if ("partition" in m) == ("isolate" in m):
            v.err(
                path, "give exactly one of `partition: [[nodes...], [nodes...]]` or `isolate: node`"
            )
            return None
        if "isolate" in m:
            names = v.string_list(m["isolate"], (*path, "isolate"))
            if names is None:
                return None
            for n in names:
                v.ref(n, (*path, "isolate"), nodes, "node")
            sides = [tuple(names)]
        else:
            raw_sides = m["partition"]
            if (
                not isinstance(raw_sides, list)
                or len(raw_sides) < 2
                or not all(isinstance(s, list) for s in raw_sides)
            ):
                v.err(
                    (*path, "partition"),
                    "partition must be a list of at least two node lists, e.g. [[C1], [broker-0]]",
                )
                return None
            seen: set[str] = set()
            for si, side in enumerate(raw_sides):
                names = v.string_list(side, (*path, "partition", si)) or []
                for ni, n in enumerate(names):
                    if v.ref(n, (*path, "partition", si, ni), nodes, "node") and n in seen:
                        v.err(
                            (*path, "partition", si, ni),
                            f"node `{n}` is on two sides of the partition",
                        )
                    seen.add(n)
                sides.append(tuple(names))
        if duration is None:
            return None
        if v.design == "zookeeper" and not _one_ensemble(v, sides, "isolate" in m, path):
            return None
        return cls(tuple(sides), "isolate" in m, duration)

    def apply(self, player: Player, action: Action) -> None:
        sides = [list(s) for s in self.sides]
        if self.isolate:
            # the isolated nodes on one side; everything else shares the other island
            player.sim.partition_network([sides[0]], self.for_ms)
        else:
            player.sim.partition_network(sides, self.for_ms)


def _one_ensemble(v: Validator, sides: list[tuple[str, ...]], isolate: bool, path: PathT) -> bool:
    """Under ``design: zookeeper`` a cut separates consumers from the ensemble, never ZooKeeper
    servers from each other (a follower cut from its leader, quorum loss: not simulated)."""
    islands = {
        server: next((i for i, side in enumerate(sides) if server in side), -1)
        for server in v.zk_servers
    }
    if isolate:
        islands = {server: -1 if i == -1 else 0 for server, i in islands.items()}
    if len(set(islands.values())) > 1:
        split = ", ".join(f"{s}" for s, i in islands.items() if i == islands["zk-0"])
        v.err(
            path,
            "a network fault may cut consumers from ZooKeeper servers, not the ensemble's "
            f"servers from each other (zk-0's side holds {split})",
            hint="put every zk-N on one side, or name none of them (the unnamed nodes share "
            "one more island)",
        )
        return False
    return True


#: The requests a consumer sends that ``delay_request`` may hold (``api`` names, as in logs).
DELAYABLE_APIS: tuple[str, ...] = (
    "JoinGroup",
    "SyncGroup",
    "Heartbeat",
    "LeaveGroup",
    "OffsetCommit",
    "OffsetFetch",
    "FindCoordinator",
    "ConsumerGroupHeartbeat",
)


@frozen
class DelayRequest(ActionArgs):
    """``delay_request: {from: S1, api: JoinGroup, for: 15s}``: the next such request ``S1``
    sends reaches the coordinator ``for`` late (a stalled broker thread holds it), while later
    requests, a resend on a new connection included, are handled at once."""

    kind: ClassVar[str] = "delay_request"
    node: str
    api: str
    for_ms: int

    @classmethod
    def parse(cls, v: Validator, raw: Any, path: PathT) -> DelayRequest | None:
        m = v.mapping(raw, path, "delay_request")
        if m is None:
            return None
        v.check_keys(m, path, ("from", "api", "for"), "delay_request")
        missing = [k for k in ("from", "api", "for") if k not in m]
        if missing:
            v.err(
                path,
                f"delay_request needs {', '.join(f'`{k}`' for k in missing)} "
                "(e.g. `{from: C1, api: JoinGroup, for: 15s}`)",
            )
            return None
        node = v.string(m["from"], (*path, "from"))
        ok = node is not None and v.ref(node, (*path, "from"), v.consumer_ids, "consumer")
        api = v.string(m["api"], (*path, "api"))
        ok = api is not None and v.ref(api, (*path, "api"), DELAYABLE_APIS, "api") and ok
        ms = v.duration(m["for"], (*path, "for"))
        if ms is not None and ms <= 0:
            v.err((*path, "for"), f"a delay must be positive, got {m['for']!r}")
            ms = None
        if not ok or ms is None or node is None or api is None:
            return None
        return cls(node, api, ms)

    def apply(self, player: Player, action: Action) -> None:
        player.sim.delay_request(self.node, self.api, self.for_ms)


# -- raw requests -----------------------------------------------------------------------------


@frozen
class Send(ActionArgs):
    """``send: {api: JoinGroup, group_id: g1, ...}``: a hand-written request (``scenarios.raw``).

    ``from`` names the raw client (default ``raw``), ``to`` the broker (default: the group's
    coordinator). The step may say what the answer must hold (``expect:``, checked at the end of
    the run) and name it (``as: join1``) for later ``$join1.member_id`` references.
    """

    kind: ClassVar[str] = "send"
    api: str
    sender: str
    to: BrokerRef
    fields: Mapping[str, Any]

    @classmethod
    def declare_groups(cls, v: Validator, raw: Any) -> None:
        # groups that only raw requests use are groups too (expectations may name them)
        gid = raw.get("group_id") if isinstance(raw, dict) else None
        if isinstance(gid, str) and gid and not gid.startswith("$") and gid not in v.groups:
            v.groups.append(gid)

    @classmethod
    def parse(cls, v: Validator, raw: Any, path: PathT) -> Send | None:
        m = v.mapping(raw, path, "send")
        if m is None:
            return None
        api = m.get("api")
        if api not in rawreq.REQUESTS:
            v.err(
                (*path, "api") if "api" in m else path,
                f"unknown or missing api {api!r}",
                hint=(did_you_mean(str(api), rawreq.REQUESTS) if api else None)
                or f"apis: {', '.join(rawreq.REQUESTS)}",
            )
            return None
        request_fields = {f.name: f for f in attrs.fields(rawreq.REQUESTS[api])}
        allowed = (
            *rawreq.SEND_META,
            *request_fields,
            *(("topics",) if api == "JoinGroup" else ()),
        )
        v.check_keys(m, path, allowed, f"a {api} request")
        sender = m.get("from", "raw")
        if (
            not isinstance(sender, str)
            or not sender
            or sender.startswith("broker-")
            or sender in v.consumer_ids
        ):
            v.err(
                (*path, "from"),
                f"`from` must name a raw client node of its own (not a consumer or a broker), got {sender!r}",
            )
            return None
        to: Any = m.get("to", "coordinator")
        if to != "coordinator":
            to = v.broker_ref(to, (*path, "to"))
            if to is None:
                return None
        elif "group_id" not in request_fields and api != "DescribeGroups":
            v.err(
                (*path, "to") if "to" in m else path,
                f"a {api} request has no group_id: say which broker gets it (`to: broker-0`)",
            )
            return None
        body: dict[str, Any] = {}
        for k, value in m.items():
            if k in rawreq.SEND_META or k not in allowed:
                continue
            body[k] = v.request_value(k, value, (*path, k))
        for f in request_fields.values():
            if (
                f.default is attrs.NOTHING
                and f.name not in body
                and not rawreq.defaulted(api, f.name)
            ):
                v.err(path, f"a {api} request needs `{f.name}`")
        return cls(api, sender, to, body)

    @classmethod
    def parse_meta(
        cls, v: Validator, step: Mapping[str, Any], path: PathT, args: ActionArgs
    ) -> tuple[Mapping[str, Any] | None, str | None]:
        assert isinstance(args, Send)
        expect = None
        name = None
        if "expect" in step:
            expect = cls.parse_expect(v, step["expect"], (*path, "expect"), args.api)
        if "as" in step:
            name = v.string(step["as"], (*path, "as"))
            if name is not None:
                if not re.match(r"^[A-Za-z_][A-Za-z0-9_]*$", name):
                    v.err((*path, "as"), f"`{name}` is not a usable name (letters, digits, _)")
                elif name in v.raw_names:
                    v.err(
                        (*path, "as"),
                        f"the name `{name}` is already used by an earlier request",
                    )
                v.raw_names.add(name)
        return expect, name

    @staticmethod
    def parse_expect(v: Validator, raw: Any, path: PathT, api: str) -> dict[str, Any] | None:
        """A ``send`` step's ``expect:``: fields of the answer (``scenarios.raw.response_field``)."""
        m = v.mapping(raw, path, "a response expectation")
        if m is None:
            return None
        response = getattr(proto, f"{api}Response")
        allowed = (
            *(f.name for f in attrs.fields(response) if f.name != "error_code"),
            *rawreq.RESPONSE_EXTRA_KEYS,
        )
        v.check_keys(m, path, allowed, f"a {api} response")
        if "error" in m:
            v.error_name(m["error"], (*path, "error"))
        for k, value in m.items():
            if isinstance(value, str) and value.startswith("$"):
                v.request_value(k, value, (*path, k))
        return dict(m)

    def apply(self, player: Player, action: Action) -> None:
        sim = player.sim
        _remember_joins(player)
        step = rawreq.RawStep(action)
        player.raw_steps.append(step)
        if action.name:
            player.raw[action.name] = step
        try:
            fields = {k: _resolve(player, value) for k, value in self.fields.items()}
            if self.api == "JoinGroup":
                fields.setdefault("client_id", self.sender)  # member ids read "app-<uuid>"
            if self.api == "SyncGroup":
                # like a Java client, name the protocol of the generation it joined (v5+ needs it)
                joined = (player.last_join.get(self.sender) or (0, None))[1]
                fields.setdefault(
                    "protocol_type", getattr(joined, "protocol_type", None) or "consumer"
                )
                protocol_name = getattr(joined, "protocol_name", None)
                if protocol_name:
                    fields.setdefault("protocol_name", protocol_name)
            request = rawreq.build_request(self.api, fields, player.scenario.groups)
            to = self.to
            if to == "coordinator":
                group = fields.get("group_id") or (fields.get("groups") or [None])[0]
                node = sim.coordinator(group) if group is not None else None
                if node is None:
                    raise ScenarioRuntimeError(
                        f"group {group} has no live coordinator at {sim.now}ms"
                    )
            else:
                node = player.broker(to, action)
        except (ScenarioRuntimeError, ValueError, TypeError) as exc:
            step.problem = str(exc)
            sim.log.append(
                ev.SCENARIO_RAW_FAILED,
                t_ms=sim.now,
                node=self.sender,
                api=self.api,
                reason=str(exc),
            )
            return
        sim.log.append(
            ev.SCENARIO_RAW_SENT,
            t_ms=sim.now,
            node=self.sender,
            src=self.sender,
            dst=node,
            api=self.api,
            summary=rawreq.summary(request),
        )
        step.call = sim.send_raw(request, node, self.sender)

    def check_response(self, player: Player, step: rawreq.RawStep) -> ExpectationResult:
        """The step's ``expect:`` against the answer it got (at the end of the run)."""
        action = step.action
        label = f"{self.api} sent at {action.at_ms}ms" + (
            f" ({action.name})" if action.name else ""
        )
        checks: list[CheckResult] = []
        call = step.call
        response = None if call is None else call.response
        if step.problem is not None:
            checks.append(CheckResult("sent", "request sent", step.problem, False))
        elif response is None:
            what = "disconnected" if call.disconnected else "no response (still parked, or lost)"
            checks.append(CheckResult("response", "a response", what, False))
        else:
            for key, expected in (action.expect or {}).items():
                try:
                    expected = _resolve(player, expected)
                except ScenarioRuntimeError as exc:
                    checks.append(CheckResult(key, expected, str(exc), False))
                    continue
                actual = rawreq.response_field(response, key)
                if key == "members" and isinstance(expected, int):
                    actual = len(response.members)
                if isinstance(expected, list) and isinstance(actual, (list, tuple)):
                    ok = sorted(map(str, expected)) == sorted(map(str, actual))
                else:
                    ok = actual == expected
                checks.append(CheckResult(key, expected, actual, ok))
        return ExpectationResult(
            label=label,
            at_ms=action.at_ms,
            group=self.fields.get("group_id"),
            where=str(action.where),
            checks=tuple(checks),
        )


def _resolve(player: Player, value: Any) -> Any:
    """``$name.field``: that field of the answer to the request named ``name``."""
    if isinstance(value, str):
        m = rawreq.REF.match(value)
        if m:
            step = player.raw.get(m.group("name"))
            response = None if step is None or step.call is None else step.call.response
            if response is None:
                raise ScenarioRuntimeError(
                    f"{value}: request `{m.group('name')}` has no response yet at {player.sim.now}ms"
                )
            attr = m.group("field")
            if attr == "error":
                return response.error_code.name
            if not hasattr(response, attr):
                raise ScenarioRuntimeError(
                    f"{value}: a {type(response).__name__} has no field {attr}"
                )
            return getattr(response, attr)
        return value
    if isinstance(value, list):
        return [_resolve(player, v) for v in value]
    if isinstance(value, dict):
        return {_resolve(player, k): _resolve(player, v) for k, v in value.items()}
    return value


def _remember_joins(player: Player) -> None:
    """Each raw client's latest successful JoinGroup answer (its SyncGroup names that protocol)."""
    for step in player.raw_steps:
        call = step.call
        response = None if call is None else call.response
        if isinstance(response, proto.JoinGroupResponse) and response.error_code.name == "NONE":
            prev = player.last_join.get(call.src)
            if prev is None or prev[0] <= (call.received_ms or 0):
                player.last_join[call.src] = (call.received_ms or 0, response)


ACTION_KINDS: dict[str, type[ActionArgs]] = {
    cls.kind: cls
    for cls in (
        Start,
        Close,
        Crash,
        Restart,
        Commit,
        Subscribe,
        Stall,
        AddPartitions,
        CreateTopic,
        DeleteTopic,
        CrashBroker,
        RestartBroker,
        Network,
        DelayRequest,
        Send,
    )
}
"""Every action a timeline step may name, in the order messages list them."""
