"""Runs the fuzz targets: ``python -m tests.fuzz.run --seconds N [--target T ...]``.

Each target runs in its own process (atheris/libFuzzer) for N seconds, from
its seed corpus (corpus/<target>/, never written to) plus a working corpus
(``--work``, a temp folder by default) that keeps what it found new. Limits
that turn into findings: an input taking longer than ``--timeout`` seconds (a
hang), the process growing past ``--rss-mb`` (an unbounded allocation), a
crash of the process (the C core), and any exception the target's contract
does not allow (common.py). libFuzzer stops a target at its first finding and
writes the input to ``<work>/<target>-crash-*`` (or ``-timeout-``, ``-oom-``);
re-run one with ``python -m tests.fuzz.fuzz_<target> <file>``.

Target ``cscan`` is C: libFuzzer on the C core's scan with AddressSanitizer and
UndefinedBehaviorSanitizer (native/fuzz_scan.c), built here with clang; without
clang it is reported as skipped.

Targets ``jvm_lane``, ``jvm_log`` and ``jvm_page`` send each input, after Python's reader
read it, to the JVM's readers (one JvmFuzz process per target, -Xmx256m;
jvm_driver.py): a Java exception that is not an IOException, a case over 10 s
or an OutOfMemoryError is a finding, and so is a kind (ok / refused) or a
reading that differs from Python's (the spec gives each input one). jvm_lane
starts from the loader's seeds, jvm_log from the golden corpus's commit logs
(tests/golden/commit_log/*/log) and corpus/jvm_log/ (inputs that were
findings), jvm_page from the golden lanes' PAGE records and their page files
(tests/golden/lanes/page*) and corpus/jvm_page/ (inputs that were findings);
its JvmFuzz also gets pyspark's jars, for Spark's Parquet reader. Without a JDK or where the connector's jar
cannot be built they are reported as skipped.

Prints one line per target (executions, coverage, corpus, findings) and exits
1 if any target had a finding or did not run.
"""
from __future__ import annotations

import argparse
import dataclasses
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
# target -> the largest input it is given (libFuzzer -max_len)
TARGETS = {"records": 1 << 16, "header": 4096, "loader": 1 << 17, "sidecars": 4096,
           "cscan": 1 << 16, "jvm_lane": 1 << 17, "jvm_log": 1 << 17, "jvm_page": 1 << 14}
JVM_TARGETS = ("jvm_lane", "jvm_log", "jvm_page")
GOLDEN_LOGS = os.path.join(REPO, "tests", "golden", "commit_log")
GOLDEN_LANES = os.path.join(REPO, "tests", "golden", "lanes")
NATIVE_SOURCES = ["native/sj_codec.c", "native/sj_crc32c.c"]
CLANGS = ("clang", "clang-19", "clang-18", "clang-17", "clang-16", "clang-15", "clang-14")
FINDING_PREFIXES = ("crash-", "timeout-", "oom-", "leak-", "slow-unit-")


@dataclasses.dataclass
class Outcome:
    target: str
    seconds: float
    executions: int
    coverage: int
    features: int
    corpus: int
    findings: list
    exit_code: int
    log: str
    skipped: str = ""

    @property
    def ok(self) -> bool:
        return bool(self.skipped) or (self.exit_code == 0 and not self.findings and self.executions > 0)

    def line(self) -> str:
        if self.skipped:
            return f"{self.target:9s} skipped: {self.skipped}"
        verdict = "ok" if self.ok else f"FINDING (exit {self.exit_code}): " + \
            (", ".join(self.findings) or f"see {self.log}")
        return (f"{self.target:9s} {self.seconds:7.1f} s  {self.executions:9d} execs  "
                f"{self.executions / max(self.seconds, 1e-9):8.0f}/s  cov {self.coverage:5d}  "
                f"ft {self.features:6d}  corpus {self.corpus:5d}  {verdict}")


