"""Simulation benchmarks: wall time and events per second of whole rebalances.

``python -m bench simulation`` runs, with the consumers' and brokers' default settings:

* **cold join**: 1,000 members join one group from cold until it is Stable, with the ``sticky``
  assignor over one topic of 100,000 partitions;
* **rolling restart**: 1,000 groups of 10 members on 3 brokers; every member is restarted in
  turn (round k closes member k of every group, starts it again 2 s later, and waits until every
  group is settled): 10 rounds. A restart costs one rebalance here, not two: the new member's
  JoinGroup arrives while the group is still waiting (heartbeat.interval.ms 3 s) for the others
  to rejoin after the LeaveGroup, so both changes land in one generation.

* **rolling restart, log muted**: the same with ``log_level="warning"``, so no event is recorded:
  the protocol logic and the runner alone. The difference to the rolling restart is what the
  event log costs; what remains is what no change to the log can remove.
* **floor**: the runner's own bookkeeping for as many request/response pairs as the rolling
  restart sends (520,000), with no protocol logic at all: the request and response objects, the
  effects, the request-timeout timer, two deliveries through the engine and the four log events
  of each pair. What this costs, the rolling restart cannot beat.

Flags: ``--quick`` runs each at a tenth of the size; ``--profile`` adds a cProfile summary of
each (what dominates). ``--compare-accel`` (also run by ``make bench`` whenever the compiled build
of ``make accel`` is present) times the rolling restart in the pure and the compiled build, in
the same run, in alternating pairs of fresh processes, and checks that both logs are
byte-identical. The goal is under 5 s each on a 2-core machine. Wall time counts the run
only (building the consumers is reported apart); "events" are engine events (messages delivered,
timers fired), "log" the structlog events recorded.
"""

from __future__ import annotations

import cProfile
import gc
import hashlib
import io
import json
import os
import pstats
import subprocess
import sys
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

from attrs import frozen

from coordinator.config import CoordinatorConfig
from scenarios.simulation import Simulation

if TYPE_CHECKING:  # only a type: scripts/rolling_restart_loop.py loads this file in older trees
    from scenarios.sim_values import Settled

GOAL_S = 5.0


@frozen
class Measurement:
    name: str
    setup_s: float
    wall_s: float
    events: int
    log_events: int
    simulated_ms: int
    rebalances: int | None  # None: not recorded (a muted log has no history)
    settled: bool
    cpu_s: float = 0.0  # process CPU time of the timed part (0: not measured)

    @property
    def events_per_s(self) -> float:
        return self.events / self.wall_s if self.wall_s > 0 else float("inf")


def cold_join(members: int = 1_000, partitions: int = 100_000) -> Measurement:
    started = time.perf_counter()
    sim = Simulation(brokers=3, topics={"events": partitions}, seed=1)
    sim.add_consumers(
        members, group_id="big", topics=["events"], partition_assignment_strategy=["sticky"]
    )
    built = time.perf_counter()
    sim.start()
    settled = sim.run_until_stable("big", timeout_ms=600_000)
    done = time.perf_counter()
    return Measurement(
        f"cold join: {members} members, sticky, {partitions} partitions",
        built - started,
        done - built,
        sim.engine.events_run,
        len(sim.events),
        sim.now,
        len(sim.rebalances("big")),
        settled,
    )


def restart_groups(
    groups: int, members: int = 10, log_level: str = "debug"
) -> tuple[Simulation, list[str], Settled]:
    """The rolling restart's groups, joined until settled: ``groups`` groups of ``members``
    consumers on 3 brokers, group g on topic g mod 10. Uses only ``Simulation``'s public calls,
    so ``scripts/rolling_restart_loop.py`` can run it against an older tree."""
    sim = Simulation(
        log_level=log_level,
        brokers=3,
        topics={f"topic-{i}": 20 for i in range(10)},
        seed=1,
        coordinator_config=CoordinatorConfig(group_initial_rebalance_delay_ms=0),
    )
    group_ids = [f"group-{g}" for g in range(groups)]
    for g, group_id in enumerate(group_ids):
        sim.add_consumers(
            members, prefix=f"{group_id}-c", group_id=group_id, topics=[f"topic-{g % 10}"]
        )
    sim.start()
    return sim, group_ids, sim.run_until_stable(group_ids, timeout_ms=300_000)


