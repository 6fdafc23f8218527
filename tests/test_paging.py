"""Paging (maintenance/paging.py): the oldest events of a lane move into Parquet
page files and every read returns exactly what it returned before - batch,
streaming and the locality-aware read; deletes still reach paged events; the
pager SIGKILLed at each step loses nothing and reads nothing twice; a lane
held by a live writer gets its page committed by that writer."""
from __future__ import annotations

import os
import signal
import subprocess
import sys

import pytest

pytest.importorskip("pyspark")

import pyarrow.parquet as pq  # noqa: E402

import sparkjournal  # noqa: E402
from sparkjournal import JournalSink, read_table  # noqa: E402
from sparkjournal.config import load_config  # noqa: E402
from sparkjournal.events.commit_log import CommitLog, default_log_uri  # noqa: E402
from sparkjournal.events.page_records import PAGES, live_pages  # noqa: E402
from sparkjournal.events.requests import pending  # noqa: E402
from sparkjournal.events.visible_events import node_lanes  # noqa: E402
from sparkjournal.journal.journal import Journal  # noqa: E402
from sparkjournal.maintenance.compactor import compact_lane  # noqa: E402
from sparkjournal.maintenance.lane_maintenance import maintain_lane  # noqa: E402
from sparkjournal.maintenance.lane_requests import apply_now  # noqa: E402
from sparkjournal.maintenance.page_limits import lane_bytes  # noqa: E402
from sparkjournal.maintenance.paging import page_lane  # noqa: E402

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SMALL = {"fileSize": "64k", "bufferSize": "16k", "pageSizeBytes": "40k"}


def write_events(spark, path: str, batches: int = 4, rows: int = 1500) -> None:
    # Tasks write (smallBatchRows=0): several lanes of several sizes, held by workers.
    sink = JournalSink(path, txnAppId="q", laneIdleTimeout="200ms", smallBatchRows=0, **SMALL)
    for batch in range(batches):
        start = batch * rows
        sink(spark.range(start, start + rows, numPartitions=2).selectExpr(
            "id", "concat('k', cast(id % 10 as string)) as key", "repeat('p', 60) as payload",
            "cast(id as double) / 7 as score"), batch)


def lanes(path: str) -> list[tuple[str, str]]:
    return list(node_lanes(path))


def busiest_lane(path: str) -> tuple[str, str]:
    """(lane, node) of the lane holding the most data (some lanes may hold none)."""
    return max(lanes(path), key=lambda found: lane_bytes(found[0]))


def page_all(path: str, force: bool = True, **options):
    config = load_config({**SMALL, **options})
    return [page_lane(lane, node, default_log_uri(path), config, force=force)
            for lane, node in lanes(path)]


def format_rows(spark, path: str) -> list[tuple]:
    frame = spark.read.format("sparkjournal").load(path)
    return sorted(tuple(row) for row in frame.collect())


def located_rows(spark, path: str) -> list[tuple]:
    return sorted(tuple(row) for row in sparkjournal.read(spark, path).collect())


def ids(path: str) -> list[int]:
    table = read_table(path)
    return sorted(table.column("id").to_pylist()) if table is not None else []


def page_files(lane: str) -> list[str]:
    folder = os.path.join(lane, PAGES)
    return sorted(os.listdir(folder)) if os.path.isdir(folder) else []


def live_page_names(lane: str) -> list[str]:
    with Journal.read(lane) as snapshot:
        return [ref.name for ref in live_pages(snapshot)]


@pytest.fixture
def journal(spark, tmp_path, wait_lanes_free):
    path = str(tmp_path / "journal")
    write_events(spark, path)
    wait_lanes_free([lane for lane, _node in lanes(path)])
    return path


def test_paged_events_read_back_exactly_as_before_in_every_reader(spark, journal):
    before_format, before_located = format_rows(spark, journal), located_rows(spark, journal)
    assert len(before_format) == 6000 and before_located == before_format
    reports = page_all(journal)
    assert any(r.paged for r in reports), [r.line() for r in reports]
    assert all(r.pages_written == 1 and r.records_paged > 0 if r.paged else      # some lanes
               "no live events" in r.reason for r in reports), [r.line() for r in reports]
    for report in reports:
        assert page_files(report.lane) == live_page_names(report.lane)
        assert bool(page_files(report.lane)) == report.paged
    assert format_rows(spark, journal) == before_format
    assert located_rows(spark, journal) == before_format
    assert ids(journal) == list(range(6000))
    later = sparkjournal.read(spark, journal, startingBatchId=2).select("id").collect()
    assert sorted(r.id for r in later) == list(range(3000, 6000))   # pages pruned and filtered
    native = sparkjournal.read(spark, journal).inputFiles()     # pages: Spark's Parquet reader
    assert sorted(os.path.basename(f) for f in native) == sorted(
        name for lane, _node in lanes(journal) for name in page_files(lane))
    # Page again: more pages, same rows; reports count them.
    more = page_all(journal)
    assert any(r.paged for r in more), [r.line() for r in more]
    assert all(r.pages_after == r.pages_before + 1 == 2 for r in more if r.paged)
    assert format_rows(spark, journal) == before_format
    assert located_rows(spark, journal) == before_format


