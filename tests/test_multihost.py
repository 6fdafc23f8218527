"""Every user path on a cluster of separate hosts (tests/bed/cluster_bed.py): two
Spark workers, each in its own mount and UTS namespace with its own host name,
loopback address and private disk at the journal root, the commit log and
checkpoints in a folder every host shares; drivers run in a namespace that sees
no node root (the edge) or inside one host's.

Each scenario runs one driver (tests/bed/bed_driver.py) through several steps
and the tests below judge its report: every event id exactly once, or an error
that names the host that could not be reached. All slow (~7.5 min: a bed,
and a Spark application with an executor per host for each driver); CI runs
them.
"""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import pytest

pytest.importorskip("pyspark")

sys.path.insert(0, os.path.dirname(__file__))
from bed.cluster_bed import ClusterBed, unshare_unavailable  # noqa: E402

from sparkjournal.cli.main import main as command
from sparkjournal.events.commit_log import CommitLog
from sparkjournal.events.log_state import LogState
from sparkjournal.spark import connector  # noqa: E402

pytestmark = pytest.mark.slow

HERE = os.path.dirname(os.path.abspath(__file__))
DRIVER = os.path.join(HERE, "bed", "bed_driver.py")
REPO = os.path.dirname(HERE)
ROWS = 1000
CONF = ["spark.locality.wait=10s", "spark.scheduler.maxRegisteredResourcesWaitingTime=20s"]


@pytest.fixture(scope="module")
def bed(tmp_path_factory):
    reason = unshare_unavailable()
    if reason:
        pytest.skip(f"the multi-host bed cannot run here: {reason}")
    cluster = ClusterBed(tmp_path_factory.mktemp("bed"), hosts=2)
    try:
        cluster.start()
        print(f"bed of {len(cluster.host_names)} hosts started in {cluster.start_seconds:.1f}s")
        yield cluster
    finally:
        cluster.stop()


def in_host(bed, host: str | None, code: str) -> str:
    """What ``code`` prints when run by Python inside ``host``'s namespaces."""
    result = bed.run_driver([sys.executable, "-c", code], on=host, timeout=60)
    assert result.returncode == 0, result.stderr
    return result.stdout.strip()


def test_each_host_has_its_own_name_address_and_disk_at_one_path(bed):
    probe = ("import os, socket; root = {root!r}; write = {write}; "
             "write and open(os.path.join(root, 'probe'), 'w').write(socket.gethostname()); "
             "print(socket.gethostname(), socket.gethostbyname(socket.gethostname()), "
             "sorted(os.listdir(root)))")
    for host in bed.host_names:
        seen = in_host(bed, host, probe.format(root=str(bed.node_root), write=True))
        assert seen == f"{host} {bed.address(host)} ['probe']"
        assert (bed.private(host) / "probe").read_text() == host, "each host writes its own disk"
    edge = in_host(bed, None, probe.format(root=str(bed.node_root), write=False))
    assert edge == "sjedge 127.0.0.1 []", "the edge sees no node root"
    assert bed.alive_workers() == bed.host_names


def drive(bed, journal: str, steps: list[dict], on: str | None = None, conf=(),
          timeout: float = 600, env: dict | None = None) -> list[dict]:
    """Runs the bed driver; its per-step results."""
    argv = [sys.executable, DRIVER, "--journal", journal, "--steps", json.dumps(steps)]
    for item in [*CONF, *conf]:
        argv += ["--conf", item]
    started = time.monotonic()
    result = bed.run_driver(argv, on=on, timeout=timeout, env=env)
    line = next((line for line in result.stdout.splitlines() if line.startswith("RESULT ")), None)
    assert line is not None, f"driver exit {result.returncode}: {result.stderr[-4000:]}"
    print(f"driver on {on or 'the edge'}: {[s['do'] for s in steps]} in "
          f"{time.monotonic() - started:.1f}s")
    return json.loads(line[len("RESULT "):])


def expected_ids(stream: dict, offset: int = 0) -> list[int]:
    return sorted(offset + batch * stream["rows"] + i
                  for batch in stream["decided"] for i in range(stream["rows"]))


