"""``sparkjournal inspect PATH``: what every lane of a journal holds.

Read-only and lock-free: the lanes are loaded as ``Journal.read`` loads them
(``loader.load(writable=False)``), so inspecting beside a running writer is safe
and changes nothing on disk. A damaged file does not stop the inspection: the
load runs in recovery mode, which with writable=False only *reports* the file
(nothing is moved), and inspect then exits with status 1.

Definitions used in the output:
* a file's *live* records are the current versions of live records in it;
  *pinned* adds records and PREPAREs of open or prepared transactions;
* *used bytes* are the bytes of record data written into files (header blocks
  and never-written space excluded); *live bytes* the bytes of the records that
  are still needed (live versions, open and prepared transactions' records);
  the live ratio is live / used, what reclaim or compaction could not free.
* a lane of events' *pages* (``null`` in other journals) are its page files
  (events/page_records.py): each one a live PAGE record names (its name, rows,
  bytes, record and ``_batch_id`` ranges as the record states them; the file
  itself is checked by ``sparkjournal verify``), then files in ``pages/`` no
  live record names: *pending* when a pending page request names it (the
  lane's writer commits it at its next task), else *orphan* (never read; the
  next paging run removes it).
"""
from __future__ import annotations

import collections
import json
import os
import sys

from ..config import load_config
from ..errors import FormatVersionError
from ..events.page_records import PAGES, PageRecordError, holds_events, live_page_records
from ..format import layout
from ..journal.large import FOLDER as LARGE_FOLDER, SUFFIX as LARGE_SUFFIX
from ..journal.journal import JournalSnapshot
from ..journal.loader import ATTIC, load
from ..journal.state import V_FILE, V_LARGE, V_LEN
from ..maintenance.paging import page_files, requested_pages
from ..units import human_bytes, percent, plural
from .paths import find_lanes, folder_listing, lock_holder

LISTED_BODIES = 20        # text output lists this many large bodies; --json lists all


def describe_lane(name: str, lane_dir: str, config) -> dict:
    loaded = load(lane_dir, verify_crc=config.checksum, writable=False, recover=True)
    try:
        return _describe(name, lane_dir, config, loaded)
    finally:
        for file in loaded.files:
            file.mapped.close()


def _describe(name: str, lane_dir: str, config, loaded) -> dict:
    state, report = loaded.state, loaded.report
    live_in = collections.Counter(v[V_FILE] for v in state.live.values())
    live_bytes = sum(layout.record_size(v[V_LEN]) for v in state.live.values())
    referenced = {v[V_LARGE]: rid for rid, v in state.live.items() if v[V_LARGE]}
    transactions = []
    for tx in state.txs.values():
        live_bytes += sum(layout.record_size(v[V_LEN] if v else 0) for _t, _r, v, _f in tx.records)
        if tx.prepared:
            live_bytes += layout.record_size(len(tx.xid))
        referenced.update({v[V_LARGE]: rid for _t, rid, v, _f in tx.records if v and v[V_LARGE]})
        transactions.append({"tx_id": tx.tx_id, "prepared": tx.prepared, "xid_hex": tx.xid.hex(),
                             "records": len(tx.records),
                             "record_ids": [rid for _t, rid, _v, _f in tx.records]})
    with_data = [i for i, f in enumerate(loaded.files) if f.n_data or f.torn_end]
    last_in_use = with_data[-1] if with_data else 0
    files = []
    for index, file in enumerate(loaded.files):
        usage = state.usage.get(file.file_id)
        files.append({"name": os.path.basename(file.path), "file_id": file.file_id,
                      "bytes": file.header.file_size, "records": file.n_data,
                      "live_records": live_in.get(file.file_id, 0),
                      "pinned": usage.pinned if usage else 0,
                      "used_bytes": file.end - layout.FILE_HEADER_SIZE,
                      "state": "in use" if index <= last_in_use else "free"})
    for recovery in report.recoveries:
        files.append({"name": os.path.basename(recovery.file), "state": "damaged",
                      "offset": recovery.offset, "detail": recovery.detail,
                      "records_lost": len(recovery.lost_record_ids)})
    used = sum(f.get("used_bytes", 0) for f in files)
    bodies = []
    for entry in folder_listing(os.path.join(lane_dir, LARGE_FOLDER)):
        large_id = _large_id(entry["name"])
        bodies.append({**entry, "record_id": referenced.get(large_id),
                       "state": "unfinished (.tmp)" if large_id is None else
                       "referenced" if large_id in referenced else "unreferenced"})
    locked, holder = lock_holder(lane_dir)
    return {
        "lane": name, "path": lane_dir,
        "writer": {"locked": locked, "pid": holder},          # locked None: cannot be told
        "files": files,
        "live_records": len(state.live), "live_bytes": live_bytes, "used_bytes": used,
        "live_ratio": round(live_bytes / used, 4) if used else None,
        "transactions": {"open": sum(not t["prepared"] for t in transactions),
                         "prepared": sum(t["prepared"] for t in transactions), "list": transactions},
        "large_bodies": {"count": len(bodies), "bytes": sum(b["bytes"] for b in bodies),
                         "unreferenced": sum(b["state"] != "referenced" for b in bodies),
                         "list": bodies},
        "pages": describe_pages(lane_dir, config, loaded) if holds_events(lane_dir) else None,
        "attic": folder_listing(os.path.join(lane_dir, ATTIC)),
        "archive": folder_listing(os.path.join(lane_dir, config.archiveDirectory)),
        "torn_tail": vars(report.torn_tail) if report.torn_tail else None,
        "broken_tx_ids": report.broken_tx_ids,
        "warnings": report.warnings,
        "damaged": bool(report.recoveries),
    }


