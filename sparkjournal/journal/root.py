"""A journal root: the lanes of one node, ``lane-000``, ``lane-001``, ...

Spark runs several Python worker processes per node and each lane has one
writer, so a writer takes the first lane whose lock is free, creating the next
lane when all are taken (``mkdir`` is atomic: two processes racing for the same
new lane cannot both get it). Readers read every lane without locks.

A lane the writer cannot append to - damaged (CorruptJournalError), or written
by a newer sparkjournal (FormatVersionError) - is released and skipped for the
next, with a WARNING on the "sparkjournal.task" logger naming the lane and why
(the JVM writer, events/RootLanes.java, does the same): one bad lane never
blocks a node's writes. It stays as it is, and its readers fail on it (under
skipCorrupt they leave its damaged files out) until it is repaired. What is
wrong with the root rather than one lane still fails: a lane that is a link, a
lane folder leading out (PathOutsideError), any other error.
"""
from __future__ import annotations

import logging
import os

from ..config import JournalConfig, load_config
from ..errors import CorruptJournalError, FormatVersionError, SparkJournalError
from .journal import Journal, JournalSnapshot
from .lanes import lane_name, list_lanes
from ..io.modes import make_dir, make_dirs, use_config_modes
from .inside import refuse_link
from .lock import LaneLock

log = logging.getLogger("sparkjournal.task")


class JournalRoot:
    def __init__(self, path: str, config: JournalConfig | None = None, **options):
        self.path = path
        self.config = config.with_options(options) if config else load_config(options)
        use_config_modes(path, self.config)

    def lanes(self) -> list[str]:
        """Lane folders, in lane order."""
        return list_lanes(self.path)

    def open_writer(self, max_lanes: int = 1024) -> Journal:
        """Opens the first free lane this writer can append to (or a new one) for
        writing; a damaged lane or one of a newer format is skipped (module doc)."""
        if not os.path.isdir(self.path):
            if not self.config.createDirs:
                raise SparkJournalError(f"journal root {self.path} does not exist and createDirs "
                                        f"is false; create it or set createDirs=true")
            make_dirs(self.path)
        for number in range(max_lanes):
            lane = os.path.join(self.path, lane_name(number))
            refuse_link(lane, "lane", self.path)
            try:
                make_dir(lane)
            except FileExistsError:
                pass
            lock = LaneLock(lane)
            if not lock.try_acquire():
                continue
            try:
                return Journal(lane, self.config, lock)
            except (CorruptJournalError, FormatVersionError) as unusable:
                lock.release()
                log.warning("lane %s skipped, this writer cannot append to it: %s", lane, unusable)
            except BaseException:
                lock.release()
                raise
        raise SparkJournalError(f"all {max_lanes} lanes of {self.path} have a writer (or are "
                                f"damaged: see the warnings); close some writers or use another "
                                f"root")

    def read_lanes(self) -> dict[str, JournalSnapshot]:
        """A lock-free snapshot of every lane."""
        return {os.path.basename(lane): Journal.read(lane, self.config) for lane in self.lanes()}