def _stat(text: str, name: str) -> int:
    found = re.findall(rf"stat::{name}:\s*(\d+)", text)
    return int(found[-1]) if found else 0


def build_cscan(work: str) -> tuple[list, str]:
    """(the command of the C target, "") or ([], why it cannot be built)."""
    clang = next((c for c in CLANGS if shutil.which(c)), None)
    if clang is None:
        return [], "no clang to build the C target with sanitizers"
    binary = os.path.join(work, "fuzz_scan")
    build = subprocess.run([clang, "-g", "-O1", "-fsanitize=fuzzer,address,undefined",
                            "-fno-sanitize-recover=undefined", "-I", os.path.join(REPO, "native"),
                            os.path.join(HERE, "native", "fuzz_scan.c"),
                            *[os.path.join(REPO, s) for s in NATIVE_SOURCES], "-o", binary],
                           capture_output=True, text=True)
    if build.returncode != 0:
        return [], f"{clang} failed to build it: {build.stderr.strip()[-500:]}"
    return [binary], ""


def prepare_jvm(target: str) -> tuple[dict, str]:
    """(the environment JvmFuzz runs with, "") or ({}, why the JVM targets cannot run).
    jvm_page also gets pyspark's jars (its reader is Spark's Parquet reader)."""
    from sparkjournal.spark import jvm_build
    from tests.jvm_tools import tools_classpath
    if jvm_build.jvm_unavailable():
        return {}, jvm_build.jvm_unavailable()
    try:
        classpath = tools_classpath()
        java = jvm_build.java_path()
        if target == "jvm_page":
            classpath += os.pathsep + os.path.join(jvm_build._pyspark_jars()[1], "*")
    except jvm_build.JvmUnavailableError as error:
        return {}, f"no JVM to run the Java readers: {error}"
    return {"SJ_FUZZ_JAVA": java, "SJ_FUZZ_CLASSPATH": classpath}, ""


def golden_log_seeds(work: str) -> str:
    """A folder of one seed per golden commit log (folder_image.py)."""
    from tests.fuzz.folder_image import read_folder
    seeds = os.path.join(work, "seeds", "jvm_log")
    os.makedirs(seeds, exist_ok=True)
    for case in sorted(os.listdir(GOLDEN_LOGS)):
        log = os.path.join(GOLDEN_LOGS, case, "log")
        if os.path.isdir(log):
            with open(os.path.join(seeds, case), "wb") as handle:
                handle.write(read_folder(log))
    return seeds


def golden_page_seeds(work: str) -> str:
    """A folder of page images (page_image.py) of every live PAGE record of
    the golden lanes that hold a pages folder (tests/golden/lanes/page*)."""
    from tests.fuzz.page_image import golden_seeds
    seeds = os.path.join(work, "seeds", "jvm_page")
    os.makedirs(seeds, exist_ok=True)
    for case in sorted(os.listdir(GOLDEN_LANES)):
        lane = os.path.join(GOLDEN_LANES, case, "lane")
        if os.path.isdir(os.path.join(lane, "pages")):
            for i, image in enumerate(golden_seeds(lane)):
                with open(os.path.join(seeds, f"{case}-{i}"), "wb") as handle:
                    handle.write(image)
    return seeds


