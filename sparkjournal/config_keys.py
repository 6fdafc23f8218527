"""What each journal option accepts and means: the one text behind a bad value's
ConfigError (config.py) and the options table of the README
(``sparkjournal options --markdown``). conf/sparkjournal.conf states the same
defaults with longer comments; tests/test_options.py keeps all three agreeing
(every key has both texts, every default shown parses back to the default).
"""
from __future__ import annotations

SIZE = "a size such as 10m, 490k, 1g or a number of bytes"
BOOL = "true or false"

# key -> (what it accepts, what it does)
KEYS: dict[str, tuple[str, str]] = {
    "createDirs": (BOOL, "create the journal folder and its lanes when missing"),
    "journalType": ("AUTO (AIO where O_DIRECT works, else NIO), ASYNCIO (forced) or NIO (forced)",
                    "the I/O backend; AUTO probes the journal folder and falls back to NIO "
                    "with one warning"),
    "syncTransactional": (BOOL, "wait for the disk before acknowledging a commit"),
    "syncNonTransactional": (BOOL, "wait for the disk before acknowledging a "
                             "non-transactional append"),
    "datasync": (BOOL, "false never fdatasyncs: fast, not durable against a machine crash"),
    "fileSize": ("a multiple of 4k from 8k up to 4g - 4k, such as 10m",
                 "size of every data file (pre-created, zero-filled)"),
    "minFiles": ("a whole number from 1 up", "data files created when a journal starts"),
    "poolFiles": ("a whole number from -1 up (-1: keep all)",
                  "freed data files kept for reuse; 0 deletes every freed file"),
    "maxIO": ("a whole number from 1 to 4096", "AIO writes in flight at once"),
    "bufferTimeout": ("a time such as 500us, 3ms, 1s, or nanoseconds",
                      "longest an unsynced append waits in the buffer before it is written "
                      "(`sparkjournal perf-journal DIR` measures what the disk wants)"),
    "bufferSize": ("a size from 4k, a multiple of deviceBlockSize and below fileSize - 4k, "
                   "such as 490k", "the write buffer; a larger record is written alone"),
    "deviceBlockSize": ("512, 1k, 2k or 4k (a power of two the device accepts)",
                        "write alignment for O_DIRECT: the device's logical block size"),
    "compactMinFiles": ("a whole number from 0 up",
                        "compaction runs once a lane has this many sealed files ..."),
    "compactPercentage": ("a whole number from 0 to 100",
                          "... and less than this percentage of their bytes is live"),
    "checksum": (BOOL, "verify every record's CRC-32C on load and read"),
    "checkForCorruptFiles": (BOOL, "check every file header and large body at open, not "
                             "just what is replayed"),
    "archive": (BOOL, "move reclaimed and compacted-away files to archiveDirectory instead "
                "of reusing or deleting them"),
    "archiveDirectory": ("a folder name inside the journal folder, without '..' (such as "
                         "archive)", "where archive=true moves files (never outside the lane)"),
    "largeRecordSize": (SIZE + " (0: only records that do not fit a data file)",
                        "bodies above this are stored as large records, in files of their own"),
    "userVersion": ("a whole number from 0 to 4294967295",
                    "the application's version, carried in every file header"),
    "lockWait": (BOOL, "a second writer waits for the lane lock instead of failing at once"),
    "recover": (BOOL, "open a damaged journal by moving damaged files to attic/ and "
                "reporting exactly what was lost"),
    "retention": ("none, an age (7d, 12h, 90min, 30s, 2w) or a size per lane (500g, 10m, 1t)",
                  "how long events stay (maintenance deletes older ones)"),
    "maxSizeBytes": (SIZE + ", or -1 for no limit", "a lane's data files past this are full"),
    "maxRootSizeBytes": (SIZE + ", or -1 for no limit",
                         "all lanes of a node root together past this are full"),
    "addressFullPolicy": ("PAGE (move the oldest events to page files), BLOCK (writers wait), "
                          "DROP (new events are dropped and counted) or FAIL (the write fails)",
                          "what a full lane does"),
    "pageSizeBytes": ("a size of at least 4k, such as 10m", "about this much per page file"),
    "laneIdleTimeout": ("a time such as 500us, 3ms, 1s, or nanoseconds",
                        "a Spark worker closes a lane writer no task used for this long"),
    "dirMode": ("octal permission bits such as 0750, with at least 700 for the owner and no "
                "write for others (o-w)",
                "permission bits of every folder created in a journal (the umask still applies)"),
    "fileMode": ("octal permission bits such as 0640, with at least 600 for the owner and no "
                 "write for others (o-w)",
                 "permission bits of every file created in a journal (the umask still applies)"),
}

SIZE_KEYS = ("fileSize", "bufferSize", "deviceBlockSize", "largeRecordSize", "maxSizeBytes",
             "maxRootSizeBytes", "pageSizeBytes")
TIME_KEYS = ("bufferTimeout", "laneIdleTimeout")
MODE_KEYS = ("dirMode", "fileMode")


def accepts(key: str) -> str:
    return KEYS[key][0]


def default_text(key: str, value) -> str:
    """A default as a user writes it (``10m``, ``500us``, ``0750``, ``none``)."""
    if isinstance(value, bool):
        return str(value).lower()
    if key in MODE_KEYS:
        return f"0{value:o}"
    if key == "retention":
        return "none" if not value else str(value)
    if key in SIZE_KEYS and value > 0:
        for unit, size in (("g", 1 << 30), ("m", 1 << 20), ("k", 1 << 10)):
            if value % size == 0:
                return f"{value // size}{unit}"
    if key in TIME_KEYS:
        for unit, size in (("s", 10 ** 9), ("ms", 10 ** 6), ("us", 10 ** 3)):
            if value % size == 0:
                return f"{value // size}{unit}"
    return str(value)
