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
spec gives every page one reading). Both readers check the page file's size,
CRC-32C and footer against the PAGE record before Parquet decodes a byte, so
a mutated page file is refused there (the fix-up bits reach the checks
behind the size and the Parquet page checksums) and the decoders read only
whole files: what the fuzzing proves is that no damage gets past the checks.
"""
from __future__ import annotations

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
        compare("jvm_page", python, java)


if __name__ == "__main__":
    run(test_one_input)
