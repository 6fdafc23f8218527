"""Compaction applies deletion vectors physically (events lanes only).

Among the records a compaction keeps (compactor.select_live), an events
record that any live deletion vector of the lane names (wherever the vector
is: the writer appends them to its newest file) is rewritten without those rows
(keeping the survivors' original positions, deletions.without_rows), or left
out when no row is left. A vector among the compacted records whose target was
rewritten here is left out, as it is now applied; vectors in newer files stay
(they name original positions: applying them again changes nothing), as do
vectors for targets that are not live (their rows may live in a page).

Pending delete requests are not applied here: their holder turns them into
vectors (carrying out a request twice changes nothing), and readers apply them.
"""
from __future__ import annotations

import dataclasses
from array import array

from ..events.deletions import DELETION_VECTOR, Deletions, decode_vector
from ..events.event_records import EVENTS, rewrite_body
from ..format import layout


def body_of(loaded_file, index: int) -> memoryview:
    scan = loaded_file.scan
    start = scan.offsets[index] + layout.RECORD_HEADER_SIZE
    return loaded_file.mapped.view[start:start + scan.body_lens[index]]


def live_vectors(live, lane: str) -> Deletions:
    """Every live deletion vector of the lane (compaction_plan.Plan), merged."""
    deletions = Deletions()
    for file, index in live.live_of_user_type(DELETION_VECTOR):
        deletions.add_vector(body_of(file, index),
                             f"record {file.scan.record_ids[index]} of lane {lane}")
    return deletions


def apply_deletion_vectors(live, kept: list, lane: str) -> list:
    """``kept`` (compactor.Kept per source file, log order) with the lane's
    deletion vectors applied."""
    deletions = live_vectors(live, lane)
    if not deletions:
        return kept
    applied, rewritten = set(), []
    for record in kept:
        scan, index, types, bodies = record.source.scan, array("I"), bytearray(), {}
        for i, rtype in zip(record.index, record.types):
            record_id = scan.record_ids[i]
            if scan.user_types[i] == EVENTS and rtype == layout.ADD and record_id in deletions:
                rows = deletions.rows_of(record_id)
                applied.add(record_id)
                body = None if rows is None else rewrite_body(body_of(record.source, i), rows)
                if body is None:
                    continue
                bodies[len(index)] = body
            index.append(i)
            types.append(rtype)
        rewritten.append(dataclasses.replace(record, index=index, types=bytes(types), bodies=bodies))
    return [_without_applied(record, applied) for record in rewritten]


def _without_applied(record, applied: set):
    """The record's vectors whose targets were rewritten here go: now applied."""
    scan, keep = record.source.scan, []
    for position, (i, rtype) in enumerate(zip(record.index, record.types)):
        keep.append(not (scan.user_types[i] == DELETION_VECTOR and rtype == layout.ADD and
                         decode_vector(body_of(record.source, i))[0] in applied))
    if all(keep):
        return record
    positions = [p for p, k in enumerate(keep) if k]
    return dataclasses.replace(
        record, index=array("I", [record.index[p] for p in positions]),
        types=bytes(record.types[p] for p in positions),
        bodies={new: record.bodies[old] for new, old in enumerate(positions) if old in record.bodies})