def test_a_page_is_plain_parquet_with_the_events_and_their_metadata(spark, journal):
    page_all(journal)
    lane, node = busiest_lane(journal)
    name = page_files(lane)[0]
    table = pq.read_table(os.path.join(lane, PAGES, name))
    assert table.column_names == ["id", "key", "payload", "score", "_batch_id", "_commit_time",
                                  "_host", "_lane", "_record_id", "_row"]
    record_ids = table.column("_record_id").to_pylist()
    assert record_ids == sorted(record_ids)
    assert set(table.column("_lane").to_pylist()) == {os.path.basename(lane)}
    assert table.column("_commit_time").null_count == 0
    by_spark = spark.read.parquet(os.path.join(lane, PAGES, name))
    assert by_spark.count() == table.num_rows


def test_streaming_read_of_a_paged_journal_returns_every_event_once(spark, journal, tmp_path):
    page_all(journal)
    out = str(tmp_path / "out")
    query = (spark.readStream.format("sparkjournal").load(journal)
             .select("id", "_record_id", "_row").writeStream.format("parquet")
             .option("checkpointLocation", str(tmp_path / "ck")).trigger(availableNow=True)
             .start(out))
    query.awaitTermination(120)
    got = sorted(r.id for r in spark.read.parquet(out).select("id").collect())
    assert got == list(range(6000))
    limited = (spark.readStream.format("sparkjournal").option("maxRowsPerTrigger", 1000)
               .load(journal).select("id").writeStream.format("parquet")
               .option("checkpointLocation", str(tmp_path / "ck2")).trigger(availableNow=True)
               .start(str(tmp_path / "out2")))
    limited.awaitTermination(120)
    assert len(limited.recentProgress) > 3                       # the limit held over pages
    assert sorted(r.id for r in spark.read.parquet(str(tmp_path / "out2")).collect()) == \
        list(range(6000))


def test_deletes_reach_paged_events_and_stay_through_compaction(spark, journal, wait_lanes_free):
    page_all(journal)
    report = sparkjournal.delete(spark, journal, "key = 'k3' or id = 5999", **SMALL)
    assert report.rows == 601, report.line()
    expected = [i for i in range(6000) if i % 10 != 3 and i != 5999]
    assert ids(journal) == expected
    assert sorted(r.id for r in sparkjournal.read(spark, journal).select("id").collect()) == expected
    wait_lanes_free([lane for lane, _node in lanes(journal)])
    for lane, _node in lanes(journal):
        assert apply_now(lane, load_config(SMALL)) and not pending(lane)
        compact_lane(lane, force=True, events=True, **SMALL)      # vectors of paged rows stay
    assert sorted(r.id for r in spark.read.format("sparkjournal").load(journal)
                  .select("id").collect()) == expected
    assert ids(journal) == expected


def test_a_lane_over_max_size_is_paged_and_one_within_it_is_not(spark, journal):
    before = located_rows(spark, journal)
    within = page_all(journal, force=False, maxSizeBytes="100m")
    assert not any(r.paged for r in within) and all("within maxSizeBytes" in r.reason
                                                   for r in within)
    over = page_all(journal, force=False, maxSizeBytes="64k")
    paged = [r for r in over if r.paged]
    assert paged and all(r.pages_written >= 2 and r.bytes_reclaimed > 0 and
                         r.files_after < r.files_before for r in paged), [r.line() for r in over]
    assert all(r.paged or "no live events" in r.reason for r in over), [r.line() for r in over]
    assert ids(journal) == list(range(6000))
    assert located_rows(spark, journal) == before              # every lane: pages only
    assert not any(r.paged for r in page_all(journal, force=False, maxSizeBytes="64k"))