def log_of(bed, journal: str) -> CommitLog:
    return CommitLog(str(bed.shared / journal / "commits"))


def lanes_on(bed, host: str, journal: str) -> list[str]:
    root = bed.private(host) / journal
    return sorted(d for d in os.listdir(root) if d.startswith("lane-")) if root.is_dir() else []


# --- writing on the hosts, reading from the edge and from a host ------------------

@pytest.fixture(scope="module")
def written(bed):
    """From the edge: a foreachBatch stream, a format stream, a batch append,
    then every read. From sjhost1: one more foreachBatch stream, then every read."""
    steps = [{"do": "stream", "sink": "foreachBatch", "batches": 3, "rows": ROWS, "query": "each"},
             {"do": "stream", "sink": "format", "batches": 2, "rows": ROWS, "query": "fmt",
              "offset": 1_000_000},
             {"do": "write", "start": 2_000_000, "count": 3000},
             {"do": "read"}, {"do": "format_read"}, {"do": "stream_read"}]
    edge = drive(bed, "events", steps)
    on_host = drive(bed, "events", [
        {"do": "stream", "batches": 2, "rows": ROWS, "query": "hosted", "offset": 3_000_000},
        {"do": "read"}, {"do": "format_read"}, {"do": "stream_read"}], on=bed.host_names[0])
    each, fmt, write = edge[:3]
    for step in (each, fmt, write, on_host[0]):
        assert "error" not in step, step
    ids = expected_ids(each) + expected_ids(fmt, 1_000_000) + list(range(2_000_000, 2_003_000))
    return {"edge": edge, "on_host": on_host, "ids": sorted(ids),
            "all_ids": sorted(ids + expected_ids(on_host[0], 3_000_000))}


def test_jvm_writer_lands_lanes_on_every_host_and_reads_back_each_event_once(bed):
    """writer="jvm": the executors' JVMs resolve each host's root and node id
    themselves and read the shared commit log to end what the driver decided."""
    stream, read = drive(bed, "jvmwriter", [
        {"do": "stream", "batches": 3, "rows": ROWS, "query": "jvmwriter", "writer": "jvm"},
        {"do": "read"}])
    assert "error" not in stream and "error" not in read, (stream, read)
    assert len(stream["decided"]) >= 3 and read["ids"] == expected_ids(stream)
    hosts = {host for host in bed.host_names if lanes_on(bed, host, "jvmwriter")}
    assert hosts == set(bed.host_names), f"lanes only on {hosts}"
    assert not os.listdir(bed.node_root), "the edge's view of the journal root stays empty"
    assert {lane.split("/")[-1] for lane in stream["lanes"]} <= {
        lane for host in bed.host_names for lane in lanes_on(bed, host, "jvmwriter")}


def test_sinks_land_lanes_on_every_host_disk_and_none_on_the_edge(bed, written):
    for host in bed.host_names:
        assert lanes_on(bed, host, "events"), f"{host} got no lane"
    assert not os.listdir(bed.node_root), "the edge's view of the journal root stays empty"
    hosted = written["on_host"][0]["lanes"]
    assert {lane.split("/")[-1] for lane in hosted} <= {
        lane for host in bed.host_names for lane in lanes_on(bed, host, "events")}


def test_read_from_the_edge_returns_every_event_exactly_once(bed, written):
    read = written["edge"][3]
    assert "error" not in read, read
    assert read["ids"] == written["ids"]
    assert read["hosts"] == sorted(bed.host_names) and read["left_out"] == ""


def test_read_from_one_host_returns_every_event_not_just_its_own(bed, written):
    read = written["on_host"][1]
    assert "error" not in read, read
    assert read["ids"] == written["all_ids"], "the table's 11,000 of 22,000 is gone"
    assert read["hosts"] == sorted(bed.host_names)


