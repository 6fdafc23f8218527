"""An executor loading a lane again reads and checks only the data files that
changed since its last load (jvm/.../journal/SealedScans.java): a sealed file
unchanged since a CRC-checked scan of the whole of it is not scanned again;
the file the writer appends to is never kept, and a file tampered with or
replaced at the same path is scanned again, so what a load sees is always
what is on disk. Loads run in the test SparkSession's JVM (the
connector's classes, through py4j), where kept scans live; the lanes are
checked against the Python loader's view of the same files."""
from __future__ import annotations

import os
import shutil
import time

import pytest

pytest.importorskip("pyspark")

from sparkjournal.journal.journal import Journal  # noqa: E402
from sparkjournal.spark import connector  # noqa: E402

SETTLE = 2.2            # SettledFile.SETTLED_NANOS and a little: files older than that are kept
SMALL = {"fileSize": "64k", "bufferSize": "16k", "minFiles": 2}


@pytest.fixture(scope="module")
def jvm(spark):
    if connector.jar_unavailable():
        pytest.skip(f"no JVM connector here: {connector.jar_unavailable()}")
    from py4j.java_gateway import JavaClass
    if not isinstance(spark._jvm.io.sparkjournal.journal.LaneSnapshot, JavaClass):
        pytest.skip("the test session's JVM has no connector classes")
    return spark._jvm


def _write(lane: str, first: int, count: int, body: bytes = b"x" * 6000) -> None:
    with Journal.open(lane, **SMALL) as journal:
        for record_id in range(first, first + count):
            journal.append_add(record_id, body + record_id.to_bytes(8, "little"), sync=False)
        journal.flush()


def _jvm_load(jvm, lane: str) -> tuple[list[int], int]:
    """(live record ids, files reused) of a load in this JVM."""
    snapshot = jvm.io.sparkjournal.journal.LaneSnapshot.read(jvm.java.io.File(lane).toPath())
    try:
        return (sorted(r.recordId() for r in snapshot.records()),
                snapshot.report().filesReused())
    finally:
        snapshot.close()


def _data_files(lane: str) -> list[str]:
    return sorted(n for n in os.listdir(lane) if n.endswith(".sjd"))


def _python_ids(lane: str) -> list[int]:
    with Journal.read(lane) as snapshot:
        return sorted(r.record_id for r in snapshot.records())


def test_a_lane_loaded_again_reuses_its_settled_files_and_rescans_the_one_appended_to(jvm, tmp_path):
    lane = str(tmp_path / "lane")
    _write(lane, 1, 30)
    ids, reused = _jvm_load(jvm, lane)
    assert ids == _python_ids(lane) == list(range(1, 31)) and reused == 0    # too fresh to keep
    time.sleep(SETTLE)
    assert _jvm_load(jvm, lane) == (list(range(1, 31)), 0)        # scanned now, settled: kept
    ids, reused = _jvm_load(jvm, lane)
    assert ids == list(range(1, 31)) and reused >= 2, "the sealed files, unchanged, are reused"
    assert reused < len(_data_files(lane)), "the file the writer appends to is never kept"
    _write(lane, 31, 5)                                           # appends into the newest file
    ids, after_append = _jvm_load(jvm, lane)
    assert ids == _python_ids(lane) == list(range(1, 36)), "the appended records are seen at once"
    assert 1 <= after_append <= reused, "the files written to are scanned again"


def test_a_file_tampered_with_after_its_scan_was_kept_fails_the_next_load(jvm, tmp_path):
    lane = str(tmp_path / "lane")
    _write(lane, 1, 30)
    time.sleep(SETTLE)
    _jvm_load(jvm, lane)
    assert _jvm_load(jvm, lane)[1] >= 2
    first = _data_files(lane)[0]
    with open(os.path.join(lane, first), "r+b") as handle:          # one byte of a record body
        handle.seek(4096 + 40 + 100)
        byte = handle.read(1)
        handle.seek(4096 + 40 + 100)
        handle.write(bytes([byte[0] ^ 0xFF]))
    with pytest.raises(Exception) as failed:
        _jvm_load(jvm, lane)
    assert "CorruptJournalException" in str(failed.value) and first in str(failed.value)
    assert "crc mismatch" in str(failed.value)


def test_a_lane_replaced_at_the_same_path_is_read_as_it_is_now(jvm, tmp_path):
    lane = str(tmp_path / "lane")
    _write(lane, 1, 30)
    time.sleep(SETTLE)
    _jvm_load(jvm, lane)
    assert _jvm_load(jvm, lane) == (list(range(1, 31)), _jvm_load(jvm, lane)[1])
    shutil.rmtree(lane)
    _write(lane, 101, 30, body=b"y" * 6000)                      # the same file ids and sizes
    time.sleep(SETTLE)
    ids, reused = _jvm_load(jvm, lane)
    assert ids == _python_ids(lane) == list(range(101, 131)) and reused == 0
