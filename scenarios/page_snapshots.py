"""State snapshots for the browser page, taken while the run plays: never written to the log.

Some of what the page shows is state that no event carries in full: a KIP-848 group's target
assignment and each member's assigned and pending-revocation partitions at the coordinator (its
``consumer_group_member_updated`` events give counts), and each ZooKeeper server's lagging copy
of the tree (a follower applies the leader's commits silently, ``coordinator.zookeeper``). Adding
them to the events would change every log; instead ``run_with_snapshots`` plays the scenario as
``run_scenario`` does, with an observer after every engine event (``Engine.run``'s
``after_event``, as the invariant checks) that reads the public views (``KafkaCluster.
consumer_group``, the ensemble's servers) and keeps a ``Snapshot`` whenever what it reads
changed. Observing changes nothing: the run's log is byte-identical to ``run_scenario``'s (tested).

The page (``scenarios.html``) places a snapshot by the events before it: ``after_seq`` is the
log's length when it was taken and ``burst_start`` the length before the engine event that led to
it (a change made by that event's own step shows at that step).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from attrs import frozen

from scenarios.model import Scenario
from scenarios.result import RunResult

if TYPE_CHECKING:
    from scenarios.play import Player

#: snapshot kinds
CONSUMER_GROUP = "consumer_group"
ZOOKEEPER = "zookeeper"


@frozen
class Snapshot:
    """What the observer read, after ``after_seq`` events of the log."""

    after_seq: int
    burst_start: int
    t_ms: int
    kind: str
    data: Any


def needs_snapshots(scenario: Scenario) -> bool:
    """Whether a page of this scenario shows snapshot data: a consumer-protocol group or the
    ZooKeeper design."""
    if scenario.design == "zookeeper":
        return True
    configs = [c.config for c in scenario.consumers]
    for action in scenario.timeline:  # a restart may switch a consumer's protocol (migration)
        configs.extend(getattr(action.args, "configs", None) or ())
    return any(
        str((config or {}).get("group_protocol", "classic")).lower() == "consumer"
        for config in configs
    )


def _named(parts: Any) -> list[str]:
    """``((topic, (p, ...)), ...)`` as ``["topic-p", ...]``."""
    return [f"{topic}-{p}" for topic, ps in parts for p in ps]


class _Recorder:
    """The observer: reads the views after each engine event and keeps what changed."""

    def __init__(self, player: Player, group: str | None, out: list[Snapshot]) -> None:
        self.player = player
        self.group = group
        self.out = out
        self.seen = 0  # log length at the previous call
        self.last: Any = None
        self.zookeeper = player.scenario.design == "zookeeper"

    def __call__(self) -> None:
        sim = self.player.sim
        events = sim.events
        start, self.seen = self.seen, len(events)
        if self.zookeeper:
            data = self._zookeeper(sim)
        else:
            gid = self.group
            if gid is None or not any(
                str(e.get("event", "")).startswith("consumer_group_") and e.get("group_id") == gid
                for e in events[start:]
            ):
                return
            data = self._consumer_group(sim, gid)
        if data is None or data == self.last:
            return
        self.last = data
        kind = ZOOKEEPER if self.zookeeper else CONSUMER_GROUP
        self.out.append(Snapshot(len(events), start, sim.now, kind, data))

    @staticmethod
    def _consumer_group(sim: Any, gid: str) -> dict[str, Any] | None:
        view = sim.cluster.consumer_group(gid)
        if view is None:
            return None
        return {
            "group_epoch": view.group_epoch,
            "assignment_epoch": view.assignment_epoch,
            "state": view.state,
            "members": {
                m.member_id: {
                    "epoch": m.member_epoch,
                    "state": m.state,
                    "assigned": _named(m.assigned),
                    "pending": _named(m.pending_revocation),
                    "target": _named(m.target),
                }
                for m in view.members
            },
        }

    def _zookeeper(self, sim: Any) -> dict[str, Any] | None:
        gid = self.group
        owners_prefix = f"/consumers/{gid}/owners/"
        ids_prefix = f"/consumers/{gid}/ids/"
        out: dict[str, Any] = {}
        for name, server in sim.zk.servers.items():
            owners: dict[str, str] = {}
            ids: list[str] = []
            for path, node in server.nodes.items():
                if path.startswith(owners_prefix):
                    rest = path[len(owners_prefix) :]
                    topic, _, part = rest.rpartition("/")
                    if topic and part.isdigit():
                        owners[f"{topic}-{part}"] = node.data
                elif path.startswith(ids_prefix):
                    ids.append(path[len(ids_prefix) :])
            out[name] = {"zxid": server.applied_zxid, "owners": owners, "ids": sorted(ids)}
        return out


def run_with_snapshots(
    scenario: Scenario,
    *,
    until_ms: int | None = None,
    seed: int | None = None,
    group: str | None = None,
) -> tuple[RunResult, list[Snapshot]]:
    """``run_scenario`` with the page's snapshots of ``group`` (default: the first group)."""
    from scenarios.play import Player, play

    base: type[Player] = Player
    if scenario.design == "zookeeper":
        from scenarios.zk_play import ZkPlayer

        base = ZkPlayer
    gid = group or (scenario.groups[0] if scenario.groups else None)
    snapshots: list[Snapshot] = []

    class Observed(base):  # type: ignore[valid-type,misc]
        """The design's player, with the recorder after every engine event and action."""

        def __init__(self, scenario: Scenario, *, seed: int | None = None) -> None:
            super().__init__(scenario, seed=seed)
            self._recorder = _Recorder(self, gid, snapshots)

        def _advance(self, t: int, end: int) -> None:
            from scenarios.simulation import Simulation

            if isinstance(self.sim, Simulation):
                self.sim.run(until=t, after_event=self._recorder)
            else:  # ZkSimulation.run is the engine's run
                self.sim.engine.run(until=t, after_event=self._recorder)

        def apply(self, action: Any) -> None:
            super().apply(action)
            self._recorder()

    result = play(scenario, until_ms=until_ms, seed=seed, player_class=Observed)
    return result, snapshots
