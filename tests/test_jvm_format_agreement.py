"""The JVM format layer (jvm/src/main/java/io/sparkjournal/format) reads the
bytes of FORMAT.md exactly as the Python and C codecs do, on inputs no fixture
holds: scans of synthetic and random bytes (body lengths past the end, unknown
flags and types, truncated buffers, unaligned starts, random pieces of records
and junk) and header refusals. Files as written, torn, flipped, reused and of
either header version are the golden lane corpus's (tests/golden/lanes). Each
test scans with ``codec_python.scan`` (and the C codec, when built, which must
agree with it) and with ``io.sparkjournal.format.ScanDump`` (a test tool,
jvm/src/test/java) in one JVM, and requires every ScanResult field to be
identical. The header tests do the same for FileHeader against
datafile.read_header.
"""
from __future__ import annotations

import dataclasses
import json
import os
import random
import shutil
import subprocess
import sys
import zipfile

import pytest

from sparkjournal import Journal
from sparkjournal.errors import FormatVersionError
from sparkjournal.format import codec_python, layout
from sparkjournal.journal.datafile import BadHeader, FileHeader, read_header
from sparkjournal.maintenance.compactor import compact_lane
from sparkjournal.spark import jvm_build

from jvm_tools import tools_classpath

try:
    from sparkjournal.format import codec_native
except ImportError:
    codec_native = None

OPTIONS = {"fileSize": "32k", "bufferSize": "8k", "minFiles": 2, "journalType": "NIO",
           "largeRecordSize": "3k"}
START = layout.FILE_HEADER_SIZE
SCAN_FIELDS = ("n", "n_clean", "clean_end", "first_foreign", "foreign_reason", "scan_end",
               "types", "flags", "user_types", "body_lens", "counts", "record_ids", "tx_ids",
               "offsets")
DUMP = "io.sparkjournal.format.ScanDump"


@dataclasses.dataclass
class Case:
    name: str
    data: bytes
    start: int
    file_id32: int
    verify: bool = True


@dataclasses.dataclass
class DataFile:
    path: str
    file_id32: int
    data: bytes
    scan: object            # codec_python.scan of the file as written

    def extents(self):
        """(offset, bytes incl. padding) of each clean record."""
        s = self.scan
        return [(int(s.offsets[i]), layout.record_size(int(s.body_lens[i])))
                for i in range(s.n_clean)]


# --- fixtures ------------------------------------------------------------------------------
@pytest.fixture(scope="session")
def jvm():
    """(java launcher, class path: the connector jar, the test tools jar and the Jackson
    jars Spark ships), built once per session (and reused from the cache after)."""
    reason = jvm_build.jvm_unavailable()
    if reason:
        pytest.skip(f"the JVM format layer cannot be built: {reason}")
    return jvm_build.java_path(), tools_classpath()


