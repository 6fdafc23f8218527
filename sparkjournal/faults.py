"""Named crash points, for the tests that kill a process at an exact step.

A test starts a child process with ``SPARKJOURNAL_CRASH_AT=<name>``; when the
child reaches ``crash_point(name)`` it sends itself SIGKILL, so it stops there
exactly as a killed process would: no cleanup, no ``finally``, no flush of
anything not already handed to the kernel. ``SPARKJOURNAL_CRASH_AT=<name>@<n>``
kills at the n-th time the point is reached (1-based).

Outside such a test the variable is unset and a crash point costs one
environment lookup; nothing else in sparkjournal reads it.
"""
from __future__ import annotations

import os
import signal

CRASH_AT = "SPARKJOURNAL_CRASH_AT"
_reached: dict[str, int] = {}


def crash_point(name: str) -> None:
    wanted = os.environ.get(CRASH_AT)
    if not wanted:
        return
    point, _, nth = wanted.partition("@")
    if point != name:
        return
    _reached[name] = _reached.get(name, 0) + 1
    if _reached[name] >= (int(nth) if nth.isdigit() else 1):
        os.kill(os.getpid(), signal.SIGKILL)
