"""A maintenance pass runs below the writers' CPU priority, in a thread of its
own (maintenance/low_priority.py), and the caller keeps its priority."""
from __future__ import annotations

import os
import threading

import pytest

from sparkjournal.maintenance.low_priority import LOW_NICE, run_at


def seen() -> tuple[int, int, str]:
    tid = threading.get_native_id()
    return os.sched_getscheduler(0), os.getpriority(os.PRIO_PROCESS, tid), threading.current_thread().name


def test_idle_pass_runs_sched_idle_in_its_own_thread_and_the_caller_keeps_its_priority():
    before = seen()
    policy, nice, name = run_at("IDLE", seen)
    assert policy == os.SCHED_IDLE and nice >= LOW_NICE and name == "sparkjournal-maintenance"
    assert seen() == before


def test_low_pass_runs_at_nice_10_and_normal_in_the_callers_thread():
    policy, nice, _name = run_at("LOW", seen)
    assert policy == os.SCHED_OTHER and nice >= LOW_NICE
    assert run_at("NORMAL", seen) == seen()


def test_a_failing_pass_raises_in_the_caller():
    def fails():
        raise ValueError("the pass failed")
    with pytest.raises(ValueError, match="the pass failed"):
        run_at("IDLE", fails)
