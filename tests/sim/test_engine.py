"""The discrete-event engine: ordering, timers (replace / cancel), run(until) and peek."""

from __future__ import annotations

from scenarios.engine import Engine


def test_events_run_in_time_order_then_insertion_order() -> None:
    ran: list[str] = []
    engine = Engine()
    engine.schedule(20, ran.append, "late")
    engine.schedule(10, ran.append, "first-at-10")
    engine.schedule(10, ran.append, "second-at-10")
    engine.schedule(5, ran.append, "early")
    engine.run()
    assert ran == ["early", "first-at-10", "second-at-10", "late"]
    assert engine.now == 20
    assert engine.events_run == 4


def test_setting_a_timer_again_replaces_it() -> None:
    fired: list[tuple[str, str, int]] = []
    engine = Engine()
    engine._timer_handler = lambda owner, key: fired.append((owner, key, engine.now))
    engine.set_timer("C1", "heartbeat", 100)
    engine.set_timer("C1", "heartbeat", 300)  # replaces the 100 ms one
    engine.set_timer("C2", "heartbeat", 200)  # same key, other owner: independent
    engine.run()
    assert fired == [("C2", "heartbeat", 200), ("C1", "heartbeat", 300)]


def test_cancelled_timer_never_fires_and_unknown_cancel_is_a_noop() -> None:
    fired: list[str] = []
    engine = Engine(lambda owner, key: fired.append(key))
    engine.set_timer("C1", "session", 50)
    engine.set_timer("C1", "poll", 60)
    engine.cancel_timer("C1", "session")
    engine.cancel_timer("C1", "never-set")
    assert engine.peek() == 60  # the stale 50 ms entry is skipped
    assert engine.step() is True
    assert fired == ["poll"]
    assert engine.step() is False


def test_a_timer_handler_may_rearm_its_own_key() -> None:
    fired: list[int] = []
    engine = Engine()

    def handler(owner: str, key: str) -> None:
        fired.append(engine.now)
        if len(fired) < 3:
            engine.set_timer(owner, key, engine.now + 10)

    engine._timer_handler = handler
    engine.set_timer("C1", "tick", 10)
    engine.run()
    assert fired == [10, 20, 30]


def test_run_until_stops_at_the_horizon_and_moves_the_clock() -> None:
    ran: list[int] = []
    engine = Engine()
    for t in (5, 15, 25):
        engine.schedule(t, ran.append, t)
    assert engine.run(until=15) == 2
    assert ran == [5, 15]
    assert engine.now == 15
    assert engine.run(until=20) == 0
    assert engine.now == 20  # time passes even when nothing happens
    assert engine.peek() == 25


def test_the_past_is_clamped_to_now() -> None:
    ran: list[int] = []
    engine = Engine(start_ms=100)
    engine.schedule(10, lambda _: ran.append(engine.now))
    engine.set_timer("C1", "late", 50)
    engine._timer_handler = lambda owner, key: ran.append(engine.now)
    engine.run()
    assert ran == [100, 100]


def test_cancel_owner_timers_forgets_only_that_owner() -> None:
    fired: list[str] = []
    engine = Engine(lambda owner, key: fired.append(f"{owner}:{key}"))
    engine.set_timer("C1", "a", 10)
    engine.set_timer("C1", "b", 20)
    engine.set_timer("C2", "a", 30)
    assert engine.timer_keys("C1") == ["a", "b"]
    engine.cancel_owner_timers("C1")
    assert not engine.has_timer("C1", "a")
    engine.run()
    assert fired == ["C2:a"]


def test_pending_lists_live_timers_in_arm_order_with_their_deadlines() -> None:
    """What a test harness reads instead of keeping its own table: a re-armed key takes a new
    place and deadline, a cancelled or fired one is gone, other owners are not shown."""
    engine = Engine(lambda owner, key: None)
    engine.set_timer("C1", "a", 30)
    engine.set_timer("C1", "b", 10)
    engine.set_timer("C2", "c", 5)
    engine.set_timer("C1", "a", 40)
    assert engine.pending("C1") == {"b": 10, "a": 40}
    assert list(engine.pending("C1")) == ["b", "a"]
    engine.cancel_timer("C1", "b")
    engine.set_timer("C1", "d", 20)
    engine.run(until=25)
    assert engine.pending("C1") == {"a": 40}
    assert engine.pending("C2") == {}


def test_max_events_bounds_a_run() -> None:
    engine = Engine()
    for t in range(10):
        engine.schedule(t, lambda _: None)
    assert engine.run(max_events=3) == 3
    assert engine.now == 2


def test_run_until_a_predicate_judges_whole_instants() -> None:
    """SimPy's run(until=...) with a condition: asked before the first event and each time the
    clock is about to move on, never between two events of one instant."""
    log: list[int] = []
    engine = Engine()
    for t in (10, 10, 20, 30):
        engine.schedule(t, log.append, t)
    asked: list[tuple[int, int]] = []

    def two_ran() -> bool:
        asked.append((engine.now, len(log)))
        return len(log) >= 2

    assert engine.run(until=two_ran) is True
    assert engine.now == 10 and log == [10, 10]
    assert asked == [(0, 0), (10, 2)]  # not after the first of the two events at 10 ms
    assert engine.run(until=two_ran) is True  # holds already: nothing runs
    assert log == [10, 10]


def test_run_until_a_predicate_stops_at_the_deadline() -> None:
    log: list[int] = []
    engine = Engine()
    for t in (10, 50, 100):
        engine.schedule(t, log.append, t)
    assert engine.run(until=lambda: len(log) == 3, deadline=60) is False
    assert engine.now == 60 and log == [10, 50]  # the clock reads the deadline
    assert engine.run(until=lambda: False, deadline=200) is False
    assert engine.now == 200 and log == [10, 50, 100]
    # with nothing left and no deadline, a predicate that cannot become true just answers
    assert engine.run(until=lambda: False) is False and engine.now == 200


def test_after_event_runs_after_every_event_of_either_kind_of_run() -> None:
    seen: list[tuple[int, int]] = []
    engine = Engine(lambda owner, key: None)
    engine.schedule(5, lambda _: None)
    engine.set_timer("C1", "t", 5)
    engine.schedule(7, lambda _: None)
    assert (
        engine.run(until=6, after_event=lambda: seen.append((engine.now, engine.events_run))) == 2
    )
    assert seen == [(5, 1), (5, 2)] and engine.now == 6
    engine.run(until=lambda: engine.now >= 7, after_event=lambda: seen.append((engine.now, 0)))
    assert seen[-1] == (7, 0) and engine.now == 7
