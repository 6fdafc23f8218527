"""Starting and killing the soak's drivers, and finding their executor JVMs.

Each driver runs in a session (process group) of its own, so one SIGKILL to the
group takes its JVM, the local-cluster executors and their Python workers with it,
as a machine losing the driver would. Output goes to a log file per start.
"""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import time


class Driver:
    """One start of a child driver (``python -m <module> args``)."""

    def __init__(self, module: str, args: list[str], log_path: str, env: dict):
        self.module, self.log_path = module, log_path
        self.log = open(log_path, "ab")
        self.process = subprocess.Popen([sys.executable, "-m", module, *args], env=env,
                                        stdout=self.log, stderr=subprocess.STDOUT,
                                        start_new_session=True)
        self.started = time.monotonic()

    def ready(self) -> bool:
        with open(self.log_path, "rb") as handle:
            return b"READY" in handle.read()

    def alive(self) -> bool:
        return self.process.poll() is None

    def kill(self) -> None:
        """SIGKILL to the driver's whole process group, then reap it."""
        try:
            os.killpg(self.process.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        self.process.wait()
        self.log.close()

    def wait(self, timeout: float) -> int:
        """Waits for a driver that ends by itself; kills it past ``timeout``."""
        try:
            code = self.process.wait(timeout)
        except subprocess.TimeoutExpired:
            self.kill()
            raise TimeoutError(f"{self.module} did not finish within {timeout:.0f} s; "
                               f"its output is in {self.log_path}")
        self.log.close()
        return code

    def tail(self, lines: int = 15) -> str:
        with open(self.log_path, "rb") as handle:
            return b"\n".join(handle.read().splitlines()[-lines:]).decode(errors="replace")


def executor_pids(driver: Driver) -> list[int]:
    """Executor JVMs (CoarseGrainedExecutorBackend) in the driver's process group."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/cmdline", "rb") as handle:
                command = handle.read()
            if b"CoarseGrainedExecutorBackend" in command and os.getpgid(int(entry)) == driver.process.pid:
                found.append(int(entry))
        except (OSError, ProcessLookupError):
            continue
    return sorted(found)


def kill_one_executor(driver: Driver, choose) -> int | None:
    """SIGKILLs one executor JVM of the driver (``choose`` picks from the list);
    None when it has none running (starting, or between restarts)."""
    pids = executor_pids(driver)
    if not pids:
        return None
    pid = choose(pids)
    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        return None
    return pid
