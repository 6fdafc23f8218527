"""Every option sparkjournal takes, each defined once (config_keys.Option),
under camelCase names as Spark options are spelled: the journal's (JOURNAL),
a write's (SINK: ``JournalSink`` and ``.format("sparkjournal")`` writers) and a
read's (READ: ``spark.read`` / ``spark.readStream`` / ``sparkjournal.read``).
Everything else a write or a read is given is a journal option, except what
Spark itself passes to every data source (SPARK_OWN).

From them: JournalConfig (the journal's fields and defaults) and load_config
(the defaults, then a conf file, SPARKJOURNAL_CONF, then options given per
journal); spark/sink.py and spark/read_options.py parse with SINK and READ;
conf_text() is conf/sparkjournal.conf. A bad value raises ConfigError naming
the key, the value and what it accepts; an unknown key is an error too, so a
typo never silently falls back to a default. Nothing here imports pyspark.
"""
from __future__ import annotations

import dataclasses
import os
import re
import textwrap
from typing import Any, Mapping

from .config_keys import (Choice, Flag, Instant, Mode, Option, OptionTable, Retention, Size, Text,
                          Time, Whole, inside_folder, not_blank, writer_name)
from .errors import ConfigError
from .format.layout import FILE_HEADER_SIZE, FILE_SIZE_MULTIPLE

BLOCK_SIZES = (512, 1024, 2048, 4096)

