"""Page files in the tools, without Spark: ``sparkjournal verify`` checks every
page file a live PAGE record names (present, size, CRC-32C of the whole file,
the Parquet footer's row count) and names the lane, the file, what differs and
what to do; it reports orphan page files without failing (and paging removes
them); ``sparkjournal inspect`` lists each lane's page files, as text and JSON."""
from __future__ import annotations

import json
import os
import shutil

import pyarrow.parquet as pq
import pytest

from sparkjournal.cli.main import main

from paged_journal import make_root, page, page_files, pages


@pytest.fixture
def paged(tmp_path):
    """(root, lane, node, commit log, [(PAGE record id, page)]) with two pages."""
    root = str(tmp_path / "journal")
    lane, node, log_uri = make_root(root)
    assert page(lane, node, log_uri).paged and page(lane, node, log_uri).paged
    found = pages(lane)
    assert len(found) == 2
    return root, lane, node, log_uri, found


def verify(root: str, capsys) -> tuple[int, list[str]]:
    status = main(["verify", root])
    return status, capsys.readouterr().out.splitlines()


def lines_naming(out: list[str], name: str) -> list[str]:
    return [line for line in out if name in line]


def test_verify_checks_every_page_file_of_a_clean_lane(paged, capsys):
    root, _lane, _node, _log, found = paged
    status, out = verify(root, capsys)
    assert status == 0, out
    assert "lane lane-000: " in out[0] and "2 page files: clean" in out[0], out
    size = sum(ref.size for _rid, ref in found)
    assert "and 2 page files (" in out[-1] and out[-1].endswith("clean"), out
    assert size > 0 and not any("ORPHAN" in line or "CORRUPT" in line for line in out)


def test_verify_names_a_damaged_page_file(paged, capsys):
    root, lane, _node, _log, found = paged
    record_id, ref = found[1]
    path = ref.path(lane)
    with open(path, "r+b") as handle:               # a flipped byte in the middle: same size
        handle.seek(ref.size // 2)
        byte = handle.read(1)
        handle.seek(ref.size // 2)
        handle.write(bytes([byte[0] ^ 0x5A]))
    status, out = verify(root, capsys)
    assert status == 1, out
    assert "CORRUPT" in out[0], out
    named = lines_naming(out, ref.name)
    assert len(named) == 1, out
    line = named[0]
    assert line.lstrip().startswith("CORRUPT") and path in line and "lane lane-000" in line
    assert f"PAGE record {record_id}" in line
    assert "its CRC-32C is 0x" in line and f"its PAGE record says {ref.crc32c:#010x}" in line
    assert "it holds" not in line                                    # the size is right
    assert "restore the file from a backup" in line
    assert not lines_naming(out, found[0][1].name)                   # the other page is fine
    assert "CORRUPT (1 damaged region)" in out[-1]


def test_verify_names_a_missing_page_file(paged, capsys):
    root, lane, _node, _log, found = paged
    _record_id, ref = found[0]
    os.remove(ref.path(lane))
    status, out = verify(root, capsys)
    assert status == 1, out
    (line,) = lines_naming(out, ref.name)
    assert "CORRUPT" in line and "lane lane-000" in line and "it is missing" in line
    assert "restore the file from a backup before reading this lane" in line


def test_verify_counts_page_rows(paged, capsys):
    """The footer's row count is compared with the PAGE record's: a page file
    replaced by a valid Parquet file one row short is named for its rows (and
    its size and CRC, which differ too)."""
    root, lane, _node, _log, found = paged
    _record_id, ref = found[0]
    table = pq.read_table(ref.path(lane))
    assert table.num_rows == ref.rows == 400
    pq.write_table(table.slice(0, ref.rows - 1), ref.path(lane))
    status, out = verify(root, capsys)
    assert status == 1, out
    (line,) = lines_naming(out, ref.name)
    assert (f"its Parquet footer counts {ref.rows - 1} rows ({ref.rows - 1} in its row groups), "
            f"its PAGE record says {ref.rows}") in line
    assert "its PAGE record says" in line and "CRC-32C" in line and "lane lane-000" in line
    # A file that is not Parquet at all: its footer does not read.
    with open(ref.path(lane), "wb") as handle:
        handle.write(b"\0" * ref.size)
    status, out = verify(root, capsys)
    (line,) = lines_naming(out, ref.name)
    assert status == 1 and "its Parquet footer does not read" in line, out


def test_verify_reports_an_orphan_page_file_as_such_and_paging_removes_it(paged, capsys):
    root, lane, node, log_uri, found = paged
    orphan = os.path.join(lane, "pages", "page-00000000000000000099-0badf00d.parquet")
    shutil.copy(found[0][1].path(lane), orphan)
    status, out = verify(root, capsys)
    assert status == 0, out                                  # not an error
    (line,) = lines_naming(out, os.path.basename(orphan))
    assert line.lstrip().startswith("ORPHAN") and "lane lane-000" in line
    assert "no live PAGE record names it" in line and "the next paging run" in line
    assert out[-1].endswith("clean")
    report = page(lane, node, log_uri, pageSizeBytes="1m")
    assert report.orphans_removed == 1 and "1 orphan page files removed" in report.line()
    assert os.path.basename(orphan) not in page_files(lane)
    status, out = verify(root, capsys)
    assert status == 0 and not any("ORPHAN" in line for line in out), out


def test_inspect_lists_page_files(paged, capsys):
    root, lane, _node, _log, found = paged
    orphan = os.path.join(lane, "pages", "page-00000000000000000099-0badf00d.parquet")
    shutil.copy(found[0][1].path(lane), orphan)
    assert main(["inspect", root]) == 0
    out = capsys.readouterr().out.splitlines()
    (summary,) = [line for line in out if line.startswith("  pages ")]
    assert "2 live, 800 rows" in summary and "1 orphans" in summary, out
    for _record_id, ref in found:
        (line,) = lines_naming(out, ref.name)
        assert f" {ref.rows} " in line
        assert f"{ref.first_id}..{ref.last_id} ({len(ref.record_ids)})" in line
        assert line.rstrip().endswith(f"{ref.batch_range[0]}..{ref.batch_range[1]}"), line
    (line,) = lines_naming(out, os.path.basename(orphan))
    assert "(orphan)" in line
    assert main(["inspect", root, "--json"]) == 0
    listed = json.loads(capsys.readouterr().out)["lanes"][0]["pages"]
    assert listed["count"] == 2 and listed["rows"] == 800 and listed["orphans"] == 1
    assert listed["bytes"] == sum(ref.size for _rid, ref in found)
    assert [page["name"] for page in listed["list"]] == [ref.name for _rid, ref in found] + \
        [os.path.basename(orphan)]
    for page, (record_id, ref) in zip(listed["list"], found):
        assert page == {"name": ref.name, "state": "live", "page_record": record_id,
                        "rows": ref.rows, "bytes": ref.size, "records": len(ref.record_ids),
                        "record_ids": [ref.first_id, ref.last_id],
                        "batch_ids": list(ref.batch_range), "crc32c": ref.crc32c}
    assert listed["list"][2] == {"name": os.path.basename(orphan), "state": "orphan",
                                 "bytes": found[0][1].size}


def test_inspect_of_a_lane_never_paged_lists_no_pages(tmp_path, capsys):
    root = str(tmp_path / "journal")
    make_root(root, batches=1)
    assert main(["inspect", root]) == 0
    assert not [line for line in capsys.readouterr().out.splitlines() if line.startswith("  pages")]
