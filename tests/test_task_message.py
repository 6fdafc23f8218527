"""A task's commit message crosses processes as plain JSON values (a row of
MESSAGE_SCHEMA, or a dict in the DataSource writer's commit message) and comes
back as the same TaskMessage; anything else is refused naming what is wrong,
and the decision records exactly the transaction it names."""
from __future__ import annotations

import json

import pyarrow as pa
import pytest

from sparkjournal.errors import SparkJournalError
from sparkjournal.events.commit_log import CommitLog, TxRef
from sparkjournal.spark.task_message import MESSAGE_SCHEMA, TaskMessage, message_ddl

WROTE = TaskMessage("q", 7, "node-a", "host-a", "/data/root", "lane-3", 41, 2, 1000, 65536,
                    5, 1, 12.5, 3.0, 0, 0)
DROPPED = TaskMessage("q", 7, "node-a", "host-a", "/data/root", "lane-4", None, 0, 0, 0,
                      6, 0, 0.0, 0.0, 250, 1)


@pytest.mark.parametrize("message", [WROTE, DROPPED], ids=["wrote", "dropped"])
def test_a_message_comes_back_equal_through_json_text_and_an_arrow_row(message):
    assert TaskMessage.from_json(json.loads(json.dumps(message.to_json()))) == message
    row = pa.RecordBatch.from_pylist([message.to_json()], schema=MESSAGE_SCHEMA)
    assert TaskMessage.from_json(row.to_pylist()[0]) == message


def test_the_ddl_names_every_field_in_order():
    assert [part.split()[0] for part in message_ddl().split(", ")] == MESSAGE_SCHEMA.names
    assert message_ddl().startswith("query string, batch long,") and "write_ms double" in message_ddl()


@pytest.mark.parametrize("change, named", [
    ({"rows": "1000"}, "rows"), ({"tx": True}, "tx"), ({"batch": 7.0}, "batch"),
    ({"lane": None}, "lane")], ids=["text-rows", "bool-tx", "float-batch", "null-lane"])
def test_a_field_of_the_wrong_type_is_refused_naming_it(change, named):
    with pytest.raises(SparkJournalError) as caught:
        TaskMessage.from_json({**WROTE.to_json(), **change})
    assert f"task message field {named}=" in str(caught.value)


def test_a_missing_or_unknown_field_or_no_object_is_refused():
    data = WROTE.to_json()
    for broken in ({k: v for k, v in data.items() if k != "root"}, {**data, "extra": 1},
                   [data], "q"):
        with pytest.raises(SparkJournalError, match="not a sparkjournal task message"):
            TaskMessage.from_json(broken)


def test_the_decision_records_the_transaction_the_message_names(tmp_path):
    log = CommitLog(str(tmp_path / "_commits"))
    log.record("q", 7, [WROTE.decided()])
    decision = CommitLog(str(tmp_path / "_commits")).decision("q", 7)    # read from disk
    assert decision.tx_refs() == {TxRef("node-a", "lane-3", 41)}
    assert decision.txs == [{"node": "node-a", "host": "host-a", "root": "/data/root",
                             "lane": "lane-3", "tx": 41, "records": 2, "rows": 1000,
                             "bytes": 65536}]