def restart_each_member(
    sim: Simulation, group_ids: list[str], settled: Settled, members: int = 10
) -> Settled:
    """Round k closes member k of every group, starts it 2 s later and waits until every group
    is settled. Returns ``settled`` unless a round did not settle; then that round's answer,
    which says where it stopped."""
    for k in range(1, members + 1):
        restarted = [f"{group_id}-c{k}" for group_id in group_ids]
        for cid in restarted:
            sim.close(cid)
        sim.run_for(2_000)
        sim.start(restarted)
        settled = sim.run_until_stable(group_ids, timeout_ms=300_000) and settled
    return settled


def rolling_restart(
    groups: int = 1_000,
    members: int = 10,
    log_level: str = "debug",
    keep: list[Simulation] | None = None,
) -> Measurement:
    started = time.perf_counter()
    sim, group_ids, settled = restart_groups(groups, members, log_level)
    # counted before the clock starts: reading the history is a query, not the simulation
    first_events, first_log = sim.engine.events_run, len(sim.events)
    first_ms, first_rebalances = sim.now, len(sim.rebalances())
    built = time.perf_counter()
    cpu = time.process_time()  # the same span as the wall time: the share of a busy machine's CPU
    settled = restart_each_member(sim, group_ids, settled, members)
    done = time.perf_counter()
    cpu = time.process_time() - cpu
    if keep is not None:  # the caller reads its log
        keep.append(sim)
    muted = ", log muted" if log_level != "debug" else ""
    return Measurement(
        f"rolling restart: {groups} groups x {members} members, 3 brokers{muted}",
        built - started,
        done - built,
        sim.engine.events_run - first_events,
        len(sim.events) - first_log,
        sim.now - first_ms,
        len(sim.rebalances()) - first_rebalances if not muted else None,
        settled,
        cpu,
    )


