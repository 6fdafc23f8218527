"""``df.write.format("sparkjournal")`` and ``writeStream.format("sparkjournal")`` as the
JVM connector's own DataSource V2 write (JournalWriteBuilder: JVM tasks, the decision
written by the driver in Java, no Python worker), on the shared real Spark session.

The JVM write is told from the Python data source's by the executed plan, which Spark's
SQL status store keeps: its AppendData node's write is "sparkjournal JVM write into
<path>" (JournalWrite.description)."""
from __future__ import annotations

import glob
import json
import logging
import os
import stat
import time

import pytest

pytest.importorskip("pyspark")

from sparkjournal import JournalSink  # noqa: E402
from sparkjournal.events.commit_log import CommitLog, Decision  # noqa: E402
from sparkjournal.events.log_state import LogState  # noqa: E402
from sparkjournal.events.log_view import build  # noqa: E402
from sparkjournal.spark import jvm_build, jvm_sink  # noqa: E402

from test_sink import events, ids_of  # noqa: E402

JVM_WRITE = "sparkjournal JVM write into"


@pytest.fixture(scope="module")
def jvm_spark(spark):
    if jvm_sink._writer_in(spark._jvm) is None:
        pytest.skip(f"no JVM connector on the session's classpath: {jvm_build.jvm_unavailable()}")
    return spark


def last_plan(spark) -> str:
    """The physical plan of the session's newest SQL execution."""
    executions = spark._jsparkSession.sharedState().statusStore().executionsList()
    return executions.apply(executions.size() - 1).physicalPlanDescription()


def entries(path, query=None):
    log = CommitLog(os.path.join(path, "_commits"))
    return {q: log.batches(q) for q in log.queries() if query in (None, q)}


def test_a_batch_write_goes_through_the_jvm_and_reads_back_exactly(jvm_spark, tmp_path):
    path = str(tmp_path / "journal")
    events(jvm_spark, 0, 500).write.format("sparkjournal").mode("append").save(path)
    assert JVM_WRITE in last_plan(jvm_spark), last_plan(jvm_spark)
    events(jvm_spark, 500, 300).write.format("sparkjournal").mode("append").save(path)
    assert ids_of(path) == list(range(800))
    found = entries(path)
    assert len(found) == 2 and all(q.startswith("batch-write-") and b == [0]
                                   for q, b in found.items()), found
    query = next(iter(found))
    raw = open(os.path.join(path, "_commits", query, f"{0:020d}.json"), "rb").read()
    decision = Decision.from_json(raw, query)             # Python reads the Java entry
    assert json.loads(raw) == json.loads(decision.to_json()), "the entry holds what Python's holds"
    assert decision.rows in (500, 300) and {t["lane"] for t in decision.txs}


def test_txn_app_id_and_version_write_once(jvm_spark, tmp_path):
    path = str(tmp_path / "journal")
    for _ in range(2):                                    # a retried job: the same version
        events(jvm_spark, 0, 200).write.format("sparkjournal").mode("append") \
            .option("txnAppId", "loader").option("txnVersion", 7).save(path)
        assert JVM_WRITE in last_plan(jvm_spark), last_plan(jvm_spark)
    assert ids_of(path) == list(range(200))
    assert entries(path, "loader") == {"loader": [7]}
    with pytest.raises(Exception, match="txnAppId and txnVersion go together"):
        events(jvm_spark, 0, 1).write.format("sparkjournal").mode("append") \
            .option("txnVersion", 8).save(path)
    for writer in ("jvm", "python"):              # txnAppId alone: refused, not batch 0 again
        with pytest.raises(Exception, match="txnAppId and txnVersion go together"):
            events(jvm_spark, 0, 1).write.format("sparkjournal").mode("append") \
                .option("writer", writer).option("txnAppId", "loader").save(path)
    assert ids_of(path) == list(range(200)), "nothing of the refused writes landed"


