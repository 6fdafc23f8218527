"""Both I/O backends on real files in tmp_path: what they write is read back,
the backend choice and its reason are reported, and failures say where."""
from __future__ import annotations

import ctypes
import errno
import mmap
import os
import warnings

import pytest

from sparkjournal.config import JournalConfig
from sparkjournal.errors import JournalIOError
from sparkjournal.io import aio
from sparkjournal.io.files_io import aligned_buffer, create_zero_filled, write_file_atomically
from sparkjournal.io.probe import PROBE_NAME, BackendFallbackWarning, choose_factory
from sparkjournal.io.sequential_file import io_error

needs_native = pytest.mark.skipif(
    aio.lib is None, reason="C core not built: run `python native/build_native.py`")
BACKENDS = [pytest.param("NIO", id="nio"), pytest.param("ASYNCIO", id="aio", marks=needs_native)]
FILE_SIZE = 1 << 20
HEADER = b"H" * 4096


@pytest.fixture
def data_file(tmp_path):
    path = str(tmp_path / "data-1.sjd")
    create_zero_filled(path, FILE_SIZE, HEADER)
    return path


def factory_for(tmp_path, journal_type, **options):
    return choose_factory(str(tmp_path), JournalConfig(journalType=journal_type, **options))


@pytest.mark.parametrize("journal_type", BACKENDS)
def test_each_backend_writes_syncs_and_reads_back(tmp_path, data_file, journal_type):
    with factory_for(tmp_path, journal_type, bufferSize=8192) as factory:
        assert factory.kind == journal_type
        block = os.urandom(4096)
        big = bytearray(os.urandom(3 * 8192 + 512))          # more than one AIO buffer
        with factory.open(data_file) as journal_file:
            journal_file.write(block, 4096)
            journal_file.write(big, 16384)
            journal_file.sync()
            assert journal_file.read(4096, 4096) == block
            assert journal_file.read(16384, len(big)) == big
            assert journal_file.read(FILE_SIZE - 8, 100) == bytes(8)   # short at end of file
    with open(data_file, "rb") as handle:
        content = handle.read()
    assert content[:4096] == HEADER and content[4096:8192] == block
    assert len(content) == FILE_SIZE


@pytest.mark.parametrize("journal_type", BACKENDS)
def test_write_durably_orders_after_queued_writes_and_takes_any_buffer(tmp_path, data_file,
                                                                       journal_type):
    with factory_for(tmp_path, journal_type, bufferSize=8192) as factory:
        queued, aligned = os.urandom(8192), aligned_buffer(8192)
        aligned[:] = os.urandom(8192)
        unaligned = memoryview(bytearray(b"?" + os.urandom(4096)))[1:]   # an odd address
        with factory.open(data_file) as journal_file:
            journal_file.write(queued, 4096)                 # queued first (AIO)
            journal_file.write_durably(memoryview(aligned)[:8192], 12288)
            journal_file.write_durably(unaligned, 20480)     # falls back to write + sync
            assert journal_file.read(4096, 8192) == queued
            assert journal_file.read(12288, 8192) == aligned[:8192]
            assert journal_file.read(20480, 4096) == unaligned
            with pytest.raises(JournalIOError) as failure:
                journal_file.write_durably(memoryview(aligned)[:512], 1 << 50)
            assert f"{data_file} at offset {1 << 50}" in str(failure.value)


@pytest.mark.parametrize("journal_type", BACKENDS)
def test_unaligned_write_is_rejected_with_clear_error(tmp_path, data_file, journal_type):
    with factory_for(tmp_path, journal_type) as factory, factory.open(data_file) as journal_file:
        with pytest.raises(ValueError, match=r"unaligned write .* 100 bytes at offset 4096"):
            journal_file.write(b"x" * 100, 4096)
        with pytest.raises(ValueError, match=r"512 bytes at offset 4100"):
            journal_file.write(b"x" * 512, 4100)
        journal_file.sync()
        assert journal_file.read(4096, 512) == bytes(512)


