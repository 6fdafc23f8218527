"""A page file whose Parquet footer disagrees with its PAGE record or the
journal's events columns is *damaged* (EVENTS.md, "PAGE records and page
files", reader requirements): every reader refuses it naming the file, never
reads it as fewer rows or as nulls in silence.

Each case is a real paged lane (paged_journal.make_root, then paging's own
code) whose page was written by pyarrow from a changed table: an events
column renamed, ``_record_id`` dropped, ``_row`` as int64, rows removed, an
extra column between the events columns, a column name that is not UTF-8.
The PAGE record names the file as written (size, CRC-32C: paging's commit
checks both), and the rows of the records it moved. Refused by
``read_table`` (page_scan.read_page), by the Spark page plan's driver check
(page_read.plan_pages), by the JVM's PageBatches (PageReadTool), and
reported by ``sparkjournal verify``'s check_page_file. A page holding only
the first of the journal's events columns (one paged before a column was
added) still reads, the later column as nulls.
"""
from __future__ import annotations

import dataclasses
import os
import subprocess
import json
import types

import pyarrow as pa
import pytest

from sparkjournal import read_table
from sparkjournal.events.page_scan import PageFileError, check_page_file
from sparkjournal.format.codec import CODEC
from sparkjournal.maintenance import page_file, paging
from sparkjournal.spark.page_read import plan_pages
from sparkjournal.events.pruning import Predicate

from paged_journal import make_root, page, pages

EVENTS = pa.schema([("id", pa.int64()), ("payload", pa.string())])


def renamed(table):
    return table.rename_columns(["hd" if n == "id" else n for n in table.column_names])


def without_record_id(table):
    return table.drop_columns(["_record_id"])


def row_as_int64(table):
    index = table.schema.get_field_index("_row")
    return table.set_column(index, "_row", table.column("_row").cast(pa.int64()))


def rows_removed(table):
    return table.slice(0, table.num_rows - 100)


def extra_in_the_middle(table):
    return table.add_column(1, "extra", pa.array(range(table.num_rows), pa.int64()))


def name_not_utf8(table):
    return table            # the file's bytes are patched after it is written (below)


def payload_dropped(table):
    return table.drop_columns(["payload"])


# case: (change to the table, what the refusal names)
DAMAGED = {
    "an events column renamed": (renamed, "events columns (hd, payload)"),
    "_record_id dropped": (without_record_id, "no _record_id column"),
    "_row written as int64": (row_as_int64, "_row column is INT64"),
    "rows removed": (rows_removed, "in its row groups), its PAGE record says"),
    "an extra column in the middle": (extra_in_the_middle, "events columns (id, extra, payload)"),
    "a column name not UTF-8": (name_not_utf8, "not UTF-8"),
}


def paged_lane(root: str, change, monkeypatch) -> tuple[str, object]:
    """(lane, its one live page) of a new root whose first page was written
    from ``change(table)``; the PAGE record's rows are the records' own."""
    lane, node, log_uri = make_root(root)
    real = page_file.write_page

    def write_changed(lane_, table, record_ids, rate=None):
        ref = real(lane_, change(table), record_ids)
        path = ref.path(lane_)
        if change is name_not_utf8:
            with open(path, "rb") as handle:
                data = handle.read().replace(b"payload", b"\xffayload")
            with open(path, "wb") as handle:
                handle.write(data)
            ref = dataclasses.replace(ref, size=len(data), crc32c=CODEC.crc32c(data))
        return dataclasses.replace(
            ref, rows=table.num_rows,
            batch_range=page_file._range(table, "_batch_id"),
            time_range=page_file._range(table, "_commit_time"))

    monkeypatch.setattr(paging, "write_page", write_changed)
    report = page(lane, node, log_uri)
    monkeypatch.setattr(paging, "write_page", real)
    assert report.pages_written == 1, report.line()
    (_record_id, ref), = pages(lane)
    return lane, ref


@pytest.mark.parametrize("case", sorted(DAMAGED))
def test_a_page_file_with_a_damaged_footer_is_refused_naming_it(case, tmp_path, monkeypatch):
    change, named = DAMAGED[case]
    root = str(tmp_path / "root")
    lane, ref = paged_lane(root, change, monkeypatch)
    path = ref.path(lane)

    with pytest.raises(PageFileError) as raised:
        read_table(root)
    message = str(raised.value)
    assert path in message and named in message and "restore it from a backup" in message, message

    part = types.SimpleNamespace(lane=lane, slice=types.SimpleNamespace(host="h"))
    with pytest.raises(PageFileError) as planned:
        plan_pages([part], Predicate(), {}, EVENTS)
    assert path in str(planned.value) and named in str(planned.value), planned.value

    problems = check_page_file(lane, ref)                     # verify: no prefix rule there
    if case in ("an events column renamed", "an extra column in the middle"):
        assert problems == [], problems
    else:
        assert any(named in problem for problem in problems), problems


def test_a_page_holding_the_first_events_columns_reads_the_rest_as_nulls(tmp_path, monkeypatch):
    root = str(tmp_path / "root")
    lane, ref = paged_lane(root, payload_dropped, monkeypatch)
    table = read_table(root)
    assert table.num_rows == 2000
    paged = table.filter(pa.compute.is_null(table.column("payload")))
    assert paged.num_rows == ref.rows and sorted(paged.column("id").to_pylist()) == list(range(ref.rows))
    assert check_page_file(lane, ref) == []


@pytest.fixture(scope="module")
def jvm():
    from sparkjournal.spark import jvm_build
    from jvm_tools import tools_classpath
    reason = jvm_build.jvm_unavailable()
    if reason:
        pytest.skip(f"the JVM connector cannot be built: {reason}")
    spark_jars = jvm_build._pyspark_jars()[1]
    return jvm_build.java_path(), os.pathsep.join([tools_classpath(), os.path.join(spark_jars, "*")])


def test_the_jvm_page_reader_refuses_the_same_footers(jvm, tmp_path, monkeypatch):
    lanes = {}
    for case, (change, _named) in sorted(DAMAGED.items()):
        lanes[case] = paged_lane(str(tmp_path / f"root-{len(lanes)}"), change, monkeypatch)
    good = paged_lane(str(tmp_path / "root-prefix"), payload_dropped, monkeypatch)
    java, classpath = jvm
    done = subprocess.run([java, "--add-opens=java.base/java.nio=ALL-UNNAMED", "-cp", classpath,
                           "io.sparkjournal.spark.PageReadTool", "id,payload",
                           *(lane for lane, _ref in lanes.values()), good[0]],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    answers = [json.loads(line) for line in done.stdout.splitlines()]
    for (case, (lane, ref)), answer in zip(lanes.items(), answers):
        assert answer["lane"] == lane
        assert answer["outcome"] == "refused" and answer["error"] == "PageFileException", (case, answer)
        assert ref.path(lane) in answer["message"], (case, answer)
    assert answers[-1] == {"lane": good[0], "rows": good[1].rows, "outcome": "ok"}, answers[-1]
