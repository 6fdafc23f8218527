"""The JVM connector's batch read (jvm/src/main/java/io/sparkjournal/spark)
returns what the Python data source returns: the same rows, or an error
saying the same thing.

One child driver (tests/jvm_read_child.py) loads the connector through
``spark.jars`` and registers the Python data source beside it as
``sparkjournal-python``; every scenario writes a real journal with the real
sink and reads it through both: a full read, column pruning, filters pushed
on metadata and on event min/max, a user schema, startingBatchId, an
aggregation, every flat type with nulls (read straight from the mapped
record), an undecided and then decided prepared transaction, a column
added later, deleted rows (deletion vectors and whole records), a damaged
record (fails naming the file and offset) and skipCorrupt. Then a journal
paged by the project's paging (page files read with Spark's Parquet reader):
a full read, one column, a count (no column at all), a filter on
``_batch_id`` (pages pruned by their PAGE record ranges), rows deleted after
paging (struct and array columns through the deleted-rows view), events
written after paging with a column the pages predate (pages, then the live
tail), and a page file changed after paging (fails naming it, unless
startingBatchId prunes it unopened) and then removed (fails naming it).
"""
from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

pytest.importorskip("pyspark")

from sparkjournal.spark import jvm_build  # noqa: E402

CHILD = os.path.join(os.path.dirname(os.path.abspath(__file__)), "jvm_read_child.py")
SCENARIOS = ["full_read", "pruned_to_one_column", "filter_on_batch_id", "filter_on_event_range",
             "user_schema", "starting_batch_id", "every_flat_type", "every_flat_type_filtered",
             "aggregation", "arrow_python_udf", "undecided_transaction",
             "decided_transaction", "column_added_later", "deleted_rows", "skip_corrupt",
             "paged_full_read", "paged_pruned_to_one_column", "paged_count", "paged_filter_on_batch_id",
             "paged_deleted_rows", "paged_and_live_tail", "paged_file_changed_but_pruned"]
# scenario -> what both readers' errors must say
ERRORS = {"unknown_column": "column nope is not in this journal",
          # Spark elides the middle of the Python worker's message: compare the end of the list
          "unknown_option": "syncNonTransactional, syncTransactional, undecidedWarnAfter, userVersion)",
          "corrupt_record": "is corrupt at offset 4096",
          "paged_file_changed": "bytes, its PAGE record says",
          "paged_file_missing": ", named by a live PAGE record, is missing"}


@pytest.fixture(scope="module")
def results(tmp_path_factory):
    reason = jvm_build.jvm_unavailable()
    if reason:
        pytest.skip(f"the JVM connector cannot be built here: {reason}")
    work = tmp_path_factory.mktemp("jvm-read")
    done = subprocess.run([sys.executable, CHILD, str(work / "journals")], capture_output=True,
                          text=True, timeout=900)
    assert done.returncode == 0, done.stderr[-5000:]
    found = {}
    for line in done.stdout.splitlines():
        entry = json.loads(line)
        found[entry["name"]] = entry
    assert set(found) == set(SCENARIOS) | set(ERRORS), sorted(found)
    return found


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_jvm_reader_returns_the_python_readers_rows(results, scenario):
    entry = results[scenario]
    assert isinstance(entry["python"], list), entry["python"]
    assert entry["jvm"] == entry["python"]
    assert entry["jvm"], "a scenario that reads nothing proves nothing"


@pytest.mark.parametrize("scenario", sorted(ERRORS))
def test_jvm_reader_fails_as_the_python_reader_does(results, scenario):
    entry = results[scenario]
    for reader in ("jvm", "python"):
        assert isinstance(entry[reader], dict), f"{reader} read returned rows"
        assert ERRORS[scenario] in entry[reader]["error"], (reader, entry[reader]["error"][:3000])
    if scenario == "unknown_option":
        assert "option fileSiz='1m' is not valid: fileSiz accepts nothing" in entry["jvm"]["error"]
