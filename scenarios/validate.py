"""Check a scenario's plain data (parsed YAML or a dict) and build the model.

Every problem is collected, never raised one at a time: the loader raises one ``ScenarioError``
with all of them, each located by ``Positions`` (file:line:column) and named by its field path.
Unknown keys get a did-you-mean hint (difflib); durations and sizes are unit-checked; references
(consumers, topics, brokers, groups, raw-request names) must exist; limits follow Kafka (session
timeout within the broker's group.min/max.session.timeout.ms, heartbeat below session, ...).
Each timeline action and expectation check parses itself (``scenarios.actions.ACTION_KINDS``,
``scenarios.checks.CHECK_KINDS``) with this class's helpers; this module names none of them.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from typing import Any

import attrs

from coordinator.config import JAVA_LIMITS as BROKER_JAVA_LIMITS
from coordinator.errors import Errors
from members.config import JAVA_LIMITS
from scenarios import configkeys as ck
from scenarios.actions import ACTION_KINDS, SERVER_ASSIGNORS, ActionArgs, NoteOnly
from scenarios.checks import CHECK_KINDS, Check
from scenarios.configkeys import canonical_assignor, known_assignor
from scenarios.errors import Issue
from scenarios.hints import TOPIC_NAME_HINT, did_you_mean, kind_of, legal_topic_name, listing
from scenarios.model import (
    SCENARIO_VERSION,
    Action,
    ClusterSpec,
    ConsumerSpec,
    Expectation,
    NetworkSpec,
    Scenario,
    TopicSpec,
    Where,
    ZooKeeperSpec,
)
from scenarios.raw import REF
from scenarios.units import parse_duration_ms, parse_size_bytes
from scenarios.yamlpos import PathT, Positions, path_str

TOP_KEYS = (
    "version",
    "name",
    "description",
    "seed",
    "seed_note",
    "tags",
    "cluster",
    "defaults",
    "consumers",
    "timeline",
    "expect",
    "until",
    "design",
)
CLUSTER_KEYS = (
    "brokers",
    "broker_racks",
    "replication_factor",
    "offsets_partitions",
    "topics",
    "config",
    "network",
    "zookeeper",
)
NETWORK_KEYS = ("latency", "jitter", "drop_rate")
TOPIC_KEYS = ("partitions",)
ZOOKEEPER_KEYS = ("servers", "lag")
DESIGNS = ("client-side", "zookeeper", "coordinator-assigns")
"""seed 004's designs: today's protocol (the default), Kafka 0.8's ZooKeeper consumer, and the
0.9 proposal where the coordinator assigns with the broker's strategy"""
ZK_ACTIONS = ("start", "close", "crash", "restart", "commit", "add_partitions", "network")
ZK_CHECKS = ("members", "assignment", "owns", "sizes", "events", "measures")
ZK_STRATEGIES = {
    "range": "range",
    "roundrobin": "roundrobin",
    "legacy-range": "range",
    "legacy-roundrobin": "roundrobin",
}
CONSUMER_ITEM_KEYS = ("id", "group", "topics", "pattern", "config", "static", "count", "first")
TIMELINE_META = ("at", "note", "expect", "as")
ACTIONS = tuple(ACTION_KINDS)
EXPECT_CHECKS = tuple(CHECK_KINDS)
EXPECT_META = ("at", "group", "label")
MAX_CONSUMERS = 100_000
MAX_BROKERS = 1000


def custom_assignor_problem(name: str, allow_code: bool) -> tuple[str, str | None] | None:
    """(message, hint) when ``name`` is a ``module:Class`` that may not or cannot be loaded.

    A scenario file is data and may come from anyone: naming code in it imports that module (its
    top-level code runs). Only with ``allow_code`` (``--allow-code``) is it imported, here at
    validation, so a missing module or class is reported at the scenario's line before any run.
    Assignors installed under the ``groupsim.assignors`` entry point need no permission.
    """
    if ":" not in name:
        return None
    if not allow_code:
        return (
            f"assignor `{name}` names Python code (module:Class), which a scenario may only "
            "run when allowed",
            "pass --allow-code (allow_code=True in Python) if you trust this file, or install "
            "the assignor under the 'groupsim.assignors' entry point",
        )
    from assignors import get_assignor

    try:
        get_assignor(name)
    except Exception as exc:  # import errors of the user's module included: located, no traceback
        return (f"assignor `{name}` cannot be loaded: {type(exc).__name__}: {exc}", None)
    return None