# The sections of conf/sparkjournal.conf: (heading, options in table order).
STORAGE = (
    Option("createDirs", Flag(), True, "create the journal folder and its lanes when missing"),
    Option("journalType", Choice((("AUTO", "AIO where O_DIRECT works, else NIO"),
                                  ("ASYNCIO", "forced"), ("NIO", "forced"))), "AUTO",
           "the I/O backend; AUTO probes the journal folder and falls back to NIO with one "
           "warning", longer="the I/O backend: AUTO probes the journal folder for kernel AIO "
           "with O_DIRECT and falls back to NIO with one warning; ASYNCIO fails if it cannot run"),
    Option("syncTransactional", Flag(), True, "wait for the disk before acknowledging a commit"),
    Option("syncNonTransactional", Flag(), True,
           "wait for the disk before acknowledging a non-transactional append"),
    Option("datasync", Flag(), True,
           "false never fdatasyncs: fast, not durable against a machine crash",
           longer="when false, never fdatasync: fast, and not durable against a crash of the "
                  "machine"),
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
           "compaction runs once a lane has this many sealed files ...",
           longer="compaction (the maintenance jobs) runs once a lane has this many sealed "
                  "files and less than compactPercentage of their bytes is live"),
    Option("compactPercentage", Whole(0, 100), 30,
           "... and less than this percentage of their bytes is live",
           longer="compaction runs once less than this percentage of a lane's sealed bytes is "
                  "live (and it has compactMinFiles sealed files)"),
    Option("checksum", Flag(), True, "verify every record's CRC-32C on load and read"),
    Option("checkForCorruptFiles", Flag(), True,
           "check every file header and large body at open, not just what is replayed"),
    Option("archive", Flag(), False, "move reclaimed and compacted-away files to "
           "archiveDirectory instead of reusing or deleting them"),
    Option("archiveDirectory", Text("a folder name inside the journal folder, without '..' "
                                    "(such as archive)", inside_folder), "archive",
           "where archive=true moves files (never outside the lane)"),
    Option("largeRecordSize", Size(note="0: only records that do not fit a data file"), 0,
           "bodies above this are stored as large records, in files of their own",
           longer="bodies above this are stored as large records, in files of their own; "
                  "records larger than bufferSize that fit are written alone into the data "
                  "files"),
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
           "a lane's data files past this are full",
           longer="a lane whose data files (data plus large bodies; not the files kept for "
                  "reuse, page files or the archive) are past this is full; checked before "
                  "each task writes, so a lane goes past it by at most the tasks that started "
                  "below it"),
    Option("maxRootSizeBytes", Size(unlimited=True), -1,
           "all lanes of a node root together past this are full",
           longer="all lanes of a node root together past this are full (counted as "
                  "maxSizeBytes)"),
    Option("addressFullPolicy",
           Choice((("PAGE", "move the oldest events to page files"), ("BLOCK", "writers wait"),
                   ("DROP", "new events are dropped and counted"),
                   ("FAIL", "the write fails"))), "PAGE",
           "what a full lane does",
           longer="what a task does on a full lane: PAGE writes (the paging job moves the "
                  "oldest events to Parquet page files); BLOCK waits, logging why, until "
                  "compaction, paging, retention or deletes free space (a Python task carries "
                  "out their requests meanwhile, a JVM task gives its lane up to them); DROP writes nothing and the batch metrics count the "
                  "dropped rows; FAIL fails the task with JournalFullError and nothing of the "
                  "batch is visible"),
    Option("pageSizeBytes", Size(minimum=4096), 10 << 20, "about this much per page file"),
    Option("maintenancePriority",
           Choice((("IDLE", "runs only on a core no other thread wants"),
                   ("LOW", "nice 10"), ("NORMAL", "the caller's priority"))), "IDLE",
           "the CPU priority of a compaction or paging pass",
           longer="the CPU priority of a compaction or paging pass (a thread of its own; the "
                  "caller keeps its priority): IDLE lets the lane's writer take a core the "
                  "moment its sync returns, but on a node whose cores are always busy the "
                  "pass runs slowly; LOW shares the cores at nice 10"),
    Option("maintenanceBytesPerSecond", Size(example="200m", note="0: no limit"), 200 << 20,
           "the most a compaction or paging pass reads and writes per second",
           longer="the most a compaction or paging pass reads and writes per second, its reads "
                  "of the lane and its writes counted together (as Kafka's "
                  "log.cleaner.io.max.bytes.per.second): in paced 128 KiB pieces, so the "
                  "lane's writer, whose synced commits queue behind maintenance's reads and "
                  "writes, keeps its latency"),
    Option("commitLogCheckpointInterval", Whole(0, note="0: never"), 100,
           "the driver checkpoints the commit log every this many decided batches",
           longer="the driver checkpoints the commit log (format/COMMIT_LOG.md) when this many "
                  "decided batches of all its writers are past the last checkpoint, in a "
                  "thread of its own, so planning reads the checkpoint and the entries after "
                  "it however old the stream; maintenance passes checkpoint too; 0: the driver "
                  "never does"),
    Option("commitLogRetainBatches", Whole(0), 100,
           "retention keeps at least this many newest commit log entries per writer",
           longer="retention (after a checkpoint) keeps at least this many newest commit log "
                  "entries per streaming writer, as Spark's minBatchesToRetain; older entries "
                  "that two checkpoints cover are deleted once older than "
                  "commitLogRetainTime (a replayed batch is still known as committed)"),
    Option("commitLogRetainTime", Time(), 3_600_000_000_000,
           "commit log entries younger than this are never deleted"),
    Option("undecidedWarnAfter", Time(), 600_000_000_000,
           "streams and maintenance warn of a batch undecided for this long",
           longer="streams and maintenance log a WARNING, naming `sparkjournal transactions` "
                  "and `sparkjournal abort`, for a prepared batch its driver has not decided "
                  "for this long (it holds back every stream of its lanes); 0: never"),
    Option("laneIdleTimeout", Time(), 60_000_000_000,
           "a Spark worker closes a lane writer no task used for this long",
           longer="a Spark worker closes a lane writer no task used for this long, so "
                  "maintenance can carry out deletes and pages there"),
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

# --- write and read options -----------------------------------------------------------

LOCAL_SMALL_BATCH_ROWS = 10_000   # smallBatchRows when unset in local mode
SPARK_OWN = ("path", "checkpointlocation")    # Spark passes these to data sources (lower case)