@pytest.mark.parametrize("journal_type", BACKENDS)
def test_failed_write_reports_path_offset_and_errno(tmp_path, data_file, journal_type):
    too_far = 1 << 50                                    # beyond ext4's largest file
    with factory_for(tmp_path, journal_type) as factory, factory.open(data_file) as journal_file:
        with pytest.raises(JournalIOError) as failure:
            journal_file.write(b"\0" * 512, too_far)
            journal_file.sync()                          # AIO reports it on completion
        assert failure.value.errno in (errno.EFBIG, errno.EINVAL)
        assert f"{data_file} at offset {too_far} failed" in str(failure.value)
        if journal_type == "ASYNCIO":   # the AIO writer stays failed: nothing later is reported as written
            with pytest.raises(JournalIOError) as again:
                journal_file.write(b"\0" * 512, 4096)
            assert again.value.errno == failure.value.errno


def test_disk_full_is_said_plainly():
    error = io_error(errno.ENOSPC, "writing 4096 bytes to", "/j/data-1.sjd", 8192)
    assert error.errno == errno.ENOSPC
    assert "/j/data-1.sjd at offset 8192 failed: the disk is full (ENOSPC)" in str(error)


def test_forced_nio_says_so(tmp_path):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        factory = factory_for(tmp_path, "NIO")
    assert (factory.kind, factory.reason) == ("NIO", "forced by journalType=NIO")
    assert factory.alignment == 512


@needs_native
def test_auto_picks_asyncio_on_this_disk_with_a_reason(tmp_path):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        factory = factory_for(tmp_path, "AUTO")
    with factory:
        assert factory.kind == "ASYNCIO"
        assert factory.reason.startswith("AUTO chose ASYNCIO: O_DIRECT writes of 512-byte")
    assert os.listdir(tmp_path) == []                     # the probe file is gone


def test_failing_probe_falls_back_to_nio_with_one_warning(tmp_path):
    config = JournalConfig(journalType="AUTO")
    with pytest.warns(BackendFallbackWarning) as caught:
        factory = choose_factory(str(tmp_path), config,
                                 probe=lambda: (False, "O_DIRECT open is refused (test)"))
    assert len(caught) == 1
    assert str(tmp_path) in str(caught[0].message)
    assert "O_DIRECT open is refused (test)" in str(caught[0].message)
    assert factory.kind == "NIO"
    assert factory.reason == "AUTO fell back to NIO: O_DIRECT open is refused (test)"


@needs_native
def test_forced_asyncio_with_failing_probe_raises(tmp_path):
    config = JournalConfig(journalType="ASYNCIO")
    with pytest.raises(JournalIOError, match="journalType=ASYNCIO cannot be used .* refused"):
        choose_factory(str(tmp_path), config, probe=lambda: (False, "O_DIRECT is refused"))


