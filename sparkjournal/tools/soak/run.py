"""``sparkjournal soak``: a streaming job into a journal under fire, then a verdict.

For ``--minutes``, a writer driver streams generated events through JournalSink on
``local-cluster[2,1,1024]`` while, at random intervals (``--seed``), its driver is
SIGKILLed and restarted from its checkpoint, one of its executor JVMs is SIGKILLed
(the cluster starts another), a streaming reader that copies the journal into
Parquet is SIGKILLed and restarted, and on schedule a user deletes events by
predicate (``sparkjournal.delete``) and a maintenance pass (``sparkjournal compact
--force``, with small data files) drops them physically. Then the writer runs
once more until every batch Spark planned is decided, the last delete and
maintenance run, the reader catches up, and the journal, the batch reader and the
reader's output must each hold every event generated and not deleted exactly once
(soak/verdict.py). Prints what it survived; exit 1 on
any loss, duplicate, or driver that failed by itself.
"""
from __future__ import annotations

import json
import os
import random
import subprocess
import sys
import tempfile
import time

from .processes import Driver, kill_one_executor
from . import verdict

# Data files small enough that a few minutes of events fill many, so compaction
# and reclaim have work; every driver and maintenance pass reads it.
SOAK_CONF = "fileSize 256k\nbufferSize 64k\ncompactMinFiles 3\n"
EVERY = {"driver": (25.0, 50.0), "executor": (20.0, 40.0), "follower": (20.0, 45.0),
         "maintenance": (25.0, 35.0)}