def test_a_root_over_max_root_size_pages_its_biggest_lanes_first(spark, journal):
    sizes = {lane: lane_bytes(lane) for lane, _node in lanes(journal)}
    biggest = sorted(sizes, key=lambda lane: (-sizes[lane], lane))[0]
    limit = sum(sizes.values()) - 1
    reports = page_all(journal, force=False, maxRootSizeBytes=str(limit), pageSizeBytes="4k")
    assert [r.lane for r in reports if r.paged] == [biggest], [r.line() for r in reports]
    assert ids(journal) == list(range(6000))


def test_retention_reaches_paged_events_and_events_still_in_the_journal(spark, journal):
    page_all(journal)
    log_ = CommitLog(default_log_uri(journal))
    decided = [log_.decision("q", batch).committed_at_ms / 1e3 for batch in range(4)]
    now = decided[3] + 0.001                  # the age reaches back past batch 0 only
    config = load_config({**SMALL, "retention": f"{now - (decided[0] + decided[1]) / 2}s"})
    reports = [maintain_lane(lane, node, default_log_uri(journal), config, now=now)
               for lane, node in lanes(journal)]
    assert sum(r.retention.records for r in reports) > 0, [r.line() for r in reports]
    assert ids(journal) == list(range(1500, 6000))
    assert sorted(r.id for r in sparkjournal.read(spark, journal).select("id").collect()) == \
        list(range(1500, 6000))
    again = [maintain_lane(lane, node, default_log_uri(journal), config, now=now)
             for lane, node in lanes(journal)]
    assert not any(r.retention.records for r in again), [r.line() for r in again]


# --- the pager killed at each step --------------------------------------------------------

CRASH_POINTS = ["page:file-written", "page:file-synced", "page:before-commit", "page:committed"]


@pytest.mark.parametrize("point", CRASH_POINTS)
def test_pager_killed_at_each_step_loses_nothing_and_reads_nothing_twice(spark, journal, point):
    before = format_rows(spark, journal)
    lane, node = busiest_lane(journal)
    code = ("import sys\nfrom sparkjournal.config import load_config\n"
            "from sparkjournal.maintenance.paging import page_lane\n"
            "page_lane(sys.argv[1], sys.argv[2], sys.argv[3], load_config({'fileSize': '64k', "
            "'bufferSize': '16k', 'pageSizeBytes': '40k'}), force=True)\n")
    child = subprocess.run([sys.executable, "-c", code, lane, node, default_log_uri(journal)],
                           capture_output=True, env={**os.environ, "PYTHONPATH": REPO,
                                                     "SPARKJOURNAL_CRASH_AT": point})
    assert child.returncode == -signal.SIGKILL, child.stderr.decode()[-2000:]
    committed = point == "page:committed"
    assert bool(live_page_names(lane)) == committed
    assert format_rows(spark, journal) == before
    report = page_lane(lane, node, default_log_uri(journal), load_config(SMALL), force=True)
    assert report.orphans_removed == (1 if point in ("page:file-written", "page:file-synced") else 0)
    assert not pending(lane)
    assert page_files(lane) == live_page_names(lane)
    assert len(page_files(lane)) == (2 if point in ("page:before-commit", "page:committed") else 1)
    assert format_rows(spark, journal) == before


def test_a_held_lane_gets_its_page_committed_by_its_writer(spark, journal, wait_lanes_free):
    before = ids(journal)
    lane, node = busiest_lane(journal)
    holder = subprocess.Popen(
        [sys.executable, "-c", "import sys, time\nfrom sparkjournal import Journal\n"
         "j = Journal.open(sys.argv[1], fileSize='64k', bufferSize='16k')\nprint('held', flush=True)\nsys.stdin.readline()\n"
         "from sparkjournal.maintenance.lane_requests import carry_out_all\n"
         "print(carry_out_all(j), flush=True)\nj.close()\n", lane],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, env={**os.environ, "PYTHONPATH": REPO})
    try:
        assert holder.stdout.readline() == b"held\n"
        report = page_lane(lane, node, default_log_uri(journal), load_config(SMALL), force=True)
        assert not report.paged and report.pages_pending == 1, report.line()
        assert "live writer" in report.line()
        assert len(page_files(lane)) == 1 and live_page_names(lane) == []
        assert ids(journal) == before                      # read from the journal meanwhile
        again = page_lane(lane, node, default_log_uri(journal), load_config(SMALL), force=True)
        assert again.orphans_removed == 0 and again.pages_pending == 1   # not the same records
        holder.stdin.write(b"go\n")
        holder.stdin.flush()
        assert holder.stdout.readline() == b"2\n"
    finally:
        holder.kill()
        holder.wait()
    assert len(live_page_names(lane)) == 2 and not pending(lane)
    assert ids(journal) == before
