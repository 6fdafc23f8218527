"""The commit gate: appending threads sleep here until a flush finishes.

Contract: ``generation()`` counts finished flushes; ``wait(seen)`` returns once
it differs from ``seen``; ``advance(durable=0)`` ends a flush, raises the durable
mark to ``durable`` (the last append its sync covered; never lowered) and wakes
every waiter; ``wait_durable(seq, seen)`` returns the mark once it reaches
``seq`` or the generation differs from ``seen``. A caller reads the generation
while holding the appender's lock and waits after releasing it, so a flush
finishing in between is never missed.

The C gate (native/sj_gate.c) waits with the GIL released, so waking many
threads costs no Python work; without the C core a Condition does the same.
"""
from __future__ import annotations

import threading

try:
    from sparkjournal._sjnative import lib as _lib
except ImportError:  # no C core: the pure-Python gate below
    _lib = None


class NativeGate:
    def __init__(self):
        self._gate = _lib.sj_gate_create()
        if not self._gate:
            raise MemoryError("could not allocate the commit gate")

    def generation(self) -> int:
        return _lib.sj_gate_generation(self._gate)

    def advance(self, durable: int = 0) -> None:
        _lib.sj_gate_advance_durable(self._gate, durable)

    def wait(self, seen: int) -> int:
        return _lib.sj_gate_wait(self._gate, seen)

    def wait_durable(self, seq: int, seen: int) -> int:
        return _lib.sj_gate_wait_durable(self._gate, seq, seen)

    def close(self) -> None:
        gate, self._gate = self._gate, None
        if gate:
            _lib.sj_gate_destroy(gate)


class PythonGate:
    def __init__(self):
        self._cond = threading.Condition()
        self._generation = 0
        self._durable = 0

    def generation(self) -> int:
        return self._generation

    def advance(self, durable: int = 0) -> None:
        with self._cond:
            self._durable = max(self._durable, durable)
            self._generation += 1
            self._cond.notify_all()

    def wait_durable(self, seq: int, seen: int) -> int:
        with self._cond:
            while self._durable < seq and self._generation == seen:
                self._cond.wait()
            return self._durable

    def wait(self, seen: int) -> int:
        with self._cond:
            while self._generation == seen:
                self._cond.wait()
            return self._generation

    def close(self) -> None:
        pass


def new_gate():
    return NativeGate() if _lib is not None and hasattr(_lib, "sj_gate_wait_durable") else PythonGate()
