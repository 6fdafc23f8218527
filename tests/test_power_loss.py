"""Power loss, modelled against a plain in-memory journal.

A Python writer appends acknowledged records (synced), then writes more
without a sync: records and transactions, or one record written alone. The
power fails: each 512-byte block those unsynced writes changed lands or not,
independently (any blocks of a multi-block write, not only a tail). The lane so
left is reopened by the Python writer or by the JVM appender with a random
sync window (smaller or larger than the file header's), appended to until it
rolls at least once, and loaded again. Every acknowledged record is there with
its bytes; an unsynced record whole or not at all, a transaction all or
nothing; no lane refused, no damage reported.

The default suite runs a few hundred cases; CI's slow run thousands
(``SPARKJOURNAL_POWER_LOSS_CASES``).
"""
from __future__ import annotations

import ctypes
import dataclasses
import os
import random
import shutil
import subprocess
import sys
import textwrap

import pytest

from sparkjournal import Journal

from lane_surgery import flip, scan_lane

from test_jvm_append_agreement import run_tool, tool  # noqa: F401  (fixture: java, class path)
from test_jvm_format_agreement import jvm  # noqa: F401  (fixture: java launcher, class path)

BLOCK = 512
SLOW_CASES = int(os.environ.get("SPARKJOURNAL_POWER_LOSS_CASES", "2000"))


@dataclasses.dataclass
class Model:
    """What may be visible after the crash: the acknowledged records, and the
    unsynced ones, in units that land whole or not at all."""
    acked: dict = dataclasses.field(default_factory=dict)         # id -> body
    unsynced: list = dataclasses.field(default_factory=list)      # [[ids], ...] all-or-nothing units
    bodies: dict = dataclasses.field(default_factory=dict)        # id -> body, every id written
    next_id: int = 1

    def new(self, rng: random.Random, size: int) -> tuple[int, bytes]:
        record_id, body = self.next_id, rng.randbytes(size)
        self.next_id += 1
        self.bodies[record_id] = body
        return record_id, body


def data_images(lane: str) -> dict[str, bytes]:
    images = {}
    for name in os.listdir(lane):
        if name.startswith("data-") and name.endswith(".sjd"):
            with open(os.path.join(lane, name), "rb") as handle:
                images[name] = handle.read()
    return images


def random_options(rng: random.Random) -> dict:
    return {"fileSize": rng.choice(["64k", "128k"]), "bufferSize": rng.choice(["4k", "8k", "16k"]),
            "maxIO": rng.choice([1, 2, 4]), "deviceBlockSize": 512, "minFiles": rng.choice([1, 2]),
            "journalType": "NIO"}


def size_of(text: str) -> int:
    return int(text[:-1]) << 10


