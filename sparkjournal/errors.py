"""Every error sparkjournal raises on purpose. Each message says what was wrong
and what to do about it."""
from __future__ import annotations


class SparkJournalError(Exception):
    """Base of all sparkjournal errors."""


class ConfigError(SparkJournalError, ValueError):
    """An option has a value sparkjournal does not accept."""

    def __init__(self, key: str, value: object, accepted: str):
        self.key, self.value, self.accepted = key, value, accepted
        super().__init__(f"option {key}={value!r} is not valid: {key} accepts {accepted}")


class CorruptJournalError(SparkJournalError):
    """Damage before the tail of a journal: never skipped silently."""

    def __init__(self, path: str, offset: int, detail: str):
        self.path, self.offset, self.detail = path, offset, detail
        super().__init__(
            f"journal file {path} is corrupt at offset {offset}: {detail}. Nothing was "
            f"changed. Run `sparkjournal verify` to see the extent of the damage; open "
            f"the journal with recover=true to move the damaged file to attic/ and get "
            f"a report of exactly what was lost.")


class FormatVersionError(SparkJournalError):
    """Something on disk written by a newer sparkjournal: refused, never misread."""

    def __init__(self, path: str, found: object, supported: int, what: str = "file"):
        self.path, self.found, self.supported, self.what = path, found, supported, what
        super().__init__(
            f"{what} {path} was written by a newer sparkjournal (format {found}, this "
            f"reads up to {supported}): upgrade sparkjournal to read it. Nothing was "
            f"changed")


class UsageError(SparkJournalError):
    """A bad argument to a tool (a PATH that is no journal, a folder that does
    not exist, an option the tool cannot use): the command line prints the
    message and exits with status 2."""


class JournalLockedError(SparkJournalError):
    """Another process is the writer of this journal."""


class LockSupportError(SparkJournalError):
    """The kernel or filesystem refuses the lock that keeps Python and JVM
    writers of a lane apart: nothing was opened, nothing written."""


class JournalClosedError(SparkJournalError):
    """An operation on a journal that was closed or failed."""


class JournalIOError(SparkJournalError, OSError):
    """A write or sync failed; the journal stops accepting appends.

    Everything acknowledged before the failure is durable; the failed appends
    and everything after them were not acknowledged."""


class TransactionError(SparkJournalError):
    """Misuse of a transaction: unknown, already ended, or prepared twice."""


class NativeUnavailableError(SparkJournalError):
    """The C core is needed (journalType=ASYNCIO) but was not built."""


class JournalFullError(SparkJournalError):
    """A write into a full lane under addressFullPolicy=FAIL: nothing was written."""

    def __init__(self, where: str, full_message: str, lane: str, size: int, limit: int):
        self.where, self.lane, self.size, self.limit = where, lane, size, limit
        super().__init__(f"{where}: nothing written, addressFullPolicy is FAIL and the lane is "
                         f"full: {full_message}")
