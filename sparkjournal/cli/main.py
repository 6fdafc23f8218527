"""``sparkjournal`` command line: argument parsing and the exit-status contract.

Exit status: 0 success; 1 the journal is corrupt or an operation failed (a
journal, I/O or data error); 2 the command line was wrong (unknown command, bad
option value, a PATH that is no journal). Errors print one line to stderr,
never a traceback; a bug (an exception that is not ours) still shows one.
Subcommand modules are imported only when run, so ``--help`` stays quick.
"""
from __future__ import annotations

import argparse
import importlib
import sys
import warnings

from ..errors import ConfigError, SparkJournalError, UsageError

PROG = "sparkjournal"
TOOLS = "sparkjournal.tools"   # the benchmarks and the soak: targets named in full


class _Parser(argparse.ArgumentParser):
    """argparse that reports errors as one line plus a hint instead of a full usage dump."""

    def error(self, message: str):
        self.exit(2, f"{self.prog}: error: {message} (see `{self.prog} --help`)\n")


def _command(parent, name: str, target: str, help_text: str) -> argparse.ArgumentParser:
    parser = parent.add_parser(name, help=help_text, description=help_text)
    parser.set_defaults(target=target)
    return parser


def _log_command(parent, name: str, target: str, help_text: str, *,
                 json_flag: bool = True) -> argparse.ArgumentParser:
    """A command on a journal and its commit log: PATH, --commit-log URI, --json."""
    parser = _command(parent, name, target, help_text)
    parser.add_argument("path", metavar="PATH", help="the journal path (its commit log is "
                        "PATH/_commits unless --commit-log says)")
    parser.add_argument("--commit-log", metavar="URI", help="where the writers' decisions live")
    if json_flag:
        parser.add_argument("--json", action="store_true", help="machine-readable output")
    return parser


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog=PROG, description="Tools for sparkjournal journals: inspect, verify, "
                     "export/import, compact, page, and measure the disk and the journal.")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    commands.required = True

    inspect = _command(commands, "inspect", "inspect_lanes:run",
                       "Show what a journal holds: files, live records, transactions, "
                       "large bodies, attic and archive, per lane.")
    inspect.add_argument("path", metavar="PATH", help="journal root (lane-NNN folders) or one lane folder")
    inspect.add_argument("--json", action="store_true", help="machine-readable output")

    verify = _command(commands, "verify", "verify:run",
                      "Check every record of every file of every lane; exit 1 on corruption.")
    verify.add_argument("path", metavar="PATH", help="journal root or one lane folder")
    verify.add_argument("--progress-mb", type=_non_negative_int, default=64, metavar="MB",
                        help="print a progress line to stderr after every MB mebibytes "
                        "checked (0: after every file; default 64)")
    verify.add_argument("--quiet", action="store_true", help="no progress lines")

    export = _command(commands, "export", "jsonl_export:run_export",
                      "Write every live record and prepared transaction as JSON lines.")
    export.add_argument("path", metavar="PATH", help="journal root or one lane folder")
    export.add_argument("-o", "--output", metavar="FILE", default="-", help="output file (default stdout)")

    load = _command(commands, "import", "jsonl_export:run_import",
                    "Append the records and prepared transactions of an export into a journal.")
    load.add_argument("file", metavar="FILE", help="a file written by `sparkjournal export` ('-': stdin)")
    load.add_argument("path", metavar="PATH", help="journal root to create lanes in, or one empty lane folder")

    _maintenance(commands, "compact", "One maintenance pass over the lanes under PATH on this "
                 "node, without Spark: retention, resolving and carrying out what lanes no writer "
                 "holds wait for, paging, and online compaction (jobs/compact.py does it "
                 "cluster-wide).")
    _maintenance(commands, "page", "Page the lanes under PATH on this node that are over "
                 "maxSizeBytes or whose root is over maxRootSizeBytes, without Spark: their "
                 "oldest events move into Parquet page files (jobs/page.py does it "
                 "cluster-wide).")

    log = _log_command(commands, "commit-log", "commit_log_cmd:run",
                       "Show what the commit log holds (its checkpoint, entries, writers); "
                       "--checkpoint checkpoints it and applies its retention now.")
    log.add_argument("--checkpoint", action="store_true", help="write a checkpoint and apply "
                     "retention first (commitLogRetainBatches, commitLogRetainTime)")
    log.add_argument("--option", action="append", metavar="KEY=VALUE", help="a journal option "
                     "(commitLogRetainBatches=100, commitLogRetainTime=3600s); repeatable")

    txs = _log_command(commands, "transactions", "transactions:run",
                       "List undecided batches: prepared by a query's tasks, not decided by "
                       "its driver (age, rows, lanes, events held back from streams).")
    txs.add_argument("--hanging", metavar="AGE", help="only batches undecided longer than AGE "
                     "(30min, 2h, 1d)")

    _log_command(commands, "status", "status:run",
                 "One screen on how the journal is: nodes, lanes and sizes, events live, "
                 "deleted and paged, undecided batches, the commit log, damaged files.")

    nodes = _log_command(commands, "nodes", "nodes:run",
                         "List every node the commit log names (host, lanes, committed batches "
                         "and events, last seen); --forget declares one gone for good, "
                         "--restore brings it back.")
    change = nodes.add_mutually_exclusive_group()
    change.add_argument("--forget", metavar="NODE", help="a node id (uuid@host): reads stop "
                        "requiring and reading its lanes and report its events as forgotten")
    change.add_argument("--restore", metavar="NODE", help="a forgotten node id: reads require "
                        "and read its lanes again")
    nodes.add_argument("--yes", action="store_true", help="do not ask for confirmation")

    abort = _log_command(commands, "abort", "abort:run",
                         "Decide an undecided batch as aborted: its prepared transactions roll "
                         "back and release the streams they hold; a replay of the batch writes "
                         "it again.", json_flag=False)
    abort.add_argument("--query", required=True, metavar="Q", help="the streaming query id or "
                       "txnAppId, as `sparkjournal transactions` shows it")
    abort.add_argument("--batch", required=True, type=_non_negative_int, metavar="N")
    abort.add_argument("--yes", action="store_true", help="do not ask for confirmation")

    options = _command(commands, "options", "options:run",
                       "List every option: default, accepted values, meaning.")
    shape = options.add_mutually_exclusive_group()
    shape.add_argument("--markdown", action="store_true", help="as the README's markdown table")
    shape.add_argument("--conf", action="store_true",
                       help="as conf/sparkjournal.conf: every journal option at its default")

    _command(commands, "jar", "jvm_connector:print_jar",
             "Print the path of the JVM connector's jar, for spark-submit --jars "
             "\"$(sparkjournal jar)\" and spark.jars (a checkout builds it first).")
    job = _command(commands, "job", "jvm_connector:print_job",
                   "Print the path of one of sparkjournal's spark-submit jobs, for "
                   "spark-submit \"$(sparkjournal job compact)\".")
    job.add_argument("name", metavar="NAME", help="stream_events, compact, page or replay")
    jvm = _command(commands, "jvm", "jvm_connector:run",
                   "Say which JVM connector jar this installation has and whether an earlier "
                   "version left one in pyspark's jars folder; --remove takes that out (pip "
                   "uninstall cannot: the folder is pyspark's).")
    jvm.add_argument("--remove", action="store_true", help="remove a connector jar an earlier "
                     "sparkjournal placed in pyspark's jars folder")

    perf = _command(commands, "perf-journal", "perf_journal:run",
                    "Time synced 4 KiB writes through the journal's I/O backend and print "
                    "the bufferTimeout to configure for this disk.")
    perf.add_argument("dir", metavar="DIR", help="an existing folder on the disk the journal will use")
    perf.add_argument("--rounds", type=_positive_int, default=5, help="rounds (default 5)")
    perf.add_argument("--writes", type=_positive_int, default=250, help="synced writes per round (default 250)")
    perf.add_argument("--journal-type", choices=("AUTO", "ASYNCIO", "NIO"), default="AUTO",
                      help="I/O backend, as the journalType option (default AUTO)")

    bench = _command(commands, "bench", "", "Benchmarks.")
    benches = bench.add_subparsers(dest="bench", metavar="BENCH", parser_class=_Parser)
    benches.required = True
    journal = _bench(benches, "journal", "Measure the journal against the disk's raw limit in "
                     "one run and print ratios.")
    sink = _bench(benches, "sink", "Measure the exactly-once sink against Spark's parquet sink, "
                  "a no-op sink and the Arrow transfer floor in one run and print ratios.")
    read = _bench(benches, "read", "Measure reading a journal back against parquet and the "
                  "Python Arrow floor, batch and streaming, in one run and print ratios.")
    maintenance = _bench(benches, "maintenance", "Measure compaction against a plain copy of "
                         "the same bytes, and the writer's commit latency with and without a "
                         "compaction on its lane, in one run and print ratios.")
    _bench(benches, "commit-log", "Measure planning (Python and JVM) and the driver's commit "
           "on commit logs of 1,000 to 1,000,000 decided batches, each against the log of "
           "1,000, in one run and print ratios.")
    for with_only in (journal, maintenance):
        with_only.add_argument("--only", metavar="TEXT", help="run only the cases whose name "
                               "contains TEXT")
    sink.add_argument("--only", metavar="SIZE", help="run only the batch size SIZE (1k, 100k "
                      "or 1M rows per batch)")
    read.add_argument("--repeats", type=_positive_int, default=7, help="interleaved rounds per "
                      "measurement; ratios are medians of per-round ratios (default 7)")
    read.add_argument("--events", type=_positive_int, metavar="N", help="events of the large-batch "
                      "reads (default 2,000,000; 200,000 with --quick)")
    read.add_argument("--small-batches", type=_non_negative_int, metavar="N", help="micro-batches "
                      "of 1k rows landed for the small-batch reads, 0 to leave them out (default "
                      "1,000; 60 with --quick)")
    for spark_bench in (sink, read):
        spark_bench.add_argument("--master", default="local[*]", help="Spark master (default local[*])")
    report = _command(benches, "report", f"{TOOLS}.bench.report_command:run", "Print again the tables "
                      "of benchmark runs saved with --json FILE and, with --out, draw them: each "
                      "row's ratio to its baseline against its target.")
    report.add_argument("json_files", nargs="+", metavar="JSON", help="a file a benchmark wrote "
                        "with --json FILE; several make one chart")
    report.add_argument("--markdown", action="store_true", help="each file's rows as a markdown "
                        "table (as docs/performance.md shows them)")
    report.add_argument("--out", metavar="FILE", help="write the chart to FILE (.png or .svg); "
                        'needs matplotlib: pip install "sparkjournal[chart]"')
    soak = _command(commands, "soak", f"{TOOLS}.soak.run:run",
                    "Stream events into a journal for a set time while drivers, executors and "
                    "a streaming reader are killed and maintenance runs; then check every event "
                    "landed exactly once in the journal, the batch reader and the reader's output.")
    soak.add_argument("--minutes", type=float, default=4.0, help="time under fire (default 4)")
    soak.add_argument("--data", metavar="DIR", help="an empty folder for everything (default: a new temp folder)")
    soak.add_argument("--master", default="local-cluster[2,1,1024]",
                      help="the writer's Spark master (default local-cluster[2,1,1024])")
    soak.add_argument("--rows-per-batch", type=_positive_int, default=500, metavar="N")
    soak.add_argument("--seed", type=int, default=1, help="seed of the kill schedule")
    soak.add_argument("--writer", choices=("auto", "python", "jvm"), default="auto",
                      help="the sink's task writer (JournalSink writer=; default auto)")
    soak.add_argument("--json", metavar="FILE", help="also write the figures as JSON")
    return parser


