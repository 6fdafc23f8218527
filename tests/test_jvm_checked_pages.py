"""An executor reading a page file again does not read it whole for its
CRC-32C again while the file is unchanged since it checked it
(jvm/.../spark/CheckedPages.java): a read wanting two columns of a page
otherwise reads every byte of it first. A page changed since, in place and
at the same size, is read whole again and refused naming its CRC. The scan's
``pageBytesChecked`` metric says how many page bytes each read read whole."""
from __future__ import annotations

import os
import time

import pytest

pytest.importorskip("pyspark")

from jvm_read_child import wait_free  # noqa: E402
from sparkjournal import JournalSink  # noqa: E402
from sparkjournal.config import load_config  # noqa: E402
from sparkjournal.events.commit_log import default_log_uri  # noqa: E402
from sparkjournal.events.page_records import live_pages  # noqa: E402
from sparkjournal.events.visible_events import node_lanes  # noqa: E402
from sparkjournal.journal.journal import Journal  # noqa: E402
from sparkjournal.maintenance.paging import page_lane  # noqa: E402
from sparkjournal.spark import connector  # noqa: E402
from test_jvm_forgotten import scan_metric  # noqa: E402

PAGED = {"fileSize": "64k", "bufferSize": "16k", "pageSizeBytes": "40k"}
SETTLE = 2.2            # SettledFile.SETTLED_NANOS and a little: checks of older files are kept
ROWS = 3000


def _pages(lanes) -> list[str]:
    paths = []
    for lane, _node in lanes:
        with Journal.read(lane) as snapshot:
            paths += [page.path(lane) for page in live_pages(snapshot)]
    return paths


@pytest.fixture
def paged(spark, tmp_path):
    """A journal of ROWS events, every lane paged, its page files settled."""
    if connector.jar_unavailable():
        pytest.skip(f"no JVM connector here: {connector.jar_unavailable()}")
    path = str(tmp_path / "journal")
    sink = JournalSink(path, txnAppId="q", laneIdleTimeout="200ms", smallBatchRows=0, **PAGED)
    for batch in range(2):
        sink(spark.range(batch * ROWS // 2, (batch + 1) * ROWS // 2, numPartitions=2)
             .selectExpr("id", "cast(id as string) as key", "repeat('p', 60) as payload"), batch)
    lanes = list(node_lanes(path))
    wait_free([lane for lane, _node in lanes])
    config = load_config(PAGED)
    for lane, node in lanes:
        page_lane(lane, node, default_log_uri(path), config, force=True)
    pages = _pages(lanes)
    assert pages, "paging made no page"
    time.sleep(SETTLE)
    return path, pages


def _read(spark, path):
    frame = spark.read.format("sparkjournal").load(path).select("id", "key")
    if "sparkjournal" not in frame._jdf.queryExecution().executedPlan().toString():
        pytest.skip("the test session reads format('sparkjournal') through the Python source")
    return sorted(row.id for row in frame.collect()), scan_metric(frame, "pageBytesChecked")


def test_a_settled_page_is_read_whole_once_per_executor(spark, paged):
    path, pages = paged
    whole = sum(os.path.getsize(page) for page in pages)
    assert _read(spark, path) == (list(range(ROWS)), whole)
    assert _read(spark, path) == (list(range(ROWS)), 0)


def test_a_page_changed_in_place_after_its_check_is_read_whole_and_refused(spark, paged):
    path, pages = paged
    assert _read(spark, path)[0] == list(range(ROWS))
    with open(pages[0], "r+b") as page:                     # same size, one byte flipped mid-file
        page.seek(os.path.getsize(pages[0]) // 2)
        byte = page.read(1)
        page.seek(-1, os.SEEK_CUR)
        page.write(bytes([byte[0] ^ 0xFF]))
    with pytest.raises(Exception) as refused:
        _read(spark, path)
    assert "its CRC-32C is" in str(refused.value) and os.path.basename(pages[0]) in str(refused.value)
