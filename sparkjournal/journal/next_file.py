"""The next data file, created in the background (Artemis's files repository opens
the next file off the append path): zero-filling fileSize bytes (10 MiB by
default) takes milliseconds that an append rolling into a new file would
otherwise pay inline, holding every other appender up.

Contract: ``start`` is called with the writer's lock held, right after a roll
left the free pool empty; it reserves the file's name and id there and starts
one thread that creates the file exactly as DataFiles.create does
(files_io.create_zero_filled). ``take`` (lock held, at the next roll) waits for
that thread and returns the file, or None if creation failed (the caller then
creates one inline and meets the error itself, e.g. a full disk). ``close``
waits for the thread: a writer never releases its lane with a file half made.

Crash behaviour: until the rename the file exists only as ``data-<n>.sjd.tmp``,
which no load reads and the next writer's load deletes; after the rename and
the folder sync it is a complete zero-filled file with a valid header and no
records, which a load puts in the free pool. The header's id is only a unique
name for it: a roll rewrites the header with a fresh id before any record is
written into the file.
"""
from __future__ import annotations

import logging
import threading

from ..io.files_io import create_zero_filled

log = logging.getLogger("sparkjournal.journal")


class NextFile:
    def __init__(self) -> None:
        self._thread: threading.Thread | None = None
        self._made = None                 # the DataFile once created
        self._error: BaseException | None = None

    @property
    def pending(self) -> bool:
        return self._thread is not None

    def start(self, data_file, size: int) -> None:
        """Creates ``data_file`` (path and header reserved by the caller) in a thread."""
        if self._thread is not None:
            raise RuntimeError("a next data file is already being created")
        self._made, self._error = None, None

        def create() -> None:
            try:
                create_zero_filled(data_file.path, size, data_file.header.encode())
                self._made = data_file
            except BaseException as error:  # noqa: BLE001 - reported at take(), retried inline
                self._error = error

        self._thread = threading.Thread(target=create, name="sparkjournal-next-file", daemon=True)
        self._thread.start()

    def take(self):
        """The created file (waiting for it), or None if none was started or it failed."""
        if self._thread is None:
            return None
        self._thread.join()
        self._thread = None
        made, error, self._made, self._error = self._made, self._error, None, None
        if error is not None:
            log.warning("creating the next data file in the background failed (%s); "
                        "creating it at the roll instead", error)
        return made

    def close(self):
        """Waits for a creation under way; returns the file if one was made."""
        return self.take()
