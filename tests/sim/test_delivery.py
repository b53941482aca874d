"""The simulation's delivery rules, with a tiny fake cluster and fake consumers.

The fakes only echo and park requests, so these tests pin down what the runner itself promises
(latency, disconnects from dead brokers, discarded answers to crashed clients, raw calls,
partitions) independently of the real coordinator and consumer.
"""

from __future__ import annotations

from typing import Any

from attrs import frozen

from coordinator.effects import Send, SetTimer
from coordinator.result import NO_RESULT, CoordinatorResult
from members.result import NO_RESULT as NO_CONSUMER_RESULT
from members.result import ConsumerResult
from scenarios.network import NetworkConfig
from scenarios.simulation import Simulation


@frozen
class Ping:
    text: str
    park: bool = False


@frozen
class Pong:
    text: str


class FakeCluster:
    """Answers Ping with Pong at once, or parks it until the broker fails (never answering)."""

    def __init__(self, *, num_brokers: int, **_: Any) -> None:
        self.broker_nodes = tuple(f"broker-{i}" for i in range(num_brokers))
        self.alive = dict.fromkeys(self.broker_nodes, True)
        self.parked: list[tuple[str, int]] = []

    def is_alive(self, node: str) -> bool:
        return self.alive[node]

    def handle_request(self, dst: str, src: str, cid: int, request: Ping, now: int) -> Any:
        events = (("fake_request", {"t_ms": now, "node": dst, "src": src, "text": request.text}),)
        if request.park:
            self.parked.append((src, cid))
            return CoordinatorResult((), events)
        return CoordinatorResult((Send(dst, src, cid, Pong(request.text.upper())),), events)

    def handle_timer(self, key: str, now: int) -> Any:
        return NO_RESULT

    def fail_broker(self, node: str, now: int) -> Any:
        self.alive[node] = False
        return NO_RESULT

    def restart_broker(self, node: str, now: int) -> Any:
        self.alive[node] = True
        return NO_RESULT

    def group(self, group_id: str) -> None:
        return None


class FakeConsumer:
    """Sends what it is told to, records what comes back; a timer re-sends every 100 ms."""

    def __init__(self, node: str, config: Any, **_: Any) -> None:
        self.node = node
        self.config = config
        self.received: list[tuple[int, str, int, Any]] = []
        self.disconnects: list[tuple[int, str, int]] = []
        self.next_cid = 1
        self.member_id = ""
        self.state = "UNJOINED"
        self.owned: list[Any] = []

    def send(self, dst: str, message: Any) -> ConsumerResult:
        cid = self.next_cid
        self.next_cid += 1
        return ConsumerResult((Send(self.node, dst, cid, message),))

    def start(self, now: int) -> ConsumerResult:
        return NO_CONSUMER_RESULT if self.config == "quiet" else self._tick(now)

    def _tick(self, now: int, *effects: Any) -> ConsumerResult:
        return ConsumerResult((*effects, SetTimer("tick", now + 100)))

    def handle_timer(self, key: str, now: int) -> ConsumerResult:
        return self._tick(now, *self.send("broker-0", Ping(f"tick@{now}")).effects)

    def handle_response(self, src: str, cid: int, message: Any, now: int) -> ConsumerResult:
        self.received.append((now, src, cid, message))
        return NO_CONSUMER_RESULT

    def handle_disconnect(self, dst: str, cid: int, now: int) -> ConsumerResult:
        self.disconnects.append((now, dst, cid))
        return NO_CONSUMER_RESULT

    def crash(self, now: int) -> ConsumerResult:
        return NO_CONSUMER_RESULT

    def restart(self, now: int) -> ConsumerResult:
        return self.start(now)


def make_sim(**kwargs: Any) -> Simulation:
    return Simulation(
        brokers=2,
        cluster_factory=FakeCluster,
        consumer_factory=FakeConsumer,
        **kwargs,
    )


def test_request_and_response_take_one_latency_each() -> None:
    sim = make_sim(network=NetworkConfig(latency_ms=5))
    consumer = sim.add_consumer("C1", "quiet", start=True)
    sim._apply("C1", consumer.send("broker-1", Ping("hi")))
    sim.run()
    assert consumer.received == [(10, "broker-1", 1, Pong("HI"))]
    assert [e["event"] for e in sim.events] == ["sim_consumer_started", "fake_request"]
    assert sim.events[1]["t_ms"] == 5 and sim.events[1]["seq"] == 1