SINK = OptionTable(
    Option("txnAppId", Text("a name of letters, digits, '-', '_' or '.' (no '/'), not "
                            "starting with '_' or 'batch-write-' (the commit log's own)",
                            writer_name), None,
           "the writer's name in the commit log; set it when several checkpoints must count "
           "as one writer (as Delta's option)", shown_default="the streaming query id"),
    Option("txnVersion", Whole(0), None,
           "with txnAppId (both or neither), a format(\"sparkjournal\") batch write is batch "
           "txnVersion of writer txnAppId: a version at or below the writer's last committed "
           "one is skipped, so a retried job writes its rows once (as Delta's option); streams number their own "
           "batches",
           accepted="a whole number from 0 up (this write's version)"),
    Option("commitLog", Text("a local path or a URI pyarrow.fs supports (hdfs://, s3://, gs://)",
                             not_blank), None,
           "where the driver's decisions live (reads use it too); on a cluster, put it on "
           "fault-tolerant storage next to the checkpoint", shown_default="`<path>/_commits`"),
    Option("smallBatchRows", Whole(0), None,
           "micro-batches of at most this many rows are collected to the driver as Arrow and "
           "written there, into a lane of the driver's node root, through the same two-phase "
           "commit: no Python job on the executors, ~2x faster at 1k rows per batch; only "
           "where readers see the driver's root (local mode, or a driver on a journal node), "
           "so on a cluster it is off unless set; the query's first batch logs the value in "
           "effect; the foreachBatch sink only",
           shown_default=f"{LOCAL_SMALL_BATCH_ROWS} in local mode (master local or local[...]), "
                         f"else 0 (off)"),
    Option("writer", Choice((("AUTO", "jvm where it can write the batch, else python"),
                             ("PYTHON", "tasks write in Python workers"),
                             ("JVM", "tasks write in the executor JVM, no Python worker"))),
           "AUTO",
           "who writes a batch's rows on the executors: jvm needs the JVM connector "
           "(a JDK), enforces every journal option as python does, and refuses, before any "
           "task, columns it cannot convert; in JournalSink auto takes jvm where the "
           "session has the connector and jvm would not refuse, else python, and the query's "
           "first batch logs which and why (small batches are still written by the driver); "
           "in format(\"sparkjournal\") writers with the connector, jvm is its own write, "
           "with no Python worker, python the Python data source's, and auto the connector's "
           "unless it would refuse (then the Python data source's, logged)",
           accepted="auto, python (tasks write in Python workers) or jvm (tasks write in the "
                    "executor JVM, no Python worker), any case", shown_default="auto"),
)

READ = OptionTable(
    Option("skipCorrupt", Flag(), False,
           "leave a damaged file out of the read and report it, instead of failing"),
    Option("allowPartialRead", Flag(), False,
           "true: a read that cannot reach a node holding committed events reads the rest and "
           "logs exactly which hosts, lanes and batches it left out, instead of failing"),
    Option("missingHostWait", Time(), 5_000_000_000,
           "how long planning waits for a host holding committed lanes to have a live executor",
           longer="how long planning waits for a host holding committed lanes to have a live "
                  "executor, once the application is past Spark's "
                  "spark.scheduler.maxRegisteredResourcesWaitingTime since its start (executors "
                  "still registering are waited for that long); a node forgotten with "
                  "`sparkjournal nodes --forget` is never waited for"),
    Option("startingBatchId", Whole(0), None, "only events of batches with this id or later",
           accepted="a batch id (a whole number from 0 up)"),
    Option("startingTimestamp", Instant(), None, "only events committed at or after this time"),
    Option("maxRowsPerTrigger", Whole(1), None,
           "streaming: at most about this many rows per micro-batch"),
    Option("maxBytesPerTrigger", Size(example="64m"), None,
           "streaming: at most about this many bytes per micro-batch"),
)

# --- the journal's configuration ------------------------------------------------------

# conf/sparkjournal.conf in the source tree is conf_text(): the
# defaults for users to copy (tests/test_options.py keeps the two equal);
# SPARKJOURNAL_CONF names a copy to read.
CONF_ENV = "SPARKJOURNAL_CONF"


def _sync_window(self) -> int:
    """Most bytes the writer may have written past its last completed sync."""
    return self.maxIO * self.bufferSize


