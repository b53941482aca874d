"""coordinator.gc_pause.gc_paused: the collector is off inside the block and restored after."""

from __future__ import annotations

import gc

import pytest

from coordinator.gc_pause import gc_paused


def test_paused_inside_and_enabled_after():
    assert gc.isenabled()
    with gc_paused():
        assert not gc.isenabled()
    assert gc.isenabled()


def test_enabled_again_after_an_error():
    with pytest.raises(ValueError), gc_paused():
        raise ValueError("boom")
    assert gc.isenabled()


def test_a_callers_pause_is_left_alone():
    gc.disable()
    try:
        with gc_paused():
            assert not gc.isenabled()
        assert not gc.isenabled()  # the caller turned it off: it stays off
    finally:
        gc.enable()


def test_nested_pauses_restore_only_at_the_outermost():
    with gc_paused():
        with gc_paused():
            pass
        assert not gc.isenabled()
    assert gc.isenabled()


def test_as_a_decorator_each_call_is_paused():
    seen = []

    @gc_paused()
    def build(fail: bool) -> None:
        seen.append(gc.isenabled())
        if fail:
            raise ValueError("boom")

    build(False)
    with pytest.raises(ValueError):
        build(True)
    build(False)
    assert seen == [False, False, False] and gc.isenabled()
