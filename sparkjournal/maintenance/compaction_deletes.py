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

from ..events.deletions import DELETION_VECTOR, Deletions, decode_vector, rewrite_body
from ..events.event_records import EVENTS
from ..format import layout
from ..journal.state import V_FILE, V_LEN, V_OFFSET, V_USER_TYPE


def body_of(loaded_file, index: int) -> memoryview:
    scan = loaded_file.scan
    start = scan.offsets[index] + layout.RECORD_HEADER_SIZE
    return loaded_file.mapped.view[start:start + scan.body_lens[index]]


def live_vectors(loaded) -> Deletions:
    """Every live deletion vector of the loaded lane, merged."""
    files = {f.file_id: f for f in loaded.files}
    deletions = Deletions()
    for record_id, version in loaded.state.live.items():
        if version[V_USER_TYPE] == DELETION_VECTOR:
            start = version[V_OFFSET] + layout.RECORD_HEADER_SIZE
            deletions.add_vector(files[version[V_FILE]].mapped.view[start:start + version[V_LEN]],
                                 f"record {record_id} of lane {loaded.directory}")
    return deletions


def apply_deletion_vectors(loaded, kept: list) -> list:
    """``kept`` (compactor.Kept, log order) with the lane's deletion vectors applied."""
    deletions = live_vectors(loaded)
    if not deletions:
        return kept
    applied, out = set(), []
    for record in kept:
        record_id = record.source.scan.record_ids[record.index]
        if _user_type(record) == EVENTS and record.rtype == layout.ADD and record_id in deletions:
            rows = deletions.rows_of(record_id)
            applied.add(record_id)
            if rows is None:
                continue
            body = rewrite_body(body_of(record.source, record.index), rows)
            if body is not None:
                out.append(dataclasses.replace(record, body=body))
            continue
        out.append(record)
    return [r for r in out if not (_user_type(r) == DELETION_VECTOR and r.rtype == layout.ADD and
                                   decode_vector(body_of(r.source, r.index))[0] in applied)]


def _user_type(record) -> int:
    return record.source.scan.user_types[record.index]
