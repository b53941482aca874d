"""The 0.8 high-level consumer on the simulated ZooKeeper (members/zk_consumer.py), run by
scenarios/zk_simulation.py: registration, watches, the herd, conflicts, retries, give-up,
session expiry, offsets in ZooKeeper."""

from __future__ import annotations

from collections import Counter

from coordinator import events as ev
from members.zk_consumer import ZkConsumerConfig
from scenarios.zk_simulation import ZkSimulation


def _sim(n: int, partitions: int = 6, lag: dict[str, int] | None = None, **cfg: object):
    sim = ZkSimulation(topics={"t": partitions}, lag_ms=lag)
    servers = cfg.pop("servers", {})
    assert isinstance(servers, dict)
    for i in range(1, n + 1):
        cid = f"C{i}"
        sim.add_consumer(
            cid,
            ZkConsumerConfig(
                group_id="g",
                consumer_id=cid,
                topics=("t",),
                zookeeper_server=servers.get(cid, "zk-0"),
                **cfg,  # type: ignore[arg-type]
            ),
        )
    return sim


def _count(sim: ZkSimulation, event: str, since: int = 0) -> Counter[str]:
    return Counter(e["node"] for e in sim.events if e["event"] == event and e["t_ms"] >= since)


def test_one_join_notifies_every_consumer_and_every_consumer_rebalances():
    """The herd effect: N running consumers, one joins: N notifications, N + 1 rebalances."""
    sim = _sim(5, partitions=10)
    for cid in ("C1", "C2", "C3", "C4"):
        sim.start(cid)
    sim.run(until=10_000)
    sim.start("C5")
    sim.run(until=40_000)
    assert _count(sim, ev.ZK_WATCH_RECEIVED, since=10_000) == Counter(
        {"C1": 1, "C2": 1, "C3": 1, "C4": 1}
    )
    done = _count(sim, ev.ZK_REBALANCE_DONE, since=10_000)
    assert done == Counter({f"C{i}": 1 for i in range(1, 6)})
    assert sim.fetching() == {
        f"t-{p}": [f"C{p // 2 + 1}"] for p in range(10)
    }  # range over 5 threads: two each


def test_a_close_deletes_the_registration_and_the_others_take_over():
    sim = _sim(2, partitions=4)
    sim.start("C1")
    sim.start("C2")
    sim.run(until=5_000)
    assert sim.registry("g") == ["g_C1", "g_C2"]
    sim.close("C2")
    sim.run(until=10_000)
    assert sim.registry("g") == ["g_C1"]
    assert sim.owners("g") == {f"t-{p}": "g_C1-0" for p in range(4)}


def test_a_crash_is_seen_only_after_the_session_timeout():
    sim = _sim(2, partitions=4, zookeeper_session_timeout_ms=6000)
    sim.start("C1")
    sim.start("C2")
    sim.run(until=5_000)
    sim.crash("C2")
    sim.run(until=10_999)
    assert sim.registry("g") == ["g_C1", "g_C2"]  # the ephemeral outlives the process
    assert [p for p, c in sim.fetching().items() if not c] == ["t-2", "t-3"]
    sim.run(until=11_000)
    assert [e["session_id"] for e in sim.events if e["event"] == ev.ZK_SESSION_EXPIRED] == [
        sim.consumers["C2"].session_id
    ]
    sim.run(until=15_000)
    assert sim.owners("g") == {f"t-{p}": "g_C1-0" for p in range(4)}


def _split_brain(lag_ms: int) -> ZkSimulation:
    """C2's server lags; C3 joins through the leader while C2 still owns t-3..t-5."""
    sim = _sim(3, lag={"zk-2": lag_ms}, servers={"C2": "zk-2"})
    sim.start("C1")
    sim.start("C2")
    sim.run(until=40_000)
    assert sim.owners("g") == {f"t-{p}": "g_C1-0" if p < 3 else "g_C2-0" for p in range(6)}
    sim.start("C3")
    sim.run(until=120_000)
    return sim


def _tries(sim: ZkSimulation, cid: str) -> list[tuple[str, int]]:
    return [
        (e["event"], e["attempt"])
        for e in sim.events
        if e["node"] == cid
        and e["event"] in (ev.ZK_REBALANCE_ATTEMPT_FAILED, ev.ZK_REBALANCE_DONE)
        and e["t_ms"] >= 40_000
    ]


def test_a_lagging_owner_makes_the_newcomer_collide_back_off_and_retry():
    """C2 hears of C3 1 s late and lets go later still; C3's claims collide twice, and its
    third try (after two rebalance.backoff.ms sleeps) succeeds."""
    sim = _split_brain(1000)
    conflicts = [
        (e["node"], e["attempt"], e["partition"])
        for e in sim.events
        if e["event"] == ev.ZK_OWNERSHIP_CONFLICT
    ]
    assert conflicts == [("C3", 0, "t-4"), ("C3", 0, "t-5"), ("C3", 1, "t-5")]
    assert _tries(sim, "C3") == [
        (ev.ZK_REBALANCE_ATTEMPT_FAILED, 0),
        (ev.ZK_REBALANCE_ATTEMPT_FAILED, 1),
        (ev.ZK_REBALANCE_DONE, 2),
    ]
    assert sim.fetching() == {
        f"t-{p}": [c] for p, c in enumerate(["C1", "C1", "C2", "C2", "C3", "C3"])
    }


