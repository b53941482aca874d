"""Coordinator benchmarks: the shared state machine, and thousands of groups through a cluster.

``python -m bench.coordinator [--quick]``. The state-machine part is the measurement behind the
design choice in coordinator/state_machine.py: one shared ``transitions.Machine`` with
``add_model`` instead of a Machine per group.
"""

from __future__ import annotations

import sys
import time

from transitions import Machine

from coordinator.cluster import KafkaCluster
from coordinator.config import CoordinatorConfig
from coordinator.effects import Send
from coordinator.protocol import JoinGroupRequest, JoinGroupRequestProtocol, SyncGroupRequest
from coordinator.state_machine import (
    STATES,
    VALID_PREVIOUS_STATES,
    GroupStateModel,
    attach,
    trigger_name,
)
from coordinator.timers import JoinKey


class _Plain:
    """A model transitions may decorate (GroupStateModel has __slots__ on purpose)."""


def _table_machine(model) -> Machine:
    machine = Machine(model=model, states=list(STATES), initial="Empty", auto_transitions=False)
    for target, sources in VALID_PREVIOUS_STATES.items():
        machine.add_transition(trigger_name(target), list(sources), target)
    return machine


PATH = ("PreparingRebalance", "CompletingRebalance", "Stable")


def _time(label: str, n: int, make) -> None:
    t0 = time.perf_counter()
    keep = [make(i) for i in range(n)]
    elapsed = time.perf_counter() - t0
    print(f"  {label:<44} {elapsed:7.3f} s  {elapsed / n * 1e6:8.1f} us/group")
    del keep


def bench_state_machines(n: int) -> None:
    print(f"state machine: {n} groups, each created and moved Empty -> ... -> Stable")

    def shared_events(i: int):
        m = attach(GroupStateModel(f"g{i}"))
        for target in PATH:
            m.transition_to(target)
        return m

    shared = _table_machine(None)

    def shared_add_model(i: int):
        m = _Plain()
        shared.add_model(m)
        for target in PATH:
            getattr(m, trigger_name(target))()
        return m

    def machine_per_group(i: int):
        m = _Plain()
        _table_machine(m)
        for target in PATH:
            getattr(m, trigger_name(target))()
        return m

    _time("shared Machine, Event.trigger (groupsim)", n, shared_events)
    _time("shared Machine, add_model per group", n, shared_add_model)
    _time("a Machine per group", n, machine_per_group)


def bench_cluster(groups: int, members: int) -> None:
    config = CoordinatorConfig(group_initial_rebalance_delay_ms=0, load_time_ms=0)
    cluster = KafkaCluster(config=config)
    protocols = (JoinGroupRequestProtocol("range", b"x"),)
    requests = 0
    t0 = time.perf_counter()
    for g in range(groups):
        gid = f"group-{g}"
        node = cluster.coordinator_for(gid)
        ids = []
        for m in range(members):
            req = JoinGroupRequest(gid, 10000, 30000, "", "consumer", protocols, client_id=f"c{m}")
            (send,) = [
                e
                for e in cluster.handle_request(node, f"c{m}", 1, req, 0).effects
                if isinstance(e, Send)
            ]
            ids.append(send.message.member_id)
            cluster.handle_request(
                node,
                f"c{m}",
                2,
                JoinGroupRequest(
                    gid, 10000, 30000, ids[-1], "consumer", protocols, client_id=f"c{m}"
                ),
                0,
            )
            requests += 2
        sends: list[Send] = []
        while not sends:  # the initial-delay chain may take a second (empty) window
            fx = cluster.handle_timer(JoinKey(node, cluster.partition_for(gid), gid), 0)
            sends = [e for e in fx.effects if isinstance(e, Send)]
        gen = sends[0].message.generation_id
        leader = cluster.group(gid).leader_id
        for m, mid in enumerate(ids):
            cluster.handle_request(
                node,
                f"c{m}",
                3,
                SyncGroupRequest(gid, gen, mid, protocol_type="consumer", protocol_name="range"),
                1,
            )
            requests += 1
        assert cluster.group(gid).state == "Stable", leader
    t1 = time.perf_counter()
    print(
        f"cluster: {groups} groups x {members} members to Stable: {t1 - t0:.2f} s, "
        f"{requests / (t1 - t0):,.0f} requests/s"
    )


def main(argv: list[str]) -> int:
    quick = "--quick" in argv
    bench_state_machines(2000 if quick else 10000)
    bench_cluster(200 if quick else 2000, 5)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