# --force of the maintenance commands and of their spark-submit jobs (maintenance_job.py).
FORCE_HELP = {
    "compact": "compact every lane with a sealed file, whatever compactMinFiles and "
               "compactPercentage say",
    "page": "page every lane: one page of its oldest events (pageSizeBytes), whatever the "
            "limits say",
}


def _maintenance(commands, name: str, summary: str) -> None:
    """A maintenance command (compact, page): the same arguments, its own pass."""
    command = _command(commands, name, f"{name}:run", summary)
    command.add_argument("path", metavar="PATH", help="the journal path (node root, may hold "
                         "{host}/{executor}), a journal root or one lane folder")
    command.add_argument("--force", action="store_true", help=FORCE_HELP[name])
    command.add_argument("--commit-log", metavar="URI", help="where the writers' decisions live "
                         "(default: PATH/_commits)")
    command.add_argument("--option", action="append", metavar="KEY=VALUE", help="a journal option "
                         "(retention=7d, maxSizeBytes=1g, pageSizeBytes=10m, ...); repeat for "
                         "several")
    command.add_argument("--json", metavar="FILE", help="also write every lane's report as JSON")


def _bench(benches, name: str, summary: str):
    """A benchmark command with the options every benchmark has."""
    command = _command(benches, name, f"{TOOLS}.bench.{name.replace('-', '_')}:run", summary)
    command.add_argument("--dir", metavar="DIR", help="folder on the disk to measure (default: "
                         "a temporary folder in the system temp dir, removed afterwards)")
    command.add_argument("--json", metavar="FILE", help="also write the results as a JSON list")
    command.add_argument("--quick", action="store_true", help="small sizes: a smoke run")
    return command


