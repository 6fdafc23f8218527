"""The Java side of the jvm_* fuzz targets: one long-lived JvmFuzz process
(jvm/src/test/java/io/sparkjournal/fuzz/JvmFuzz.java) per target process, a
case a line, and the comparison of its answer with Python's.

run.py passes ``SJ_FUZZ_JAVA`` (the java command) and ``SJ_FUZZ_CLASSPATH``
(tests/jvm_tools.tools_classpath()); the JVM runs with ``-Xmx256m`` so an
unbounded allocation is an OutOfMemoryError, which JvmFuzz answers as a
finding, as any Throwable that is not an IOException (every reader error of
the project extends IOException) and a case over its time limit.

Kinds compared: "ok" (with a digest of what was read: an unordered list of
strings both sides build alike) and "refused". The spec (FORMAT.md,
COMMIT_LOG.md, JSON.md, EVENTS.md) gives every input one answer, so a case
where one side accepts what the other refuses, or both accept and read
different things, is a finding as a Java crash is: an AssertionError here
(libFuzzer writes the input as crash-*), saying what each side answered.
"""
from __future__ import annotations

import atexit
import json
import os
import subprocess

JAVA_MAIN = "io.sparkjournal.fuzz.JvmFuzz"
CASE_SECONDS = 10


class JvmFuzz:
    def __init__(self):
        java = os.environ.get("SJ_FUZZ_JAVA")
        classpath = os.environ.get("SJ_FUZZ_CLASSPATH")
        if not java or not classpath:
            raise RuntimeError("SJ_FUZZ_JAVA and SJ_FUZZ_CLASSPATH are not set (tests/fuzz/run.py sets them)")
        self.process = subprocess.Popen(
            [java, "-Xmx256m", "-Xss1m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1",
             "-cp", classpath, JAVA_MAIN, str(CASE_SECONDS)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, encoding="utf-8", bufsize=1)
        atexit.register(self.close)

    def ask(self, *fields: str) -> dict:
        assert all("\t" not in f and "\n" not in f for f in fields), fields
        self.process.stdin.write("\t".join(fields) + "\n")
        self.process.stdin.flush()
        line = self.process.stdout.readline()
        if not line:
            raise AssertionError(f"JvmFuzz ended (exit {self.process.wait()}) on case {fields}")
        return json.loads(line)

    def close(self) -> None:
        if self.process.poll() is None:
            self.process.stdin.close()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()


_DRIVER = None


def driver() -> JvmFuzz:
    global _DRIVER
    if _DRIVER is None:
        _DRIVER = JvmFuzz()
    return _DRIVER


def compare(target: str, python: dict, java: dict) -> None:
    """Raises AssertionError on a finding of Java's or a disagreement."""
    if java["kind"] == "finding":
        raise AssertionError(f"JVM reader finding ({target}): {java['error']}\n{java.get('trace', '')}")
    assert java["kind"] in ("ok", "refused"), java
    if java["kind"] == python["kind"] and (
            java["kind"] == "refused" or sorted(java["digest"]) == sorted(python["digest"])):
        return
    raise AssertionError(f"the readers disagree ({target}): the spec gives one answer\n"
                         f"Python: {_short(python)}\nJava:   {_short(java)}")


def _short(said: dict) -> dict:
    out = dict(said)
    if "digest" in out:
        out["digest"] = sorted(out["digest"])[:8] + (["..."] if len(out["digest"]) > 8 else [])
    if "message" in out:
        out["message"] = str(out["message"])[:300]
    return out


def python_outcome(digest, allowed: tuple) -> dict:
    """Python's side of a case: {"kind": "ok", "digest": digest()}, or its
    refusal where ``digest`` raised one of the ``allowed`` errors."""
    try:
        return {"kind": "ok", "digest": digest()}
    except allowed as error:
        return refused(error)


def refused(error: BaseException) -> dict:
    return {"kind": "refused", "error": type(error).__name__, "message": str(error)}


def nullable(value) -> str:
    return "null" if value is None else str(value)