@pytest.mark.parametrize("where", ["edge", "on_host"])
def test_format_reads_from_the_edge_or_a_host_read_all_or_fail_naming_sparkjournal_read(
        written, where):
    """format("sparkjournal") batch reads and micro-batch streams are the JVM
    connector's where the session ships it (spark.jars: the drivers take
    sparkjournal.configure's), from
    anywhere: the batch read returns every event; the stream runs and returns
    at most those (a writer stream stopped mid-batch leaves that batch prepared
    and undecided until its query restarts, and no stream may pass it: the
    exact count is checked where every batch is decided, below). Without the
    connector both are the Python source's, which plans only what the driver
    sees: they fail at planning, naming sparkjournal.read, never return part of
    the events."""
    steps = {step["do"]: step for step in written[where]}
    if connector.jar_unavailable() is None:
        count = len(written["ids"] if where == "edge" else written["all_ids"])
        assert steps["format_read"].get("count") == count, steps["format_read"]
        assert 0 < steps["stream_read"].get("count", 0) <= count, steps["stream_read"]
        return
    for name in ("format_read", "stream_read"):
        step = steps[name]
        assert "error" in step, f"{name} from {where} returned {step}"
        assert "sparkjournal.read(spark" in step["error"] and "does not see node" in step["error"]
        assert "committed batches" in step["error"]


def jvm_conf() -> list[str]:
    """The connector's jar, one attempt per task, and time for the scheduler to
    wait for each lane's host."""
    reason = connector.jar_unavailable()
    if reason:
        pytest.skip(f"no JVM connector here: {reason}")
    return [f"spark.jars={connector.jar_path()}", "spark.task.maxFailures=1", "spark.locality.wait=30s"]


def test_jvm_format_read_from_the_edge_reads_each_lane_on_its_host_exactly_once(bed, written):
    """The JVM connector's partitions carry their lane's host: from the edge,
    which sees no root, format("sparkjournal") returns every event once, each
    row read by a task on the host that holds its lane (a task elsewhere fails
    its NODE_ID check, and with one attempt the read would fail)."""
    (read,) = drive(bed, "events", [{"do": "where_read"}], conf=jvm_conf())
    assert "error" not in read, read
    assert read["jvm_scan"], "the read did not go through the JVM connector"
    assert read["ids"] == written["all_ids"]
    assert read["hosts"] == sorted(bed.host_names) and read["misplaced"] == 0


def test_jvm_stream_from_the_edge_reads_each_lane_on_its_host_then_resumes_exactly_once(bed):
    """readStream.format("sparkjournal") from the edge, over a journal whose
    batches are all decided: the stable points are found on the lanes' hosts
    and every micro-batch's rows are read there; a second driver resuming from
    the checkpoint after more commits reads only those, and the sink holds
    every event exactly once."""
    conf = jvm_conf()
    written = drive(bed, "followed", [{"do": "write", "start": 0, "count": 3000},
                                      {"do": "write", "start": 3000, "count": 3000}])
    assert all("error" not in step for step in written), written
    assert all(lanes_on(bed, host, "followed") for host in bed.host_names), "a lane on every host"
    (first,) = drive(bed, "followed", [{"do": "follow", "name": "edge", "maxRows": 2000}], conf=conf)
    assert "error" not in first, first
    assert first["jvm_stream"], "the stream did not go through the JVM connector"
    assert first["ids"] == list(range(6000)) and first["read_now"] == 6000
    assert first["batches"] > 1, "maxRowsPerTrigger splits the backlog"
    assert first["hosts"] == sorted(bed.host_names) and first["misplaced"] == 0
    more, second = drive(bed, "followed", [{"do": "write", "start": 6000, "count": 2000},
                                           {"do": "follow", "name": "edge"}], conf=conf)
    assert "error" not in more and "error" not in second, (more, second)
    assert second["read_now"] == 2000, "only what was committed after the first run"
    assert second["ids"] == list(range(8000)), "every event exactly once"
    assert second["misplaced"] == 0


