"""Pool files a load can tell apart by their headers alone (FORMAT.md,
"Reading: where data ends", free by header).

A file is made, or freed, with a header holding a fresh id (ids only grow)
and naming no previous file; a roll gives the file it enters another fresh id
and names the file it sealed. A writer appends under a header it did not roll
into only when the lane holds no data at all, and then into the lane's
lowest-id file. So of the files that are not sealed and name no previous
file, only the lowest-id one can hold records of its own id; every other one
holds stale records of earlier uses, or zeros. A load takes those as empty
without reading them (the search for records of the file after its first
foreign byte would otherwise read each whole file). Every loader applies this
same rule, so each finds the same files empty.
"""
from __future__ import annotations

from array import array

from ..format import layout
from ..format.scan_result import ScanResult


def free_ids(headers) -> set[int]:
    """Ids of the files that are free by their headers, of all the lane's ``headers``."""
    unrolled = sorted(h.file_id for h in headers if not h.prev_file_id and not h.sealed_end)
    return set(unrolled[1:])


def empty_scan() -> ScanResult:
    """What a scan of a file free by its header finds: nothing of its own."""
    start = layout.FILE_HEADER_SIZE
    return ScanResult(n=0, types=array("B"), flags=array("B"), user_types=array("H"),
                      body_lens=array("I"), counts=array("I"), record_ids=array("Q"),
                      tx_ids=array("Q"), offsets=array("Q"), clean_end=start, first_foreign=-1,
                      foreign_reason="", n_clean=0, scan_end=start)