def describe_pages(lane_dir: str, config, loaded) -> dict:
    """The lane's page files: live ones (from their PAGE records), then the
    rest of ``pages/`` (pending or orphan; module doc)."""
    requested = requested_pages(lane_dir)                 # before the records, as readers do
    listed, error = [], None
    try:
        live = live_page_records(JournalSnapshot(lane_dir, config, loaded))   # files stay open
    except (PageRecordError, FormatVersionError) as bad:
        live, error = [], f"a PAGE record does not decode ({bad}); run sparkjournal verify"
    for record_id, ref in live:
        listed.append({"name": ref.name, "state": "live", "page_record": record_id,
                       "rows": ref.rows, "bytes": ref.size, "records": len(ref.record_ids),
                       "record_ids": [ref.first_id, ref.last_id],
                       "batch_ids": list(ref.batch_range) if ref.batch_range[0] >= 0 else None,
                       "crc32c": ref.crc32c})
    named = {entry["name"] for entry in listed}
    for name in page_files(lane_dir, with_tmp=True):
        if name not in named:
            listed.append({"name": name, "state": "pending" if name in requested else "orphan",
                           "bytes": os.path.getsize(os.path.join(lane_dir, PAGES, name))})
    live_pages = [entry for entry in listed if entry["state"] == "live"]
    return {"count": len(live_pages), "rows": sum(e["rows"] for e in live_pages),
            "bytes": sum(e["bytes"] for e in live_pages),
            "orphans": sum(e["state"] == "orphan" for e in listed), "error": error,
            "list": listed}


def _writer_text(writer: dict) -> str:
    if writer["locked"] is None:
        return "unknown (the kernel's lock table /proc/locks is unreadable or hidden here)"
    if not writer["locked"]:
        return "not locked"
    return f"locked by process {writer['pid']}" if writer["pid"] else "locked"


def _large_id(name: str) -> int | None:
    if not name.endswith(LARGE_SUFFIX):
        return None
    try:
        return int(name[:-len(LARGE_SUFFIX)], 16)
    except ValueError:
        return None