def write_acked(rng: random.Random, journal, model: Model, buffer: int) -> None:
    """Records of every size up to 1.5 buffers (some written alone), and committed
    transactions; flushed: all of it acknowledged."""
    for _ in range(rng.randint(5, 60)):
        size = rng.choice([0, 8, 100, 700, 3000, buffer // 2, buffer + 500])
        if rng.random() < 0.2:
            tx = journal.next_tx_id()
            ids = [model.new(rng, rng.choice([10, 300, 2000])) for _ in range(rng.randint(1, 4))]
            for record_id, body in ids:
                journal.append_add_tx(tx, record_id, body)
            journal.commit(tx, sync=rng.random() < 0.5)
            model.acked.update(ids)
        else:
            record_id, body = model.new(rng, size)
            journal.append_add(record_id, body, sync=rng.random() < 0.3)
            model.acked[record_id] = body
    journal.flush()


def write_unsynced(rng: random.Random, journal, model: Model, buffer: int, window: int) -> None:
    """Writes that no completed sync covers when the power fails: records and a
    transaction within the sync window (handed to the kernel, not synced), or
    one record written alone (its sync had not returned)."""
    if rng.random() < 0.25:
        record_id, body = model.new(rng, rng.randint(buffer + 1, buffer * 3))
        journal.append_add(record_id, body)            # alone: synced before it returns
        model.unsynced.append([record_id])
        return
    budget = window - buffer
    while budget > 0:
        if rng.random() < 0.25:
            tx = journal.next_tx_id()
            ids = [model.new(rng, rng.choice([10, 300, 1500])) for _ in range(rng.randint(1, 3))]
            for record_id, body in ids:
                journal.append_add_tx(tx, record_id, body)
            journal.commit(tx, sync=False)
            model.unsynced.append([record_id for record_id, _ in ids])
            budget -= sum(len(body) + 48 for _, body in ids) + 48
        else:
            record_id, body = model.new(rng, rng.choice([0, 40, 500, 1500, buffer // 3]))
            journal.append_add(record_id, body, sync=False)
            model.unsynced.append([record_id])
            budget -= len(body) + 48
        if rng.random() < 0.2:
            break
    journal._appender.run_quiesced(lambda: None)       # in the page cache, not synced


def lose_power(rng: random.Random, lane: str, crashed: str) -> Model:
    """Writes ``lane`` as above and leaves in ``crashed`` what a power loss at
    that moment could leave on disk; returns the model of what was written."""
    options = random_options(rng)
    buffer = size_of(options["bufferSize"])
    window = options["maxIO"] * buffer
    model = Model()
    with Journal.open(lane, **options) as journal:
        write_acked(rng, journal, model, buffer)
        durable, stats = data_images(lane), dict(journal._appender.stats)
        write_unsynced(rng, journal, model, buffer, window)
        now = data_images(lane)
        alone = journal._appender.stats["rolls"] == stats["rolls"] and \
            journal._appender.stats["syncs"] - stats["syncs"] == 1 and len(model.unsynced) == 1
        if journal._appender.stats["rolls"] != stats["rolls"] or \
                (journal._appender.stats["syncs"] != stats["syncs"] and not alone):
            durable = now                          # a sync or roll came between: nothing torn
    shutil.copytree(lane, crashed)
    landed = rng.uniform(0.1, 0.9)
    for name, image in now.items():
        base = bytearray(durable.get(name, image))
        for at in range(0, len(image), BLOCK):
            if base[at:at + BLOCK] != image[at:at + BLOCK] and rng.random() < landed:
                base[at:at + BLOCK] = image[at:at + BLOCK]
        with open(os.path.join(crashed, name), "r+b") as handle:
            handle.write(base)
    return model


def python_continues(rng: random.Random, lane: str, model: Model) -> None:
    options = random_options(rng)
    with Journal.open(lane, **options) as journal:
        while journal._appender.stats["rolls"] < 2:
            record_id, body = model.new(rng, rng.choice([0, 100, 3000, 9000]))
            journal.append_add(record_id, body, sync=rng.random() < 0.5)
            model.acked[record_id] = body


def jvm_continues(rng: random.Random, tool_, lane: str, model: Model) -> None:
    options = random_options(rng)
    java_options = {"fileSize": size_of(options["fileSize"]), "bufferSize": size_of(options["bufferSize"]),
                    "deviceBlockSize": 512, "maxIO": options["maxIO"]}
    commands, written = [], 0
    while written < 2.5 * java_options["fileSize"]:
        record_id, body = model.new(rng, rng.choice([0, 100, 3000, 9000]))
        commands.append({"op": "add", "id": record_id, "body": body.hex(), "sync": rng.random() < 0.5})
        model.acked[record_id] = body
        written += len(body) + 48
    run_tool(tool_, lane, commands + [{"op": "close"}], java_options)


def assert_as_modelled(lane: str, model: Model) -> None:
    with Journal.read(lane) as snapshot:
        report = snapshot.report
        assert not report.recoveries and not report.warnings, report.summary()
        live = {r.record_id: bytes(r.body) for r in snapshot.records()}
    missing = sorted(set(model.acked) - set(live))
    assert not missing, f"acknowledged records lost: {missing[:10]}"
    assert all(live[i] == model.acked[i] for i in model.acked), "an acknowledged body changed"
    # Unsynced units land or not each on its own: a block that never landed
    # over a zero-filled file reads as padding, so a later unit may land
    # without an earlier one; none was acknowledged.
    landed = [unit for unit in model.unsynced if any(i in live for i in unit)]
    for unit in landed:
        assert all(i in live and live[i] == model.bodies[i] for i in unit), \
            f"a torn unit came back in part or changed: {unit}"
    assert set(live) <= set(model.acked) | {i for unit in landed for i in unit}


def run_case(seed: int, tmp_path, tool_=None) -> None:
    rng = random.Random(seed)
    lane, crashed = str(tmp_path / f"lane-{seed}"), str(tmp_path / f"crashed-{seed}")
    model = lose_power(rng, lane, crashed)
    if tool_ is None:
        python_continues(rng, crashed, model)
    else:
        jvm_continues(rng, tool_, crashed, model)
    assert_as_modelled(crashed, model)
    python_continues(rng, crashed, model)          # and the Python writer opens it after
    assert_as_modelled(crashed, model)
    shutil.rmtree(lane)
    shutil.rmtree(crashed)


def test_power_loss_then_python_writer_appends_and_rolls_loses_no_acknowledged_record(tmp_path):
    for seed in range(100):
        run_case(seed, tmp_path)


def test_power_loss_then_jvm_appender_appends_and_rolls_loses_no_acknowledged_record(tool, tmp_path):
    for seed in range(1000, 1020):
        run_case(seed, tmp_path, tool)


@pytest.mark.slow
def test_power_loss_thousands_of_cases_with_either_writer(tool, tmp_path):
    for seed in range(10_000, 10_000 + SLOW_CASES):
        run_case(seed, tmp_path, tool if seed % 10 == 0 else None)


# --- the observations, one scenario each ---------------------------------------------------------
TORN_OPTIONS = {"fileSize": "64k", "bufferSize": "8k", "maxIO": 2, "deviceBlockSize": 512,
                "journalType": "NIO"}
TORN_JAVA = {"fileSize": 64 << 10, "bufferSize": 8 << 10, "deviceBlockSize": 512, "maxIO": 2}


# One record in place of the torn ones, then one that does not fit the rest of
# the file: the roll seals the file with the torn records' bytes past its data.
AFTER_REOPEN = {100: b"a" * 100, 101: b"b" * 56_000, 102: b"c" * 300}


def torn_multi_block_write(lane: str) -> tuple[dict, object]:
    """Ten synced records, then ten written without a sync of which the first
    and the last are torn (a block that never landed: CRC mismatch), the ones
    between complete: what a power loss can leave. Returns the synced records
    and the newest file's scan."""
    acked = {i: bytes([i]) * 700 for i in range(1, 11)}
    with Journal.open(lane, **TORN_OPTIONS) as journal:
        for record_id, body in acked.items():
            journal.append_add(record_id, body, sync=True)
        for record_id in range(11, 21):
            journal.append_add(record_id, bytes([record_id]) * 700, sync=False)
    newest = scan_lane(lane)[-1]
    first, last = newest.records[10], newest.records[19]
    assert (first.record_id, last.record_id) == (11, 20)
    flip(newest.path, first.offset + 100)
    flip(newest.path, last.offset + 100)
    return acked, newest


def load_live(lane: str) -> dict:
    with Journal.read(lane) as snapshot:
        return {r.record_id: bytes(r.body) for r in snapshot.records()}


def test_a_torn_multi_block_write_then_a_python_roll_keeps_every_acknowledged_record(tmp_path):
    lane = str(tmp_path / "lane")
    acked, newest = torn_multi_block_write(lane)
    with Journal.open(lane, **TORN_OPTIONS) as journal:
        torn = journal.report.torn_tail
        assert (torn.file, torn.records_dropped) == (newest.path, 8)
        for record_id, body in AFTER_REOPEN.items():
            journal.append_add(record_id, body, sync=True)
        assert journal._appender.stats["rolls"] >= 1
    acked.update(AFTER_REOPEN)
    assert load_live(lane) == acked


@pytest.mark.parametrize("java_window", ["the header's", "larger than the header's"])
def test_a_torn_multi_block_write_then_a_jvm_roll_keeps_every_acknowledged_record(
        tool, tmp_path, java_window):
    lane = str(tmp_path / "lane")
    acked, newest = torn_multi_block_write(lane)
    options = dict(TORN_JAVA, maxIO=2 if java_window == "the header's" else 4)
    commands = [{"op": "add", "id": i, "body": body.hex(), "sync": True}
                for i, body in AFTER_REOPEN.items()]
    opened, _acks = run_tool(tool, lane, commands + [{"op": "close"}], options)
    assert opened["torn_tail"]["offset"] == newest.records[9].offset + newest.records[9].size
    acked.update(AFTER_REOPEN)
    assert load_live(lane) == acked
    opened, _acks = run_tool(tool, lane, [{"op": "close"}], options)   # the appender takes it again
    assert opened["torn_tail"] is None


def dirty_pages(path: str) -> int | None:
    """Pages of ``path`` in the page cache not yet written to the disk
    (cachestat(2), Linux 6.5+); None where the kernel cannot tell."""
    libc = ctypes.CDLL(None, use_errno=True)
    span = (ctypes.c_uint64 * 2)(0, 0)                     # the whole file
    stat = (ctypes.c_uint64 * 5)()
    fd = os.open(path, os.O_RDONLY)
    try:
        if libc.syscall(451, fd, span, stat, 0) != 0:      # 451: cachestat on x86_64 and arm64
            return None
    finally:
        os.close(fd)
    return stat[1] + stat[2]                               # dirty + under writeback


KILLED_WRITER = textwrap.dedent("""
    import os, signal, sys
    from sparkjournal import Journal
    journal = Journal.open(sys.argv[1], **eval(sys.argv[2]))
    journal.append_add(1, b"synced" * 100, sync=True)
    for record_id in range(2, 40):
        journal.append_add(record_id, bytes([record_id]) * 1000, sync=False)
    journal._appender.run_quiesced(lambda: None)       # written, not synced
    os.kill(os.getpid(), signal.SIGKILL)
""")


def test_a_roll_right_after_reopen_syncs_the_file_it_seals(tmp_path):
    """A writer killed with records written but not synced; the next writer's
    first append does not fit and rolls. The sealed file's records, which the
    load took for data and the new header's previous end counts, must be on
    the disk before that header is: a power loss then keeps them."""
    lane = str(tmp_path / "lane")
    options = dict(TORN_OPTIONS, fileSize="128k", bufferSize="16k")
    subprocess.run([sys.executable, "-c", KILLED_WRITER, lane, repr(options)], timeout=120)
    newest = scan_lane(lane)[-1]
    if not dirty_pages(newest.path):
        pytest.skip("the kernel cannot tell a file's dirty pages (cachestat), or wrote them back")
    with Journal.open(lane, **options) as journal:
        assert len(load_live(lane)) == 39
        journal.append_add(100, b"r" * 100_000, sync=True)  # does not fit the rest: a roll
        assert journal._appender.stats["rolls"] == 1
        assert dirty_pages(newest.path) == 0, "the file sealed by the roll was never synced"
