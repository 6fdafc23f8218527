"""Where the kernel or filesystem has no OFD locks, a Python writer never shares
a lane with a JVM writer: it refuses to open, naming the missing lock support,
and changes nothing (journal/record_lock.py).

The missing support is forced for real processes: a small preload library
answers ``fcntl(F_OFD_*)`` with ``EINVAL`` as such kernels do, every other
call reaching the C library; the JVM writer runs unchanged beside them."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
import textwrap

import pytest

from sparkjournal import Journal

from test_jvm_format_agreement import jvm  # noqa: F401  (fixture)
from test_jvm_writer_lock import OPTIONS, ended, java_tool, written_lane

NO_OFD_LOCKS = r"""
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>

/* Kernels before 3.15 (and some filesystems) answer every F_OFD_* with EINVAL. */
static int answer(const char *name, int fd, int cmd, void *arg) {
    if (cmd == F_OFD_GETLK || cmd == F_OFD_SETLK || cmd == F_OFD_SETLKW) {
        errno = EINVAL;
        return -1;
    }
    int (*real)(int, int, ...) = (int (*)(int, int, ...)) dlsym(RTLD_NEXT, name);
    return real(fd, cmd, arg);
}

int fcntl(int fd, int cmd, ...) {
    va_list ap; va_start(ap, cmd); void *arg = va_arg(ap, void *); va_end(ap);
    return answer("fcntl", fd, cmd, arg);
}

int fcntl64(int fd, int cmd, ...) {
    va_list ap; va_start(ap, cmd); void *arg = va_arg(ap, void *); va_end(ap);
    return answer("fcntl64", fd, cmd, arg);
}
"""

OPEN_LANE = textwrap.dedent("""
    import sys
    from sparkjournal import Journal, LockSupportError
    from sparkjournal.spark.stream_reader import _writer_alive
    try:
        Journal.open(sys.argv[1], **eval(sys.argv[2])).close()
        print("opened")
    except LockSupportError as refused:
        print("refused:", refused)
    print("writer may be alive:", _writer_alive(sys.argv[1]))
""")


@pytest.fixture(scope="module")
def no_ofd_locks(tmp_path_factory) -> str:
    compiler = shutil.which("cc") or shutil.which("gcc")
    if compiler is None:
        pytest.skip("no C compiler to build the preload library that removes OFD locks")
    folder = tmp_path_factory.mktemp("no-ofd")
    source, library = folder / "no_ofd_locks.c", folder / "no_ofd_locks.so"
    source.write_text(NO_OFD_LOCKS)
    subprocess.run([compiler, "-shared", "-fPIC", "-O1", "-o", str(library), str(source), "-ldl"],
                   check=True)
    return str(library)


def open_without_ofd_locks(library: str, lane: str) -> str:
    done = subprocess.run([sys.executable, "-c", OPEN_LANE, lane, repr(OPTIONS)],
                          env=dict(os.environ, LD_PRELOAD=library), capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout


def lane_bytes(lane: str) -> dict:
    out = {}
    for name in sorted(os.listdir(lane)):
        path = os.path.join(lane, name)
        if os.path.isfile(path) and name != "journal.lock":
            with open(path, "rb") as handle:
                out[name] = handle.read()
    return out


def test_without_ofd_locks_a_python_writer_refuses_naming_the_missing_support(no_ofd_locks, tmp_path):
    lane = written_lane(tmp_path)
    before = lane_bytes(lane)
    said = open_without_ofd_locks(no_ofd_locks, lane)
    assert said.startswith("refused:") and "F_OFD_SETLK: EINVAL" in said and "writer='jvm'" in said, said
    assert "writer may be alive: True" in said, "a reader took a lane it cannot probe for free"
    assert lane_bytes(lane) == before
    with Journal.open(lane, **OPTIONS) as journal:      # where OFD locks exist, all is as it was
        assert [record.record_id for record in journal.records()] == [1]


def test_without_ofd_locks_a_jvm_writer_and_a_python_writer_never_share_a_lane(
        jvm, no_ofd_locks, tmp_path):
    lane = written_lane(tmp_path)
    holder, report = java_tool(jvm, lane)
    try:
        assert report == {"held": True}
        before = lane_bytes(lane)
        said = open_without_ofd_locks(no_ofd_locks, lane)
        assert said.startswith("refused:") and "\nopened\n" not in said, said
        assert lane_bytes(lane) == before
    finally:
        ended(holder)