def test_without_the_jar_shipped_writes_fall_back_and_reads_fail_at_planning_naming_jars(bed):
    """The workers run from a Spark folder of their own that holds no
    sparkjournal jar. A driver whose own JVM has the connector
    (spark.driver.extraClassPath) but ships nothing to its executors (no
    spark.jars, SPARKJOURNAL_JVM=off: no jar added at its first call): the
    sink's writer="auto" writes with Python workers, every batch lands, and
    format("sparkjournal") batch and stream reads fail at planning, naming
    --jars, rather than in every task."""
    reason = connector.jar_unavailable()
    if reason:
        pytest.skip(f"no JVM connector here: {reason}")
    assert not list((bed.cluster_spark_home / "jars").glob("*sparkjournal*"))
    stream, read, follow = drive(
        bed, "unshipped", [{"do": "stream", "batches": 2, "rows": ROWS, "query": "unshipped"},
                           {"do": "where_read"}, {"do": "follow", "name": "unshipped"}],
        conf=[f"spark.driver.extraClassPath={connector.jar_path()}"], env={"SPARKJOURNAL_JVM": "off"})
    assert "error" not in stream, stream
    assert stream["jvm_writer"] is False and len(stream["decided"]) >= 2
    for step in (read, follow):
        assert "error" in step, step
        assert '--jars "$(sparkjournal jar)"' in step["error"] and "not given" in step["error"], step


# --- maintenance, deletes, retention across hosts ---------------------------------

def spark_submit(bed, job: str, args: list[str], on: str | None = None, timeout: float = 600,
                 conf=()):
    """A job as a user runs it: spark-submit with the bed's confs."""
    import pyspark
    submit = os.path.join(os.path.dirname(pyspark.__file__), "bin", "spark-submit")
    confs = [arg for key, value in bed.driver_conf(on).items()
             for arg in ("--conf", f"{key}={value}")]
    for item in [*CONF, *conf]:
        confs += ["--conf", item]
    argv = [submit, *confs, os.path.join(REPO, "jobs", job), *args]
    started = time.monotonic()
    result = bed.run_driver(argv, on=on, timeout=timeout)
    print(f"{job} {' '.join(args)} on {on or 'the edge'}: exit {result.returncode} in "
          f"{time.monotonic() - started:.1f}s")
    return result


def journal_args(bed, journal: str) -> list[str]:
    return ["--path", str(bed.node_root / journal),
            "--commit-log", str(bed.shared / journal / "commits")]


@pytest.fixture(scope="module")
def maintained(bed):
    """Three batches from the edge; compact.py --force from the edge, page.py
    --force on sjhost1, replay.py from the edge; on sjhost2 a read, a delete and
    a read; retention of everything (1 s) on sjhost1; a read from the edge."""
    first = drive(bed, "kept", [{"do": "stream", "batches": 3, "rows": ROWS, "query": "kept"}])[0]
    assert "error" not in first, first
    compact = spark_submit(bed, "compact.py", journal_args(bed, "kept") + ["--force"])
    page = spark_submit(bed, "page.py", journal_args(bed, "kept") + ["--force"],
                        on=bed.host_names[0])
    replay = spark_submit(bed, "replay.py", journal_args(bed, "kept") + [
        "--output", str(bed.shared / "replayed"), "--summary"])
    after = drive(bed, "kept", [{"do": "read"}, {"do": "delete", "predicate": "id % 10 = 0"},
                                {"do": "read"}], on=bed.host_names[1])
    retention = spark_submit(bed, "compact.py", journal_args(bed, "kept") + [
        "--option", "retention=1s"], on=bed.host_names[0])
    last = drive(bed, "kept", [{"do": "read"}])[0]
    return {"ids": expected_ids(first), "compact": compact, "page": page, "replay": replay,
            "after": after, "retention": retention, "last": last}


def test_compact_and_page_jobs_reach_every_hosts_lanes(bed, maintained):
    for name in ("compact", "page"):
        result = maintained[name]
        assert result.returncode == 0, (result.stdout[-2000:], result.stderr[-3000:])
        for host in bed.host_names:
            for lane in lanes_on(bed, host, "kept"):
                assert f"{host}:{bed.node_root / 'kept'}/{lane}: " in result.stdout, (host, lane, name)
    for host in bed.host_names:
        paged = [lane for lane in lanes_on(bed, host, "kept")
                 if (bed.private(host) / "kept" / lane / "pages").is_dir()]
        assert paged, f"page.py --force paged no lane on {host}: page files live on their node"


