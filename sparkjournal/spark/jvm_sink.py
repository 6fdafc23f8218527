"""Phase one of the foreachBatch sink in JVM tasks (``JournalSink(path,
writer="jvm")``): one Spark job whose tasks write their partitions with no
Python worker (io.sparkjournal.spark.JvmSinkWrite over events.TaskWrite), the
Arrow transfer into a Python worker being most of what a Python sink task
costs. The driver's half (committer.py) is the same for both writers: the
messages the JVM tasks return are ``TaskMessage``s field for field.

The plan crosses py4j as JSON, its journal options RESOLVED
(``dataclasses.asdict`` of the JournalConfig: the JVM never parses "64k" again).
The JVM enforces every journal option Python's tasks do (size limits with
addressFullPolicy, large records, dirMode and fileMode: they travel with the
resolved options) and refuses, before any task runs, column types it cannot
convert; those batches need writer="python". Every failure - a refused option, a task
that failed its last attempt, the connector missing from the session - is a
``JvmSinkError`` whose message is the JVM's, without its stack frames (a
query stopped meanwhile must still be told from a failure by Spark's regular
expression over the error's text, small_batch.py).
"""
from __future__ import annotations

import dataclasses
import json
import logging
import re

from .connector import executors_can_load, jar_path, jar_unavailable
from .lane_writer import SinkTaskError, WritePlan
from .schema import session_timezone
from .task_message import TaskMessage

log = logging.getLogger("sparkjournal.sink")
INTERRUPTS = ("java.lang.InterruptedException", "java.io.InterruptedIOException",
              "java.nio.channels.ClosedByInterruptException")      # StreamExecution's
_FRAME = re.compile(r"^\s+(at |\.\.\. \d+ more)")


class JvmSinkError(SinkTaskError):
    """The JVM writer could not write a batch (or refused it): the JVM's
    message, no py4j stack."""


def jvm_write(df, plan: WritePlan, config, timezone: str | None = None) -> list[TaskMessage]:
    """The batch ``df`` written by JVM tasks under ``plan`` (query and batch
    known) and the journal's ``config`` (a JournalConfig, resolved once by the
    sink's committer); the commit messages of the tasks that wrote, for the
    committer."""
    writer = jvm_writer(df)
    if timezone is None:
        timezone = session_timezone(df)
    text = json.dumps({
        "path": plan.path,
        "options": dataclasses.asdict(config),
        "log_uri": plan.log_uri, "log_id": plan.log_id,
        "query": plan.query, "batch": plan.batch, "timezone": timezone})
    from py4j.protocol import Py4JJavaError
    from pyspark.errors.exceptions.captured import CapturedException
    try:
        found = writer.run(df._jdf, text)
    except (Py4JJavaError, CapturedException) as error:
        # pyspark turns the Py4JJavaErrors it knows into CapturedExceptions (_origin)
        java = getattr(error, "java_exception", None) or getattr(error, "_origin", None)
        said = _causes(java) if java is not None else str(error)
        log.debug("the JVM sink writer failed", exc_info=True)
        interrupt = next((name for name in INTERRUPTS if name in said), None)
        if interrupt is not None:
            # query.stop() interrupted the job's wait: Spark tells a stop from a failure by
            # its regular expression over this error's text (StreamExecution.PROXY_ERROR),
            # which this short line matches, as the Python writer's py4j error does.
            raise JvmSinkError(f"batch {plan.batch} of query {plan.query}: the query was stopped "
                               f"while JVM tasks wrote (py4j.protocol.Py4JJavaError: An error "
                               f"occurred while calling JvmSinkWrite.run: {interrupt})") from None
        if "ClassNotFoundException: io.sparkjournal." in said:
            said += (f"; the executors lack sparkjournal's JVM connector, which the driver has: "
                     f"ship it with spark-submit --jars \"$(sparkjournal jar)\" (here "
                     f"{_jar_for_message()}), or set writer='python'")
        raise JvmSinkError(f"batch {plan.batch} of query {plan.query} into {plan.path} "
                           f"(writer='jvm'): {said}") from None
    return [TaskMessage.from_json(json.loads(message)) for message in found]


