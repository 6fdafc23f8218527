"""The benchmark's group-commit floor (native/sj_group_floor.c) is a baseline the
8-thread ratio is judged against, so it must really write what it acknowledges."""
import threading

import pytest

from sparkjournal.io.files_io import create_zero_filled

from conftest import NATIVE_BUILT, NATIVE_MISSING_REASON

pytestmark = pytest.mark.skipif(not NATIVE_BUILT, reason=NATIVE_MISSING_REASON)


def test_group_floor_file_holds_every_acknowledged_commit(tmp_path):
    from sparkjournal._sjnative import ffi, lib
    path = tmp_path / "floor.dat"
    create_zero_filled(str(path), 4 << 20, b"")
    error = ffi.new("int *")
    floor = lib.sj_group_floor_open(str(path).encode(), 64 << 10, 512, 2, error)
    assert floor != ffi.NULL and error[0] == 0
    acknowledged, lock = [], threading.Lock()

    def committer(thread: int) -> None:
        for n in range(200):
            record = f"<thread {thread} commit {n:03d}>".encode()
            seq = lib.sj_group_floor_commit(floor, record, len(record))
            with lock:
                acknowledged.append((seq, record))
    workers = [threading.Thread(target=committer, args=(t,)) for t in range(8)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    syncs = lib.sj_group_floor_syncs(floor)
    lib.sj_group_floor_close(floor)
    written = path.read_bytes()
    assert sorted(seq for seq, _ in acknowledged) == list(range(1, 1601))
    assert all(record in written for _, record in acknowledged)
    assert 1 <= syncs <= 1600               # the report: commits were grouped, never lost


def test_group_floor_refuses_a_missing_or_short_file(tmp_path):
    import errno
    from sparkjournal._sjnative import ffi, lib
    error = ffi.new("int *")
    missing = lib.sj_group_floor_open(str(tmp_path / "missing").encode(), 64 << 10, 512, 1, error)
    assert missing == ffi.NULL and error[0] == errno.ENOENT
    short = tmp_path / "short.dat"
    create_zero_filled(str(short), 32 << 10, b"")
    refused = lib.sj_group_floor_open(str(short).encode(), 64 << 10, 512, 1, error)
    assert refused == ffi.NULL and error[0] == errno.EINVAL