def test_replay_job_from_the_edge_writes_every_event_once(bed, maintained):
    import pyarrow.parquet as pq
    result = maintained["replay"]
    assert result.returncode == 0, (result.stdout[-2000:], result.stderr[-3000:])
    ids = sorted(pq.read_table(str(bed.shared / "replayed"), columns=["id"]).column("id").to_pylist())
    assert ids == maintained["ids"]
    assert f"{len(maintained['ids'])} events" in result.stdout


def test_paged_and_compacted_journal_reads_every_event_once_then_deletes_reach_both_hosts(
        bed, maintained):
    read, delete, again = maintained["after"]
    assert read["ids"] == maintained["ids"], "pages read on their node, tails by the lane tasks"
    assert "error" not in delete, delete
    gone = [i for i in maintained["ids"] if i % 10 == 0]
    assert delete["rows"] == len(gone)
    assert {lane.split("/")[-1] for lane in delete["lanes"]} and delete["left_out"] == ""
    assert again["ids"] == [i for i in maintained["ids"] if i % 10]


def test_retention_reaches_every_hosts_lanes(bed, maintained):
    result = maintained["retention"]
    assert result.returncode == 0, (result.stdout[-2000:], result.stderr[-3000:])
    assert maintained["last"]["ids"] == [], "every event is past a 1 s retention"
    for host in bed.host_names:
        lines = [line for line in result.stdout.splitlines() if line.startswith(f"{host}:")]
        assert any("stored records (" in line and "past it" in line for line in lines), \
            f"retention expired nothing on {host}: {lines}"


# --- faults across hosts -----------------------------------------------------------