def test_consumer_timers_drive_periodic_requests() -> None:
    sim = make_sim()
    consumer = sim.add_consumer("C1", "tick")
    sim.start("C1")
    sim.run(until=350)
    assert [t for t, *_ in consumer.received] == [102, 202, 302]
    assert sim.now == 350


def test_a_parked_request_fails_with_a_disconnect_when_its_broker_dies() -> None:
    sim = make_sim(network=NetworkConfig(latency_ms=2))
    consumer = sim.add_consumer("C1", "quiet", start=True)
    sim._apply("C1", consumer.send("broker-0", Ping("join", park=True)))
    sim.run(until=50)
    assert consumer.disconnects == []
    sim.fail_broker("broker-0")
    sim.run(until=100)
    assert consumer.disconnects == [(52, "broker-0", 1)]
    assert sim.events_named("sim_disconnected", node="C1")


def test_a_request_cut_off_by_a_broker_failure_never_reaches_the_restarted_broker() -> None:
    """The request was on the old connection when the broker died: the new broker process must
    not see it (it would act on it, e.g. commit offsets, for a client told it failed)."""
    sim = make_sim(network=NetworkConfig(latency_ms=5))
    consumer = sim.add_consumer("C1", "quiet", start=True)
    sim._apply("C1", consumer.send("broker-0", Ping("cut")))
    sim.at(1, lambda: sim.fail_broker("broker-0"))
    sim.at(2, lambda: sim.restart_broker("broker-0"))
    sim.run(until=100)
    assert sim.events_named("fake_request") == []
    assert consumer.disconnects == [(6, "broker-0", 1)] and consumer.received == []
    sim._apply("C1", consumer.send("broker-0", Ping("new")))  # a new connection works
    sim.run(until=200)
    assert consumer.received == [(110, "broker-0", 2, Pong("NEW"))]


def test_a_disconnect_notice_comes_after_the_answers_already_on_the_wire() -> None:
    """One connection is FIFO: the Pong the broker sent before it died (arriving at 20) reaches
    the client before the notice that the connection broke, however quick the notice is."""
    for network in (
        NetworkConfig(latency_ms=10, disconnect_notice_ms=0),
        NetworkConfig(latency_ms=10, jitter_ms=40),
    ):
        sim = make_sim(network=network, seed=3)
        consumer = sim.add_consumer("C1", "quiet", start=True)
        sim._apply("C1", consumer.send("broker-0", Ping("answered")))
        sim._apply("C1", consumer.send("broker-0", Ping("parked", park=True)))
        assert sim.run_until(lambda sim=sim: len(sim.events_named("fake_request")) == 2)
        assert consumer.received == []  # the Pong is on its way back
        sim.fail_broker("broker-0")
        sim.run(until=1000)
        assert [(cid, msg) for _, _, cid, msg in consumer.received] == [(1, Pong("ANSWERED"))]
        assert [cid for _, _, cid in consumer.disconnects] == [2]
        assert consumer.disconnects[0][0] >= consumer.received[0][0]


def test_no_disconnect_notice_for_a_crashed_or_closed_consumer() -> None:
    """A dead process has no connection left to notice breaking: no ``sim_disconnected`` for a
    crashed consumer, nor for one that closed (its close timer ran out with its LeaveGroup
    still in flight). One still closing, waiting for its LeaveGroup's answer, does notice."""
    sim = make_sim(network=NetworkConfig(latency_ms=2))
    consumer = sim.add_consumer("C1", "quiet", start=True)
    sim._apply("C1", consumer.send("broker-0", Ping("join", park=True)))
    sim.run(until=10)
    sim.crash("C1")
    sim.fail_broker("broker-0")
    sim.run(until=100)
    assert sim.events_named("sim_disconnected") == [] and consumer.disconnects == []

    real = Simulation(topics={"t": 4}, seed=1)
    real.add_consumers(
        2,
        group_id="g",
        topics=["t"],
        enable_auto_commit=False,
        request_timeout_ms=40_000,  # requests outlast the close timer, min(30 s, this)
        start=True,
    )
    assert real.run_until_stable("g")
    real.partition_network([["C1"]])  # C1's LeaveGroup is lost: no answer, no disconnect
    real.close("C1")
    assert real.status("C1") == "CLOSING"
    real.run_for(30_000)
    assert real.status("C1") == "CLOSED"
    assert real.events_named("close_timed_out", node="C1")
    real.heal_network()
    real.fail_broker(real.coordinator("g") or "broker-0")
    real.run_for(100)
    assert real.events_named("sim_disconnected", node="C1") == []

    closing = Simulation(topics={"t": 4}, seed=1)
    closing.add_consumers(2, group_id="g", topics=["t"], enable_auto_commit=False, start=True)
    assert closing.run_until_stable("g")
    closing.close("C1")  # waits for its LeaveGroup's answer
    closing.fail_broker(closing.coordinator("g") or "broker-0")
    closing.run_for(100)
    assert closing.events_named("sim_disconnected", node="C1")
    assert closing.status("C1") == "CLOSED"


