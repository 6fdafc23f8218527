"""The benchmark's group-commit floor (native/floors/sj_group_floor.c, extension
sparkjournal.tools.bench._sjfloors) is a baseline the 8-thread ratio is judged
against, so it must really write what it acknowledges and really group commits.

How the floor groups: each caller has one commit in flight at most (commit
returns only once a sync covered it), so no sync covers more commits than there
are threads. A free flusher takes the buffer as soon as anything is in it; the
callers that arrive while it writes and syncs fill the next buffer, and the
callers it releases arrive during the next sync. With one flusher the threads
therefore settle into two cohorts taking turns, about threads / 2 commits per
sync, as long as a sync (a trip to the device) lasts longer than the released
threads take to call again (a memcpy under a mutex each, the GIL released)."""
import errno
import threading

import pytest

from sparkjournal.io.files_io import create_zero_filled

try:
    from sparkjournal.tools.bench._sjfloors import ffi, lib
except ImportError as error:  # pragma: no cover - depends on the build
    pytest.skip(f"the benchmarks' C floors are not built ({error}); run "
                f"`python native/build_native.py`", allow_module_level=True)


def commit_from_threads(path, threads: int, per_thread: int, flushers: int, record_of):
    """Every thread commits record_of(thread, n) for n < per_thread through one
    floor on ``path``; returns [(sequence, record)] acknowledged, the syncs the
    floor counted, and the file's bytes after close."""
    create_zero_filled(str(path), 4 << 20, b"")
    error = ffi.new("int *")
    floor = lib.sj_group_floor_open(str(path).encode(), 64 << 10, 512, flushers, error)
    assert floor != ffi.NULL and error[0] == 0
    acknowledged, lock = [], threading.Lock()
    start = threading.Barrier(threads)

    def committer(thread: int) -> None:
        records = [record_of(thread, n) for n in range(per_thread)]
        start.wait()
        for record in records:
            seq = lib.sj_group_floor_commit(floor, record, len(record))
            with lock:
                acknowledged.append((seq, record))
    workers = [threading.Thread(target=committer, args=(t,)) for t in range(threads)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    syncs = lib.sj_group_floor_syncs(floor)
    lib.sj_group_floor_close(floor)
    return acknowledged, syncs, path.read_bytes()


def test_group_floor_file_holds_every_acknowledged_commit(tmp_path):
    acknowledged, syncs, written = commit_from_threads(
        tmp_path / "floor.dat", threads=8, per_thread=200, flushers=2,
        record_of=lambda thread, n: f"<thread {thread} commit {n:03d}>".encode())
    assert sorted(seq for seq, _ in acknowledged) == list(range(1, 1601))
    assert all(record in written for _, record in acknowledged)
    # the report: no sync acknowledged more commits than threads were waiting
    assert 1600 // 8 <= syncs < 1600


def test_group_floor_groups_the_commits_of_many_threads_into_few_syncs(tmp_path):
    threads, per_thread = 16, 100
    commits = threads * per_thread
    acknowledged, syncs, _ = commit_from_threads(
        tmp_path / "floor.dat", threads, per_thread, flushers=1,
        record_of=lambda thread, n: b"x" * 100)
    assert sorted(seq for seq, _ in acknowledged) == list(range(1, commits + 1))
    # Two cohorts of 16 / 2 = 8 commits per sync when grouping works (module
    # docstring); one sync per commit when it does not. At least 4 per sync on
    # average is half the grouping the floor's design gives, and 4x none.
    assert commits // threads <= syncs <= commits // 4, f"{syncs} syncs for {commits} commits"


def test_group_floor_refuses_a_missing_or_short_file(tmp_path):
    error = ffi.new("int *")
    missing = lib.sj_group_floor_open(str(tmp_path / "missing").encode(), 64 << 10, 512, 1, error)
    assert missing == ffi.NULL and error[0] == errno.ENOENT
    short = tmp_path / "short.dat"
    create_zero_filled(str(short), 32 << 10, b"")
    refused = lib.sj_group_floor_open(str(short).encode(), 64 << 10, 512, 1, error)
    assert refused == ffi.NULL and error[0] == errno.EINVAL
