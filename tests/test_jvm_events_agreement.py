"""The JVM events layer (jvm/src/main/java/io/sparkjournal/events) decides as
the Python one does.

Python makes the inputs with the project's own code - commit log decisions
(CommitLog.record), XIDs (BatchXid.encode), EVENTS bodies (tag + ipc_bytes,
rewrite_body), deletion vectors (encode_vector), PAGE bodies (PageRef.encode),
lane requests (submit) - from seeded random cases, then damages them (bad
magic, truncation, wrong version, wrong shapes). ``io.sparkjournal.events.EventsDump``
decodes every input of a test in one JVM, and each result must equal Python's
decoding, or both must fail with the same kind of error (``JAVA_KIND``; JSON.md,
"Error kinds"). Messages are each implementation's own and are not compared.
"""
from __future__ import annotations

import dataclasses
import json
import os
import random
import struct
import subprocess

import pyarrow as pa
import pytest

from sparkjournal.errors import FormatVersionError, SparkJournalError
from sparkjournal.events import resolve
from sparkjournal.events.log_state import LogState
from sparkjournal.events.commit_log import CommitLog, CommitLogError, Decision, TxRef
from sparkjournal.events.committed_lanes import committed_lanes
from sparkjournal.events.deletions import (DeletionVectorError, Deletions, decode_vector,
                                           encode_vector, original_positions)
from sparkjournal.events.event_records import batch_of, rewrite_body, split_body, tag
from sparkjournal.events.lane_deletes import pending_deletions
from sparkjournal.events.page_records import HEAD as PAGE_HEAD
from sparkjournal.events.page_records import PageRecordError, PageRef, decode as decode_page
from sparkjournal.events.pruning import read_stats
from sparkjournal.events.requests import RequestError, pending, submit
from sparkjournal.events.xid import BatchXid
from sparkjournal.journal.batch import ipc_bytes
from sparkjournal.journal.inside import PathOutsideError
from sparkjournal.spark import jvm_build

from jvm_tools import tools_classpath

DUMP = "io.sparkjournal.events.EventsDump"
U64 = 1 << 64

# Python's error class -> the Java class EventsDump names (most specific first)
JAVA_KIND = [(FormatVersionError, "FormatVersionException"),
             (CommitLogError, "CommitLogException"),
             (DeletionVectorError, "DeletionVectorException"),
             (PageRecordError, "PageRecordException"),
             (RequestError, "RequestException"),
             (PathOutsideError, "PathOutsideException"),
             (SparkJournalError, "EventsException")]


def java_kind(error: BaseException, otherwise: str | None = None) -> str:
    for cls, name in JAVA_KIND:
        if isinstance(error, cls):
            return name
    if otherwise is None:
        raise error
    return otherwise


@pytest.fixture(scope="session")
def jvm():
    """(java launcher, class path: the connector jar and the test tools jar, built once per
    session, and pyspark's jars)."""
    reason = jvm_build.jvm_unavailable()
    if reason:
        pytest.skip(f"the JVM events layer cannot be built: {reason}")
    spark_jars = jvm_build._pyspark_jars()[1]
    return jvm_build.java_path(), os.pathsep.join([tools_classpath(),
                                                   os.path.join(spark_jars, "*")])


def run_dump(jvm, command: str, args: list[str]) -> list[dict]:
    java, classpath = jvm
    done = subprocess.run([java, "--add-opens=java.base/java.nio=ALL-UNNAMED", "-cp", classpath,
                           DUMP, command, *args], capture_output=True, text=True, timeout=120)
    assert done.returncode in (0, 2), f"EventsDump failed ({done.returncode}): {done.stderr}"
    lines = [json.loads(line) for line in done.stdout.splitlines()]
    failed = any("error" in line for line in lines if isinstance(line, dict))
    assert (done.returncode == 2) == failed
    return lines


def python_side(decode, otherwise: str | None = None):
    """decode()'s value, or {"error": the Java kind} of what it raised."""
    try:
        return decode()
    except Exception as error:                  # noqa: BLE001 - mapped, or re-raised
        return {"error": java_kind(error, otherwise), "message": str(error)}


def compare(names, expected, got) -> None:
    """Equal results, or equal error kinds (messages are each side's own)."""
    assert len(got) == len(expected)
    wrong = []
    for name, want, have in zip(names, expected, got):
        if isinstance(want, dict) and "error" in want:
            if not (isinstance(have, dict) and have.get("error") == want["error"]):
                wrong.append(f"{name}: Python raised {want}, Java gave {str(have)[:300]}")
        elif have != want:
            wrong.append(f"{name}: {difference(want, have)}")
    assert not wrong, f"{len(wrong)} of {len(expected)} differ, first:\n" + "\n".join(wrong[:6])


def difference(want, have, where: str = "") -> str:
    """Where two decoded values first differ."""
    if isinstance(want, dict) and isinstance(have, dict):
        for key in sorted(set(want) | set(have), key=str):
            if want.get(key, KeyError) != have.get(key, KeyError):
                return difference(want.get(key), have.get(key), f"{where}.{key}")
    if isinstance(want, list) and isinstance(have, list) and len(want) == len(have):
        for index, (w, h) in enumerate(zip(want, have)):
            if w != h:
                return difference(w, h, f"{where}[{index}]")
    return f"at {where or 'top'}: Java {str(have)[:300]}, Python {str(want)[:300]}"