def writer_choice(df, setting: str, config) -> tuple[bool, str]:
    """(whether JVM tasks write the query's batches, the start line's words saying
    which writer and why) for the sink option ``writer``: "PYTHON"; "JVM", which
    fails (JvmSinkError) where the connector is missing; "AUTO": the JVM where
    the session has the connector and the JVM writer would write ``df``'s
    columns under ``config`` (its refusals, asked of the JVM itself), else
    Python."""
    if setting == "PYTHON":
        return False, "writer=python (as set: executor tasks write in Python workers)"
    if setting == "JVM":
        jvm_writer(df)
        return True, "writer=jvm (as set: executor tasks write in the JVM, no Python worker)"
    try:
        found = jvm_writer(df)
    except JvmSinkError as missing:
        return False, f"writer=python (auto: {missing})"
    reach, why_not = executors_can_load(df.sparkSession)
    if not reach:
        return False, f"writer=python (auto: {why_not})"
    from py4j.protocol import Py4JError
    try:
        refused = found.refusal(df._jdf, json.dumps(dataclasses.asdict(config)),
                                session_timezone(df))
    except Py4JError as error:         # a session still running an older connector jar
        return False, (f"writer=python (auto: the session's JVM connector cannot say whether it "
                       f"would write this query, {type(error).__name__}: "
                       f"{str(error).splitlines()[0][:200]}; a new session loads the current one)")
    if refused is not None:
        return False, f"writer=python (auto: the JVM task writer would refuse this query: {refused})"
    return True, "writer=jvm (auto: executor tasks write in the JVM, no Python worker)"


def jvm_writer(df):
    """The session JVM's JvmSinkWrite class; JvmSinkError saying what is
    needed where the connector is not on the session's classpath (the sink
    attaches it at its query's first batch, before it asks: connector.attach)."""
    try:
        jvm = df.sparkSession._jvm
    except Exception:                  # noqa: BLE001 - no py4j gateway: Connect
        jvm = None
    found = _writer_in(jvm) if jvm is not None else None
    if found is None:
        why = jar_unavailable() or ("SPARKJOURNAL_JVM=off, or the session's JVM did not take "
                                    "the jar (the log says why), or the session has no JVM "
                                    "of its own (Spark Connect)")
        raise JvmSinkError(f"JournalSink writer='jvm' needs sparkjournal's JVM connector in the "
                           f"session (spark-submit --jars \"$(sparkjournal jar)\", "
                           f"sparkjournal.configure(SparkSession.builder), or added to the "
                           f"running session at its first sparkjournal call): {why}; or use "
                           f"writer='python'")
    return found


def _jar_for_message() -> str:
    try:
        return jar_path()
    except Exception:                  # noqa: BLE001 - only a message
        return "no jar on this machine"


_found: list = []                      # [(the JVM view, its JvmSinkWrite class)]


def _writer_in(jvm):
    """The JvmSinkWrite class, looked up until found once per JVM (a running
    session takes the jar at most once, attach)."""
    from py4j.java_gateway import JavaClass
    for view, found in _found:
        if view is jvm:
            return found
    found = jvm.io.sparkjournal.spark.JvmSinkWrite
    if not isinstance(found, JavaClass):
        return None
    _found.append((jvm, found))
    return found


def _causes(java_exception) -> str:
    """'Class: message; caused by Class: message' down the cause chain, each
    message without the stack frames Spark copies into a job's failure."""
    said = []
    while java_exception is not None and len(said) < 8:
        text = java_exception.toString().split("\nDriver stacktrace:", 1)[0]
        lines = [line for line in text.splitlines() if not _FRAME.match(line)]
        said.append("\n".join(lines).strip())
        java_exception = java_exception.getCause()
    return "; caused by ".join(said)