def test_a_request_to_a_dead_broker_is_refused() -> None:
    sim = make_sim(network=NetworkConfig(latency_ms=2))
    consumer = sim.add_consumer("C1", "quiet", start=True)
    sim.fail_broker("broker-1")
    sim._apply("C1", consumer.send("broker-1", Ping("x")))
    sim.run()
    assert consumer.disconnects == [(4, "broker-1", 1)]
    assert consumer.received == []


def test_answers_to_a_crashed_consumer_are_discarded() -> None:
    sim = make_sim(network=NetworkConfig(latency_ms=5))
    consumer = sim.add_consumer("C1", "tick")
    sim.start("C1")
    sim.run(until=103)  # the tick's Ping is on its way
    sim.crash("C1")
    sim.run(until=1000)
    assert consumer.received == []  # the Pong came back to a dead process; no timer re-armed
    sim.restart("C1")
    sim.run(until=1200)
    assert [t for t, *_ in consumer.received] == [1110]


def test_send_raw_captures_the_response() -> None:
    sim = make_sim(network=NetworkConfig(latency_ms=3))
    call = sim.send_raw(Ping("raw"), "broker-0", from_node="tester")
    assert not call.done
    sim.run()
    assert call.response == Pong("RAW")
    assert call.received_ms == 6
    assert sim.events_named("sim_raw_response", node="tester")


def test_partitioned_messages_are_lost_or_disconnected() -> None:
    sim = make_sim()
    consumer = sim.add_consumer("C1", "quiet", start=True)
    sim.partition_network([["C1"]], duration_ms=500)
    sim._apply("C1", consumer.send("broker-0", Ping("lost")))
    sim.run(until=400)
    assert consumer.received == [] and consumer.disconnects == []
    assert sim.events_named("sim_message_lost", reason="network partition")
    sim.run(until=600)  # healed at 500
    sim._apply("C1", consumer.send("broker-0", Ping("ok")))
    sim.run(until=700)
    assert consumer.received == [(602, "broker-0", 2, Pong("OK"))]

    noisy = make_sim(network=NetworkConfig(partition_disconnect_ms=250))
    other = noisy.add_consumer("C1", "quiet", start=True)
    noisy.partition_network([["C1"]])
    noisy._apply("C1", other.send("broker-0", Ping("x")))
    noisy.run(until=1000)
    assert other.disconnects == [(250, "broker-0", 1)]


def test_a_lost_request_still_fails_when_its_broker_dies() -> None:
    """A lost message is still in flight on its connection: when the broker dies the client is
    told (Kafka's NetworkClient fails every in-flight request of a closed connection), rather
    than waiting forever (a raw call has no request timeout)."""
    sim = make_sim(network=NetworkConfig(latency_ms=2, drop_probability=1.0))
    call = sim.send_raw(Ping("lost"), "broker-0")
    sim.run(until=50)
    assert not call.done and sim.events_named("sim_message_lost", reason="dropped")
    sim.fail_broker("broker-0")
    sim.run(until=100)
    assert call.disconnected and call.response is None
    assert [e["t_ms"] for e in sim.events_named("sim_disconnected")] == [52]


