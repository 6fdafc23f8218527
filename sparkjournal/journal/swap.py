"""The compaction swap: the control file, and the set of files a lane holds.

A compaction (maintenance/compactor.py) writes the live records of a lane's
older files into new files ``<name>.cmp``, each taking the name and the file id
of one of the old files (the lowest ids, so the log order holds; FORMAT.md,
"Compaction"). Then it writes the control file ``compact.ctl`` - the commit
point - and swaps: renames each ``.cmp`` over its name, removes the other old
files, records the generation in ``files.gen`` and removes the control file.

Crash behaviour: before the control file is durable, the old files stand and
``.cmp`` files are debris (the next compaction removes them). Once it is
durable, the compaction has happened: every load sees the new files whatever
step the swap reached (``lane_view``), and whoever holds the file-set lock
exclusively next finishes the swap (``finish_swap``, idempotent). A damaged
control file is never guessed around: the load fails naming it.

The control file is JSON with a CRC-32C of its canonical form; nothing read
here is evaluated or unpickled.
"""
from __future__ import annotations

import dataclasses
import json
import os
import re
import shutil

from ..errors import CorruptJournalError, FormatVersionError
from ..faults import crash_point
from ..format import strict_json as sj
from ..format.codec import CODEC
from ..format.constants import CONTROL_FILE as FIELDS
from ..io.files_io import fsync_dir, write_file_atomically
from ..io.modes import make_dirs
from .datafile import COMPACTING_SUFFIX, is_data_file_name
from .fileset import GENERATION_FILE

CONTROL_FILE = "compact.ctl"
CONTROL_FORMAT = 1
_DATA_FILE_NAME = re.compile(r"data-[A-Za-z0-9.-]*\.sjd")


@dataclasses.dataclass(frozen=True)
class ControlFile:
    generation: int
    old: tuple          # ((name, file id), ...): the files the compaction replaces
    new: tuple          # ((name, file id), ...): written as <name>.cmp; each name is an old one

    def body(self) -> dict:
        """The fields the CRC covers (all but ``crc32c``)."""
        return {FIELDS.FORMAT: CONTROL_FORMAT, FIELDS.GENERATION: self.generation,
                FIELDS.OLD: [list(pair) for pair in self.old],
                FIELDS.NEW: [list(pair) for pair in self.new]}

    def encode(self) -> bytes:
        body = self.body()
        return json.dumps({**body, FIELDS.CRC32C: CODEC.crc32c(sj.canonical(body))},
                          sort_keys=True).encode()

    @classmethod
    def decode(cls, raw: bytes, path: str) -> "ControlFile":
        """The control file in ``raw``: FormatVersionError for a newer format
        (before anything else, its CRC included), CorruptJournalError for any
        other file no compactor writes. The CRC is checked over the canonical
        form of the fields read, after their types (JSON.md), never over the
        file's bytes."""
        try:
            data = sj.top_object(sj.loads(raw, "the file"), "the file")
            found = sj.newer_format(data, CONTROL_FORMAT)
            if found is not None:
                raise FormatVersionError(path, found, CONTROL_FORMAT, "compaction control file")
            sj.format_of(data, CONTROL_FORMAT)
            control = cls(sj.whole(data, FIELDS.GENERATION), _files(data, FIELDS.OLD),
                          _files(data, FIELDS.NEW))
            crc = sj.integer(data, FIELDS.CRC32C, 0, 0xFFFFFFFF)
            if CODEC.crc32c(sj.canonical(control.body())) != crc:
                raise sj.JsonRefused("checksum mismatch")
            old_names = {name for name, _id in control.old}
            if not {name for name, _id in control.new} <= old_names:
                raise sj.JsonRefused("it names new files that are not among the old ones")
            return control
        except sj.JsonRefused as error:
            raise CorruptJournalError(path, 0, f"compaction control file is damaged ({error}). "
                                      f"A compaction had committed its swap here, so neither "
                                      f"the old nor the new files can be trusted to be whole "
                                      f"on their own: restore the lane from a backup, or "
                                      f"inspect it with `sparkjournal inspect`") from error


