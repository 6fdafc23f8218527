"""Large-record bodies (bodies that do not fit a data file): written once from
the staging buffer (io/direct_write.py) and, for Arrow record batches,
serialized straight into it (large.IpcBody)."""
from __future__ import annotations

import os

import pyarrow as pa
import pytest

from sparkjournal.format.codec import CODEC
from sparkjournal.io import direct_write
from sparkjournal.io.direct_write import Stage, write_new_file
from sparkjournal.journal.batch import ipc_bytes
from sparkjournal.journal.journal import Journal


@pytest.mark.parametrize("size", [4096, 100_000, 3 * 4096 + 7])
def test_new_file_holds_exactly_the_body_and_its_crc(tmp_path, size):
    body = os.urandom(size)
    path = str(tmp_path / "b.body")
    assert write_new_file(path, Stage(), body) == CODEC.crc32c(body)
    with open(path, "rb") as handle:
        assert handle.read() == body


def test_bodies_above_the_stage_limit_go_in_chunks(tmp_path, monkeypatch):
    monkeypatch.setattr(direct_write, "STAGE_MAX", 8192)
    monkeypatch.setattr(direct_write, "CHUNK", 8192)
    body = os.urandom(5 * 8192 + 100)
    path = str(tmp_path / "b.body")
    assert write_new_file(path, Stage(), body) == CODEC.crc32c(body)
    with open(path, "rb") as handle:
        assert handle.read() == body


def test_an_existing_name_is_never_overwritten(tmp_path):
    path = tmp_path / "b.body"
    path.write_bytes(b"keep")
    with pytest.raises(FileExistsError):
        write_new_file(str(path), Stage(), os.urandom(5000))
    assert path.read_bytes() == b"keep"


@pytest.mark.parametrize("backend", ["NIO", "ASYNCIO"])
def test_record_batches_bigger_than_a_data_file_take_the_large_path_and_read_back(tmp_path, backend):
    small = pa.record_batch({"x": pa.array([1, 2, 3])})
    big = pa.record_batch({"s": pa.array([os.urandom(100).hex() for _ in range(2000)])})   # ~400k
    lane = str(tmp_path / "lane")
    with Journal.open(lane, journalType=backend, bufferSize="64k", fileSize="256k") as journal:
        ids = journal.append_batch([small, big, big], sync=True)
    with Journal.open(lane, journalType=backend, bufferSize="64k", fileSize="256k") as journal:
        records = [journal.get(i) for i in ids]
        assert [r.large for r in records] == [False, True, True]
        assert [bytes(r.body) for r in records] == [ipc_bytes(b).to_pybytes() for b in (small, big, big)]
        assert journal.report.orphan_bodies_removed == 0
    assert len(os.listdir(os.path.join(lane, "large"))) == 2