def message_floor(exchanges: int = 520_000) -> Measurement:
    """The runner's bookkeeping for ``exchanges`` request/response pairs, with no protocol logic.

    Each pair is what every simulated request costs before any consumer or coordinator logic
    runs: a request and a response object (``coordinator.protocol``), two ``Send`` effects, the
    client's request-timeout timer set and cancelled, two deliveries through the real ``Engine``,
    and the four log events (request_sent, request_received, response_sent, response_received)
    through the real structlog logger into the real ``EventLog``, with the fields the real ones
    carry. 520,000 is how many requests the full rolling restart sends, so this is a lower bound
    on that benchmark's wall time for this design on this interpreter.
    """
    from coordinator.effects import Send, SetTimer
    from coordinator.errors import Errors
    from coordinator.protocol import HeartbeatRequest, HeartbeatResponse
    from scenarios.engine import Engine
    from scenarios.eventlog import EventLog, make_logger

    started = time.perf_counter()
    log = EventLog()
    broker_log = make_logger(log)
    client_log = broker_log.bind(node="group-0-c1", group_id="group-0").info
    engine = Engine(lambda owner, key: None)
    # a realistic backlog: 10,000 members' pending heartbeat and session timers
    for i in range(10_000):
        engine.set_timer(f"C{i}", "heartbeat", 3_000 + i % 3_000)
        engine.set_timer("@cluster", f"session-{i}", 45_000 + i % 3_000)
    corr = 0
    member = "consumer-1bd250be-6339-4a4d-96ed-16fbd74ac477"

    def deliver_request(send: Send) -> None:
        now = engine.now
        req = send.message
        broker_log.info(
            "request_received",
            t_ms=now,
            node=send.dst,
            api="Heartbeat",
            src=send.src,
            dst=send.dst,
            correlation_id=send.correlation_id,
            group_id=req.group_id,
            member_id=req.member_id,
            generation_id=req.generation_id,
            group_instance_id=req.group_instance_id,
        )
        response = HeartbeatResponse(Errors.NONE)
        broker_log.info(
            "response_sent",
            t_ms=now,
            node=send.dst,
            api="Heartbeat",
            error="NONE",
            src=send.dst,
            dst=send.src,
            correlation_id=send.correlation_id,
            group_id=req.group_id,
            member_id=req.member_id,
            generation_id=req.generation_id,
        )
        answer = Send(send.dst, send.src, send.correlation_id, response)
        engine.schedule(now + 1, deliver_response, answer)

    def deliver_response(send: Send) -> None:
        engine.cancel_timer(send.dst, f"request-{send.correlation_id}")
        client_log(
            "response_received",
            t_ms=engine.now,
            api="Heartbeat",
            src=send.src,
            correlation_id=send.correlation_id,
            error="NONE",
        )

    built = time.perf_counter()
    gc.disable()  # as Simulation does while its clock runs
    for _ in range(exchanges // 100):  # 100 clients send at each instant, as in a large group
        now = engine.now
        for _ in range(100):
            corr += 1
            request = HeartbeatRequest("group-0", 3, member, None)
            send = Send("group-0-c1", "broker-0", corr, request)
            timeout = SetTimer(f"request-{corr}", now + 30_000)
            engine.set_timer(send.src, timeout.key, timeout.deadline_ms)
            client_log(
                "request_sent",
                t_ms=now,
                api="Heartbeat",
                dst="broker-0",
                correlation_id=corr,
                member_id=member,
                generation_id=3,
            )
            engine.schedule(now + 1, deliver_request, send)
        engine.run(until=now + 2)
    done = time.perf_counter()
    gc.enable()
    return Measurement(
        f"floor: {exchanges:,} request/response pairs through the engine and the log, no logic",
        built - started,
        done - built,
        engine.events_run,
        len(log.events),
        engine.now,
        0,
        True,
    )


class _Digest:
    """A text sink that only hashes what is written (a full log is gigabytes of JSON)."""

    def __init__(self) -> None:
        self.sha256 = hashlib.sha256()

    def write(self, text: str) -> None:
        self.sha256.update(text.encode())


def one_run(groups: int) -> dict[str, object]:
    """A rolling restart in this process: its times and the SHA-256 of its event log."""
    from scenarios.accel import running_kind
    from scenarios.eventlog import write_jsonl

    kept: list[Simulation] = []
    result = rolling_restart(groups, keep=kept)
    digest = _Digest()
    write_jsonl(kept[0].events, digest)  # type: ignore[arg-type]
    return {
        "build": running_kind(),
        "wall_s": result.wall_s,
        "cpu_s": result.cpu_s,
        "events": result.events,
        "settled": bool(result.settled),
        "log_sha256": digest.sha256.hexdigest(),
    }


def _run_in_process(groups: int, pure: bool) -> dict[str, object]:
    """``one_run`` in a fresh interpreter, pure (``force_pure``) or with the compiled build."""
    code = (
        ("from scenarios.accel import force_pure; force_pure(); " if pure else "")
        + "import json; from bench.simulation import one_run; "
        + f"print(json.dumps(one_run({groups})))"
    )
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([root, os.environ.get("PYTHONPATH", "")]))
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=root, env=env, capture_output=True, text=True, check=False
    )
    if done.returncode != 0:
        raise RuntimeError(f"bench subprocess failed:\n{done.stderr[-3000:]}")
    result: dict[str, object] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def compare_accel(groups: int, pairs: int = 3) -> int:
    """Pure against compiled, same run, alternating order; the ratio of each pair and their
    median. Exit status 1 if a log differs or a run did not settle."""
    from scenarios.accel import build_kind, describe

    if build_kind() != "compiled":
        print(f"compare-accel: no complete compiled build ({describe()}); run make accel first")
        return 1
    print(f"rolling restart, {groups} groups x 10 members: pure vs compiled, {pairs} pairs")
    ratios: list[float] = []
    digests: set[object] = set()
    status = 0
    for i in range(pairs):
        order = (True, False) if i % 2 == 0 else (False, True)
        runs = {pure: _run_in_process(groups, pure) for pure in order}
        pure_run, compiled_run = runs[True], runs[False]
        if compiled_run["build"] != "compiled" or pure_run["build"] != "pure":
            raise RuntimeError(f"builds mixed up: {pure_run['build']} / {compiled_run['build']}")
        digests |= {pure_run["log_sha256"], compiled_run["log_sha256"]}
        ratio = float(pure_run["cpu_s"]) / float(compiled_run["cpu_s"])  # type: ignore[arg-type]
        ratios.append(ratio)
        print(
            f"  pair {i + 1}: pure wall {pure_run['wall_s']:.2f} s cpu {pure_run['cpu_s']:.2f} s"
            f" | compiled wall {compiled_run['wall_s']:.2f} s cpu {compiled_run['cpu_s']:.2f} s"
            f" | cpu ratio {ratio:.2f}x",
            flush=True,
        )
        if not (pure_run["settled"] and compiled_run["settled"]):
            status = 1
    ratios.sort()
    identical = len(digests) == 1
    print(
        f"  median cpu ratio {ratios[len(ratios) // 2]:.2f}x (range {ratios[0]:.2f}-"
        f"{ratios[-1]:.2f}); event logs {'byte-identical' if identical else 'DIFFER'}"
        f" ({len(digests)} distinct digest(s))"
    )
    return status if identical else 1