def test_a_stream_restarted_from_its_checkpoint_lands_every_event_once(jvm_spark, tmp_path):
    path, checkpoint, source = (str(tmp_path / n) for n in ("journal", "checkpoint", "in"))
    os.mkdir(source)
    for run in range(2):
        for part in range(2):                                # new files for each run
            rows = [json.dumps({"id": run * 200 + part * 100 + i, "key": f"k{i}"})
                    for i in range(100)]
            with open(os.path.join(source, f"run{run}-{part}.json"), "w") as handle:
                handle.write("\n".join(rows))
        query = (jvm_spark.readStream.schema("id LONG, key STRING").option("maxFilesPerTrigger", 1)
                 .json(source).writeStream.format("sparkjournal")
                 .option("checkpointLocation", checkpoint).trigger(availableNow=True).start(path))
        query.awaitTermination()
        assert query.exception() is None
    assert ids_of(path) == list(range(400))
    assert entries(path) == {str(query.id): [0, 1, 2, 3]}, "the stable query id, batch by batch"


def test_jvm_and_python_writers_store_the_same_rows_and_schema(jvm_spark, tmp_path):
    tables = []
    for writer in ("jvm", "python"):
        path = str(tmp_path / writer)
        events(jvm_spark, 0, 300).write.format("sparkjournal").mode("append") \
            .option("writer", writer).save(path)
        assert (JVM_WRITE in last_plan(jvm_spark)) == (writer == "jvm"), writer
        frame = jvm_spark.read.format("sparkjournal").load(path)
        tables.append((frame.schema, sorted(frame.select("id", "ts", "key", "payload", "amount")
                                            .collect())))
        tables[-1] = (tables[-1][0], tables[-1][1], CommitLog(os.path.join(path, "_commits"))
                      .read_schema())
    assert tables[0][0] == tables[1][0] and tables[0][1] == tables[1][1]
    assert tables[0][2].equals(tables[1][2]), (tables[0][2], tables[1][2])


def test_auto_keeps_the_jvm_write_for_size_limits_and_large_records(jvm_spark, tmp_path):
    """Every journal option is the JVM writer's own: writer=auto never hands a write
    to the Python data source's writer because of one (here a size limit with its
    policy and largeRecordSize, whose bodies land in large/)."""
    path = str(tmp_path / "journal")
    events(jvm_spark, 0, 2000).write.format("sparkjournal").mode("append") \
        .option("maxSizeBytes", "1g").option("addressFullPolicy", "fail") \
        .option("largeRecordSize", "1k").save(path)
    assert JVM_WRITE in last_plan(jvm_spark), last_plan(jvm_spark)
    assert ids_of(path) == list(range(2000))
    assert glob.glob(os.path.join(path, "lane-*", "large", "*.body")), "bodies above 1k"


def modes_under(root: str) -> dict[str, str]:
    """{path relative to ``root`` ("." for it): its permission bits, octal}."""
    found = {".": oct(stat.S_IMODE(os.stat(root).st_mode))}
    for folder, dirs, files in os.walk(root):
        for name in dirs + files:
            path = os.path.join(folder, name)
            found[os.path.relpath(path, root)] = oct(stat.S_IMODE(os.lstat(path).st_mode))
    return found