def run_target(target: str, seconds: int, work: str, timeout: int, rss_mb: int) -> Outcome:
    corpus = os.path.join(work, "corpus", target)
    os.makedirs(corpus, exist_ok=True)
    log_path = os.path.join(work, f"{target}.log")
    extra_env = {}
    if target == "cscan":
        program, why = build_cscan(work)
        if not program:
            return Outcome(target, 0.0, 0, 0, 0, 0, [], 0, log_path, skipped=why)
        seeds = [os.path.join(HERE, "corpus", "records")]
    elif target in JVM_TARGETS:
        extra_env, why = prepare_jvm(target)
        if why:
            return Outcome(target, 0.0, 0, 0, 0, 0, [], 0, log_path, skipped=why)
        program = [sys.executable, "-m", f"tests.fuzz.fuzz_{target}"]
        seeds = {"jvm_lane": lambda: [os.path.join(HERE, "corpus", "loader")],
                 "jvm_log": lambda: [golden_log_seeds(work), os.path.join(HERE, "corpus", "jvm_log")],
                 "jvm_page": lambda: [golden_page_seeds(work), os.path.join(HERE, "corpus", "jvm_page")]}[target]()
    else:
        program = [sys.executable, "-m", f"tests.fuzz.fuzz_{target}"]
        seeds = [os.path.join(HERE, "corpus", target)]
    before = set(os.listdir(work))
    command = [*program, corpus, *seeds, f"-max_total_time={seconds}",
               f"-timeout={timeout}", f"-rss_limit_mb={rss_mb}", f"-malloc_limit_mb={rss_mb}",
               f"-max_len={TARGETS[target]}", "-print_final_stats=1",
               f"-artifact_prefix={os.path.join(work, target)}-"]
    env = {**os.environ, **extra_env, "PYTHONPATH": os.pathsep.join(filter(None, [REPO, os.environ.get("PYTHONPATH")]))}
    started = time.monotonic()
    with open(log_path, "wb") as log:
        try:
            code = subprocess.run(command, cwd=REPO, env=env, stdout=log, stderr=subprocess.STDOUT,
                                  timeout=seconds + timeout + 300).returncode
        except subprocess.TimeoutExpired:
            code = -9                       # libFuzzer itself hung: a finding too
    elapsed = time.monotonic() - started
    with open(log_path, encoding="utf-8", errors="replace") as log:
        text = log.read()
    progress = re.findall(r"cov: (\d+) ft: (\d+) corp: (\d+)/", text)
    coverage, features, corpus_size = map(int, progress[-1]) if progress else (0, 0, 0)
    findings = sorted(name for name in set(os.listdir(work)) - before
                      if name.startswith(f"{target}-") and
                      name[len(target) + 1:].startswith(FINDING_PREFIXES))
    return Outcome(target, elapsed, _stat(text, "number_of_executed_units"), coverage, features,
                   corpus_size, [os.path.join(work, f) for f in findings], code, log_path)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.fuzz.run", description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=int, default=15, help="per target (default 15)")
    parser.add_argument("--target", action="append", choices=sorted(TARGETS),
                        help="run only this target (repeatable; default all)")
    parser.add_argument("--work", help="working corpus, logs and findings (default: a new temp folder)")
    parser.add_argument("--timeout", type=int, default=20, help="seconds one input may take (default 20)")
    parser.add_argument("--rss-mb", type=int, default=2048, help="memory limit of a target (default 2048)")
    parser.add_argument("--json", help="also write the outcomes to this file")
    args = parser.parse_args(argv)
    if args.seconds < 1:
        parser.error("--seconds must be at least 1")
    work = args.work or tempfile.mkdtemp(prefix="sj-fuzz-")
    os.makedirs(work, exist_ok=True)
    print(f"fuzzing {args.seconds} s per target; corpus, logs and findings in {work}", flush=True)
    outcomes = []
    for target in args.target or list(TARGETS):
        outcome = run_target(target, args.seconds, work, args.timeout, args.rss_mb)
        print(outcome.line(), flush=True)
        outcomes.append(outcome)
    bad = [o for o in outcomes if not o.ok]
    if not [o for o in outcomes if not o.skipped]:
        bad = outcomes                        # nothing ran at all
    total = sum(o.executions for o in outcomes)
    print(f"total: {total} executions in {sum(o.seconds for o in outcomes):.0f} s, "
          f"{sum(len(o.findings) for o in outcomes)} findings" + (", FAILED" if bad else ""))
    if args.json:
        with open(args.json, "w", encoding="utf-8") as handle:
            json.dump([dataclasses.asdict(o) for o in outcomes], handle, indent=1)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
