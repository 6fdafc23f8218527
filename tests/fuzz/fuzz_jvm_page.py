"""Fuzz target: the page reader (EVENTS.md, "PAGE records and page files") on
a mutated PAGE record body and the page file it names, Python's
(page_records.decode, page_scan.read_page) beside the JVM's (PageRef.decode,
PageBatches: Spark's vectorized Parquet reader).

The input is a page image (page_image.py; run.py makes the seeds from the
golden lanes holding PAGE records, tests/golden/lanes/page*). Both sides
decode the body, then read the page's rows with no deletions, as the columns
id (int64), payload (string) and the six metadata columns, ``_host`` and
``_lane`` restated as "h" and "l". What was read: the PageRef's fields and
each row, in file order (a string as its bytes' length and CRC-32C, a
timestamp as microseconds). Python may raise only the kinds EVENTS.md gives a
PAGE record and a page file (PageRecordError, FormatVersionError,
PageFileError), no pyarrow error; Java only an IOException (jvm_driver.py).
A refusal by one side only, or a different reading, is a finding too (the
spec gives every page one reading), but for the open findings open_finding
names.
"""
from __future__ import annotations

import hashlib
import logging
import os

from tests.fuzz.common import allowed, atheris, run, temp_dir, CRC
from tests.fuzz.jvm_driver import compare, driver, python_outcome
from tests.fuzz.page_image import write_page

with atheris.instrument_imports(include=["sparkjournal"]):
    import pyarrow as pa
    from sparkjournal.events.deletions import Deletions
    from sparkjournal.events.page_records import PageRecordError, decode
    from sparkjournal.events.page_scan import read_page
    from sparkjournal.events.read_columns import full_schema

logging.disable(logging.CRITICAL)
ALLOWED = allowed(PageRecordError)        # a ValueError, not a SparkJournalError
SCHEMA = full_schema(pa.schema([("id", pa.int64()), ("payload", pa.string())]))
CONSTANTS = {"_host": "h", "_lane": "l"}


# Open findings, reported and not yet settled, that the target counts (in the
# file SJ_FUZZ_OPEN_LOG names, when set) instead of stopping at, so that the
# fuzzing goes on past them. Each is narrow; anything else is still a finding.
OPEN_LOG = os.environ.get("SJ_FUZZ_OPEN_LOG")


def open_finding(python: dict, java: dict) -> str | None:
    """The open finding a case is, or None.

    ``jvm-lazy-dictionary``: Spark's vectorized reader decodes a
    dictionary-encoded column lazily, so damage there (a dictionary id past
    the end of the dictionary, a string value longer than the dictionary page,
    in a page whose checksum was made right) is thrown by the column's
    accessor after PageBatches.next() returned the batch, as a
    RuntimeException (ArrayIndexOutOfBoundsException, IllegalArgumentException)
    from ParquetDictionary.decodeTo*, not the PageFileException of EVENTS.md's
    *damaged* (a bug of the connector's), where Python refused the page.

    ``parquet-decoding``: one side's Parquet library does not decode a
    page file that the other side's reads (Python: PageFileError "does not
    decode as Parquet"; Java: PageFileException "does not read as the page").
    Seen both ways: pyarrow refuses a damaged ``ARROW:schema`` footer entry
    (its own copy of the Arrow schema, which Spark ignores) and an RLE run it
    finds cut short; parquet-mr refuses a footer whose column order union has
    no field set. EVENTS.md's "does not decode (Parquet damage ...)" does not
    say which library's decoding is the spec's."""
    if (python["kind"] == "refused" and java["kind"] == "finding"
            and java["error"] != "timeout" and "ParquetDictionary.decodeTo" in java.get("trace", "")):
        return "jvm-lazy-dictionary"
    python_cannot = python["kind"] == "refused" and python["error"] == "PageFileError" \
        and "does not decode as Parquet" in python["message"]
    java_cannot = java["kind"] == "refused" and java["error"] == "PageFileException" \
        and "does not read as the page" in java.get("message", "")
    if (python_cannot and java["kind"] == "ok") or (java_cannot and python["kind"] == "ok"):
        return "parquet-decoding"
    return None


def ref_item(ref) -> str:
    return (f"ref:{ref.name}|{ref.size}|{ref.crc32c}|{ref.rows}|"
            f"{','.join(map(str, ref.record_ids))}|{ref.batch_range[0]},{ref.batch_range[1]}|"
            f"{ref.time_range[0]},{ref.time_range[1]}")


def cell(value) -> str:
    if value is None:
        return "null"
    if isinstance(value, bytes):
        return f"{len(value)}:{CRC(value)}"
    return str(value)


def page_digest(lane: str, body: bytes) -> list[str]:
    ref = decode(body)
    digest = [ref_item(ref)]
    ordinal = 0
    for batch in read_page(lane, ref, SCHEMA, Deletions(), constants=CONSTANTS):
        columns = []
        for field, column in zip(SCHEMA, batch.columns):
            if pa.types.is_string(field.type):
                column = column.cast(pa.binary())            # bytes as stored, UTF-8 or not
            elif pa.types.is_timestamp(field.type):
                column = column.cast(pa.int64())             # microseconds since the epoch
            columns.append(column.to_pylist())
        for row in zip(*columns):
            digest.append(f"{ordinal}:" + "|".join(cell(v) for v in row))
            ordinal += 1
    return digest


def test_one_input(data: bytes) -> None:
    if not data:
        return
    with temp_dir("sj-fuzz-jpage-") as base:
        lane = os.path.join(base, "lane")
        body = write_page(data, lane)
        body_file = os.path.join(base, "body")
        with open(body_file, "wb") as handle:
            handle.write(body)
        python = python_outcome(lambda: page_digest(lane, body), ALLOWED)
        java = driver().ask("page", body_file, lane)
        known = open_finding(python, java)
        if known is None:
            compare("jvm_page", python, java)
        elif OPEN_LOG:
            with open(OPEN_LOG, "a", encoding="utf-8") as log:
                log.write(f"{known}\t{hashlib.sha1(data).hexdigest()}\n")


if __name__ == "__main__":
    run(test_one_input)
