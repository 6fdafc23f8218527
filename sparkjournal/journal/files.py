"""The writer's data files: which one is written, which are free, making new ones.

Crash behaviour of each step:
* create: zeros + header are written to ``*.tmp``, synced, renamed, and the
  folder synced; a crash leaves a ``.tmp`` that the next writer deletes. After
  a roll empties the free pool, the next file is created so in the background
  (next_file.py), to be taken by the following roll.
* roll into a file: its header is rewritten (new id, the sealed file's end) after
  the sealed file was synced; the first sync in the new file makes the header and
  the first records durable together, so a crash shows either the old header
  (no data here yet) or the new one.
* free: the header is rewritten with a fresh id and synced *before* the file is
  handed out or any file depending on it is freed, so its dead records can never
  look current again (they carry the old id). Deleting or archiving instead
  removes the file from the folder, with the folder synced.
"""
from __future__ import annotations

import dataclasses
import os
import shutil

from ..config import JournalConfig
from ..io.files_io import create_zero_filled, fsync_dir, overwrite_durably
from ..io.modes import make_dirs
from ..format import layout
from .datafile import FileHeader, data_file_name, file_number
from .inside import check_inside
from .next_file import NextFile


@dataclasses.dataclass
class DataFile:
    path: str
    header: FileHeader

    @property
    def file_id(self) -> int:
        return self.header.file_id


class DataFiles:
    def __init__(self, directory: str, config: JournalConfig, files: list, current: DataFile | None,
                 free: list, next_id: int):
        self.directory = directory
        self.config = config
        self.in_use: list[DataFile] = files            # id order; the last is current
        self.free: list[DataFile] = free
        self.current = current
        self.next_id = next_id
        numbers = [file_number(os.path.basename(f.path)) for f in files + free]
        self.next_number = max(numbers, default=0) + 1
        self._next = NextFile()
        # (highest record id, highest tx id) handed out so far; every header
        # written carries it (FORMAT.md, the id watermark). The journal sets it.
        self.watermark = lambda: (0, 0)

    def header(self, file_id: int, prev: DataFile | None = None, prev_end: int = 0,
               file_size: int | None = None) -> FileHeader:
        """A header for a file of ``file_size`` bytes (default: fileSize; a file
        made under another fileSize keeps its own size when reused)."""
        max_record_id, max_tx_id = self.watermark()
        return FileHeader(file_id=file_id, file_size=file_size or self.config.fileSize,
                          block_size=self.config.deviceBlockSize,
                          sync_window=self.config.sync_window,
                          user_version=self.config.userVersion,
                          prev_file_id=prev.file_id if prev else 0,
                          prev_end=prev_end if prev else 0,
                          max_record_id=max_record_id, max_tx_id=max_tx_id)

    def take_id(self) -> int:
        file_id, self.next_id = self.next_id, self.next_id + 1
        return file_id

    def _reserve(self) -> DataFile:
        """A name and an id for a new file (the file itself is not made yet)."""
        path = os.path.join(self.directory, data_file_name(self.next_number))
        self.next_number += 1
        return DataFile(path, self.header(self.take_id()))

    def create(self) -> DataFile:
        """A new zero-filled file, durable under its final name, put in the pool."""
        data_file = self._reserve()
        create_zero_filled(data_file.path, self.config.fileSize, data_file.header.encode())
        self.free.append(data_file)
        return data_file

    def prepare_next(self) -> None:
        """Starts creating the next file in the background if the pool is empty
        and none is being made (called after a roll and its reclaim)."""
        if not self.free and not self._next.pending:
            self._next.start(self._reserve(), self.config.fileSize)

    def close(self) -> None:
        """Waits for a file being created in the background (it stays on disk,
        in the pool of the next writer)."""
        made = self._next.close()
        if made is not None:
            self.free.append(made)

    def ensure_min_files(self) -> None:
        while len(self.in_use) + len(self.free) < self.config.minFiles:
            self.create()

    def roll(self, sealed_end: int) -> tuple[DataFile, bytes]:
        """The next file to write and the header block to write at its offset 0
        (the caller writes it with its first records: one sync covers both)."""
        if not self.free:
            made = self._next.take()
            if made is not None:
                self.free.append(made)
            else:
                self.create()
        data_file = self.free.pop(0)
        sealed = self.current
        data_file.header = self.header(self.take_id(), sealed, sealed_end, data_file.header.file_size)
        self.in_use.append(data_file)
        self.current = data_file
        return data_file, data_file.header.encode()

    def release(self, file_ids: list[int]) -> None:
        """Frees files the reclaimer found dead, oldest first (see module doc)."""
        for file_id in file_ids:
            data_file = next(f for f in self.in_use if f.file_id == file_id)
            self.in_use.remove(data_file)
            if self.config.archive:
                archive = check_inside(self.directory, self.config.archiveDirectory,
                                       "archiveDirectory")
                make_dirs(archive)
                shutil.move(data_file.path, os.path.join(archive, os.path.basename(data_file.path)))
                fsync_dir(self.directory)
            elif self.config.poolFiles < 0 or \
                    len(self.free) + self._next.pending < self.config.poolFiles:
                self.rewrite_header(data_file, self.header(self.take_id(),
                                                           file_size=data_file.header.file_size))
                self.free.append(data_file)
            else:
                os.unlink(data_file.path)
                fsync_dir(self.directory)

    def rewrite_header(self, data_file: DataFile, header: FileHeader) -> None:
        overwrite_durably(data_file.path, 0, header.encode())
        data_file.header = header


def first_write_offset(end_of_data: int, block_size: int) -> int:
    """Where a writer continues a file whose data ends at ``end_of_data``: the
    next block boundary (the rest of that block is padding)."""
    return max(layout.align_up(end_of_data, block_size), layout.FILE_HEADER_SIZE)


def crash_reach(loaded_file, start: int, block_size: int) -> int:
    """Where the bytes a crashed writer may have left torn past a file's end of
    data stop: the header's sync window past that end (no writer of the file
    has more written past its last completed sync, and that sync lies at or
    before the end of data), rounded up to a block, or further where a
    dropped torn tail or the first append lies further; within the file."""
    header = loaded_file.header
    block = max(block_size, header.block_size, 1)
    reach = layout.align_up(loaded_file.end + header.sync_window, block)
    return min(max(reach, loaded_file.torn_end, start), header.file_size)
