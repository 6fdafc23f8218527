"""Chooses the I/O backend for a journal folder: ASYNCIO (kernel AIO +
O_DIRECT) where it works, else NIO, and says why in ``factory.reason``.

journalType=AUTO falls back to NIO with exactly one BackendFallbackWarning
naming the cause; journalType=ASYNCIO that cannot work is an error
(NativeUnavailableError without the C core, JournalIOError when O_DIRECT or
kernel AIO fails here); journalType=NIO never probes.
The probe file ``.sj-direct-probe`` is always removed; a crash can leave it
behind, and the next probe truncates and removes it.
"""
from __future__ import annotations

import errno as errno_codes
import mmap
import os
import warnings
from typing import Callable

from ..errors import JournalIOError, NativeUnavailableError
from . import aio
from .nio import NioFactory
from .sequential_file import SequentialFileFactory

PROBE_NAME = ".sj-direct-probe"
Probe = Callable[[], "tuple[bool, str]"]


class BackendFallbackWarning(RuntimeWarning):
    """journalType=AUTO could not use ASYNCIO and is using NIO."""


def probe_o_direct(directory: str, block_size: int) -> tuple[bool, str]:
    """Creates, O_DIRECT-writes one aligned block into, fdatasyncs and deletes a
    probe file in ``directory``. Returns (works, a sentence saying what happened)."""
    path = os.path.join(directory, PROBE_NAME)
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_DIRECT | os.O_CLOEXEC, 0o600)
    except OSError as error:
        _remove(path)
        return False, f"O_DIRECT open is refused in {directory} ({error.strerror})"
    try:
        with mmap.mmap(-1, max(block_size, mmap.PAGESIZE)) as block:   # page-aligned zeros
            os.pwrite(fd, memoryview(block)[:block_size], 0)
        os.fdatasync(fd)
    except OSError as error:
        return False, (f"an O_DIRECT write of {block_size} bytes failed in {directory} "
                       f"({error.strerror})")
    finally:
        os.close(fd)
        _remove(path)
    return True, f"O_DIRECT writes of {block_size}-byte blocks work in {directory}"


def _remove(path: str) -> None:
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass


def choose_factory(directory: str, config, probe: Probe | None = None) -> SequentialFileFactory:
    """The backend for the journal folder ``directory`` under ``config``.
    ``probe`` replaces the O_DIRECT probe (tests force a failure with it)."""
    journal_type = config.journalType
    if journal_type == "NIO":
        return NioFactory(config, "forced by journalType=NIO")
    if aio.lib is None:
        why = "the C core (sparkjournal._sjnative) is not built"
        if journal_type == "ASYNCIO":
            raise NativeUnavailableError(
                f"journalType=ASYNCIO cannot be used: {why}; reinstall sparkjournal where a "
                f"C compiler is available, or use journalType=AUTO or NIO")
        return _fall_back(directory, config, why)
    works, why = (probe or (lambda: probe_o_direct(directory, config.deviceBlockSize)))()
    if works:
        try:
            chosen = ("forced by journalType=ASYNCIO" if journal_type == "ASYNCIO"
                      else "AUTO chose ASYNCIO")
            return aio.AioFactory(config, f"{chosen}: {why}")
        except JournalIOError as error:
            works, why, code = False, f"kernel AIO is unavailable ({error.strerror})", error.errno
    else:
        code = errno_codes.EINVAL
    if journal_type == "ASYNCIO":
        raise JournalIOError(code or errno_codes.EINVAL,
                             f"journalType=ASYNCIO cannot be used in {directory}: {why}; "
                             f"use journalType=AUTO or NIO there")
    return _fall_back(directory, config, why)


def _fall_back(directory: str, config, why: str) -> NioFactory:
    warnings.warn(f"sparkjournal: {directory} uses NIO instead of ASYNCIO because {why}",
                  BackendFallbackWarning, stacklevel=3)
    return NioFactory(config, f"AUTO fell back to NIO: {why}")