def test_auto_writes_dir_mode_and_file_mode_in_the_jvm(jvm_spark, tmp_path, caplog):
    """dirMode / fileMode are the JVM writer's own (DiskModes): writer=auto keeps the JVM
    write, whose tasks and driver create every folder and file with them (0700 / 0600 come
    out exact under the umask 022 of the Spark session's JVM); the root made beforehand keeps its
    0755. The foreachBatch sink's auto takes its JVM tasks for them too."""
    path = str(tmp_path / "journal")
    os.mkdir(path)
    os.chmod(path, 0o755)
    events(jvm_spark, 0, 200).write.format("sparkjournal").mode("append") \
        .option("dirMode", "0700").option("fileMode", "0600").save(path)
    assert JVM_WRITE in last_plan(jvm_spark), last_plan(jvm_spark)
    assert ids_of(path) == list(range(200))
    found = modes_under(path)
    query = next(iter(entries(path)))
    for made in ("NODE_ID", "lane-000", "lane-000/journal.lock", "lane-000/files.lock",
                 "_commits", "_commits/LOG_ID", "_commits/schema.arrow",
                 f"_commits/{query}/{0:020d}.json"):
        assert made in found, f"{made} was not created: {sorted(found)}"
    assert found.pop(".") == "0o755", "the existing root is not chmod-ed"
    wrong = {p: m for p, m in found.items()
             if m != ("0o700" if os.path.isdir(os.path.join(path, p)) else "0o600")}
    assert not wrong, f"expected folders 0700 and files 0600, found {wrong}"
    sunk = str(tmp_path / "sunk")
    sink = JournalSink(sunk, txnAppId="q", smallBatchRows=0, dirMode="0700", fileMode="0600")
    with caplog.at_level(logging.INFO, logger="sparkjournal.sink"):
        sink(events(jvm_spark, 0, 100), 0)
    start = [r.getMessage() for r in caplog.records if r.name == "sparkjournal.sink"][0]
    assert "writer=jvm (auto: executor tasks write in the JVM" in start, start
    assert ids_of(sunk) == list(range(100))
    assert modes_under(sunk)[os.path.join("lane-000", "journal.lock")] == "0o600"


def test_refused_options_schemas_and_overwrite_fail_before_any_row_is_written(jvm_spark,
                                                                              tmp_path):
    path = str(tmp_path / "journal")
    with pytest.raises(Exception, match=r"writer=jvm\) cannot write into .*its commit log "
                                        r"hdfs://nowhere:9000/log is not on a local path"
                                        r".*set it to python"):
        events(jvm_spark, 0, 10).write.format("sparkjournal").mode("append") \
            .option("writer", "jvm").option("commitLog", "hdfs://nowhere:9000/log").save(path)
    with pytest.raises(Exception, match=r"option fileSize='64q' is not valid"):
        events(jvm_spark, 0, 10).write.format("sparkjournal").mode("append") \
            .option("fileSize", "64q").save(path)
    assert not os.path.exists(path), "nothing was written"
    events(jvm_spark, 0, 10).write.format("sparkjournal").mode("append").save(path)
    with pytest.raises(Exception, match="append-only: use mode.'append'."):
        events(jvm_spark, 0, 1).write.format("sparkjournal").mode("overwrite").save(path)
    with pytest.raises(Exception, match="Append"):             # Spark's own: no mode given
        events(jvm_spark, 0, 1).write.format("sparkjournal").save(path)
    with pytest.raises(Exception, match="column amount is string, the journal holds double"):
        events(jvm_spark, 0, 1).selectExpr("id", "'x' as amount").write \
            .format("sparkjournal").mode("append").save(path)
    assert ids_of(path) == list(range(10))


def test_the_jvm_driver_checkpoints_the_commit_log_and_applies_retention(jvm_spark, tmp_path):
    path = str(tmp_path / "journal")
    for version in range(8):
        events(jvm_spark, version * 50, 50).write.format("sparkjournal").mode("append") \
            .option("txnAppId", "loader").option("txnVersion", version) \
            .option("commitLogCheckpointInterval", 2).option("commitLogRetainBatches", 2) \
            .option("commitLogRetainTime", "0s").save(path)
    assert JVM_WRITE in last_plan(jvm_spark), last_plan(jvm_spark)
    log = CommitLog(os.path.join(path, "_commits"))
    deadline = time.monotonic() + 30                      # the driver's daemon thread's last run
    while True:
        view = build(log)
        left = log.batches("loader")
        if view.checkpoint.through("loader") == 7 and left == [6, 7] or time.monotonic() > deadline:
            break
        time.sleep(0.2)
    assert view.checkpoint_name is not None and view.checkpoint.seq >= 1, view.checkpoint_name
    assert view.checkpoint.through("loader") == 7 and view.checkpoint.queries["loader"].decided == 8
    assert left == [6, 7], "entries two checkpoints cover, past the newest two, are deleted"
    state = LogState(log.uri)
    assert all(state.done("loader", v) and state.committed_at_ms("loader", v) for v in range(8))
    assert ids_of(path) == list(range(400))