def write_cases(folder, cases: dict[str, bytes]) -> list[str]:
    os.makedirs(folder, exist_ok=True)
    paths = []
    for index, (name, data) in enumerate(cases.items()):
        path = os.path.join(folder, f"case-{index:03d}.bin")
        with open(path, "wb") as handle:
            handle.write(data)
        paths.append(path)
    return paths


# --- the commit log: decisions ------------------------------------------------------------
def random_txs(rng: random.Random, nodes: list[str], count: int) -> list[dict]:
    txs = []
    for _ in range(count):
        node = rng.choice(nodes)
        tx = {"node": node, "host": node.rpartition("@")[2], "root": f"/data/{node[:4]}",
              "lane": f"lane-{rng.randrange(4):03d}",
              "tx": rng.choice([rng.randrange(1, 1000), rng.randrange(U64), U64 - 1]),
              "records": rng.randrange(10), "rows": rng.randrange(5000),
              "bytes": rng.randrange(1 << 40)}
        if rng.random() < 0.2:
            del tx["rows"]
        if rng.random() < 0.2:
            tx["host"] = "other-host"
        if rng.random() < 0.1:
            del tx["host"]
        txs.append(tx)
    return txs


def decision_fields(raw: bytes, where: str) -> dict:
    decision = Decision.from_json(raw, where)
    refs = sorted([r.node, r.lane, r.tx] for r in decision.tx_refs() if 0 <= r.tx < U64)
    return {"query": decision.query, "batch": decision.batch,
            "committed_at_ms": decision.committed_at_ms, "txs": decision.txs,
            "tx_refs": refs, "rows": decision.rows}