def test_after_rebalance_max_retries_the_consumer_gives_up_owning_nothing():
    """ConsumerRebalanceFailedException: with C2 3 s behind, C3's four tries collide; C3 stays
    registered (the others count it in) but owns nothing, so t-4 and t-5 have no owner."""
    sim = _split_brain(3000)
    assert _tries(sim, "C3") == [(ev.ZK_REBALANCE_ATTEMPT_FAILED, i) for i in range(4)]
    gave_up = [
        (e["node"], e["retries"]) for e in sim.events if e["event"] == ev.ZK_REBALANCE_FAILED
    ]
    assert gave_up == [("C3", 4)]
    assert sim.registry("g") == ["g_C1", "g_C2", "g_C3"]
    assert sim.fetching() == {
        f"t-{p}": c for p, c in enumerate([["C1"], ["C1"], ["C2"], ["C2"], [], []])
    }


def test_offsets_live_in_zookeeper_and_the_next_owner_starts_there():
    sim = _sim(2, partitions=2, auto_commit_interval_ms=1000, records_per_second=10)
    sim.start("C1")
    sim.run(until=10_005)
    assert sim.offsets("g") == {"t-0": 99, "t-1": 99}  # ~10 s at 10 records/s, last at 10 s
    sim.start("C2")
    sim.run(until=12_000)
    c2 = sim.consumers["C2"]
    assert list(c2.owned) and all(v >= 99 for v in c2.owned.values())


def test_the_same_calls_give_the_same_log():
    def run() -> list[dict[str, object]]:
        sim = _sim(3, lag={"zk-2": 700}, servers={"C2": "zk-2", "C3": "zk-1"})
        sim.start("C1")
        sim.start("C2")
        sim.run(until=3_000)
        sim.start("C3")
        sim.run(until=6_000)
        sim.crash("C1")
        sim.run(until=30_000)
        return sim.events

    assert run() == run()


def test_a_call_returns_its_events_and_the_watches_it_fired_as_values():
    """Sans-I/O: a ZkConsumer call hands back what it produced (events, the watches its writes
    fired, its wake-up timer) and logs nothing itself; the watch B's registration fires is in
    B's result, in order, and addressed to A's session."""
    from coordinator.effects import SetTimer
    from coordinator.zookeeper import ZooKeeperEnsemble
    from members.zk_consumer import REBALANCE_TIMER, ZkConsumer, ZkConsumerResult

    zk = ZooKeeperEnsemble(1)

    def consumer(cid: str) -> ZkConsumer:
        cfg = ZkConsumerConfig(group_id="g", consumer_id=cid, auto_commit_enable=False)
        return ZkConsumer(cfg, zk, node=cid)

    def run(c: ZkConsumer, first: ZkConsumerResult) -> list[ZkConsumerResult]:
        """Resume ``c`` at each wake-up it asks for until it waits for nothing."""
        results = [first]
        while (wake := [e for e in results[-1].effects if isinstance(e, SetTimer)]) != []:
            assert wake[0].key == REBALANCE_TIMER
            results.append(c.resume(wake[0].deadline_ms))
        return results

    a, b = consumer("A"), consumer("B")
    started = a.start(0)
    assert [name for name, _ in started.events] == [ev.CONSUMER_STARTED]
    assert started.events[0][1]["node"] == "A" and started.effects[0].deadline_ms == 1
    a_results = run(a, started)
    assert ev.ZK_REBALANCE_DONE in [n for r in a_results for n, _ in r.events]
    assert all(r.fired == () for r in a_results)  # nobody watched what A wrote
    now = max(e.deadline_ms for r in a_results for e in r.effects if isinstance(e, SetTimer))
    b_results = run(b, b.start(now + 10))
    fired = [w for r in b_results for w in r.fired]
    assert [(w.session_id, w.path) for w in fired] == [(a.session_id, "/consumers/g/ids")]
    names = [n for r in b_results for n, _ in r.events]
    assert names.index(ev.ZK_WATCH_FIRED) < names.index(ev.ZK_CONSUMER_REGISTERED)
    (fired_event,) = [f for r in b_results for n, f in r.events if n == ev.ZK_WATCH_FIRED]
    assert fired_event["node"] == "zk-0" and "group_id" not in fired_event
    # A hears of it only when the runner delivers the watch: a value again
    notified = a.notify(fired[0], now + 20)
    assert [n for n, _ in notified.events][:2] == [ev.ZK_WATCH_RECEIVED, ev.ZK_REBALANCE_ATTEMPT]