def _positive_int(text: str) -> int:
    value = _non_negative_int(text)
    if value == 0:
        raise argparse.ArgumentTypeError(f"expected a whole number above 0, got {text!r}")
    return value


def _non_negative_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"expected a whole number of 0 or more, got {text!r}")
    return value


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as stop:              # usage errors (2) and --help (0)
        return stop.code if isinstance(stop.code, int) else 2
    module_name, function_name = args.target.split(":")
    where = f"{PROG} {args.command}"
    try:
        with warnings.catch_warnings():
            warnings.showwarning = _one_line_warning
            module = importlib.import_module(module_name if module_name.startswith(f"{TOOLS}.")
                                             else f"{__package__}.{module_name}")
            return int(getattr(module, function_name)(args) or 0)
    except (UsageError, ConfigError) as error:
        return _fail(where, error, 2)
    except (SparkJournalError, OSError) as error:
        return _fail(where, error, 1)
    except KeyboardInterrupt:
        print(f"{where}: interrupted", file=sys.stderr)
        return 130


def _one_line_warning(message, category, filename, lineno, file=None, line=None) -> None:
    print(f"{PROG}: warning: {message}", file=sys.stderr)


def _fail(where: str, error: BaseException, status: int) -> int:
    text = " ".join(str(error).split()) or type(error).__name__
    if isinstance(error, OSError) and not isinstance(error, SparkJournalError) and error.filename:
        text = f"{error.filename}: {error.strerror or text}"
    print(f"{where}: error: {text}", file=sys.stderr)
    return status


if __name__ == "__main__":
    sys.exit(main())
