"""What every read benchmark shares (read.py, read_streams.py, paged_read.py):
the benchmark's event columns, the two queries timed (a full scan into
Spark's ``noop`` sink, ``groupBy(key).agg(sum)``), and interleaved rounds of
them reported as rows per second."""
from __future__ import annotations

import time

from .report import Rounds

REPEATS = 7


def bench_events(frame):
    """The benchmark's events over ``frame``'s ``id`` column: id, ts, key (16
    hex of 1,000 distinct), a 200-byte payload and amount."""
    from pyspark.sql import functions as F
    return frame.select(
        F.col("id"), F.timestamp_seconds(F.col("id")).alias("ts"),
        F.substring(F.sha2((F.col("id") % 1000).cast("string"), 256), 1, 16).alias("key"),
        F.repeat(F.lit("p"), 200).alias("payload"),
        (F.col("id") % 1000 / 10.0).cast("double").alias("amount"))


def timed(action) -> float:
    started = time.perf_counter()
    action()
    return time.perf_counter() - started


def full_scan(frame):
    return lambda: frame.write.format("noop").mode("overwrite").save()


def aggregate(frame):
    from pyspark.sql import functions as F
    return lambda: frame.groupBy("key").agg(F.sum("amount")).collect()


def rows_rounds(contenders: dict, rows, log, label: str, repeats: int = REPEATS) -> Rounds:
    """Rows/s of ``repeats`` interleaved rounds of {name: action}, after one
    warm-up run each; ``rows``: the rows each reads, one number or {name: rows}."""
    rows = rows if isinstance(rows, dict) else dict.fromkeys(contenders, rows)
    for action in contenders.values():
        action()
    rounds = Rounds.run({name: (lambda action=action, n=rows[name]: n / timed(action))
                         for name, action in contenders.items()}, repeats, log, f"{label} (rows/s)")
    log(f"{label}: " + ", ".join(f"{n} {v:,.0f} rows/s" for n, v in rounds.medians().items()))
    return rounds