def test_a_lost_answer_still_fails_when_its_broker_dies() -> None:
    sim = make_sim(network=NetworkConfig(latency_ms=5))
    call = sim.send_raw(Ping("x"), "broker-0", from_node="tester")
    sim.at(2, lambda: sim.partition_network([["tester"]]))  # the Pong (sent at 5) is lost
    sim.run(until=50)
    assert not call.done
    sim.fail_broker("broker-0")
    sim.run(until=100)
    assert call.disconnected and call.response is None


def test_an_answer_lost_to_a_partition_disconnects_the_client_once() -> None:
    """With partition_disconnect_ms the client of a request whose answer cannot cross the
    partition learns of a disconnect, as it does when its request cannot cross; one notice only,
    even if the broker dies meanwhile."""
    for fail_at, expected in ((None, 255), (100, 105)):
        sim = make_sim(network=NetworkConfig(latency_ms=5, partition_disconnect_ms=250))
        call = sim.send_raw(Ping("x"), "broker-0", from_node="tester")
        sim.at(2, lambda sim=sim: sim.partition_network([["tester"]]))
        if fail_at is not None:
            sim.at(fail_at, lambda sim=sim: sim.fail_broker("broker-0"))
        sim.run(until=1000)
        assert call.disconnected and call.response is None
        assert [e["t_ms"] for e in sim.events_named("sim_disconnected")] == [expected]


def test_at_schedules_actions_and_refuses_the_past() -> None:
    sim = make_sim()
    seen: list[int] = []
    sim.at(40, lambda: seen.append(sim.now))
    sim.run(until=100)
    assert seen == [40]
    try:
        sim.at(10, lambda: None)
    except Exception as exc:
        assert "clock is at 100" in str(exc)
    else:  # pragma: no cover
        raise AssertionError("scheduling in the past must fail")


def test_jittered_runs_are_reproducible_from_the_seed() -> None:
    def received(seed: int) -> list[int]:
        sim = make_sim(network=NetworkConfig(latency_ms=1, jitter_ms=30), seed=seed)
        consumer = sim.add_consumer("C1", "tick")
        sim.start("C1")
        sim.run(until=2000)
        return [t for t, *_ in consumer.received]

    assert received(1) == received(1)
    assert received(1) != received(2)


def test_misuse_gets_clear_errors() -> None:
    import pytest

    from scenarios.simulation import SimulationError

    sim = Simulation(topics={"t": 1})
    with pytest.raises(SimulationError, match=r"unknown consumer setting.*sesion_timeout_ms"):
        sim.add_consumer("C1", group_id="g", sesion_timeout_ms=10)
    sim.add_consumer("C1", group_id="g", topics=["t"])
    with pytest.raises(SimulationError, match="already exists"):
        sim.add_consumer("C1", group_id="g")
    with pytest.raises(SimulationError, match="unknown consumer 'C9'"):
        sim.crash("C9")
    with pytest.raises(SimulationError, match="unknown broker"):
        sim.send_raw(Ping("x"), "broker-7")
    sim.run(until=10)
    with pytest.raises(SimulationError, match="clock is at 10"):
        sim.run(until=5)


def test_starting_a_consumer_that_is_still_closing_is_refused() -> None:
    """close() waits for its final auto-commit (status CLOSING); start() then would have given
    the consumer a new incarnation whose connections drop that commit's answer, leaving a
    consumer that closes later while the runner counts it as running, so it is refused."""
    import pytest

    from scenarios.simulation import SimulationError

    sim = Simulation(topics={"t": 4}, seed=1)
    sim.add_consumers(2, group_id="g", topics=["t"], start=True)
    assert sim.run_until_stable("g")
    sim.run_for(2_000)
    sim.close("C1")
    assert sim.status("C1") == "CLOSING"
    events = len(sim.events)
    with pytest.raises(SimulationError, match="'C1' is still closing"):
        sim.start("C1")
    assert len(sim.events) == events  # refused before anything happened
    assert sim.run_until(lambda: sim.status("C1") == "CLOSED", timeout_ms=1_000)
    assert not sim.is_running("C1") and sim.run_until_stable("g")
    sim.start("C1")  # once closed, it opens again and rejoins
    assert sim.run_until_stable("g") and sorted(sim.members("g")) == ["C1", "C2"]


