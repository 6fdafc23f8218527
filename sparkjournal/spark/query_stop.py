"""Stopping a streaming query between micro-batches."""
from __future__ import annotations


def stop_between_batches(query, poll: float = 0.05) -> None:
    """Stops ``query`` while no trigger runs. Stopping one whose foreachBatch is
    in flight makes Spark 4 match the interrupted Python error against a regex
    that can overflow the stream thread's stack (seen in CI); the interrupted
    batch would only be replayed at the next start anyway. With a processing-time
    trigger of a second or more there is such a moment after every batch."""
    while query.isActive and query.status.get("isTriggerActive"):
        query.awaitTermination(poll)
    query.stop()
