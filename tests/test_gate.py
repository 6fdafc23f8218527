"""The commit gate's durable mark (journal/gate.py, native/sj_gate.c): a follower
returns once the mark covers its append, and wakes without it when a flush ends
that did not cover it."""
from __future__ import annotations

import threading

import pytest

from sparkjournal.journal import gate as gate_mod

GATES = [pytest.param(gate_mod.PythonGate, id="python"),
         pytest.param(gate_mod.NativeGate, id="native",
                      marks=pytest.mark.skipif(gate_mod._lib is None, reason="C core not built"))]


@pytest.mark.parametrize("make", GATES)
def test_wait_durable_returns_the_mark_once_it_covers_the_append(make):
    gate = make()
    try:
        seen = gate.generation()
        results = []
        waiter = threading.Thread(target=lambda: results.append(gate.wait_durable(5, seen)))
        waiter.start()
        gate.advance(7)
        waiter.join(5)
        assert results == [7]
        assert gate.wait_durable(3, gate.generation()) == 7      # already covered: no wait
        gate.advance(2)                                          # never lowered
        assert gate.wait_durable(7, gate.generation()) == 7
    finally:
        gate.close()


@pytest.mark.parametrize("make", GATES)
def test_a_flush_that_does_not_cover_the_append_wakes_the_follower(make):
    gate = make()
    try:
        seen = gate.generation()
        results = []
        waiter = threading.Thread(target=lambda: results.append(gate.wait_durable(10, seen)))
        waiter.start()
        gate.advance(4)                  # a flush ended below 10: back to the lock, to lead
        waiter.join(5)
        assert results == [4]
    finally:
        gate.close()