@needs_native
def test_aio_keeps_at_most_maxIO_writes_in_flight(tmp_path, data_file):
    with factory_for(tmp_path, "ASYNCIO", maxIO=3, bufferSize=4096) as factory:
        with factory.open(data_file) as journal_file:
            for offset in range(4096, FILE_SIZE, 4096):
                journal_file.write(bytes([offset // 4096 % 251]) * 4096, offset)
            journal_file.sync()
            assert 1 <= factory.max_in_flight_seen <= 3
            assert journal_file.read(4096 * 7, 4096) == bytes([7]) * 4096
            assert journal_file.read(FILE_SIZE - 4096, 4096) == bytes([255 % 251]) * 4096


@needs_native
def test_closed_factory_refuses_to_open_files(tmp_path, data_file):
    factory = factory_for(tmp_path, "ASYNCIO")
    factory.close()
    factory.close()                                        # closing twice is harmless
    with pytest.raises(JournalIOError, match="closed"):
        factory.open(data_file)


def test_zero_filled_file_has_header_then_zeros_and_no_tmp(tmp_path):
    path = str(tmp_path / "data-7.sjd")
    create_zero_filled(path, 3 << 20, HEADER)
    with open(path, "rb") as handle:
        content = handle.read()
    assert len(content) == 3 << 20
    assert content[:4096] == HEADER and content[4096:] == bytes((3 << 20) - 4096)
    assert sorted(os.listdir(tmp_path)) == ["data-7.sjd"]


@pytest.mark.parametrize("size", [5 << 20, (2 << 20) + 4096, 3 * 4096 + 100],
                         ids=["whole_chunks_and_a_part", "a_chunk_and_a_block", "buffered"])
def test_zero_filled_files_one_after_another_each_hold_only_their_header(tmp_path, size):
    """Every file is written from one zero chunk shared by the process: a header
    must never land in it, or the next file would carry it past its own."""
    headers = [b"A" * 100, b"B" * 4096, b""]
    for number, header in enumerate(headers):
        path = str(tmp_path / f"data-{number}.sjd")
        create_zero_filled(path, size, header)
        with open(path, "rb") as handle:
            content = handle.read()
        assert len(content) == size
        assert content[:len(header)] == header
        assert content[len(header):] == bytes(size - len(header)), f"file {number}: not zeros"
    assert sorted(os.listdir(tmp_path)) == ["data-0.sjd", "data-1.sjd", "data-2.sjd"]


def test_large_aligned_buffer_is_whole_huge_pages_of_page_aligned_zeros():
    small, large = aligned_buffer(100 << 10), aligned_buffer(3 << 20)
    assert len(small) == 100 << 10
    assert len(large) == 4 << 20                       # rounded up to whole 2 MiB pages
    for buffer in (small, large):
        view = memoryview(buffer)
        assert ctypes.addressof(ctypes.c_char.from_buffer(buffer)) % mmap.PAGESIZE == 0
        assert view.tobytes() == bytes(len(buffer))
        view.release()
        buffer.close()


def test_write_file_atomically_replaces_the_whole_file(tmp_path):
    path = str(tmp_path / "journal.meta")
    write_file_atomically(path, b"first version, long")
    write_file_atomically(path, b"second")
    with open(path, "rb") as handle:
        assert handle.read() == b"second"
    assert os.listdir(tmp_path) == ["journal.meta"]
    assert not os.path.exists(str(tmp_path / PROBE_NAME))


@pytest.mark.parametrize("journal_type", BACKENDS)
def test_record_written_alone_lands_whole_with_the_header_sealed_during_the_write(
        tmp_path, data_file, journal_type):
    with factory_for(tmp_path, journal_type, bufferSize=8192) as factory:
        record = aligned_buffer(600 * 1024)                   # several of the backend's writes
        record[512:] = os.urandom(len(record) - 512)          # the body, in place
        sealed = []

        def seal():                                           # the header: first block only
            record[:512] = b"S" * 512
            sealed.append(True)

        with factory.open(data_file) as journal_file:
            journal_file.write(os.urandom(4096), 4096)        # queued first: written before it
            journal_file.write_alone(memoryview(record), 8192, seal)
            assert sealed == [True]
            assert journal_file.read(8192, len(record)) == record[:]


@pytest.mark.parametrize("journal_type", BACKENDS)
def test_record_alone_whose_seal_fails_leaves_its_first_block_unwritten(tmp_path, data_file,
                                                                        journal_type):
    with factory_for(tmp_path, journal_type, bufferSize=8192) as factory:
        record = aligned_buffer(64 * 1024)
        record[:] = b"B" * len(record)

        def failing_seal():
            raise RuntimeError("the header could not be encoded")

        with factory.open(data_file) as journal_file:
            with pytest.raises(RuntimeError, match="could not be encoded"):
                journal_file.write_alone(memoryview(record), 8192, failing_seal)
            assert journal_file.read(8192, 512) == bytes(512)   # no header: no record there
            journal_file.write_durably(memoryview(record)[:4096], 8192)   # still usable
            assert journal_file.read(8192, 4096) == record[:4096]


@pytest.mark.parametrize("journal_type", BACKENDS)
def test_record_alone_failed_write_reports_path_offset_and_errno(tmp_path, data_file,
                                                                 journal_type):
    too_far = 1 << 50                                    # beyond ext4's largest file
    with factory_for(tmp_path, journal_type, bufferSize=8192) as factory, \
            factory.open(data_file) as journal_file:
        record = aligned_buffer(64 * 1024)
        with pytest.raises(JournalIOError) as failure:
            journal_file.write_alone(memoryview(record), too_far, lambda: None)
        assert failure.value.errno in (errno.EFBIG, errno.EINVAL)
        assert f"at offset {too_far}" in str(failure.value) and data_file in str(failure.value)
        assert "earlier" not in str(failure.value)               # its own write, not another's
        if journal_type == "ASYNCIO":   # the writer stays failed: nothing later is reported as written
            with pytest.raises(JournalIOError):
                journal_file.write(b"\0" * 512, 4096)