def render(lane: dict, out) -> None:
    say = lambda *parts: print(*parts, file=out)          # noqa: E731
    say(f"lane {lane['lane']}  ({lane['path']})")
    writer = lane["writer"]
    say(f"  writer        {_writer_text(writer)}")
    files = lane["files"]
    say(f"  files         {sum(f['state'] == 'in use' for f in files)} in use, "
        f"{sum(f['state'] == 'free' for f in files)} free"
        + (f", {sum(f['state'] == 'damaged' for f in files)} DAMAGED" if lane["damaged"] else ""))
    if files:
        say(f"    {'file':<22}{'id':>8}{'size':>12}{'records':>10}{'live':>10}{'pinned':>8}{'used':>12}")
    for f in files:
        if f["state"] == "damaged":
            say(f"    {f['name']:<22}  DAMAGED at offset {f['offset']}: {f['detail']} "
                f"(recovery would report {f['records_lost']} records lost)")
            continue
        say(f"    {f['name']:<22}{f['file_id']:>8}{human_bytes(f['bytes']):>12}{f['records']:>10}"
            f"{f['live_records']:>10}{f['pinned']:>8}{human_bytes(f['used_bytes']):>12}"
            + ("  (free)" if f["state"] == "free" else ""))
    say(f"  live          {lane['live_records']} records, {human_bytes(lane['live_bytes'])} of "
        f"{human_bytes(lane['used_bytes'])} used (live ratio {percent(lane['live_bytes'], lane['used_bytes'])})")
    txs = lane["transactions"]
    say(f"  transactions  {txs['prepared']} prepared, {txs['open']} open")
    for tx in txs["list"]:
        kind = "prepared" if tx["prepared"] else "open (a writer rolls it back on open)"
        say(f"    tx {tx['tx_id']} {kind}, xid {tx['xid_hex'] or '-'}, {plural(tx['records'], 'record')}")
    large = lane["large_bodies"]
    say(f"  large bodies  {large['count']}, {human_bytes(large['bytes'])}, "
        f"{large['unreferenced']} unreferenced (removed by the next writer)")
    for body in large["list"][:LISTED_BODIES]:
        owner = f"record {body['record_id']}" if body["record_id"] is not None else body["state"]
        say(f"    {body['name']}  {human_bytes(body['bytes'])}  {owner}")
    if large["count"] > LISTED_BODIES:
        say(f"    ... {large['count'] - LISTED_BODIES} more (--json lists all)")
    render_pages(lane["pages"], say)
    for folder in ("attic", "archive"):
        entries = lane[folder]
        say(f"  {folder:<14}{'empty' if not entries else str(len(entries)) + ' files'}")
        for entry in entries:
            say(f"    {entry['name']}  {human_bytes(entry['bytes'])}")
    if lane["torn_tail"]:
        tail = lane["torn_tail"]
        say(f"  torn tail     {os.path.basename(tail['file'])} at offset {tail['offset']}: "
            f"{tail['records_dropped']} unacknowledged records dropped (not corruption)")
    if lane["broken_tx_ids"]:
        say(f"  broken tx     {lane['broken_tx_ids']} (commit count mismatch: not applied)")
    for warning in lane["warnings"]:
        say(f"  warning       {warning}")


def render_pages(pages: dict | None, say) -> None:
    if not pages or not pages["list"] and not pages["error"]:
        return                                    # not a lane of events, or never paged
    others = len(pages["list"]) - pages["count"]
    say(f"  pages         {pages['count']} live, {pages['rows']} rows, {human_bytes(pages['bytes'])}"
        + (f"; {others} other files ({pages['orphans']} orphans, removed by the next paging run)"
           if others else ""))
    if pages["error"]:
        say(f"    {pages['error']}")
    if pages["count"]:
        say(f"    {'page file':<48}{'rows':>10}{'size':>12}  {'record ids':<22}batch ids")
    for page in pages["list"]:
        if page["state"] != "live":
            say(f"    {page['name']:<48}{'':>10}{human_bytes(page['bytes']):>12}  ({page['state']})")
            continue
        first, last = page["record_ids"]
        ids = f"{first}..{last} ({page['records']})"
        batches = "-" if page["batch_ids"] is None else f"{page['batch_ids'][0]}..{page['batch_ids'][1]}"
        say(f"    {page['name']:<48}{page['rows']:>10}{human_bytes(page['bytes']):>12}  "
            f"{ids:<22}{batches}")


def run(args) -> int:
    config = load_config()
    lanes = [describe_lane(name, lane_dir, config) for name, lane_dir in find_lanes(args.path)]
    if args.json:
        json.dump({"path": args.path, "lanes": lanes}, sys.stdout, indent=2)
        print()
    else:
        for index, lane in enumerate(lanes):
            if index:
                print()
            render(lane, sys.stdout)
    damaged = [lane["lane"] for lane in lanes if lane["damaged"]]
    if damaged:
        print(f"sparkjournal inspect: lanes {', '.join(damaged)} have damaged files; run "
              f"`sparkjournal verify {args.path}` for every damaged offset", file=sys.stderr)
        return 1
    return 0