def damaged_decisions(good: bytes) -> dict[str, bytes]:
    entry = json.loads(good)

    def edit(**changes) -> bytes:
        data = dict(entry)
        for key, value in changes.items():
            if value is KeyError:
                data.pop(key, None)
            else:
                data[key] = value
        return json.dumps(data).encode()

    cases = {"empty": b"", "not json": b"not json", "a list": b"[1, 2]", "null": b"null",
             "truncated": good[:len(good) // 2], "trailing garbage": good + b" x",
             "trailing whitespace": good + b" \n\t", "utf-8 bom": b"\xef\xbb\xbf" + good,
             "not utf-8": good.replace(b'"query"', b'"qu\xffery"'),
             "nan and infinity": edit(extra=[1.5]).replace(b"1.5", b"NaN"),
             "duplicate keys, last wins": good[:-1] + b', "query": "again"}'}
    for value in (2, 7, 10 ** 30, 1.0, True, "1", 0, -1, 1.5, None, KeyError, [1]):
        cases[f"format {value!r}"] = edit(format=value)
    for value in (KeyError, {}, "txs", [1], [{"node": "n", "lane": "l"}],
                  [{"node": 1, "lane": "l", "tx": 1}], [{"node": "n", "lane": "l", "tx": True}],
                  [{"node": "n", "lane": "l", "tx": 1.0}], [{"node": "n", "lane": "l", "tx": 1,
                                                            "rows": None}],
                  [{"node": "n", "lane": "l", "tx": 1, "rows": 2.0}],
                  [{"node": "n", "lane": "l", "tx": 1, "host": None}],
                  [{"node": "n", "lane": "l", "tx": 1, "host": 0}],
                  [{"node": "n", "lane": "l", "tx": 1, "root": None}],
                  [{"node": "n", "lane": "l", "tx": -5}, {"node": "n", "lane": "l", "tx": U64},
                   {"node": "n", "lane": "l", "tx": 3, "rows": -2}], []):
        cases[f"txs {value!r}"] = edit(txs=value)
    for value in (5, -0, None, True, False, 1.5, 1e16, 1e-05, 123.25, [1, "a'b", None],
                  {"a": [True, 2.5], "b\n": "c\"d"}, "", "quer\u00e9", KeyError):
        cases[f"query {value!r}"] = edit(query=value)
    for value in (" 12 ", "1_0", "+7", "-3", "x", "1__0", "_1", "1.5", "", "\u0661\u0662",
                  "\u00b2", 2.7, -2.7, True, None, [1], {}, 2 ** 63 - 1, KeyError):
        cases[f"batch {value!r}"] = edit(batch=value)
    cases["batch nan"] = edit(batch=0.25).replace(b"0.25", b"NaN")
    cases["batch infinity"] = edit(batch=0.25).replace(b"0.25", b"-Infinity")
    for spelling in (b"+Infinity", b"-INF", b"+INF", b"INF", b"+1", b"01", b"1."):
        cases[f"extra {spelling.decode()}"] = edit(extra=0.25).replace(b"0.25", spelling)
    for value in (KeyError, "123", 1.9e12, None):
        cases[f"committed_at_ms {value!r}"] = edit(committed_at_ms=value)
    cases["deep nesting"] = edit(extra=0).replace(b"0}", b"[" * 3000 + b"]" * 3000 + b"}")
    return cases


def test_decisions_read_alike_in_java_and_python(jvm, tmp_path):
    rng = random.Random(1)
    log = CommitLog(str(tmp_path / "log"))
    nodes = [f"{rng.randbytes(8).hex()}@host-{n}" for n in range(3)]
    written = []
    for index in range(40):
        query = rng.choice(["q-1", "query.two", "q_\u00e9"])
        decision = log.record(query, index, random_txs(rng, nodes, rng.randrange(0, 6)))
        written.append(log._path(query, index))
    cases = {}
    for path in written:
        with open(path, "rb") as handle:
            cases[path] = handle.read()
    cases.update(damaged_decisions(cases[written[3]]))
    names = list(cases)
    paths = write_cases(tmp_path / "cases", cases)
    expected = [python_side(lambda p=path, raw=cases[name]: decision_fields(raw, p))
                for name, path in zip(names, paths)]
    got = run_dump(jvm, "decision", paths)
    for entry in got:
        if "tx_refs" in entry:                          # a set: Java's order is the entries'
            entry["tx_refs"].sort()
    compare(names, expected, got)
    for path, have in zip(paths, got):
        if have.get("error") == "CommitLogException":   # Java's message names the entry
            assert path in have["message"]
    kinds = {entry.get("error") for entry in expected}
    assert {None, "CommitLogException", "FormatVersionException"} <= kinds
    assert sum("error" not in entry for entry in expected) >= len(written)


# --- the commit log: listing, LOG_ID, schema, lanes, outcomes -------------------------------
def make_log(root, rng: random.Random) -> tuple[CommitLog, list[str], dict]:
    """A log of three queries; returns it, the nodes and {(query, batch): txs}."""
    log = CommitLog(str(root))
    nodes = [f"{rng.randbytes(8).hex()}@host-{n}" for n in range(3)] + ["no-at-sign"]
    decided = {}
    for query, batches in (("q-a", [0, 1, 2, 5]), ("q-b", [3]), ("q-\u00e9\U0001f600", [7, 40])):
        for batch in batches:
            decided[(query, batch)] = log.record(query, batch, random_txs(rng, nodes, 3)).txs
    log.log_id(create=True)
    log.write_schema(pa.schema([pa.field("id", pa.int64(), nullable=False),
                                ("ts", pa.timestamp("us", tz="UTC")), ("key", pa.string()),
                                ("tags", pa.list_(pa.int32())),
                                ("where", pa.struct([("x", pa.float64()), ("y", pa.bool_())]))],
                               metadata={"origin": "test \u00e9"}))
    os.makedirs(os.path.join(log.base, "q-empty"))
    os.makedirs(os.path.join(log.base, "\uff5e-wide"))
    open(os.path.join(log.base, "stray.txt"), "w").close()
    qa = os.path.join(log.base, "q-a")
    os.makedirs(os.path.join(log.base, "\U0001f600-emoji"))       # after U+FF5E by code point
    for junk in ("notes.txt", "7.json.tmp", ".json", "\u0663.json", "12x.json"):
        open(os.path.join(qa, junk), "w").close()
    os.symlink(os.path.join(qa, "nowhere"), os.path.join(qa, "9.json"))
    return log, nodes, decided


def listing(log: CommitLog) -> dict:
    queries = log.queries()
    return {"queries": queries, "batches": {q: log.batches(q) for q in queries},
            "log_id": log.log_id()}


def field_desc(field: pa.Field) -> dict:
    kind = field.type
    children = [kind.field(i) for i in range(kind.num_fields)] if kind.num_fields else []
    return {"name": field.name, "nullable": field.nullable, "type": type_name(kind),
            "children": [field_desc(child) for child in children]}


def type_name(kind: pa.DataType) -> str:
    t = pa.types
    if t.is_integer(kind):
        return f"{'int' if t.is_signed_integer(kind) else 'uint'}{kind.bit_width}"
    if t.is_floating(kind):
        return f"float{kind.bit_width}"
    if t.is_timestamp(kind):
        return f"timestamp[{kind.unit}, {'null' if kind.tz is None else kind.tz}]"
    if t.is_decimal(kind):
        return f"decimal({kind.precision},{kind.scale})"
    names = {t.is_date32: "date32", t.is_date64: "date64", t.is_string: "utf8",
             t.is_large_string: "large_utf8", t.is_binary: "binary",
             t.is_large_binary: "large_binary", t.is_boolean: "bool", t.is_list: "list",
             t.is_large_list: "large_list", t.is_struct: "struct", t.is_map: "map",
             t.is_null: "null"}
    return next(name for test, name in names.items() if test(kind))


def schema_desc(schema: pa.Schema) -> dict:
    return {"fields": [field_desc(f) for f in schema],
            "metadata": {k.hex(): v.hex() for k, v in (schema.metadata or {}).items()}}


def lanes_of(log: CommitLog) -> dict:
    return {f"{lane.node} {lane.lane}": dataclasses.asdict(lane)
            for lane in committed_lanes(LogState(log.uri)).values()}


def test_commit_log_listing_schema_and_lanes_read_alike_in_java_and_python(jvm, tmp_path):
    rng = random.Random(2)
    log, _nodes, _decided = make_log(tmp_path / "log", rng)
    empty = CommitLog(str(tmp_path / "absent"))
    damaged = {}
    batch_message = ipc_bytes(pa.record_batch([pa.array([1])], names=["a"])).to_pybytes()
    for name, raw in {"garbage": b"garbage!", "empty": b"", "cut": log._read(
            f"{log.base}/schema.arrow")[:40], "a batch message": batch_message[
            8 + struct.unpack_from("<i", batch_message, 4)[0]:]}.items():
        base = tmp_path / f"damaged-{name.replace(' ', '-')}"
        os.makedirs(base)
        (base / "schema.arrow").write_bytes(raw)
        (base / "LOG_ID").write_bytes(b"  \xffid\t\n")
        damaged[name] = CommitLog(str(base))
    bases = [log, empty, *damaged.values()]
    got = run_dump(jvm, "log", [l.uri for l in bases])
    compare(["log", "absent", *damaged], [listing(l) for l in bases], got)
    assert got[0]["batches"]["q-a"] == [0, 1, 2, 5] and "\uff5e-wide" in got[0]["queries"]

    # Python lets pyarrow's OSError escape for some damage; Java says CommitLogException
    expected = [python_side(lambda l=l: None if l.read_schema() is None
                            else schema_desc(l.read_schema()), "CommitLogException")
                for l in bases]
    compare(["log", "absent", *damaged], expected, run_dump(jvm, "schema", [l.uri for l in bases]))
    assert expected[0]["fields"][4]["children"][1]["type"] == "bool"

    got = run_dump(jvm, "lanes", [log.uri, empty.uri])
    assert [{f"{l['node']} {l['lane']}": l for l in lanes} for lanes in got] == \
        [lanes_of(log), {}]
    assert any(lane["host"] == "no-at-sign" for lane in got[0])


def test_prepared_transactions_resolve_alike_in_java_and_python(jvm, tmp_path):
    rng = random.Random(3)
    log, nodes, decided = make_log(tmp_path / "log", rng)
    other = CommitLog(str(tmp_path / "other"))
    other.record("q", 4, [])
    with open(other._path("q", 4), "wb") as handle:
        handle.write(b'{"format": 1, "txs": 3}')
    cases = []

    def case(name, xid: bytes, node, lane, tx):
        cases.append((name, xid, TxRef(node, lane, tx)))

    for (query, batch), txs in decided.items():
        for tx in txs:
            xid = BatchXid(log.uri, query, batch, 1, 0, 9).encode()
            case(f"{query}/{batch} listed", xid, tx["node"], tx["lane"], tx["tx"])
            case(f"{query}/{batch} other tx", xid, tx["node"], tx["lane"], (tx["tx"] + 1) % U64)
            case(f"{query}/{batch} other lane", xid, tx["node"], "lane-999", tx["tx"])
    for query, batch in (("q-a", 3), ("q-a", 4), ("q-a", 6), ("q-a", -1), ("q-b", 2),
                         ("q-b", 4), ("nobody", 0), ("q-empty", 1)):
        case(f"{query}/{batch} undecided", BatchXid(log.uri, query, batch).encode(),
             nodes[0], "lane-000", 1)
    txs = decided[("q-a", 1)]
    base = {"kind": "sparkjournal-2pc", "log": log.uri, "query": "q-a", "batch": 1}
    variants = {"file uri": dict(base, log="file://" + log.base),
                "batch as text": dict(base, batch=" 1 "), "batch 1.9": dict(base, batch=1.9),
                "batch true": dict(base, batch=True), "no partition": base,
                "partition text": dict(base, partition="x"), "big task": dict(base, task=U64),
                "batch x": dict(base, batch="x"), "no log": {k: v for k, v in base.items()
                                                               if k != "log"},
                "other kind": dict(base, kind="xa"), "kind missing": {"log": log.uri},
                "query ..": dict(base, query=".."), "query 5": dict(base, query=5),
                "damaged decision": dict(base, log=other.uri, query="q", batch=4),
                "log is a number": dict(base, log=17)}
    for name, data in variants.items():
        case(name, json.dumps(data).encode(), txs[0]["node"], txs[0]["lane"], txs[0]["tx"])
    for name, raw in {"empty": b"", "garbage": rng.randbytes(30), "a list": b"[]",
                      "not utf-8": b'{"kind": "\xff"}',
                      "batch infinity": json.dumps(dict(base, batch=0.5)).encode().replace(
                          b"0.5", b"Infinity")}.items():
        case(name, raw, txs[0]["node"], txs[0]["lane"], txs[0]["tx"])
    lines = tmp_path / "cases.jsonl"
    lines.write_text("".join(json.dumps({"xid": xid.hex(), "node": ref.node, "lane": ref.lane,
                                         "tx": ref.tx}) + "\n" for _, xid, ref in cases))
    resolve._LOGS.clear()
    # an XID JSON.md refuses is not ours (EVENTS.md, "XIDs"); a Python error is mapped
    expected = [python_side(lambda x=xid, r=ref: {"outcome": resolve.outcome(x, r).value},
                            "EventsException") for _, xid, ref in cases]
    compare([c[0] for c in cases], expected, run_dump(jvm, "outcomes", [str(lines)]))
    seen = {e.get("outcome", e.get("error")) for e in expected}
    assert {"committed", "aborted", "undecided", "foreign", "CommitLogException"} <= seen


# --- EVENTS bodies -----------------------------------------------------------------------
SIMPLE = (pa.types.is_signed_integer, pa.types.is_floating, pa.types.is_string,
          pa.types.is_boolean)


def random_batch(rng: random.Random) -> pa.RecordBatch:
    rows = rng.choice([0, 1, 2, 7, 30])
    kinds = [("id", pa.int64()), ("small", pa.int8()), ("mid", pa.int16()), ("n", pa.int32()),
             ("u", pa.uint32()), ("x", pa.float64()), ("f", pa.float32()), ("key", pa.string()),
             ("long", pa.large_string()), ("flag", pa.bool_()), ("blob", pa.binary()),
             ("ts", pa.timestamp("us", tz="UTC")), ("local", pa.timestamp("ms")),
             ("day", pa.date32()), ("amount", pa.decimal128(12, 3)),
             ("tags", pa.list_(pa.int64())), ("where", pa.struct([("a", pa.int32())]))]
    chosen = rng.sample(kinds, rng.randint(1, len(kinds)))
    columns = []
    for name, kind in chosen:
        values = [None if rng.random() < 0.15 else value(rng, kind) for _ in range(rows)]
        columns.append(pa.array(values, kind))
    return pa.record_batch(columns, schema=pa.schema(
        [pa.field(n, k, nullable=rng.random() < 0.8 or any(c.null_count for c in columns))
         for n, k in chosen]))


def value(rng, kind):
    t = pa.types
    if t.is_integer(kind):
        bits = kind.bit_width
        return rng.randrange(0, 1 << bits) if t.is_unsigned_integer(kind) else \
            rng.randrange(-(1 << (bits - 1)), 1 << (bits - 1))
    if t.is_floating(kind):
        return rng.choice([0.5, -2.25, 1e300, rng.random()]) if t.is_float64(kind) else 0.25
    if t.is_string(kind) or t.is_large_string(kind):
        return "".join(rng.choice("ab\u00e9\U0001f600 ") for _ in range(rng.randrange(6)))
    if t.is_boolean(kind):
        return rng.random() < 0.5
    if t.is_binary(kind):
        return rng.randbytes(rng.randrange(5))
    if t.is_timestamp(kind) or t.is_date(kind):
        return rng.randrange(0, 2 ** 40) if t.is_timestamp(kind) else rng.randrange(20000)
    if t.is_decimal(kind):
        import decimal
        return decimal.Decimal(rng.randrange(-10 ** 9, 10 ** 9)) / 1000
    if t.is_list(kind):
        return [rng.randrange(100) for _ in range(rng.randrange(3))]
    return {"a": rng.randrange(100)}


def body_fields(body: bytes) -> dict:
    buffer = pa.py_buffer(body)
    schema, message = split_body(buffer)
    query, batch_id = batch_of(schema)
    # where the batch message lies: after the schema's framing and flatbuffer (its body is
    # empty), behind its own framing (8 bytes, or 4 in the framing before Arrow 0.15)
    first = struct.unpack_from("<I", body, 0)[0]
    at = 8 + struct.unpack_from("<i", body, 4)[0] if first == 0xFFFFFFFF else 4 + first
    prefix = 8 if struct.unpack_from("<I", body, at)[0] == 0xFFFFFFFF else 4
    out = {"query": query, "batch": batch_id, "stats": read_stats(schema.metadata),
           "schema": schema_desc(schema), "type": message.type,
           "metadata_offset": at + prefix, "metadata_length": message.metadata.size,
           "body_offset": at + prefix + message.metadata.size,
           "body_length": message.body.size if message.body is not None else 0}
    for name, part in (("metadata", message.metadata), ("body", message.body)):
        inside = part is not None and buffer.address <= part.address < buffer.address + len(body)
        if inside and part.size:                        # pyarrow read it in place: same offset
            assert part.address - buffer.address == out[f"{name}_offset"]
    if message.type == "record batch":
        batch = pa.ipc.read_record_batch(message, schema)
        out["columns"] = {"rows": batch.num_rows,
                          "original_positions": original_positions(batch).to_pylist(), "values": {
            f.name: batch.column(i).to_pylist() for i, f in enumerate(batch.schema)
            if any(test(f.type) for test in SIMPLE)}}
    return out


def legacy_ipc(batch: pa.RecordBatch) -> bytes:
    sink = pa.BufferOutputStream()
    options = pa.ipc.IpcWriteOptions(use_legacy_format=True)
    with pa.ipc.new_stream(sink, batch.schema, options=options) as writer:
        writer.write_batch(batch)
    return sink.getvalue().to_pybytes()


def patch_message_version(body: bytes, offset: int, version: int) -> bytes:
    """The Message flatbuffer at ``offset`` (framing included) with another version."""
    start = offset + 8
    table = start + struct.unpack_from("<I", body, start)[0]
    vtable = table - struct.unpack_from("<i", body, table)[0]
    field = struct.unpack_from("<H", body, vtable + 4)[0]
    assert field, "the writer left the version at its default"
    return body[:table + field] + struct.pack("<h", version) + body[table + field + 2:]


def test_events_bodies_split_alike_in_java_and_python(jvm, tmp_path):
    rng = random.Random(4)
    cases = {}
    for index in range(40):
        batch = random_batch(rng)
        query = rng.choice(["q", "query-\u00e9\U0001f600", "a" * 200])
        tagged = tag(batch, query, rng.choice([0, 7, 2 ** 62]))
        cases[f"tagged {index}"] = ipc_bytes(tagged).to_pybytes()
        if index % 8 == 0:
            cases[f"legacy {index}"] = legacy_ipc(tagged)
            cases[f"untagged {index}"] = ipc_bytes(batch).to_pybytes()
        if index % 5 == 0 and tagged.num_rows > 2:
            kept = rewrite_body(cases[f"tagged {index}"], {0, tagged.num_rows - 1})
            if kept is not None:
                cases[f"rows dropped {index}"] = kept          # with __sj_row
    sample = tag(pa.record_batch([pa.array(range(5), pa.int64()), pa.array(list("abcde"))],
                                 names=["id", "key"]), "q-7", 41)
    good = ipc_bytes(sample).to_pybytes()
    schema_end = 8 + struct.unpack_from("<i", good, 4)[0]
    batch_meta = struct.unpack_from("<i", good, schema_end + 4)[0]
    batch_end = schema_end + 8 + batch_meta + 56
    for metadata in ({b"sparkjournal.query": b"", b"sparkjournal.batch": b" 12 "},
                     {b"sparkjournal.query": b"", b"sparkjournal.batch": b"12"},
                     {b"sparkjournal.batch": b"12"}, {b"sparkjournal.batch": b"012"},
                     {b"sparkjournal.query": b"q\xff"}, {b"sparkjournal.batch": b"x"},
                     {b"sparkjournal.batch": b"1_0"}, {b"sparkjournal.batch": b""},
                     {b"sparkjournal.stats": b"{bad"}, {b"sparkjournal.stats": b"[1, 2.5]"},
                     {b"sparkjournal.stats": b""}):
        retagged = sample.replace_schema_metadata(metadata)
        cases[f"metadata {metadata}"] = ipc_bytes(retagged).to_pybytes()
    for cut in sorted({0, 3, 7, 8, 9, 12, schema_end - 1, schema_end, schema_end + 1,
                       schema_end + 4, schema_end + 7, schema_end + 8, schema_end + 9,
                       schema_end + 8 + batch_meta - 1, schema_end + 8 + batch_meta,
                       batch_end - 1, batch_end, batch_end + 4, len(good) - 1}):
        cases[f"cut at {cut}"] = good[:cut]
    cases["eos first"] = b"\xff\xff\xff\xff\x00\x00\x00\x00" + good[8:]
    cases["legacy eos first"] = b"\x00\x00\x00\x00" + good[4:]
    cases["negative length"] = b"\xff\xff\xff\xff\xf0\xff\xff\xff" + good[8:]
    cases["schema length past the end"] = good[:4] + struct.pack("<i", len(good)) + good[8:]
    cases["batch length past the end"] = (good[:schema_end + 4] + struct.pack("<i", len(good))
                                          + good[schema_end + 8:])
    cases["schema twice"] = good[:schema_end] + good[:schema_end]
    cases["batch message first"] = good[schema_end:]
    cases["eos after the schema"] = good[:schema_end] + b"\xff\xff\xff\xff\x00\x00\x00\x00"
    cases["body of the batch cut"] = good[:batch_end - 8]
    cases["metadata version V3"] = patch_message_version(good, 0, 2)
    cases["batch metadata version V1"] = patch_message_version(good, schema_end, 0)
    names = list(cases)
    paths = write_cases(tmp_path / "bodies", cases)
    expected = [python_side(lambda b=cases[n]: body_fields(b), "EventsBodyException")
                for n in names]
    compare(names, expected, run_dump(jvm, "body", paths))
    assert sum("error" in e for e in expected) >= 20
    dropped = [e for n, e in zip(names, expected) if n.startswith("rows dropped")]
    assert dropped and all("__sj_row" in str(e["schema"]) for e in dropped)
    assert any(e["columns"]["original_positions"][0] == 1 for e in dropped)
    assert sum(bool(e.get("columns", {}).get("rows")) for e in expected) >= 20


# --- deletion vectors ------------------------------------------------------------------
def test_deletion_vectors_decode_alike_in_java_and_python(jvm, tmp_path):
    rng = random.Random(5)
    good = {}
    for index in range(60):
        target = rng.choice([rng.randrange(1, 1000), rng.randrange(U64), U64 - 1])
        limit = rng.choice([10, 5000, 1 << 32])
        positions = None if rng.random() < 0.2 else [rng.randrange(limit)
                                                     for _ in range(rng.randrange(0, 20))]
        good[f"vector {index}"] = encode_vector(target, positions)
    one = encode_vector(77, [1, 5, 9])
    head = struct.Struct("<4sBBHQI")
    damaged = {f"cut at {n}": one[:n] for n in (0, 1, 4, 19)}
    damaged.update({
        "cut in a position": one[:-1], "a position short": one[:-4],
        "a position more": one + one[-4:],
        "bad magic": b"SJDX" + one[4:], "version 0": one[:4] + b"\x00" + one[5:],
        "version 2": one[:4] + b"\x02" + one[5:], "version 255": one[:4] + b"\xff" + one[5:],
        "bad magic, version 2": b"XXXX\x02" + one[5:],
        "all, with a wrong count and junk": head.pack(b"SJDV", 1, 1, 0, 5, 99) + b"junk",
        "other flag bits": head.pack(b"SJDV", 1, 0xFE, 7, 6, 2) + struct.pack("<2I", 4, 1),
        "unsorted with repeats": head.pack(b"SJDV", 1, 0, 0, 8, 4) + struct.pack("<4I", 9, 2, 9, 0),
        "huge count": head.pack(b"SJDV", 1, 0, 0, 8, 0xFFFFFFFF) + b"\0" * 8})
    cases = {**good, **damaged}
    names = list(cases)
    paths = write_cases(tmp_path / "vectors", cases)

    def fields(raw, where):
        target, positions = decode_vector(raw, where)
        return {"target": target, "positions": None if positions is None else positions.to_pylist()}

    expected = [python_side(lambda r=cases[n], p=p: fields(r, p)) for n, p in zip(names, paths)]
    compare(names, expected, run_dump(jvm, "vector", paths))
    assert {e.get("error") for e in expected} == {None, "DeletionVectorException",
                                                  "FormatVersionException"}

    # the union of many vectors, some naming one target (whole, rows, rows again)
    targets = [3, 4, U64 - 1]
    union_cases = [encode_vector(rng.choice(targets), None if rng.random() < 0.1 else
                                 rng.sample(range(50), rng.randrange(0, 8))) for _ in range(30)]
    union_cases += [cases[n] for n in names if n in good or "unsorted" in n or "all," in n]
    union_paths = write_cases(tmp_path / "union", {str(i): v for i, v in enumerate(union_cases)})
    deletions = Deletions()
    for raw in union_cases:
        deletions.add_vector(raw)
    want = {str(rid): None if rows is None else sorted(rows)
            for rid, rows in deletions._rows.items()}
    assert run_dump(jvm, "deletions", union_paths) == [want]
    assert None in want.values() and any(want.values())


# --- PAGE records ----------------------------------------------------------------------
def page_bytes(name: bytes, ids, size=10, crc=7, rows=5, first=None, last=None,
               ranges=(-1, -1, -1, -1), magic=b"SJPG", version=1, count=None) -> bytes:
    ids = list(ids)
    first = ids[0] if first is None and ids else (first or 0)
    last = ids[-1] if last is None and ids else (last or 0)
    return (PAGE_HEAD.pack(magic, version, 0, len(name), size, crc,
                           len(ids) if count is None else count, rows, first, last, *ranges)
            + name + struct.pack(f"<{len(ids)}Q", *ids))


def test_page_records_decode_alike_in_java_and_python(jvm, tmp_path):
    rng = random.Random(6)
    cases = {}
    for index in range(50):
        limit = rng.choice([1000, U64])
        ids = sorted({rng.randrange(limit) for _ in range(rng.randint(1, 30))})
        batch_range = tuple(sorted(rng.sample(range(-1, 1 << 40), 2))) if rng.random() < 0.7 \
            else (-1, -1)
        time_range = tuple(sorted(rng.sample(range(1 << 62), 2))) if rng.random() < 0.7 \
            else (-1, -1)
        ref = PageRef(f"page-{rng.randbytes(6).hex()}-{index}.parquet", rng.randrange(U64),
                      rng.randrange(1 << 32), rng.randrange(U64), tuple(ids), batch_range,
                      time_range)
        cases[f"page {index}"] = ref.encode()
    one = cases["page 0"]
    cases.update({
        **{f"cut at {n}": one[:n] for n in (0, 4, 79, 80, len(one) - 1)},
        "a byte more": one + b"\0", "bad magic": b"SJPX" + one[4:],
        "version 2": one[:4] + b"\x02" + one[5:], "version 0": one[:4] + b"\x00" + one[5:],
        "name not of the form": page_bytes(b"data.parquet", [1, 2]),
        "upper case name": page_bytes(b"page-AB.parquet", [1]),
        "name with a slash": page_bytes(b"page-a/b.parquet", [1]),
        "name not utf-8": page_bytes(b"page-\xff.parquet", [1]),
        "empty name": page_bytes(b"", [1]),
        "no record ids": page_bytes(b"page-1.parquet", []),
        "ids descending": page_bytes(b"page-1.parquet", [5, 3]),
        "ids repeated": page_bytes(b"page-1.parquet", [3, 3, 4]),
        "ids across 2^63": page_bytes(b"page-1.parquet", [5, 1 << 63, U64 - 1]),
        "ids wrapping as signed": page_bytes(b"page-1.parquet", [1 << 63, 5]),
        "first disagrees": page_bytes(b"page-1.parquet", [3, 4], first=2),
        "last disagrees": page_bytes(b"page-1.parquet", [3, 4], last=U64 - 1),
        "count says more": page_bytes(b"page-1.parquet", [3, 4], count=3),
        "flags set": one[:5] + b"\x09" + one[6:]})
    names = list(cases)
    paths = write_cases(tmp_path / "pages", cases)

    def fields(raw):
        ref = decode_page(raw)
        return {"name": ref.name, "size": ref.size, "crc32c": ref.crc32c, "rows": ref.rows,
                "record_ids": list(ref.record_ids), "batch_range": list(ref.batch_range),
                "time_range": list(ref.time_range)}

    # a name that is not UTF-8: Python lets UnicodeDecodeError escape (PageRecordException in Java)
    expected = [python_side(lambda r=cases[n]: fields(r), "PageRecordException") for n in names]
    expected[names.index("name not utf-8")]["message"] = None
    compare(names, expected, run_dump(jvm, "page", paths))
    assert sum("error" not in e for e in expected) >= 52


# --- lane requests ---------------------------------------------------------------------------
def write_request(lane, name: str, data) -> None:
    folder = os.path.join(lane, "requests")
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, name), "wb") as handle:
        handle.write(data if isinstance(data, bytes) else json.dumps(data).encode())