class Soak:
    def __init__(self, args):
        self.args = args
        self.data = os.path.abspath(args.data or tempfile.mkdtemp(prefix="sparkjournal-soak-"))
        if os.path.exists(os.path.join(self.data, "journal")):
            raise SystemExit(f"{self.data} already holds a soak's journal; give an empty --data folder")
        self.root = os.path.join(self.data, "journal")
        self.logs = os.path.join(self.data, "logs")
        os.makedirs(self.logs, exist_ok=True)
        conf = os.path.join(self.data, "sparkjournal.conf")
        with open(conf, "w", encoding="utf-8") as handle:
            handle.write(SOAK_CONF)
        self.env = {**os.environ, "SPARKJOURNAL_CONF": conf}
        self.random = random.Random(args.seed)
        self.counts = {"driver_kills": 0, "executor_kills": 0, "follower_kills": 0,
                       "maintenance_passes": 0, "lanes_compacted": 0, "bytes_reclaimed": 0,
                       "delete_jobs": 0, "events_deleted": 0,
                       "writer_failures": 0, "follower_failures": 0}
        self.starts = 0
        self.drivers: list[Driver] = []     # every start, killed on the way out
        self.spark = None                   # the deleting user's session, made when first needed

    # --- the two drivers --------------------------------------------------------------
    def _start(self, module: str, args: list[str]) -> Driver:
        self.starts += 1
        log = os.path.join(self.logs, f"{self.starts:03d}-{module.rsplit('.', 1)[1]}.log")
        driver = Driver(module, args, log, self.env)
        self.drivers.append(driver)
        return driver

    def kill_all(self) -> None:
        """No driver outlives the soak, whatever stopped it."""
        for driver in self.drivers:
            if driver.alive():
                driver.kill()
        if self.spark is not None:
            self.spark.stop()

    def start_writer(self, until_batch: int | None = None) -> Driver:
        args = ["--root", self.root, "--checkpoint", os.path.join(self.data, "checkpoint"),
                "--master", self.args.master, "--rows", str(self.args.rows_per_batch),
                "--writer", self.args.writer]
        if until_batch is not None:
            args += ["--until-batch", str(until_batch)]
        writer = self._start("sparkjournal.tools.soak.writer_child", args)
        writer.decided_at_start = verdict.decided_count(self.root)
        return writer

    def restarted_if_dead(self, driver: Driver, kind: str, start) -> Driver:
        """A driver that exited by itself failed (only kills end them): counted,
        its output shown, and started again."""
        if driver.alive():
            return driver
        self.counts[f"{kind}_failures"] += 1
        self.say(f"{kind} exited by itself ({driver.process.returncode}):\n{driver.tail()}")
        return start()

    def landed_since_start(self, writer: Driver) -> bool:
        return verdict.decided_count(self.root) > writer.decided_at_start

    def start_follower(self, available_now: bool = False) -> Driver:
        args = ["--root", self.root, "--checkpoint", os.path.join(self.data, "follower-checkpoint"),
                "--out", os.path.join(self.data, "follower-out")]
        return self._start("sparkjournal.tools.soak.follower_child",
                           args + (["--available-now"] if available_now else []))

    def _next(self, kind: str) -> float:
        return time.monotonic() + self.random.uniform(*EVERY[kind])

    def say(self, text: str) -> None:
        print(f"soak {time.strftime('%H:%M:%S')} {text}", flush=True)

    # --- under fire -------------------------------------------------------------------
    def under_fire(self) -> None:
        writer = self.start_writer()
        deadline = time.monotonic() + self.args.minutes * 60
        while not verdict.decided_count(self.root):    # the reader needs the stream's schema
            if not writer.alive() or time.monotonic() > deadline + 300:
                raise RuntimeError(f"the writer landed no batch:\n{writer.tail()}")
            time.sleep(0.5)
        follower = self.start_follower()
        due = {kind: self._next(kind) for kind in EVERY}
        while time.monotonic() < deadline:
            time.sleep(0.5)
            now = time.monotonic()
            writer = self.restarted_if_dead(writer, "writer", self.start_writer)
            follower = self.restarted_if_dead(follower, "follower", self.start_follower)
            # A driver is killed only once it landed a batch since its start: on a
            # loaded machine a start can take longer than the kill interval, and a
            # soak that only kills starting drivers proves nothing about batches.
            if now >= due["driver"] and self.landed_since_start(writer):
                writer.kill()
                self.counts["driver_kills"] += 1
                self.say(f"SIGKILL writer driver (kill {self.counts['driver_kills']})")
                writer, due["driver"] = self.start_writer(), self._next("driver")
            if now >= due["executor"]:
                pid = kill_one_executor(writer, self.random.choice) if writer.ready() else None
                if pid is not None:
                    self.counts["executor_kills"] += 1
                    self.say(f"SIGKILL executor JVM {pid} (kill {self.counts['executor_kills']})")
                due["executor"] = self._next("executor") if pid else now + 3
            if now >= due["follower"]:
                follower.kill()
                self.counts["follower_kills"] += 1
                self.say(f"SIGKILL streaming reader (kill {self.counts['follower_kills']})")
                follower, due["follower"] = self.start_follower(), self._next("follower")
            if now >= due["maintenance"]:
                self.delete_some()
                self.maintenance()
                due["maintenance"] = self._next("maintenance")
        writer.kill()
        follower.kill()
        self.counts["driver_kills"] += 1
        self.counts["follower_kills"] += 1

    def delete_some(self) -> None:
        """Deletes the DELETE_PREDICATE events of every decided batch (after the
        writer drained: of every batch)."""
        from ... import delete
        from .session import soak_session
        if self.spark is None:
            self.spark = soak_session("local[1]", "sparkjournal-soak-deletes")
        below = verdict.decided_count(self.root) * self.args.rows_per_batch
        report = delete(self.spark, self.root, verdict.delete_predicate(below))
        self.counts["delete_jobs"] += 1
        self.counts["events_deleted"] += report.rows
        self.say(f"delete {self.counts['delete_jobs']}: {report.line()}")

    def maintenance(self) -> None:
        """One ``sparkjournal compact --force`` pass, as a cron job would run it."""
        report = os.path.join(self.logs, "maintenance.json")
        done = subprocess.run([sys.executable, "-m", "sparkjournal", "compact", self.root,
                               "--force", "--json", report], env=self.env,
                              capture_output=True, text=True, timeout=600)
        self.counts["maintenance_passes"] += 1
        if done.returncode != 0:
            raise RuntimeError(f"maintenance pass failed ({done.returncode}): "
                               f"{done.stdout[-2000:]}{done.stderr[-2000:]}")
        with open(report, encoding="utf-8") as handle:
            totals = json.load(handle)["totals"]
        self.counts["lanes_compacted"] += totals["compacted_lanes"]
        self.counts["bytes_reclaimed"] += totals["bytes_reclaimed"]
        self.say(f"maintenance pass {self.counts['maintenance_passes']}: "
                 f"{done.stdout.strip().splitlines()[-1]}")

    # --- the end ----------------------------------------------------------------------
    def drain(self) -> None:
        """The writer finishes every batch Spark planned; the reader catches up."""
        offsets = os.path.join(self.data, "checkpoint", "offsets")
        planned = [int(n) for n in os.listdir(offsets) if n.isdigit()] if os.path.isdir(offsets) else []
        if planned:
            self.say(f"draining: the writer runs until batch {max(planned)} is decided")
            writer = self.start_writer(until_batch=max(planned))
            if writer.wait(timeout=600) != 0:
                raise RuntimeError(f"the draining writer failed:\n{writer.tail()}")
        self.delete_some()
        self.maintenance()
        self.say("draining: the streaming reader catches up (availableNow)")
        follower = self.start_follower(available_now=True)
        if follower.wait(timeout=600) != 0:
            raise RuntimeError(f"the draining reader failed:\n{follower.tail()}")

    def verdicts(self) -> tuple[int, list]:
        from .session import soak_session
        generated = verdict.generated_events(self.root, self.args.rows_per_batch)
        found = [verdict.judge("journal", verdict.journal_ids(self.root), generated)]
        spark = self.spark or soak_session("local[1]", "sparkjournal-soak-verdict")
        frame = spark.read.format("sparkjournal").load(self.root)
        found.append(verdict.judge("batch reader", verdict.spark_ids(frame), generated))
        out = spark.read.parquet(os.path.join(self.data, "follower-out"))
        found.append(verdict.judge("streaming reader", verdict.spark_ids(out), generated,
                                   stream_copy=True))
        return generated, found


