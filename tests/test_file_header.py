"""The data file header, version 2: the id watermark and the sealed end
(FORMAT.md, "Data file"); version 1 headers are still read."""
from __future__ import annotations

import os

from sparkjournal import Journal
from sparkjournal.format import layout
from sparkjournal.format.codec import CODEC
from sparkjournal.journal.datafile import decode_header, read_header


def test_record_and_tx_ids_are_never_handed_out_again_after_their_files_are_reclaimed(lane, options):
    with Journal.open(lane, **options) as journal:
        for record_id in range(1, 41):
            journal.append_add(journal.next_record_id(), b"x" * 3000)
        tx = journal.next_tx_id()
        journal.append_add_tx(tx, journal.next_record_id(), b"in a tx")
        journal.rollback(tx)
        for record_id in range(1, 41):
            journal.append_delete(record_id)
    for _ in range(3):          # each open reclaims what the last one left dead
        with Journal.open(lane, **options) as journal:
            files = [f.file_id for f in journal.files]
            assert journal.max_record_id == 41
            assert journal.next_record_id() == 42
            assert journal.next_tx_id() == tx + 1
    assert len(journal) == 0 and len(files) == 1, "the records' files were not reclaimed"


def test_a_version_1_header_is_read_with_no_watermark():
    fixed = layout.FILE_HEADER_V1.pack(layout.FILE_MAGIC, 1, 7, 42, 1 << 20, 512, 0, 8192,
                                       123, 41, 5000)
    header = decode_header(fixed + CODEC.crc32c(fixed).to_bytes(4, "little"), "old.sjd")
    assert (header.format_version, header.file_id, header.user_version) == (1, 42, 7)
    assert (header.prev_file_id, header.prev_end, header.sync_window) == (41, 5000, 8192)
    assert (header.max_record_id, header.max_tx_id, header.sealed_end) == (0, 0, 0)


def test_every_header_written_is_version_2_and_carries_the_ids_handed_out(lane, options):
    with Journal.open(lane, **options) as journal:
        for _ in range(60):
            journal.append_add(journal.next_record_id(), b"y" * 3000)
        newest = journal.files[-1]
        top = journal.max_record_id
    header = read_header(newest.path)
    assert header.format_version == 2
    assert 0 < header.max_record_id <= top
    for name in os.listdir(lane):
        if name.endswith(".sjd"):
            assert read_header(os.path.join(lane, name)).format_version == 2