def test_lane_requests_and_pending_deletes_read_alike_in_java_and_python(jvm, tmp_path):
    rng = random.Random(7)
    lanes = {}
    real = str(tmp_path / "real-lane")
    for index in range(6):
        records = {}
        for _ in range(rng.randrange(1, 8)):
            records[str(rng.choice([1, 2, 3, rng.randrange(U64)]))] = (
                None if rng.random() < 0.3 else sorted(rng.sample(range(100), rng.randrange(4))))
        submit(real, "delete", {"records": records, "why": "test"})
        if index == 2:
            submit(real, "something-newer", {"records": {"x": 1}})
    write_request(real, "00000000000000000001-zz.json",
                  {"format": 1, "kind": "delete", "records": {"7": [4, 2], "8": [], "9": [1, 1]}})
    write_request(real, "notes.txt", b"not json")
    write_request(real, "x.json.tmp", b"not json")
    lanes["real"] = real
    lanes["no requests folder"] = str(tmp_path / "bare-lane")
    os.makedirs(lanes["no requests folder"])
    lanes["no lane"] = str(tmp_path / "no-such-lane")

    def damaged(name, data):
        lane = str(tmp_path / f"lane-{len(lanes)}")
        submit(lane, "delete", {"records": {"1": None}})
        write_request(lane, "99999999999999999999-last.json", data)
        lanes[name] = lane

    good = {"format": 1, "kind": "delete", "records": {"1": [2]}}
    for name, data in {"not json": b"{", "not utf-8": b'{"a": "\xff"}', "a list": [good],
                       "format 2": dict(good, format=2),
                       "format 10**15": dict(good, format=10 ** 15),
                       "format '1'": dict(good, format="1"), "format 0": dict(good, format=0),
                       "no format": {"kind": "delete", "records": {}},
                       "no kind": {"format": 1, "records": {}},
                       "format 1.0": dict(good, format=1.0), "format true": dict(good, format=True),
                       "kind 5": dict(good, kind=5), "trailing bytes": json.dumps(good).encode() + b" x",
                       "names repeated": b'{"format": 1, "format": 1, "kind": "delete", "records": {}}',
                       "deep": b"[" * 5000 + b"]" * 5000}.items():
        damaged(name, data)
    for name, records in {"records a list": [1], "records missing": KeyError,
                          "key -1": {"-1": None}, "key abc": {"abc": None}, "key empty": {"": None},
                          "key 21 digits": {"1" * 21: None}, "key 2^64": {str(U64): None},
                          "key 2^64-1 ok": {str(U64 - 1): [0, 2 ** 32 - 1]},
                          "key 20 digits padded ok": {"00000000000000000005": None},
                          "keys 7 and 007": {"7": None, "007": [4, 2]},
                          "why a number": KeyError,
                          "key unicode digits": {"\u0661": None}, "rows bool": {"1": [True]},
                          "rows -1": {"1": [-1]}, "rows 2^32": {"1": [2 ** 32]},
                          "rows float": {"1": [1.0]}, "rows a dict": {"1": {}},
                          "rows a number": {"1": 3}}.items():
        data = dict(good)
        if name == "why a number":
            data["why"] = 5
        elif records is KeyError:
            del data["records"]
        else:
            data["records"] = records
        damaged(name, data)
    outside = tmp_path / "outside"
    os.makedirs(outside)
    write_request(str(outside), "1.json", good)
    linked = str(tmp_path / "linked-lane")
    os.makedirs(linked)
    os.symlink(outside / "requests", os.path.join(linked, "requests"))
    lanes["requests folder links out"] = linked
    file_linked = str(tmp_path / "file-linked-lane")
    write_request(file_linked, "0.json", good)
    os.symlink(outside / "requests" / "1.json", os.path.join(file_linked, "requests", "1.json"))
    lanes["a request links out"] = file_linked
    inner = str(tmp_path / "inner-link-lane")
    write_request(inner, "0.json", good)
    os.rename(os.path.join(inner, "requests"), os.path.join(inner, "kept"))
    os.symlink(os.path.join(inner, "kept"), os.path.join(inner, "requests"))
    lanes["requests folder links inside"] = inner

    def fields(lane):
        found = [{"path": path, "request": request} for path, request in pending(lane)]
        deletions = pending_deletions(lane)
        return {"pending": found, "deletions": {
            str(rid): None if rows is None else sorted(rows)
            for rid, rows in deletions._rows.items()}}

    names = list(lanes)
    expected = [python_side(lambda lane=lanes[n]: fields(lane)) for n in names]
    compare(names, expected, run_dump(jvm, "requests", [lanes[n] for n in names]))
    kinds = {e.get("error") for e in expected}
    assert kinds == {None, "RequestException", "FormatVersionException", "PathOutsideException"}
    assert expected[0]["deletions"]["7"] == [2, 4] and expected[0]["deletions"]["8"] == []