def _profiled(run: Callable[[], Measurement]) -> tuple[Measurement, str]:
    profiler = cProfile.Profile()
    profiler.enable()
    result = run()
    profiler.disable()
    out = io.StringIO()
    pstats.Stats(profiler, stream=out).sort_stats("tottime").print_stats(15)
    return result, out.getvalue()


def main(argv: list[str]) -> int:
    quick = "--quick" in argv
    profile = "--profile" in argv
    if "--compare-accel" in argv:
        return compare_accel(100 if quick else 1_000, pairs=3 if quick else 1)
    from scenarios.accel import build_kind, describe

    print(f"build: {describe()}", flush=True)
    runs: list[Callable[[], Measurement]] = (
        [
            lambda: cold_join(100, 10_000),
            lambda: rolling_restart(100),
            lambda: rolling_restart(100, log_level="warning"),
            lambda: message_floor(52_000),
        ]
        if quick
        else [
            cold_join,
            rolling_restart,
            lambda: rolling_restart(log_level="warning"),
            message_floor,
        ]
    )
    status = 0
    for run in runs:
        if profile:
            result, report = _profiled(run)
        else:
            result, report = run(), ""
        if result.name.startswith("floor"):
            verdict = "a lower bound on the rolling restart, which sends as many requests"
        elif quick:
            verdict = f"quick size; the {GOAL_S:.0f} s goal is for the full size"
        else:
            verdict = "ok" if result.wall_s < GOAL_S else f"over the {GOAL_S:.0f} s goal"
        print(
            f"{result.name}\n"
            f"  wall {result.wall_s:.2f} s ({verdict}; set-up {result.setup_s:.2f} s), "
            + (f"cpu {result.cpu_s:.2f} s, " if result.cpu_s else "")
            + f"{result.events:,} events = {result.events_per_s:,.0f} events/s, "
            f"{result.log_events:,} log events, {result.simulated_ms / 1000:.1f} s simulated"
            + (
                ""
                if result.name.startswith("floor")
                else (
                    f", {result.rebalances:,} rebalances" if result.rebalances is not None else ""
                )
                + f", settled={result.settled}"
            ),
            flush=True,
        )
        if report:
            print(report)
        if not result.settled:
            status = 1
    if build_kind() == "compiled" and not profile:  # the same-run ratio, whenever it can be had
        status |= compare_accel(100 if quick else 1_000, pairs=3 if quick else 1)
    return status


if __name__ == "__main__":
    import sys

    raise SystemExit(main(sys.argv[1:]))
