"""Every journal option, defined once (option.py): the knobs of one journal,
under camelCase names as Spark options are spelled. JournalConfig's fields and
defaults (journal_config.py), the options table, conf/sparkjournal.conf
(conf_file.py) and the JVM connector's option names all come from JOURNAL.
"""
from __future__ import annotations

from ..format.layout import FILE_HEADER_SIZE, FILE_SIZE_MULTIPLE
from .option import Option, OptionTable
from .values import Choice, Flag, Mode, Retention, Size, Text, Time, Whole, inside_folder

BLOCK_SIZES = (512, 1024, 2048, 4096)

# The sections of conf/sparkjournal.conf: (heading, options in table order).
STORAGE = (
    Option("createDirs", Flag(), True, "create the journal folder and its lanes when missing"),
    Option("journalType", Choice((("AUTO", "AIO where O_DIRECT works, else NIO"),
                                  ("ASYNCIO", "forced"), ("NIO", "forced"))), "AUTO",
           "the I/O backend: AUTO probes the journal folder for kernel AIO with O_DIRECT and "
           "falls back to NIO with one warning; ASYNCIO fails if it cannot run"),
    Option("syncTransactional", Flag(), True, "wait for the disk before acknowledging a commit"),
    Option("syncNonTransactional", Flag(), True,
           "wait for the disk before acknowledging a non-transactional append"),
    Option("datasync", Flag(), True,
           "when false, never fdatasync: fast, not durable against a machine crash"),
    Option("fileSize", Size(minimum=2 * FILE_HEADER_SIZE, maximum=(1 << 32) - FILE_SIZE_MULTIPLE,
                            multiple=FILE_SIZE_MULTIPLE), 10 << 20,
           "size of every data file (pre-created, zero-filled)",
           accepted="a multiple of 4k from 8k up to 4g - 4k, such as 10m"),
    Option("minFiles", Whole(1), 2, "data files created when a journal starts"),
    Option("poolFiles", Whole(-1, note="-1: keep all"), -1,
           "freed data files kept for reuse; 0 deletes every freed file"),
    Option("maxIO", Whole(1, 4096), 4, "AIO writes in flight at once"),
    Option("bufferTimeout", Time(), 500_000,
           "longest an unsynced append waits in the buffer before it is written "
           "(`sparkjournal perf-journal DIR` measures what the disk wants)"),
    Option("bufferSize", Size(minimum=4096), 490 << 10,
           "the write buffer; a larger record is written alone",
           accepted="a size from 4k, a multiple of deviceBlockSize and below fileSize - 4k, "
                    "such as 490k"),
    Option("deviceBlockSize", Size(choices=BLOCK_SIZES), 512,
           "write alignment for O_DIRECT: the device's logical block size",
           accepted="512, 1k, 2k or 4k (a power of two the device accepts)"),
    Option("compactMinFiles", Whole(0), 10,
           "compaction (the maintenance jobs) runs once a lane has this many sealed files "
           "and less than compactPercentage of their bytes is live"),
    Option("compactPercentage", Whole(0, 100), 30,
           "compaction runs once less than this percentage of a lane's sealed bytes is live "
           "(and it has compactMinFiles sealed files)"),
    Option("checksum", Flag(), True, "verify every record's CRC-32C on load and read"),
    Option("checkForCorruptFiles", Flag(), True,
           "check every file header and large body at open, not just what is replayed"),
    Option("archive", Flag(), False, "move reclaimed and compacted-away files to "
           "archiveDirectory instead of reusing or deleting them"),
    Option("archiveDirectory", Text("a folder name inside the journal folder, without '..' "
                                    "(such as archive)", inside_folder), "archive",
           "where archive=true moves files (never outside the lane)"),
    Option("largeRecordSize", Size(note="0: only records that do not fit a data file"), 0,
           "bodies above this are stored as large records, in files of their own; records "
           "larger than bufferSize that fit are written alone into the data files"),
    Option("userVersion", Whole(0, 0xFFFFFFFF), 0,
           "the application's version, carried in every file header"),
    Option("lockWait", Flag(), False,
           "a second writer waits for the lane lock instead of failing at once"),
    Option("recover", Flag(), False, "open a damaged journal by moving damaged files to "
           "attic/ and reporting exactly what was lost"),
)
MAINTENANCE = (
    Option("retention", Retention(), (), "how long events stay (maintenance deletes older ones)"),
    Option("maxSizeBytes", Size(unlimited=True), -1,
           "a lane whose data files (data plus large bodies; not the files kept for reuse, "
           "page files or the archive) are past this is full; checked before each task "
           "writes, so a lane goes past it by at most the tasks that started below it"),
    Option("maxRootSizeBytes", Size(unlimited=True), -1,
           "all lanes of a node root together past this are full (counted as maxSizeBytes)"),
    Option("addressFullPolicy",
           Choice((("PAGE", "move the oldest events to page files"), ("BLOCK", "writers wait"),
                   ("DROP", "new events are dropped and counted"),
                   ("FAIL", "the write fails"))), "PAGE",
           "what a task does on a full lane: PAGE writes (the paging job moves the oldest "
           "events to Parquet page files); BLOCK waits, logging why, until compaction, paging, "
           "retention or deletes free space, carrying out their requests meanwhile; DROP "
           "writes nothing and the batch metrics count the dropped rows; FAIL fails the task "
           "with JournalFullError and nothing of the batch is visible"),
    Option("pageSizeBytes", Size(minimum=4096), 10 << 20, "about this much per page file"),
    Option("laneIdleTimeout", Time(), 60_000_000_000,
           "a Spark worker closes a lane writer no task used for this long, so maintenance "
           "can carry out deletes and pages there"),
)
ACCESS = (
    Option("dirMode", Mode(0o700, "0750"), 0o750,
           "permission bits of every folder created in a journal (the umask still applies)"),
    Option("fileMode", Mode(0o600, "0640"), 0o640,
           "permission bits of every file created in a journal (the umask still applies)"),
)
SECTIONS = (("", STORAGE),
            ("maintenance: compaction, retention, paging (the jobs in jobs/)", MAINTENANCE),
            ("who may touch the data", ACCESS))
JOURNAL = OptionTable(*STORAGE, *MAINTENANCE, *ACCESS)