def test_an_unknown_broker_is_refused_before_anything_is_logged() -> None:
    import pytest

    from scenarios.simulation import SimulationError

    sim = Simulation(brokers=2, topics={"t": 1})
    for action in (sim.fail_broker, sim.restart_broker):
        with pytest.raises(SimulationError, match=r"unknown broker 'broker-7' \(brokers: "):
            action("broker-7")
    assert sim.events == []


def test_bad_consumer_actions_are_refused_before_anything_is_logged() -> None:
    import pytest

    from scenarios.simulation import SimulationError

    sim = Simulation(topics={"t": 1})
    sim.add_consumer("C1", group_id="g", topics=["t"], start=True)
    logged = len(sim.events)
    with pytest.raises(SimulationError, match="a topic list or a pattern, not both"):
        sim.subscribe("C1", ["t"], pattern="t.*")
    with pytest.raises(SimulationError, match="stall duration must be >= 0"):
        sim.stall("C1", -5)
    with pytest.raises(SimulationError, match="close timeout must be a non-negative integer"):
        sim.close("C1", -1)
    assert len(sim.events) == logged
    assert sim.status("C1") == "RUNNING"


def test_the_garbage_collector_is_paused_only_while_the_clock_runs() -> None:
    import gc

    assert gc.isenabled()
    for pause, expected in ((True, [False]), (False, [True])):
        sim = make_sim(pause_gc=pause)
        seen: list[bool] = []
        sim.at(5, lambda seen=seen: seen.append(gc.isenabled()))
        sim.run(until=10)
        assert seen == expected
        assert gc.isenabled()


def test_cycles_made_while_the_collector_is_paused_are_still_collected() -> None:
    """Survivors of a run go to the oldest generation; a full collection still frees cycles."""
    import gc
    import weakref

    class Node:
        partner: object = None

    refs: list[weakref.ref[Node]] = []

    def make_cycle() -> None:
        a, b = Node(), Node()
        a.partner, b.partner = b, a
        refs.append(weakref.ref(a))

    sim = make_sim()
    sim.at(5, make_cycle)
    sim.run(until=10)
    assert gc.get_freeze_count() == 0  # nothing is left frozen
    gc.collect()
    assert refs[0]() is None


def test_a_callers_frozen_objects_stay_frozen(monkeypatch) -> None:
    """A caller that froze objects itself keeps them frozen: the run neither freezes nor unfreezes.

    Counting frozen objects before and after is not a sound check: a frozen object that dies
    (a temporary still referenced when the caller froze) leaves the permanent generation by
    itself. So the freeze and unfreeze calls themselves are watched.
    """
    import gc

    calls: list[str] = []
    real_freeze, real_unfreeze = gc.freeze, gc.unfreeze
    monkeypatch.setattr(gc, "freeze", lambda: (calls.append("freeze"), real_freeze())[1])
    monkeypatch.setattr(gc, "unfreeze", lambda: (calls.append("unfreeze"), real_unfreeze())[1])
    real_freeze()
    try:
        assert gc.get_freeze_count() > 0
        sim = make_sim()
        sim.at(5, lambda: None)
        sim.run(until=10)
        assert calls == []
        assert gc.get_freeze_count() > 0
    finally:
        real_unfreeze()
    # with nothing frozen by the caller, the run moves its survivors to the oldest generation
    sim.at(15, lambda: None)
    sim.run(until=20)
    assert calls == ["freeze", "unfreeze"]
    assert gc.get_freeze_count() == 0


def test_raw_responses_name_their_error_as_the_broker_logged_it() -> None:
    """A raw OffsetCommit answer carries its errors per partition; the sim_raw_response line names
    the first failed one, as the coordinator's response_sent line does (it used to say None)."""
    from scenarios.loader import load_scenario
    from scenarios.runner import run_scenario

    events = run_scenario(load_scenario("commit-during-rebalance")).events
    sent = {
        (e["dst"], e["correlation_id"]): e["error"] for e in events if e["event"] == "response_sent"
    }
    raw = [e for e in events if e["event"] == "sim_raw_response"]
    commits = [e for e in raw if e["api"] == "OffsetCommitResponse"]
    assert {e["error"] for e in commits} >= {"NONE", "ILLEGAL_GENERATION", "REBALANCE_IN_PROGRESS"}
    assert all(e["error"] == sent[(e["dst"], e["correlation_id"])] for e in raw)
