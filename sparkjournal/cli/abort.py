"""``sparkjournal abort PATH --query Q --batch N``: decide a batch as aborted.

It writes an abort entry for the batch's current epoch into the commit log
(format/COMMIT_LOG.md), created exclusively: if the query's driver committed
the batch first, the abort is refused and says so; if the abort lands first,
the driver's commit fails and its query stops, and when the query restarts
Spark replays the batch and the sink writes it again at the next epoch.
The batch's prepared transactions roll back wherever they are met (readers,
streams, writers, ``sparkjournal compact``), releasing every stream they held.

Crash behaviour: the entry exists whole or not at all; nothing else is
written. Confirmation is asked unless ``--yes``."""
from __future__ import annotations

import sys

from ..errors import SparkJournalError, UsageError
from ..events.commit_log import BatchAbortedError, default_log_uri
from ..events.resolve import shared_log
from ..events.undecided import undecided_batches
from ..units import human_bytes


def confirm(question: str, yes: bool) -> None:
    if yes:
        return
    if not sys.stdin.isatty():
        raise UsageError(f"{question} Pass --yes to confirm without a terminal")
    answer = input(f"{question} [y/N] ").strip().lower()
    if answer not in ("y", "yes"):
        raise SparkJournalError("not confirmed: nothing was changed")


def run(args) -> int:
    uri = args.commit_log or default_log_uri(args.path)
    state = shared_log(uri)
    query, batch = args.query, args.batch
    view = state.view(refresh=True)
    if view.done(query, batch) or state.log.committed_entry(query, batch):
        raise SparkJournalError(
            f"batch {batch} of query {query} is committed (it or a later batch of the query is "
            f"decided in {uri}): a committed batch cannot be aborted; nothing was changed")
    epoch = view.write_epoch(query, batch)
    held = [b for b in undecided_batches(args.path)
            if (b.query, b.batch, b.epoch) == (query, batch, epoch)]
    if held:
        found = held[0]
        print(f"batch {batch} of query {query} (epoch {epoch}) holds {found.total('rows'):,} rows "
              f"({human_bytes(found.total('bytes'))}) in {len(found.txs)} lanes here; they will "
              f"roll back, and {found.total('held_back'):,} committed events it holds back "
              f"reach streams")
    else:
        print(f"batch {batch} of query {query} (epoch {epoch}) has no prepared transaction in "
              f"the lanes of {args.path} visible from here (other hosts may hold some)")
    confirm(f"Abort batch {batch} of query {query} in {uri}?", args.yes)
    try:
        state.log.record(query, batch, [], epoch, aborted=True)
    except BatchAbortedError as taken:
        raise SparkJournalError(f"{taken}; nothing was changed") from taken
    print(f"aborted batch {batch} of query {query} (epoch {epoch}). If the query restarts, Spark "
          f"replays the batch and the sink writes it again (epoch {epoch + 1}); its rolled-back "
          f"transactions are never visible. `sparkjournal compact {args.path}` writes their "
          f"ROLLBACK records now")
    return 0