def _files(data: dict, name: str) -> tuple:
    """``old`` or ``new``: [data file name, file id] pairs; a name is a data
    file's (ASCII letters, digits, '-' and '.': never a path)."""
    pairs = sj.array(data, name)
    for pair in pairs:
        if not (type(pair) is list and len(pair) == 2 and type(pair[0]) is str and
                _DATA_FILE_NAME.fullmatch(pair[0]) and sj.is_integer(pair[1])):
            raise sj.JsonRefused(f"{name} must list [data file name, file id] pairs, not "
                                 f"{sj.show(pair)}")
    return tuple((file_name, file_id) for file_name, file_id in pairs)


def read_control(directory: str) -> ControlFile | None:
    path = os.path.join(directory, CONTROL_FILE)
    try:
        with open(path, "rb") as handle:
            raw = handle.read()
    except FileNotFoundError:
        return None
    return ControlFile.decode(raw, path)


def write_control(directory: str, control: ControlFile) -> None:
    """The commit point of a compaction: durable once this returns."""
    write_file_atomically(os.path.join(directory, CONTROL_FILE), control.encode())


def lane_view(directory: str) -> tuple[list[str], ControlFile | None]:
    """(the paths of the lane's data files, a swap not finished yet). With a
    control file present the compaction counts as done: its old files are
    left out and each new file is read where it is now (``.cmp`` until renamed)."""
    names = os.listdir(directory)
    control = read_control(directory) if CONTROL_FILE in names else None
    present = set(names)
    if control is None:
        return [os.path.join(directory, n) for n in sorted(names) if is_data_file_name(n)], None
    new_names = {name for name, _id in control.new}
    old_names = {name for name, _id in control.old}
    paths = [os.path.join(directory, n) for n in sorted(present)
             if is_data_file_name(n) and n not in old_names]
    for name in sorted(new_names):
        if name + COMPACTING_SUFFIX in present:
            paths.append(os.path.join(directory, name + COMPACTING_SUFFIX))
        elif name in present:
            paths.append(os.path.join(directory, name))
        else:
            raise CorruptJournalError(os.path.join(directory, name), 0,
                                      f"the compaction recorded in {CONTROL_FILE} wrote this file, "
                                      f"but neither it nor {name}{COMPACTING_SUFFIX} exists")
    return paths, control


def finish_swap(directory: str, control: ControlFile, archive_dir: str | None = None) -> None:
    """Completes a committed swap; safe to repeat after a crash at any step. Call
    with the file-set lock held exclusively (readers must not be listing)."""
    reused = {name for name, _id in control.new}
    for name, _id in control.new:
        staged = os.path.join(directory, name + COMPACTING_SUFFIX)
        if os.path.exists(staged):
            target = os.path.join(directory, name)
            if archive_dir is not None and os.path.exists(target):
                _archive(target, archive_dir)
            os.replace(staged, target)
            crash_point("swap:renamed")
    fsync_dir(directory)
    for name, _id in control.old:
        path = os.path.join(directory, name)
        if name in reused or not os.path.exists(path):
            continue
        if archive_dir is not None:
            _archive(path, archive_dir)
        else:
            os.unlink(path)
        crash_point("swap:removed")
    fsync_dir(directory)
    write_file_atomically(os.path.join(directory, GENERATION_FILE), str(control.generation).encode())
    crash_point("swap:generation-written")
    os.unlink(os.path.join(directory, CONTROL_FILE))
    fsync_dir(directory)


def _archive(path: str, archive_dir: str) -> None:
    make_dirs(archive_dir)
    target = os.path.join(archive_dir, os.path.basename(path))
    while os.path.exists(target):
        target += ".1"
    shutil.move(path, target)
    fsync_dir(archive_dir)