class Validator:
    """Walks the plain data once; ``build()`` returns a Scenario or None with ``issues`` filled."""

    def __init__(
        self, data: Any, positions: Positions, *, name: str | None = None, allow_code: bool = False
    ):
        self.data = data
        self.pos = positions
        self.name = name
        self.allow_code = allow_code  # may `module:Class` assignor names be imported? (README)
        self.issues: list[Issue] = []
        self.topics: dict[str, int] = {}
        self.all_topics: set[str] = set()
        self.consumer_ids: list[str] = []
        # each consumer's spec and the `defaults:` settings (a `restart:` with settings merges
        # its changes into them)
        self.consumer_specs: dict[str, ConsumerSpec] = {}
        self.consumer_defaults: dict[str, Any] = {}
        self.group_protocols: dict[str, set[str]] = {}  # group -> its consumers' group.protocol
        self.groups: list[str] = []
        self.brokers = 3
        self.raw_names: set[str] = set()
        self.broker_config: dict[str, Any] = {}
        self.design = "client-side"
        self.server_assignor = "range"  # design 2's broker strategy (group.server.assignor)
        self.zk_servers = ["zk-0", "zk-1", "zk-2"]

    # -- small helpers ------------------------------------------------------------------------

    def err(self, path: PathT, message: str, *, hint: str | None = None, key: bool = False) -> None:
        self.issues.append(self.pos.issue(path, message, hint=hint, key=key))

    def where(self, path: PathT) -> Where:
        line, col = self.pos.of(path)
        return Where(self.pos.source, path_str(path), line, col)

    def mapping(self, value: Any, path: PathT, what: str) -> dict[str, Any] | None:
        if isinstance(value, dict):
            return value
        self.err(path, f"{what} must be a mapping, got {kind_of(value)}")
        return None

    def check_keys(
        self, m: Mapping[str, Any], path: PathT, allowed: Iterable[str], what: str
    ) -> None:
        allowed = tuple(allowed)
        for k in m:
            if k not in allowed:
                self.err(
                    (*path, k),
                    f"unknown key `{k}` in {what}",
                    hint=did_you_mean(k, allowed) or f"allowed: {', '.join(allowed)}",
                    key=True,
                )

    def duration(self, value: Any, path: PathT) -> int | None:
        try:
            return parse_duration_ms(value)
        except ValueError as exc:
            self.err(path, str(exc))
            return None

    def integer(
        self, value: Any, path: PathT, *, minimum: int | None = None, maximum: int | None = None
    ) -> int | None:
        if isinstance(value, bool) or not isinstance(value, int):
            self.err(path, f"expected an integer, got {kind_of(value)}")
            return None
        if minimum is not None and value < minimum:
            self.err(path, f"must be at least {minimum}, got {value}")
            return None
        if maximum is not None and value > maximum:
            self.err(path, f"must be at most {maximum}, got {value}")
            return None
        return value

    def string(self, value: Any, path: PathT, *, allow_empty: bool = False) -> str | None:
        if not isinstance(value, str) or (not allow_empty and not value):
            self.err(
                path,
                f"expected a{'' if allow_empty else ' non-empty'} string, got {kind_of(value)}",
            )
            return None
        return value

    def string_list(self, value: Any, path: PathT) -> list[str] | None:
        if isinstance(value, str):
            return [value]
        if not isinstance(value, list):
            self.err(path, f"expected a name or a list of names, got {kind_of(value)}")
            return None
        out = []
        for i, item in enumerate(value):
            s = self.string(item, (*path, i))
            if s is not None:
                out.append(s)
        return out

    def ref(self, name: str, path: PathT, known: Iterable[str], what: str) -> bool:
        known = list(known)
        if name in known:
            return True
        self.err(
            path,
            f"unknown {what} `{name}`",
            hint=did_you_mean(name, known) or listing(what, known),
        )
        return False

    # -- top level ----------------------------------------------------------------------------

    def build(self) -> Scenario | None:
        top = self.mapping(self.data, (), "a scenario")
        if top is None:
            return None
        self.check_keys(top, (), TOP_KEYS, "the scenario")
        version = top.get("version")
        if version is None:
            self.err((), "missing `version` (write `version: 1`)")
        elif version != SCENARIO_VERSION:
            self.err(
                ("version",),
                f"unsupported scenario version {version!r}; this groupsim reads version {SCENARIO_VERSION}",
            )
        name = top.get("name", self.name)
        if name is None:
            self.err((), "missing `name`")
        elif not isinstance(name, str) or not name:
            self.err(("name",), f"name must be a non-empty string, got {kind_of(name)}")
        description = top.get("description", "")
        if not isinstance(description, str):
            self.err(("description",), "description must be a string")
            description = ""
        seed_note = top.get("seed_note")
        if seed_note is not None and not isinstance(seed_note, str):
            self.err(("seed_note",), "seed_note must be a string")
            seed_note = None
        seed = top.get("seed", 0)
        if self.integer(seed, ("seed",), minimum=0) is None:
            seed = 0
        tags = self.string_list(top.get("tags", []), ("tags",)) or []
        until = None
        if "until" in top:
            until = self.duration(top["until"], ("until",))

        self.design = self.design_of(top.get("design", "client-side"))
        cluster = self.cluster(top.get("cluster", {}))
        self.declare(top.get("timeline"), "declare_topics")
        consumers = self.consumers(top.get("consumers"), top.get("defaults", {}))
        self.declare(top.get("timeline"), "declare_groups")
        timeline = self.timeline(top.get("timeline", []))
        expect = self.expectations(top.get("expect", []))
        if until is not None:
            self.after_until(until, timeline, expect)
        if self.issues or cluster is None:
            return None
        assert isinstance(name, str)  # anything else was an issue above
        return Scenario(
            name=name,
            description=description.strip(),
            version=SCENARIO_VERSION,
            seed=seed,
            cluster=cluster,
            consumers=tuple(consumers),
            timeline=tuple(sorted(timeline, key=lambda a: a.at_ms)),
            expect=tuple(expect),
            until_ms=until,
            seed_note=seed_note.strip() if seed_note else None,
            tags=tuple(tags),
            design=self.design,
            source=self.pos.source,
            data=self.data,
        )

    # -- cluster ------------------------------------------------------------------------------

    def cluster(self, raw: Any) -> ClusterSpec | None:
        path: PathT = ("cluster",)
        m = self.mapping(raw if raw is not None else {}, path, "cluster")
        if m is None:
            return None
        self.check_keys(m, path, CLUSTER_KEYS, "cluster")
        brokers = (
            self.integer(m.get("brokers", 3), (*path, "brokers"), minimum=1, maximum=MAX_BROKERS)
            or 3
        )
        self.brokers = brokers
        rf_raw = m.get("replication_factor", min(3, brokers))
        rf = self.integer(rf_raw, (*path, "replication_factor"), minimum=1, maximum=brokers) or min(
            3, brokers
        )
        racks = None
        if "broker_racks" in m:
            rp = (*path, "broker_racks")
            if not isinstance(m["broker_racks"], list) or len(m["broker_racks"]) != brokers:
                self.err(
                    rp, f"broker_racks must list one rack (or null) per broker: {brokers} entries"
                )
            else:
                racks = tuple(None if r is None else str(r) for r in m["broker_racks"])
        config = self.broker_settings(m.get("config", {}), (*path, "config"))
        if "offsets_partitions" in m:
            n = self.integer(
                m["offsets_partitions"], (*path, "offsets_partitions"), minimum=1, maximum=100_000
            )
            if n is not None:
                if "offsets_topic_num_partitions" in config:
                    self.err(
                        (*path, "offsets_partitions"),
                        "given twice: also set as offsets.topic.num.partitions in cluster.config",
                    )
                config["offsets_topic_num_partitions"] = n
        self.broker_config = config
        topics = self.topic_specs(m.get("topics", {}), (*path, "topics"))
        network = self.network(m.get("network", {}), (*path, "network"))
        zookeeper = self.zookeeper(m.get("zookeeper"), (*path, "zookeeper"))
        return ClusterSpec(
            zookeeper=zookeeper,
            server_assignor=self.server_assignor if self.design == "coordinator-assigns" else None,
            brokers=brokers,
            broker_racks=racks,
            replication_factor=rf,
            topics=tuple(topics),
            config=config,
            network=network,
        )

    def design_of(self, raw: Any) -> str:
        """``design:``: which of seed 004's rebalance designs runs the scenario."""
        if raw in DESIGNS:
            return str(raw)
        self.err(
            ("design",),
            f"unknown design {raw!r}",
            hint=did_you_mean(str(raw), DESIGNS) or f"designs: {', '.join(DESIGNS)}",
        )
        return "client-side"

    def zookeeper(self, raw: Any, path: PathT) -> ZooKeeperSpec | None:
        """``cluster.zookeeper: {servers: 3, lag: {zk-2: 1s}}`` (design zookeeper only)."""
        if raw is None:
            return ZooKeeperSpec() if self.design == "zookeeper" else None
        if self.design != "zookeeper":
            self.err(path, "cluster.zookeeper belongs to `design: zookeeper`", key=True)
            return None
        m = self.mapping(raw, path, "cluster.zookeeper")
        if m is None:
            return None
        self.check_keys(m, path, ZOOKEEPER_KEYS, "cluster.zookeeper")
        servers = self.integer(m.get("servers", 3), (*path, "servers"), minimum=1, maximum=99) or 3
        names = self.zk_servers = [f"zk-{i}" for i in range(servers)]
        lags: dict[str, int] = {}
        lag_raw = self.mapping(m.get("lag", {}) or {}, (*path, "lag"), "lag (server: delay)")
        for server, value in (lag_raw or {}).items():
            if server == "zk-0":
                self.err((*path, "lag", server), "zk-0 is the leader: it has no lag", key=True)
            elif self.ref(str(server), (*path, "lag", server), names[1:], "follower"):
                ms = self.duration(value, (*path, "lag", server))
                if ms is not None:
                    lags[str(server)] = ms
        return ZooKeeperSpec(servers=servers, lag_ms=tuple(sorted(lags.items())))

    def broker_settings(self, raw: Any, path: PathT) -> dict[str, Any]:
        m = self.mapping(raw if raw is not None else {}, path, "cluster.config")
        out: dict[str, Any] = {}
        if m is None:
            return out
        for key, value in m.items():
            if key == "group.server.assignor":
                if self.design != "coordinator-assigns":
                    self.err(
                        (*path, key),
                        "group.server.assignor is the broker's strategy of design 2",
                        hint="add `design: coordinator-assigns` at the top of the file",
                        key=True,
                    )
                elif value not in SERVER_ASSIGNORS:
                    self.err(
                        (*path, key),
                        f"unknown server-side strategy {value!r}",
                        hint=did_you_mean(str(value), SERVER_ASSIGNORS)
                        or f"strategies: {', '.join(SERVER_ASSIGNORS)}",
                    )
                else:
                    self.server_assignor = str(value)
                continue
            if key not in ck.BROKER_KEYS:
                hint = did_you_mean(key, ck.BROKER_KEYS)
                if key in ck.CONSUMER_KEYS:
                    hint = f"`{key}` is a consumer setting: put it under `defaults` or a consumer's `config`"
                self.err((*path, key), f"unknown broker setting `{key}`", hint=hint, key=True)
                continue
            field_name, kind = ck.BROKER_KEYS[key]
            parsed = self.setting(value, kind, (*path, key))
            limit = BROKER_JAVA_LIMITS.get(key)
            if limit is not None and parsed is not None and parsed > limit[1]:
                # GroupCoordinatorConfig defines it as a Java int (or long): ConfigDef refuses more
                self.err(
                    (*path, key), f"{key} must be at most {limit[1]} ({limit[2]}), got {parsed}"
                )
                continue
            if parsed is not None:
                out[field_name] = parsed
        lo = out.get(
            "group_min_session_timeout_ms", ck.BROKER_DEFAULTS["group_min_session_timeout_ms"]
        )
        hi = out.get(
            "group_max_session_timeout_ms", ck.BROKER_DEFAULTS["group_max_session_timeout_ms"]
        )
        if lo > hi:
            self.err(
                (*path, "group.min.session.timeout.ms"),
                f"group.min.session.timeout.ms ({lo}) exceeds group.max.session.timeout.ms ({hi})",
            )
        return out

    def setting(self, value: Any, kind: ck.Kind, path: PathT) -> Any:
        if kind is ck.Kind.DURATION:
            return self.duration(value, path)
        if kind is ck.Kind.SIZE:
            try:
                return parse_size_bytes(value)
            except ValueError as exc:
                self.err(path, str(exc))
                return None
        if kind is ck.Kind.INT:
            return self.integer(value, path)
        if kind is ck.Kind.POSITIVE_INT:
            return self.integer(value, path, minimum=1)
        if kind is ck.Kind.FLOAT:
            if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0:
                self.err(path, f"expected a non-negative number, got {kind_of(value)}")
                return None
            return float(value)
        if kind is ck.Kind.BOOL:
            if not isinstance(value, bool):
                self.err(path, f"expected true or false, got {kind_of(value)}")
                return None
            return value
        if kind is ck.Kind.STRING:
            return self.string(value, path)
        if kind is ck.Kind.OPTIONAL_STRING:
            if value is None:
                return None
            return self.string(value, path)
        if kind is ck.Kind.STRATEGIES:
            return self.strategies(value, path)
        raise AssertionError(kind)

    def strategies(self, value: Any, path: PathT) -> tuple[str, ...] | None:
        if isinstance(value, str):
            value = [v.strip() for v in value.split(",")]  # Kafka's comma-separated form
        if not isinstance(value, list) or not value:
            self.err(
                path, "partition.assignment.strategy must be a non-empty list of assignor names"
            )
            return None
        out: list[str] = []
        for i, item in enumerate(value):
            ipath = (
                (*path, i)
                if len(value) > 1 or isinstance(self.pos.values.get((*path, 0)), tuple)
                else path
            )
            if not isinstance(item, str) or not item:
                self.err(ipath, f"expected an assignor name, got {kind_of(item)}")
                continue
            code_problem = custom_assignor_problem(item, self.allow_code)
            if code_problem:
                self.err(ipath, code_problem[0], hint=code_problem[1])
                continue
            if not known_assignor(item):
                self.err(
                    ipath,
                    f"unknown assignor `{item}`",
                    hint=did_you_mean(item, ck.BUILTIN_ASSIGNORS)
                    or f"known: {', '.join(ck.BUILTIN_ASSIGNORS)}, or package.module:Class",
                )
                continue
            name = canonical_assignor(item)
            if name in out:
                self.err(ipath, f"assignor `{name}` is listed twice")
                continue
            out.append(name)
        return tuple(out) if len(out) == len(value) else None

    def topic_specs(self, raw: Any, path: PathT) -> list[TopicSpec]:
        m = self.mapping(raw if raw is not None else {}, path, "cluster.topics")
        out: list[TopicSpec] = []
        if m is None:
            return out
        for name, spec in m.items():
            tpath = (*path, name)
            if not legal_topic_name(name):
                self.err(tpath, f"illegal topic name `{name}`", hint=TOPIC_NAME_HINT, key=True)
                continue
            # known even if its spec is bad: no cascade of unknown-topic errors
            self.all_topics.add(name)
            if isinstance(spec, dict):
                self.check_keys(spec, tpath, TOPIC_KEYS, f"topic `{name}`")
                if "partitions" not in spec:
                    self.err(tpath, f"topic `{name}` needs `partitions`")
                    continue
                count = self.integer(
                    spec["partitions"], (*tpath, "partitions"), minimum=1, maximum=1_000_000
                )
            else:
                count = self.integer(spec, tpath, minimum=1, maximum=1_000_000)
            if count is None:
                continue
            self.topics[name] = count
            self.all_topics.add(name)
            out.append(TopicSpec(name, count))
        return out

    def network(self, raw: Any, path: PathT) -> NetworkSpec:
        m = self.mapping(raw if raw is not None else {}, path, "cluster.network")
        if m is None:
            return NetworkSpec()
        self.check_keys(m, path, NETWORK_KEYS, "cluster.network")
        latency = self.duration(m.get("latency", 1), (*path, "latency"))
        jitter = self.duration(m.get("jitter", 0), (*path, "jitter"))
        drop = m.get("drop_rate", 0.0)
        if isinstance(drop, bool) or not isinstance(drop, (int, float)) or not 0 <= drop < 1:
            self.err((*path, "drop_rate"), f"drop_rate must be a number in [0, 1), got {drop!r}")
            drop = 0.0
        return NetworkSpec(
            latency_ms=latency if latency is not None else 1,
            jitter_ms=jitter or 0,
            drop_rate=float(drop),
        )

    def declare(self, raw: Any, hook: str) -> None:
        """Before the timeline is checked: what its steps declare (``ActionArgs.declare_*``)."""
        if not isinstance(raw, list):
            return
        for item in raw:
            if isinstance(item, dict):
                for key, value in item.items():
                    kind = ACTION_KINDS.get(key)
                    if kind is not None:
                        getattr(kind, hook)(self, value)

    # -- consumers ----------------------------------------------------------------------------

    def consumers(self, raw: Any, defaults_raw: Any) -> list[ConsumerSpec]:
        defaults = self.consumer_settings(
            defaults_raw if defaults_raw is not None else {}, ("defaults",), allow_group_id=False
        )
        self.consumer_defaults = defaults
        if raw is None:
            return []
        items: list[tuple[PathT, Any]]
        if isinstance(raw, dict):
            items = [(("consumers",), raw)]  # a single template
        elif isinstance(raw, list):
            items = [(("consumers", i), item) for i, item in enumerate(raw)]
        else:
            self.err(
                ("consumers",),
                f"consumers must be a list (or one template mapping), got {kind_of(raw)}",
            )
            return []
        out: list[ConsumerSpec] = []
        for path, item in items:
            out.extend(self.consumer_item(item, path, defaults))
        if len(out) > MAX_CONSUMERS:
            self.err(
                ("consumers",),
                f"{len(out)} consumers is more than this simulator accepts ({MAX_CONSUMERS})",
            )
        return out

    def consumer_item(self, item: Any, path: PathT, defaults: dict[str, Any]) -> list[ConsumerSpec]:
        m = self.mapping(item, path, "a consumer")
        if m is None:
            return []
        self.check_keys(m, path, CONSUMER_ITEM_KEYS, "a consumer")
        if "id" not in m:
            self.err(path, "a consumer needs an `id`")
            return []
        if "group" not in m:
            self.err(path, "a consumer needs a `group` (Kafka's group.id)")
            return []
        id_template = self.string(m["id"], (*path, "id"))
        group = self.string(m["group"], (*path, "group"))
        if id_template is None or group is None:
            return []
        count = 1
        first = 0
        templated = "count" in m
        if templated:
            count = (
                self.integer(m["count"], (*path, "count"), minimum=0, maximum=MAX_CONSUMERS) or 0
            )
            first = self.integer(m.get("first", 0), (*path, "first"), minimum=0) or 0
            if count > 1 and "{i}" not in id_template:
                self.err(
                    (*path, "id"),
                    f'a template of {count} consumers needs `{{i}}` in its id, e.g. "C{{i}}"',
                )
                return []
        elif "first" in m:
            self.err((*path, "first"), "`first` only makes sense with `count`")
        topics: tuple[str, ...] = ()
        pattern = None
        if "topics" in m and "pattern" in m:
            self.err((*path, "pattern"), "give either `topics` or `pattern`, not both")
        elif "pattern" in m:
            pattern = self.string(m["pattern"], (*path, "pattern"))
            if pattern is not None:
                try:
                    re.compile(pattern)
                except re.error as exc:
                    self.err((*path, "pattern"), f"invalid regular expression: {exc}")
        elif "topics" in m:
            names = self.string_list(m["topics"], (*path, "topics")) or []
            for i, t in enumerate(names):
                tp = (*path, "topics", i) if isinstance(m["topics"], list) else (*path, "topics")
                self.ref(t, tp, sorted(self.all_topics), "topic")
            topics = tuple(names)
        else:
            self.err(path, "a consumer needs `topics` (a list) or `pattern` (a regex)")
        own = self.consumer_settings(m.get("config", {}), (*path, "config"), allow_group_id=False)
        static = m.get("static", False)
        if not isinstance(static, bool):
            self.err((*path, "static"), f"static must be true or false, got {kind_of(static)}")
            static = False
        out = []
        for i in range(first, first + count):
            cid = id_template.replace("{i}", str(i))
            config = {**ck.CONSUMER_DEFAULTS, **defaults, **own}
            for key in ("group_instance_id", "client_id", "transactional_id"):
                if isinstance(config.get(key), str):
                    config[key] = config[key].replace("{i}", str(i)).replace("{id}", cid)
            if static and config.get("group_instance_id") is None:
                config["group_instance_id"] = cid
            config.setdefault("client_id", cid)
            config["group_id"] = group
            if not self.node_name(cid, (*path, "id")):
                continue
            if cid in self.consumer_ids:
                self.err((*path, "id"), f"duplicate consumer id `{cid}`")
                continue
            self.consumer_ids.append(cid)
            self.group_protocols.setdefault(group, set()).add(
                str(config.get("group_protocol") or "classic").lower()
            )
            if group not in self.groups:
                self.groups.append(group)
            self.consumer_limits(config, path, own, defaults)
            spec = ConsumerSpec(
                id=cid,
                group=group,
                topics=topics,
                pattern=pattern,
                config=config,
                where=self.where(path),
            )
            self.consumer_specs[cid] = spec
            out.append(spec)
            if templated is False:
                break
        return out

    def node_name(self, cid: str, path: PathT) -> bool:
        if cid.startswith("broker-") or cid in ("coordinator", "all"):
            self.err(path, f"`{cid}` cannot name a consumer: it is reserved for brokers")
            return False
        if not re.match(r"^[A-Za-z0-9._:-]+$", cid):
            self.err(
                path, f"consumer id `{cid}` may only hold letters, digits, '.', '_', ':' and '-'"
            )
            return False
        return True

    def consumer_settings(self, raw: Any, path: PathT, *, allow_group_id: bool) -> dict[str, Any]:
        m = self.mapping(raw if raw is not None else {}, path, path_str(path) or "config")
        out: dict[str, Any] = {}
        if m is None:
            return out
        for key, value in m.items():
            if key == "group.id" and not allow_group_id:
                self.err((*path, key), "group.id is set by the consumer's `group:` field", key=True)
                continue
            if key in ck.ZK_CONSUMER_KEYS:
                if self.design != "zookeeper":
                    self.err(
                        (*path, key),
                        f"`{key}` is a setting of Kafka 0.8's ZooKeeper consumer",
                        hint="add `design: zookeeper` at the top of the file",
                        key=True,
                    )
                    continue
                zk_field, zk_kind = ck.ZK_CONSUMER_KEYS[key]
                zk_value = self.setting(value, zk_kind, (*path, key))
                if (
                    key == "zookeeper.server"
                    and zk_value is not None
                    and not self.ref(str(zk_value), (*path, key), self.zk_servers, "server")
                ):
                    continue
                if zk_value is not None:
                    out[zk_field] = zk_value
                continue
            if key == "partition.assignment.strategy" and self.design == "zookeeper":
                names = value if isinstance(value, list) else [value]
                if len(names) != 1 or names[0] not in ZK_STRATEGIES:
                    self.err(
                        (*path, key),
                        f"the 0.8 consumer has one strategy, range or roundrobin; got {value!r}",
                        hint="partition.assignment.strategy: [range] (or [roundrobin])",
                    )
                else:
                    out["partition_assignment_strategy"] = (ZK_STRATEGIES[names[0]],)
                continue
            if key not in ck.CONSUMER_KEYS:
                hint = did_you_mean(key, ck.CONSUMER_KEYS)
                if key in ck.BROKER_KEYS:
                    hint = f"`{key}` is a broker setting: put it under `cluster.config`"
                self.err((*path, key), f"unknown consumer setting `{key}`", hint=hint, key=True)
                continue
            field_name, kind = ck.CONSUMER_KEYS[key]
            parsed = self.setting(value, kind, (*path, key))
            limit = JAVA_LIMITS.get(key)
            if limit is not None and parsed is not None and parsed > limit[0]:
                # Kafka's ConfigDef parses the setting as a Java int (or long)
                self.err(
                    (*path, key), f"{key} must be at most {limit[0]} ({limit[1]}), got {parsed}"
                )
                continue
            if parsed is not None or kind is ck.Kind.OPTIONAL_STRING:
                out[field_name] = parsed
        return out

    def consumer_limits(
        self,
        config: dict[str, Any],
        path: PathT,
        own: Mapping[str, Any],
        defaults: Mapping[str, Any],
        own_path: PathT | None = None,
    ) -> None:
        """The checks of a consumer's merged ``config``; a problem points at the setting in
        ``own`` (under ``own_path``, by default the consumer's ``config:``) or ``defaults``."""
        settings_path = (*path, "config") if own_path is None else own_path

        def where_of(field_name: str) -> PathT:
            dotted = next(k for k, (f, _) in ck.CONSUMER_KEYS.items() if f == field_name)
            if field_name in own:
                return (*settings_path, dotted)
            if field_name in defaults:
                return ("defaults", dotted)
            return path

        before = len(self.issues)
        protocol = str(config.get("group_protocol", "classic")).lower()
        if protocol == "consumer":
            # ConsumerConfig.checkUnsupportedConfigs(CONSUMER, ...): a classic-only setting
            # given at all (here or in defaults) is refused, with Kafka's message.
            from members.config import CLASSIC_ONLY_SETTINGS, unsupported_setting_message

            for dotted, field_name in CLASSIC_ONLY_SETTINGS:
                if field_name in own or field_name in defaults:
                    self.err(
                        where_of(field_name),
                        unsupported_setting_message(dotted, "consumer"),
                        hint="the consumer protocol takes the heartbeat interval, the session "
                        "timeout and the assignor from the broker (group.consumer.*); use "
                        "group.remote.assignor to ask for an assignor",
                    )
            if len(self.issues) > before:
                return
            config = {**config, **{f: ck.CONSUMER_DEFAULTS[f] for _, f in CLASSIC_ONLY_SETTINGS}}
        elif config.get("group_remote_assignor") and protocol == "classic":
            from members.config import unsupported_setting_message

            self.err(
                where_of("group_remote_assignor"),
                unsupported_setting_message("group.remote.assignor", "classic"),
                hint="set group.protocol: consumer, or drop it",
            )
            return
        session = config["session_timeout_ms"]
        lo = self.broker_config.get(
            "group_min_session_timeout_ms", ck.BROKER_DEFAULTS["group_min_session_timeout_ms"]
        )
        hi = self.broker_config.get(
            "group_max_session_timeout_ms", ck.BROKER_DEFAULTS["group_max_session_timeout_ms"]
        )
        if not lo <= session <= hi:
            self.err(
                where_of("session_timeout_ms"),
                f"session.timeout.ms {session} is outside the broker's [{lo}, {hi}] "
                "(group.min/max.session.timeout.ms): the coordinator would answer "
                'INVALID_SESSION_TIMEOUT, which poll() throws: "The session timeout is not '
                "within the range allowed by the broker (as configured by "
                'group.min.session.timeout.ms and group.max.session.timeout.ms)."',
                hint="to show that error, send a raw JoinGroup instead",
            )
        if config["heartbeat_interval_ms"] >= session:
            self.err(
                where_of("heartbeat_interval_ms"),
                f"heartbeat.interval.ms {config['heartbeat_interval_ms']} must be lower than "
                f"session.timeout.ms {session}: Kafka refuses it when the consumer is built "
                '(Heartbeat: "Heartbeat must be set lower than the session timeout")',
            )
        self.churn_limits(config, where_of)
        if len(self.issues) > before:
            return  # already explained; the consumer's own check would repeat it
        try:
            from members.config import ConfigError, ConsumerConfig
        except ImportError:
            return
        fields = {f.name for f in attrs.fields(ConsumerConfig)}
        kwargs = {k: v for k, v in config.items() if k in fields}
        try:
            ConsumerConfig(**kwargs)
        except (ConfigError, ValueError, TypeError) as exc:
            self.err(path, f"invalid consumer configuration: {exc}")

    def churn_limits(self, config: Mapping[str, Any], where_of: Callable[[str], PathT]) -> None:
        """Settings under which the group certainly churns for ever (the run would start).

        The processing model (members.application) keeps the application outside poll() for at
        least ``processing.time.ms`` after every poll; past ``max.poll.interval.ms`` the
        heartbeat thread's poll timer expires every time (AbstractCoordinator's "consumer poll
        timeout has expired": maybeLeaveGroup), so the member leaves, and rejoins at its next
        poll, for ever: a dynamic member takes the group through a rebalance each time, a static
        one (no LeaveGroup) resets its generation and is replaced under a new member id each time. Equal is fine: the timer expires
        only past the interval. The per-record cost is left out: a poll may return no records.
        """
        processing = config.get("processing_time_ms", 0) or 0
        max_poll = config.get("max_poll_interval_ms", ck.CONSUMER_DEFAULTS["max_poll_interval_ms"])
        if processing > max_poll:
            self.err(
                where_of("processing_time_ms"),
                f"processing.time.ms {processing} exceeds max.poll.interval.ms {max_poll}: every "
                "poll() overruns the poll timer, so the member leaves the group and rejoins at "
                "its next poll, for ever (it never keeps an assignment)",
                hint="raise max.poll.interval.ms, or show one poll timeout with a `stall` step",
            )

    # -- timeline -----------------------------------------------------------------------------

    def timeline(self, raw: Any) -> list[Action]:
        if raw is None:
            return []
        if not isinstance(raw, list):
            self.err(("timeline",), f"timeline must be a list of steps, got {kind_of(raw)}")
            return []
        out = []
        for i, item in enumerate(raw):
            action = self.step(item, ("timeline", i))
            if action is not None:
                out.append(action)
        return out

    def step(self, item: Any, path: PathT) -> Action | None:
        m = self.mapping(item, path, "a timeline step")
        if m is None:
            return None
        kinds = [k for k in m if k in ACTIONS]
        for k in m:
            if k not in ACTIONS and k not in TIMELINE_META:
                self.err(
                    (*path, k),
                    f"unknown action `{k}`",
                    hint=did_you_mean(k, (*ACTIONS, *TIMELINE_META))
                    or f"actions: {', '.join(ACTIONS)}",
                    key=True,
                )
        if "at" not in m:
            self.err(path, "a timeline step needs `at` (e.g. `at: 5s`)")
            at = None
        else:
            at = self.duration(m["at"], (*path, "at"))
        note = m.get("note")
        if note is not None and not isinstance(note, str):
            self.err((*path, "note"), "note must be a string")
        if not kinds:
            if not any(k not in TIMELINE_META for k in m) and note is None:
                self.err(path, f"a timeline step needs an action: one of {', '.join(ACTIONS)}")
            if note is None:
                return None
            kind: type[ActionArgs] = NoteOnly
            args: ActionArgs = NoteOnly()
        elif len(kinds) > 1:
            self.err((*path, kinds[1]), f"one action per step: found {', '.join(kinds)}", key=True)
            return None
        elif self.design == "zookeeper" and kinds[0] not in ZK_ACTIONS:
            self.err(
                (*path, kinds[0]),
                f"`{kinds[0]}` is not available under `design: zookeeper`",
                hint=f"actions there: {', '.join(ZK_ACTIONS)}",
                key=True,
            )
            return None
        else:
            kind = ACTION_KINDS[kinds[0]]
            parsed = kind.parse(self, m[kinds[0]], (*path, kinds[0]))
            if parsed is None:
                return None
            args = parsed
        expect, name = kind.parse_meta(self, m, path, args)
        if at is None:
            return None
        return Action(
            at_ms=at, args=args, where=self.where(path), expect=expect, name=name, note=note
        )

    def consumer_refs(self, raw: Any, path: PathT) -> list[str] | None:
        if raw == "all":
            return list(self.consumer_ids)
        names = self.string_list(raw, path)
        if names is None:
            return None
        ok = True
        for i, n in enumerate(names):
            p = (*path, i) if isinstance(raw, list) else path
            ok = self.ref(n, p, self.consumer_ids, "consumer") and ok
        return names if ok else None

    def broker_ref(self, raw: Any, path: PathT) -> str | dict[str, str] | None:
        """``broker-1``, ``1``, or ``{coordinator_of: g1}`` (whichever broker coordinates g1 then)."""
        if isinstance(raw, dict):
            self.check_keys(raw, path, ("coordinator_of",), "a broker reference")
            g = raw.get("coordinator_of")
            if not isinstance(g, str) or not self.ref(
                g, (*path, "coordinator_of"), self.groups, "group"
            ):
                if not isinstance(g, str):
                    self.err(path, "write `{coordinator_of: <group>}`")
                return None
            return {"coordinator_of": g}
        if isinstance(raw, int) and not isinstance(raw, bool):
            n = raw
        elif isinstance(raw, str) and re.match(r"^broker-\d+$", raw):
            n = int(raw.split("-")[1])
        else:
            self.err(
                path,
                f"expected a broker such as broker-0 (or 0, or {{coordinator_of: group}}), got {raw!r}",
            )
            return None
        if not 0 <= n < self.brokers:
            self.err(
                path,
                f"there is no broker-{n}: the cluster has brokers broker-0..broker-{self.brokers - 1}",
            )
            return None
        return f"broker-{n}"

    def request_value(self, key: str, value: Any, path: PathT) -> Any:
        """Check ``$name.field`` references and durations; structure is converted by the runner."""
        if isinstance(value, str):
            ref = REF.match(value)
            if ref:
                if ref.group("name") not in self.raw_names:
                    self.err(
                        path,
                        f"`{value}` refers to no earlier request named `{ref.group('name')}`",
                        hint=did_you_mean(ref.group("name"), self.raw_names)
                        or "name a request with `as: <name>`",
                    )
                return value
            if value.startswith("$"):
                self.err(
                    path,
                    f"`{value}` is not a reference: write $<name>.<field>, e.g. $join1.member_id",
                )
                return value
        if key.endswith("_ms") and not isinstance(value, int):
            return self.duration(value, path)
        if isinstance(value, dict):
            return {k: self.request_value(k, v, (*path, k)) for k, v in value.items()}
        if isinstance(value, list):
            return [self.request_value(key, v, (*path, i)) for i, v in enumerate(value)]
        return value

    def error_name(self, raw: Any, path: PathT) -> str | None:
        names = [e.name for e in Errors]
        if not isinstance(raw, str) or raw not in names:
            self.err(path, f"unknown Kafka error {raw!r}", hint=did_you_mean(str(raw), names))
            return None
        return raw

    # -- expectations -------------------------------------------------------------------------

    def after_until(self, until: int, timeline: list[Action], expect: list[Expectation]) -> None:
        """Steps and expectations past ``until`` would never run or be checked: an error now,
        rather than an expectation reported 'not reached' after the run (issue 15)."""
        items: list[Action | Expectation] = [*timeline, *expect]
        for item in items:
            at = item.at_ms
            if at is None or at <= until or item.where is None:
                continue
            what = "step" if isinstance(item, Action) else "expectation"
            w = item.where
            self.issues.append(
                Issue(
                    w.source,
                    f"{w.path}.at" if w.path else "at",
                    f"this {what} at {at} ms is after `until` ({until} ms): it would never "
                    f"{'run' if what == 'step' else 'be checked'}",
                    w.line,
                    w.column,
                    hint="move it before `until`, or raise `until`",
                )
            )

    def expectations(self, raw: Any) -> list[Expectation]:
        if raw is None:
            return []
        if not isinstance(raw, list):
            self.err(("expect",), f"expect must be a list, got {kind_of(raw)}")
            return []
        out = []
        for i, item in enumerate(raw):
            e = self.expectation(item, ("expect", i))
            if e is not None:
                out.append(e)
        return out

    def _consumer_group(self, group: Any) -> bool:
        """Every consumer of ``group`` speaks the consumer protocol (KIP-848)."""
        protocols = self.group_protocols.get(group) if isinstance(group, str) else None
        return protocols == {"consumer"}

    def expectation(self, item: Any, path: PathT) -> Expectation | None:
        m = self.mapping(item, path, "an expectation")
        if m is None:
            return None
        self.check_keys(m, path, (*EXPECT_META, *EXPECT_CHECKS), "an expectation")
        at_raw = m.get("at", "end")
        at = None if at_raw == "end" else self.duration(at_raw, (*path, "at"))
        if at_raw != "end" and at is None:
            return None
        group = m.get("group")
        if group is None:
            if len(self.groups) == 1:
                group = self.groups[0]
            elif any(k in m for k, check in CHECK_KINDS.items() if check.needs_group):
                self.err(path, "which group? add `group:`", hint=listing("group", self.groups))
                return None
        elif not isinstance(group, str) or not self.ref(
            group, (*path, "group"), self.groups, "group"
        ):
            return None
        checks: dict[str, Check] = {}
        for key, kind in CHECK_KINDS.items():
            if key in m and self.design == "zookeeper" and key not in ZK_CHECKS:
                self.err(
                    (*path, key),
                    f"the `{key}` check is not available under `design: zookeeper`",
                    hint=f"checks there: {', '.join(ZK_CHECKS)}",
                    key=True,
                )
                continue
            if key in m and kind.not_for_consumer_groups and self._consumer_group(group):
                self.err(
                    (*path, key),
                    f"the `{key}` check does not apply to group {group!r}: "
                    f"{kind.not_for_consumer_groups}",
                    hint="check `members`, `member_epochs` or `client_states` instead",
                    key=True,
                )
                continue
            if key in m:
                check = kind.parse(self, m[key], (*path, key))
                if check is not None:
                    checks[key] = check
        if not any(k in m for k in EXPECT_CHECKS):
            self.err(path, f"an expectation needs at least one check: {', '.join(EXPECT_CHECKS)}")
            return None
        if not checks:
            return None
        label = m.get("label")
        return Expectation(
            at_ms=at,
            group=group,
            checks=checks,
            where=self.where(path),
            label=label if isinstance(label, str) else None,
        )