def start_stream(bed, journal: str, rows: int = 500, writer: str = "python"):
    steps = [{"do": "stream", "forever": True, "rows": rows, "query": journal, "writer": writer}]
    argv = [sys.executable, DRIVER, "--journal", journal, "--steps", json.dumps(steps)]
    for item in CONF:
        argv += ["--conf", item]
    child = bed.popen_driver(argv, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    for line in child.stdout:
        if line.startswith("QUERY "):
            return child, line.split()[1]
    raise AssertionError(f"the stream driver ended before its query ran (exit {child.wait()})")


def wait_decided(bed, journal: str, query: str, count: int, timeout: float = 300) -> int:
    log = log_of(bed, journal)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = len(log.batches(query))
        if found >= count:
            return found
        time.sleep(0.5)
    raise AssertionError(f"only {len(log.batches(query))} of {count} batches of {query} decided")


def kill_driver(child) -> None:
    os.killpg(child.pid, signal.SIGKILL)
    child.wait()


def finish_and_read(bed, journal: str, batches: int, rows: int = 500,
                    writer: str = "python") -> tuple[dict, dict]:
    """Restarts the stream from its checkpoint until ``batches`` are decided, then reads."""
    stream, read = drive(bed, journal, [
        {"do": "stream", "batches": batches, "rows": rows, "query": journal, "writer": writer},
        {"do": "read"}])
    assert "error" not in stream and "error" not in read, (stream, read)
    return stream, read


@pytest.mark.parametrize("writer", ["python", "jvm"])
def test_worker_host_killed_mid_stream_loses_and_doubles_nothing(bed, writer):
    """A host dies with its executor's lanes held (by Python workers, or by the
    executor JVM's kept writers): its prepared transactions wait on its disk."""
    journal = f"hostkill-{writer}"
    child, query = start_stream(bed, journal, writer=writer)
    try:
        decided = wait_decided(bed, journal, query, 2)
        bed.kill_host(bed.host_names[1])
        assert bed.processes_on(bed.host_names[1]) == [], "worker, executor, Python workers: dead"
        decided = wait_decided(bed, journal, query, decided + 2)
        bed.restart_host(bed.host_names[1])
        wait_decided(bed, journal, query, decided + 1)
    finally:
        kill_driver(child)
    stream, read = finish_and_read(bed, journal, len(log_of(bed, journal).batches(query)) + 2,
                                   writer=writer)
    assert stream["query"] == query
    assert read["ids"] == expected_ids(stream), "every event of every decided batch, once"


def test_driver_killed_mid_stream_with_prepared_lanes_on_other_hosts_is_exactly_once(bed):
    child, query = start_stream(bed, "driverkill")
    try:
        wait_decided(bed, "driverkill", query, 3)
    finally:
        kill_driver(child)             # tasks on both hosts may hold prepared transactions
    stream, read = finish_and_read(bed, "driverkill",
                                   len(log_of(bed, "driverkill").batches(query)) + 2)
    assert stream["query"] == query
    assert read["ids"] == expected_ids(stream)


def test_host_down_at_read_time_fails_naming_it_and_reads_all_once_back(bed):
    stream = drive(bed, "hostdown", [{"do": "stream", "batches": 2, "rows": ROWS,
                                      "query": "hostdown"}])[0]
    down = bed.host_names[1]
    assert lanes_on(bed, down, "hostdown"), "the host to take down holds lanes"
    bed.kill_host(down)
    try:
        failed, partial = drive(bed, "hostdown", [{"do": "read"}, {"do": "read", "allowPartial": True}],
                                conf=["spark.scheduler.maxRegisteredResourcesWaitingTime=5s"])
        compact = spark_submit(bed, "compact.py", journal_args(bed, "hostdown") + ["--force"],
                               conf=["spark.scheduler.maxRegisteredResourcesWaitingTime=5s"])
    finally:
        bed.restart_host(down)
    assert "UnreachableNodesError" in failed["error"]
    assert f"on host {down} (no live executor on host {down}" in failed["error"]
    assert "committed batches" in failed["error"] and "allowPartialRead=true" in failed["error"]
    assert partial["left_out"].startswith("PARTIAL READ") and down in partial["left_out"]
    assert set(partial["ids"]) < set(expected_ids(stream)) and partial["hosts"] == [bed.host_names[0]]
    assert compact.returncode == 1, "a job that could not reach a lane exits non-zero"
    assert f"{down}:{bed.node_root / 'hostdown'}/{{" in compact.stdout
    assert "FAILED: not reached:" in compact.stdout
    back = drive(bed, "hostdown", [{"do": "read"}])[0]
    assert back["ids"] == expected_ids(stream)


def test_host_lost_for_good_is_forgotten_then_stays_out_until_restored(bed):
    stream = drive(bed, "forgot", [{"do": "stream", "batches": 2, "rows": ROWS,
                                    "query": "forgot"}])[0]
    gone = bed.host_names[1]
    assert lanes_on(bed, gone, "forgot"), "the host to lose holds lanes"
    node = (bed.private(gone) / "forgot" / "NODE_ID").read_text().strip()
    path, commits = str(bed.node_root / "forgot"), str(bed.shared / "forgot" / "commits")
    view = LogState(commits).view(refresh=True)
    lost = view.checkpoint.with_entries(view.entries).nodes[node].rows
    bed.kill_host(gone)
    try:
        assert command(["nodes", path, "--commit-log", commits, "--forget", node, "--yes"]) == 0
        read, where = drive(bed, "forgot", [{"do": "read"}, {"do": "where_read"}])
    finally:
        bed.restart_host(gone)
    every = expected_ids(stream)
    assert "error" not in read, read
    assert read["forgotten"] == lost and len(read["ids"]) + lost == len(every)
    assert set(read["ids"]) < set(every) and read["hosts"] == [bed.host_names[0]]
    assert read["waited_s"] < 15, "a forgotten node is not waited for"
    assert where["ids"] == read["ids"], "the JVM reader leaves the same node out"
    back = drive(bed, "forgot", [{"do": "read"}])[0]            # its root is back: quarantined
    assert back["ids"] == read["ids"] and back["forgotten"] == lost
    assert command(["nodes", path, "--commit-log", commits, "--restore", node, "--yes"]) == 0
    restored = drive(bed, "forgot", [{"do": "read"}, {"do": "where_read"}])
    assert restored[0]["ids"] == every and restored[1]["ids"] == every