def _with_options(self, options: Mapping[str, Any]) -> "JournalConfig":
    """This configuration with ``options`` (raw or typed values) applied."""
    return dataclasses.replace(self, **_validate(options, self))


# Every knob of one journal: a frozen dataclass whose fields are JOURNAL's
# options in order, named as the option keys, defaulting to their defaults.
JournalConfig = dataclasses.make_dataclass(
    "JournalConfig",
    [(option.name, type(option.default), dataclasses.field(default=option.default))
     for option in JOURNAL],
    frozen=True,
    namespace={"__module__": __name__, "__doc__": "Every knob of one journal (JOURNAL).",
               "sync_window": property(_sync_window), "with_options": _with_options})


def _validate(options: Mapping[str, Any], base) -> dict[str, Any]:
    """Turns raw option strings into typed values, rejecting anything unknown
    and any combination the journal cannot work with."""
    values: dict[str, Any] = {}
    for raw_key, value in options.items():
        option = JOURNAL.find(raw_key)
        if option is None:
            raise ConfigError(str(raw_key), value,
                              "nothing: it is not a sparkjournal option (known options: "
                              + ", ".join(sorted(JOURNAL.names)) + ")")
        values[option.name] = option.parse(value)
    checked = {**dataclasses.asdict(base), **values}
    if checked["bufferSize"] > checked["fileSize"] - FILE_HEADER_SIZE:
        raise ConfigError("bufferSize", checked["bufferSize"],
                          f"a size below fileSize - {FILE_HEADER_SIZE} bytes "
                          f"(fileSize is {checked['fileSize']})")
    if checked["bufferSize"] % checked["deviceBlockSize"]:
        raise ConfigError("bufferSize", checked["bufferSize"],
                          f"a multiple of deviceBlockSize ({checked['deviceBlockSize']})")
    return values


def read_conf_file(path: str) -> dict[str, str]:
    """Reads ``key value`` or ``key=value`` lines; ``#`` starts a comment."""
    options: dict[str, str] = {}
    with open(path, encoding="utf-8") as handle:
        for number, line in enumerate(handle, 1):
            line = line.split("#", 1)[0].strip()
            if not line:
                continue
            parts = re.split(r"\s*=\s*|\s+", line, maxsplit=1)
            if len(parts) != 2 or not parts[1]:
                raise ConfigError(f"{path}:{number}", line, "lines of the form `key value` or `key=value`")
            options[parts[0]] = parts[1]
    return options


def load_config(options: Mapping[str, Any] | None = None, conf_file: str | None = None) -> JournalConfig:
    """Defaults, then the conf file (``conf_file`` or $SPARKJOURNAL_CONF), then
    ``options``; later ones win. A named conf file that is missing is an error."""
    path = conf_file or os.environ.get(CONF_ENV)
    merged: dict[str, Any] = dict(read_conf_file(path)) if path else {}
    merged.update(options or {})
    return JournalConfig().with_options(merged)

# --- conf/sparkjournal.conf -----------------------------------------------------------

WIDTH = 88                    # of the comment lines
NAME_COLUMN = 22              # where a value starts
HEADER = ("sparkjournal default configuration, generated by `sparkjournal options --conf`. "
          "Copy this file, point SPARKJOURNAL_CONF at the copy, or pass any key as an option "
          "(spark .option(key, value) or Journal.open(path, key=value)). Sizes: 10m, 490k, 1g. "
          "Times: 500us, 3ms, 1s. An unknown key or a bad value is an error that names the key.")


def _comment(text: str) -> list[str]:
    return textwrap.wrap(text, WIDTH - 2, initial_indent="# ", subsequent_indent="# ",
                         break_on_hyphens=False)


def conf_text() -> str:
    lines = _comment(HEADER)
    for heading, options in SECTIONS:
        if heading:
            lines += ["", f"# --- {heading} ".ljust(WIDTH, "-")]
        for option in options:
            meaning = option.explained[0].upper() + option.explained[1:]
            lines += [""] + _comment(f"{meaning}. Accepts {option.accepts}.")
            lines.append(f"{option.name:<{NAME_COLUMN - 1}} {option.default_text}")
    return "\n".join(lines) + "\n"