def write_lane(lane: str, seed: int) -> None:
    """Four writer sessions of random records and transactions; the middle two
    delete most records, so that the next open reclaims files and reuses them."""
    rng = random.Random(seed)
    live: list[int] = []
    next_id, tx = 1, 1
    for session in range(4):
        with Journal.open(lane, **OPTIONS) as journal:
            for _ in range(rng.randint(60, 160)):
                roll = rng.random()
                body = rng.randbytes(rng.choice([0, 1, 7, 8, 9, 40, 100, 500, 1500, 2500, 5000]))
                if roll < 0.45 or not live:
                    journal.append_add(next_id, body, user_type=rng.randrange(65536), sync=False)
                    live.append(next_id)
                    next_id += 1
                elif roll < 0.55:
                    journal.append_update(rng.choice(live), body, user_type=rng.randrange(4),
                                          sync=False)
                elif roll < 0.75:
                    journal.append_delete(live.pop(rng.randrange(len(live))), sync=False)
                else:
                    added = list(range(next_id, next_id + rng.randint(1, 3)))
                    next_id = added[-1] + 1
                    for record_id in added:
                        journal.append_add_tx(tx, record_id, body, user_type=5)
                    gone = live[0] if rng.random() < 0.3 else None
                    if gone is not None:
                        journal.append_delete_tx(tx, gone)
                    outcome = rng.random()
                    if outcome < 0.2:
                        journal.prepare(tx, xid=rng.randbytes(rng.randint(0, 30)))
                    if outcome < 0.7:
                        journal.commit(tx, sync=False)
                        live += added
                        if gone is not None:
                            live.remove(gone)
                    else:
                        journal.rollback(tx, sync=False)
                    tx += 1
            if session in (1, 2):
                for record_id in rng.sample(live, k=len(live) * 9 // 10):
                    journal.append_delete(record_id, sync=False)
                    live.remove(record_id)
            journal.flush()


@pytest.fixture(scope="session")
def journal_files(tmp_path_factory) -> list[DataFile]:
    """Every data file of six lanes written by the journal (the first compacted)."""
    root = tmp_path_factory.mktemp("jvm-agreement")
    files = []
    for seed in range(6):
        lane = str(root / f"lane-{seed}")
        write_lane(lane, seed)
        if seed == 0:
            assert compact_lane(lane, force=True, **OPTIONS).compacted
        for name in sorted(os.listdir(lane)):
            if name.endswith(".sjd"):
                path = os.path.join(lane, name)
                fid32 = layout.file_id32(read_header(path).file_id)
                with open(path, "rb") as handle:
                    data = handle.read()
                files.append(DataFile(path, fid32, data, codec_python.scan(data, START, fid32)))
    return files


@pytest.fixture
def with_records(journal_files) -> list[DataFile]:
    """The files with at least 5 clean records, the most any case samples: how
    many a file holds can differ from run to run, and one with fewer is left out."""
    return [f for f in journal_files if f.scan.n_clean >= 5]


# --- running both sides ------------------------------------------------------------------
def python_scan(case: Case) -> dict:
    """codec_python's fields; the C codec, when built, must give the very same."""
    result = fields(codec_python.scan(case.data, case.start, case.file_id32, case.verify))
    if codec_native is not None:
        native = fields(codec_native.scan(case.data, case.start, case.file_id32, case.verify))
        assert native == result, f"{case.name}: the C and Python codecs disagree"
    return result


def fields(result) -> dict:
    """A ScanResult as ScanDump prints it: columns as lists."""
    out = {}
    for name in SCAN_FIELDS:
        value = getattr(result, name)
        out[name] = value if isinstance(value, (int, str)) else list(value)
    return out


def run_dump(jvm, args: list[str]) -> list[dict]:
    java, classpath = jvm
    done = subprocess.run([java, "-cp", classpath, DUMP, *args], capture_output=True,
                          text=True, timeout=120)
    assert done.returncode in (0, 1), f"ScanDump failed ({done.returncode}): {done.stderr}"
    return [json.loads(line) for line in done.stdout.splitlines()]


def assert_scans_agree(jvm, tmp_path, cases: list[Case]) -> list[dict]:
    """Scans every case in one JVM and in Python; returns the (agreed) results."""
    args = []
    for index, case in enumerate(cases):
        path = tmp_path / f"case-{index}.bin"
        path.write_bytes(case.data)
        args += [str(path), str(case.start), str(case.file_id32), "1" if case.verify else "0"]
    java = run_dump(jvm, args)
    assert len(java) == len(cases)
    assert not [line["error"] for line in java if "error" in line]
    wrong = []
    expected = [python_scan(case) for case in cases]
    for case, want, got in zip(cases, expected, java):
        for name in SCAN_FIELDS:
            if got.get(name) != want[name]:
                wrong.append(f"{case.name} (start {case.start}, file id {case.file_id32}, "
                             f"verify {case.verify}): {name} is {str(got.get(name))[:200]} in "
                             f"Java, {str(want[name])[:200]} in Python")
    assert not wrong, f"{len(wrong)} differences, first:\n" + "\n".join(wrong[:8])
    return expected


def patched(data: bytes, at: int, new: bytes) -> bytes:
    return data[:at] + new + data[at + len(new):]


def resealed(data: bytes, offset: int) -> bytes:
    """The record at ``offset`` with its CRC recomputed over its (changed) bytes."""
    body_len = int.from_bytes(data[offset + 12:offset + 16], "little")
    crc = codec_python.crc32c(data[offset + 4:offset + 40 + body_len])
    return patched(data, offset, crc.to_bytes(4, "little"))


def found_after_damage(results) -> int:
    return sum(r["n"] > r["n_clean"] for r in results)


# --- records: the files as written -----------------------------------------------------------
def test_file_id_zero_and_other_file_ids_scan_alike_in_java_and_python(jvm, tmp_path,
                                                                        journal_files):
    rng = random.Random(12)
    cases = []
    for f in journal_files[:8]:
        for fid in (0, f.file_id32 ^ 1, 0xFFFFFFFF, rng.randrange(1 << 32)):
            cases.append(Case(f"{os.path.basename(f.path)} as id {fid}", f.data, START, fid))
    # records that carry file id 0, damaged in the middle: found after the damage by non-zero words
    buf = bytearray(16384)
    pos = START
    for index in range(12):
        pos = codec_python.encode_record(buf, pos, 1 + index % 9, 0, 0, 0, index, 0, 0,
                                         bytes([index]) * (index * 13))
        if index == 4:
            damage = pos - 20
    buf[damage] ^= 0x40
    cases.append(Case("file id 0, damaged", bytes(buf), START, 0))
    cases.append(Case("file id 0, damaged, no crc", bytes(buf), START, 0, False))
    results = assert_scans_agree(jvm, tmp_path, cases)
    assert found_after_damage(results[-2:]) == 1


# --- records: damage ---------------------------------------------------------------------------
def test_a_body_length_pointing_past_the_end_scans_alike_in_java_and_python(
        jvm, tmp_path, with_records):
    rng = random.Random(3)
    cases = []
    for f in with_records:
        for offset, _size in rng.sample(f.extents(), 4):
            room = len(f.data) - offset - 40
            body_len = rng.choice([room + 1, room + 8, rng.randrange(room + 1, 1 << 32),
                                   0xFFFFFFFF])
            cases.append(Case(f"{os.path.basename(f.path)} body length {body_len} at {offset}",
                              patched(f.data, offset + 12, body_len.to_bytes(4, "little")),
                              START, f.file_id32, rng.random() < 0.8))
    results = assert_scans_agree(jvm, tmp_path, cases)
    assert all(r["foreign_reason"].endswith("past end of file") for r in results)


def test_unknown_flags_scan_alike_in_java_and_python(jvm, tmp_path, with_records):
    rng = random.Random(4)
    cases = []
    for f in with_records:
        for offset, _size in rng.sample(f.extents(), 3):
            flags = rng.choice([0x02, 0x03, 0x80, 0xFF, rng.randrange(2, 256)])
            data = patched(f.data, offset + 5, bytes([flags]))
            if rng.random() < 0.5:
                data = resealed(data, offset)      # a valid CRC: only the flags are wrong
            cases.append(Case(f"{os.path.basename(f.path)} flags {flags:#x} at {offset}", data,
                              START, f.file_id32, rng.random() < 0.8))
    results = assert_scans_agree(jvm, tmp_path, cases)
    assert all(r["foreign_reason"].startswith("bad flags 0x") for r in results)
    assert found_after_damage(results) >= 5


def test_type_0_and_types_above_9_scan_alike_in_java_and_python(jvm, tmp_path, with_records):
    rng = random.Random(5)
    cases = []
    for f in with_records:
        for offset, _size in rng.sample(f.extents(), 4):
            how = rng.choice(["type 0", "type 0 resealed", "type above 9", "first word zeroed"])
            if how == "first word zeroed":          # skipped as padding: the next word is foreign
                data = patched(f.data, offset, bytes(8))
            else:
                type_ = 0 if how.startswith("type 0") else rng.randrange(10, 256)
                data = patched(f.data, offset + 4, bytes([type_]))
                if how.endswith("resealed") or rng.random() < 0.5:
                    data = resealed(data, offset)
            cases.append(Case(f"{os.path.basename(f.path)} {how} at {offset}", data, START,
                              f.file_id32, rng.random() < 0.8))
    results = assert_scans_agree(jvm, tmp_path, cases)
    reasons = {r["foreign_reason"] for r in results}
    assert "bad type 0" in reasons and any(r.startswith("bad type 1") or r.startswith("bad type 2")
                                            for r in reasons)


def test_a_truncated_buffer_scans_alike_in_java_and_python(jvm, tmp_path, with_records):
    rng = random.Random(6)
    cases = []
    for f in with_records:
        cuts = {0, 1, START - 1, START, START + 1, START + 39, START + 40}
        for offset, size in rng.sample(f.extents(), 5):
            cuts |= {offset + rng.randrange(1, 40), offset + rng.randrange(40, size + 1),
                     offset + size - rng.randrange(8)}
        for cut in sorted(cuts):
            cases.append(Case(f"{os.path.basename(f.path)} cut at {cut}", f.data[:cut], START,
                              f.file_id32, rng.random() < 0.8))
    # a record whose body ends in the last, partial word: taken whole, past scan_end
    buf = bytearray(START + layout.record_size(13))
    codec_python.encode_record(buf, START, layout.ADD, 0, 1, 77, 1, 0, 0, b"x" * 13)
    cases.append(Case("a body ending in the last partial word", bytes(buf[:START + 40 + 13]),
                      START, 77))
    results = assert_scans_agree(jvm, tmp_path, cases)
    assert results[-1]["n"] == 1 and results[-1]["clean_end"] > results[-1]["scan_end"]
    reasons = {r["foreign_reason"] for r in results}
    assert "header cut off by end of file" in reasons
    assert any(reason.startswith("body length") for reason in reasons)


def test_a_start_offset_not_8_aligned_scans_alike_in_java_and_python(jvm, tmp_path, with_records):
    rng = random.Random(7)
    cases = []
    for f in with_records[:10]:
        starts = {0, 3, 88, START - 7, START - 1, START + 1, START + 7, len(f.data) - 3,
                  len(f.data), len(f.data) + 13}
        for offset, _size in rng.sample(f.extents(), 4):
            starts |= {offset + rng.randrange(1, 8), offset - rng.randrange(1, 8)}
        for start in sorted(starts):
            cases.append(Case(f"{os.path.basename(f.path)} from {start}", f.data, start,
                              f.file_id32, rng.random() < 0.8))
    results = assert_scans_agree(jvm, tmp_path, cases)
    assert any(r["n"] == 0 and r["clean_end"] % 8 for r in results)


def test_random_pieces_of_records_stale_records_zeros_and_junk_scan_alike_in_java_and_python(
        jvm, tmp_path):
    rng = random.Random(8)
    fid = 0xA1B2C3D4
    fid_bytes = fid.to_bytes(4, "little")
    cases = []
    for index in range(120):
        buf = bytearray()
        for _ in range(rng.randint(0, 14)):
            kind = rng.choice(["record", "record", "stale", "zeros", "junk", "file id junk"])
            body = rng.randbytes(rng.choice([0, 1, 7, 8, 9, 33, 120]))
            if kind in ("record", "stale"):
                at = len(buf)
                buf += bytes(layout.record_size(len(body)))
                codec_python.encode_record(buf, at, rng.randint(1, 9), rng.randint(0, 1),
                                           rng.randrange(65536), fid if kind == "record" else 5,
                                           rng.randrange(1 << 64), rng.randrange(1 << 64),
                                           rng.randrange(1 << 32), body)
            elif kind == "zeros":
                buf += bytes(8 * rng.randint(1, 20))
            elif kind == "junk":
                buf += body + bytes(-len(body) % 8)
            else:                   # the file id at aligned and unaligned places, no record
                junk = bytearray(rng.randbytes(48))
                where = rng.randrange(44)
                junk[where:where + 4] = fid_bytes
                buf += junk
        data = bytes(buf[:max(len(buf) - rng.randint(0, 7), 0)])
        cases.append(Case(f"pieces #{index}", data, rng.choice([0, 0, 0, 3, 8]),
                          rng.choice([fid, fid, fid, 5, 0]), rng.random() < 0.7))
    results = assert_scans_agree(jvm, tmp_path, cases)
    assert found_after_damage(results) >= 10


# --- headers -------------------------------------------------------------------------------------
def v1_file(file_size: int, **changes) -> bytes:
    """A data file of ``file_size`` zero bytes under a version 1 header (76 bytes: no watermark)."""
    values = dict(magic=layout.FILE_MAGIC, version=1, user=7, file_id=42, size=file_size,
                  block=512, sealed=0, window=8192, created=123, prev=41, prev_end=5000)
    values.update(changes)
    fixed = layout.FILE_HEADER_V1.pack(*values.values())
    return (fixed + codec_python.crc32c(fixed).to_bytes(4, "little")).ljust(file_size, b"\0")


def v2_file(file_size: int, **changes) -> bytes:
    """A data file of ``file_size`` bytes under a version 2 header, its u64s at their limits."""
    header = FileHeader(file_id=0x1_0000_0007, file_size=file_size, block_size=4096,
                        sync_window=1 << 40, user_version=0xFFFFFFFF, created_ns=1, prev_file_id=6,
                        prev_end=1 << 33, max_record_id=(1 << 64) - 1, max_tx_id=1 << 63)
    return dataclasses.replace(header, **changes).encode().ljust(file_size, b"\0")


def with_version(raw: bytes, version: int, crc_at: int = layout.FILE_HEADER_CRC_AT) -> bytes:
    raw = patched(raw, 8, version.to_bytes(4, "little"))
    return patched(raw, crc_at, codec_python.crc32c(raw[:crc_at]).to_bytes(4, "little"))


def header_cases(journal_files) -> dict[str, bytes]:
    size = 8192
    good = v2_file(size)
    cases = {f"journal {os.path.basename(f.path)} {i}": f.data
             for i, f in enumerate(journal_files)}
    cases.update({
        "version 2": good,
        "version 2 sealed at the end": v2_file(size, sealed_end=size),
        "version 1": v1_file(size),
        "version 1 of one block, the largest user version": v1_file(4096, user=0xFFFFFFFF),
        "bad magic": patched(good, 0, b"SJRNLDAX"),
        "bad magic, all zeros": bytes(size),
        "bad crc: a flipped field byte": patched(good, 20, bytes([good[20] ^ 4])),
        "bad crc: a flipped watermark byte": patched(good, 80, bytes([good[80] ^ 1])),
        "bad crc: the crc itself": patched(good, 88, b"\0\0\0\0"),
        "bad crc: a version 1 header's crc at 72": patched(v1_file(size), 72, b"\0"),
        "newer version 3": with_version(good, 3),
        "newer version 2^32 - 1": with_version(good, 0xFFFFFFFF),
        "newer version 3 whose crc is elsewhere": with_version(good, 3, crc_at=100),
        "version 0": with_version(good, 0),
        "block size 100": with_version(patched(good, 32, (100).to_bytes(4, "little")), 2),
        "file size not a multiple of 4096": v1_file(size + 1),
        "sealed end past the file size": v2_file(size, sealed_end=size + 8),
        "shorter than a header": good[:75],
        "shorter than a version 2 header": good[:90],
        "empty": b"",
        "cut short": good[:size - 4096],
        "grown": good + bytes(4096),
    })
    return cases


def python_header(path: str) -> dict:
    try:
        return dataclasses.asdict(read_header(path))
    except FormatVersionError as error:
        return {"error": f"FormatVersionException: {error}"}
    except BadHeader as error:
        return {"error": f"CorruptFileException: data file {path} has a bad header: {error}"}


@pytest.fixture(scope="module")
def headers(jvm, journal_files, tmp_path_factory) -> dict[str, tuple[dict, dict]]:
    """{case: (Python's reading, Java's)}, all read by one JVM."""
    folder = tmp_path_factory.mktemp("headers")
    paths = {}
    for index, (name, data) in enumerate(header_cases(journal_files).items()):
        paths[name] = str(folder / f"header-{index}.sjd")
        with open(paths[name], "wb") as handle:
            handle.write(data)
    java = run_dump(jvm, ["--header", *paths.values()])
    assert len(java) == len(paths)
    return {name: (python_header(path), got) for (name, path), got in zip(paths.items(), java)}


def assert_header_agrees(headers, name: str) -> dict:
    """Java read what Python read, or failed with the same kind of error (the exception
    class before the message; messages are each side's own: JSON.md, "Error kinds")."""
    want, got = headers[name]
    if "error" in want:
        assert "error" in got, f"{name}: Python {want['error']}, Java read {got}"
        assert got["error"].split(":")[0] == want["error"].split(":")[0], name
    else:
        assert got == want, name
    return got


def test_version_2_headers_read_alike_in_java_and_python(headers):
    journal = [name for name in headers if name.startswith("journal ")]
    assert len(journal) > 10
    for name in journal + ["version 2", "version 2 sealed at the end"]:
        assert "error" not in assert_header_agrees(headers, name), name
    assert any(headers[name][1]["sealed_end"] for name in journal), "no compacted file's header"
    assert headers["version 2"][1]["max_record_id"] == (1 << 64) - 1


def test_a_bad_magic_is_a_corrupt_file_naming_it_in_java_and_python(headers):
    for name in ("bad magic", "bad magic, all zeros"):
        error = assert_header_agrees(headers, name)["error"]
        assert error.startswith("CorruptFileException: data file ") and " magic " in error


def test_a_bad_header_crc_is_a_corrupt_file_in_java_and_python(headers):
    for name in [n for n in headers if n.startswith("bad crc")]:
        error = assert_header_agrees(headers, name)["error"]
        assert error.endswith("header checksum mismatch"), name


def test_implausible_short_and_resized_headers_are_corrupt_files_in_java_and_python(headers):
    for name in ("version 0", "block size 100", "file size not a multiple of 4096",
                 "sealed end past the file size", "shorter than a header",
                 "shorter than a version 2 header", "empty", "cut short", "grown"):
        error = assert_header_agrees(headers, name)["error"]
        assert error.startswith("CorruptFileException: "), name


# --- the build ---------------------------------------------------------------------------------
def test_the_jar_is_built_once_into_the_cache_even_by_two_processes_at_once(jvm, tmp_path,
                                                                           monkeypatch):
    cache = tmp_path / "cache"
    monkeypatch.setenv(jvm_build.CACHE_ENV, str(cache))
    script = "from sparkjournal.spark.jvm_build import jvm_jar; print(jvm_jar())"
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    builders = [subprocess.Popen([sys.executable, "-c", script], cwd=root, stdout=subprocess.PIPE,
                                 stderr=subprocess.PIPE, text=True) for _ in range(2)]
    outputs = [builder.communicate(timeout=300) for builder in builders]
    assert all(builder.returncode == 0 for builder in builders), outputs
    jar = outputs[0][0].strip()
    assert outputs[1][0].strip() == jar and jar.startswith(str(cache) + os.sep)
    assert os.path.basename(jar) == jvm_build.JAR_NAME
    assert sorted(os.listdir(os.path.dirname(jar))) == [".build.lock", jvm_build.JAR_NAME]
    with zipfile.ZipFile(jar) as built:
        assert built.testzip() is None
        assert "io/sparkjournal/format/RecordScan.class" in built.namelist()
        assert set(jvm_build.jar_resources()) <= set(built.namelist())    # the service entry, options
    before = os.stat(jar).st_mtime_ns
    assert jvm_build.jvm_jar() == jar and os.stat(jar).st_mtime_ns == before     # reused
    generated = [os.path.join(where, name) for where, _dirs, names in os.walk(jvm_build.JVM_DIR)
                 for name in names if not name.endswith(".java")
                 and not where.startswith(jvm_build.RESOURCE_DIR)]
    assert generated == [], "the build left files in the repository"


def test_the_jvm_side_names_why_it_is_unavailable(tmp_path, monkeypatch):
    pytest.importorskip("pyspark")
    monkeypatch.setenv(jvm_build.CACHE_ENV, str(tmp_path / "cache"))
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.delenv("JAVA_HOME", raising=False)
    assert "no javac" in jvm_build.jvm_unavailable()
    monkeypatch.undo()
    if shutil.which("javac") is None:
        pytest.skip("no javac to show a compile error with")
    broken = tmp_path / "src"
    (broken / "io").mkdir(parents=True)
    (broken / "io" / "Broken.java").write_text("package io; class Broken { int x = ; }\n")
    monkeypatch.setenv(jvm_build.CACHE_ENV, str(tmp_path / "cache"))
    monkeypatch.setattr(jvm_build, "SOURCE_DIR", str(broken))
    reason = jvm_build.jvm_unavailable()
    assert reason.startswith("javac failed") and "Broken.java" in reason
    left = [name for _where, _dirs, names in os.walk(tmp_path / "cache") for name in names]
    assert left == [".build.lock"], "a failed build left more than its lock"


def test_the_connector_sources_compile_wherever_a_jdk_is_present():
    """Every JVM test skips when the jar cannot be built, which is right where
    there is no JDK; where there is one, a compile error must fail, not turn
    the JVM tests into skips."""
    pytest.importorskip("pyspark")
    try:
        jvm_build.javac_path()
    except jvm_build.JvmUnavailableError as missing:
        pytest.skip(str(missing))
    assert jvm_build.jvm_unavailable() is None
