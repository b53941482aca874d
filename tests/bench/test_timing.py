"""bench.timing: the median batch, so one slow batch does not decide a same-run comparison."""

from __future__ import annotations

import time

import pytest

from bench import timing


def _burn(seconds: float) -> None:
    end = time.process_time() + seconds
    while time.process_time() < end:
        pass


def test_one_slow_batch_does_not_decide_the_number() -> None:
    calls = [0]

    def call() -> None:
        calls[0] += 1
        _burn(0.3 if calls[0] == 1 else 0.0002)  # the first batch meets one 300 ms stall

    ms = timing.median_batch_ms(call, seconds=0.05, min_calls=3)
    assert calls[0] >= timing.BATCHES * 3
    # the stalled batch's mean is about 100 ms; the median is a quiet batch's, about 0.2 ms
    assert 0.15 < ms < 5


def test_every_batch_makes_min_calls_and_lasts_the_minimum() -> None:
    calls = [0]

    def call() -> None:
        calls[0] += 1
        time.sleep(0.001)  # far from MAX_CALLS per batch

    start = time.perf_counter()
    timing.median_batch_ms(call, seconds=1e-9, min_calls=4)
    # a budget far below the minimum still gives every batch MIN_BATCH_SECONDS of calls
    assert time.perf_counter() - start >= timing.BATCHES * timing.MIN_BATCH_SECONDS
    assert calls[0] > timing.BATCHES * 4


def test_slow_calls_still_make_min_calls_per_batch() -> None:
    calls = [0]

    def call() -> None:
        calls[0] += 1
        time.sleep(timing.MIN_BATCH_SECONDS)  # each call outlasts a batch's minimum

    timing.median_batch_ms(call, seconds=1e-9, min_calls=2)
    assert calls[0] == timing.BATCHES * 2


@pytest.mark.parametrize(("seconds", "min_calls"), [(0.0, 3), (-1.0, 3), (0.1, 0)])
def test_bad_budget_is_refused(seconds: float, min_calls: int) -> None:
    with pytest.raises(ValueError, match="need seconds > 0"):
        timing.median_batch_ms(lambda: None, seconds, min_calls)


def test_a_ratio_against_a_zero_reading_is_a_dash() -> None:
    assert timing.ratio_text(1.5, 0.5) == "3.00"
    assert timing.ratio_text(1.5, 0.0) == "-"