def journal_status(root: str) -> subprocess.CompletedProcess:
    """``sparkjournal status`` of the soak's journal, as an operator would run
    it after the fire (printed; the JSON form returned)."""
    command = [sys.executable, "-m", "sparkjournal", "status", root]
    print(subprocess.run(command, capture_output=True, text=True, timeout=600).stdout, flush=True)
    return subprocess.run(command + ["--json"], capture_output=True, text=True, timeout=600)


def run(args) -> int:
    soak = Soak(args)
    started = time.monotonic()
    soak.say(f"{args.minutes} min on {args.master}, writer={args.writer}, in {soak.data} "
             f"(seed {args.seed})")
    try:
        soak.under_fire()
        soak.drain()
        generated, places = soak.verdicts()
    finally:
        soak.kill_all()
    shown = journal_status(soak.root)
    counts = soak.counts
    minutes = (time.monotonic() - started) / 60
    print(f"soak survived {minutes:.1f} min: {generated:,} events in "
          f"{generated // args.rows_per_batch} batches; kills: {counts['driver_kills']} writer "
          f"driver, {counts['executor_kills']} executor JVM, {counts['follower_kills']} streaming "
          f"reader; {counts['maintenance_passes']} maintenance passes ({counts['lanes_compacted']} "
          f"lane compactions, {counts['bytes_reclaimed']:,} bytes reclaimed); {counts['delete_jobs']} "
          f"delete jobs ({counts['events_deleted']:,} events deleted); drivers that failed "
          f"by themselves: {counts['writer_failures']} writer, {counts['follower_failures']} reader")
    for place in places:
        print("  " + place.line())
    passed = all(p.ok for p in places) and not counts["writer_failures"] and not counts["follower_failures"]
    print("soak PASSED" if passed else "soak FAILED")
    if args.json:
        with open(args.json, "w", encoding="utf-8") as handle:
            json.dump({"minutes": round(minutes, 2), "events": generated, **counts,
                       "places": [vars(p) for p in places], "passed": passed,
                       "status": json.loads(shown.stdout or "null")}, handle, indent=1)
    return 0 if passed else 1
