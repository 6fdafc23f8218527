"""Reclaim: free the data files whose records are all dead.

Which files are free is JournalState.free_files (Artemis's positive/negative
counting rule, restated there). This applies the decision: the file leaves the
journal (reused with a fresh header id, deleted past poolFiles, or moved to the
archive when archive=true; see files.py for the crash behaviour of each), and the
large bodies whose dead references it held are deleted after it.
"""
from __future__ import annotations


def reclaim(state, files, large, maps) -> list[int]:
    """Frees every free file but the one being written; returns their old ids."""
    order = [f.file_id for f in files.in_use]
    free = state.free_files(order, keep={files.current.file_id})
    if not free:
        return []
    dead_bodies = [body for file_id in free for body in state.forget_file(file_id)]
    files.release(free)
    for file_id in free:
        mapped = maps.pop(file_id, None)
        if mapped is not None:
            mapped.close()
    large.delete(dead_bodies)
    return free
