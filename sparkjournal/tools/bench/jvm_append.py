"""The JVM appender in ``bench journal``: LaneAppender, the default sink's
writer, timed in a child JVM (io.sparkjournal.bench.TimedAppends, in the
connector's jar).

One child per case, started before the case's rounds and warmed by one
untimed loop of the case's own size, so the JVM's start and the JIT's warm-up
are outside every clock. Each round sends it one command; the child opens a
new lane in the benchmark's folder (its first data file pre-created,
zero-filled, at the case's file size, as the Python rows' files are), times
only the durable appends and answers the seconds; the lane is removed after.

Without a jar (no JDK, no pyspark to compile against: ``connector.
jar_unavailable()`` says why) ``missing()`` gives the reason, and the case
reports its JVM row as skipped with it.
"""
from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
import tempfile

from ...errors import SparkJournalError

MAIN = "io.sparkjournal.bench.TimedAppends"
LABEL = "JVM"                # the row's contender name beside ASYNCIO and NIO
END_TIMEOUT_S = 60          # for the child to exit once its stdin ends


def missing() -> str:
    """Why the JVM appender cannot be measured here ("" when it can)."""
    from ...spark import connector, jvm_build
    reason = connector.jar_unavailable()
    if reason:
        return reason
    try:
        jvm_build.java_path()
    except jvm_build.JvmUnavailableError as error:
        return str(error)
    return ""


class TimedAppends:
    """A child JVM timing rounds of ``count`` durable appends of ``body`` into a
    new lane of ``file_size``-byte files in ``directory``; a context manager
    that ends the child."""

    def __init__(self, directory: str, body: bytes, count: int, file_size: int):
        from ...spark import connector, jvm_build
        if any(c in directory for c in "\t\n"):
            raise SparkJournalError(f"the JVM appender's bench folder {directory!r} holds a tab "
                                    f"or a newline, which its commands cannot carry")
        self.directory, self.count, self.file_size = directory, count, file_size
        handle, self.body_path = tempfile.mkstemp(prefix=".sj-bench-body-", dir=directory)
        with os.fdopen(handle, "wb") as out:
            out.write(body)
        self.child = subprocess.Popen([jvm_build.java_path(), "-cp", connector.jar_path(), MAIN],
                                      stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                      text=True, encoding="utf-8")     # its stderr: the bench's
        try:
            self.seconds()                     # the warm-up: JVM start and JIT off the clock
        except BaseException:
            self.close()
            raise

    def seconds(self) -> float:
        """One round: the seconds the child's ``count`` appends took."""
        lane = tempfile.mkdtemp(prefix="lane-jvm-", dir=self.directory)
        try:
            command = "\t".join([lane, self.body_path, str(self.count), str(self.file_size)])
            try:
                self.child.stdin.write(command + "\n")
                self.child.stdin.flush()
                answer = self.child.stdout.readline()
            except BrokenPipeError:          # the child ended: its stderr says why
                answer = ""
            try:
                parsed = json.loads(answer) if answer else {}
            except json.JSONDecodeError:
                parsed = {"error": answer.strip()}
            if "seconds" not in parsed:
                raise SparkJournalError(
                    f"the JVM appender's timed loop ({MAIN}) failed: "
                    f"{parsed.get('error') or 'it ended without an answer (its stderr is above)'}")
            return float(parsed["seconds"])
        finally:
            shutil.rmtree(lane, ignore_errors=True)

    def close(self) -> None:
        """Ends the child (the end of its stdin) and removes the body file."""
        try:
            with contextlib.suppress(BrokenPipeError):
                self.child.stdin.close()
            try:
                self.child.wait(timeout=END_TIMEOUT_S)
            except subprocess.TimeoutExpired:
                self.child.kill()
                self.child.wait()
            self.child.stdout.close()
        finally:
            os.unlink(self.body_path)

    def __enter__(self) -> "TimedAppends":
        return self

    def __exit__(self, *_exc) -> None:
        self.close()
