"""Every option with a bad value fails before anything is touched, with a
ConfigError naming the key, the value and what the key accepts: each journal
option (config.JOURNAL), each write option (config.SINK, through spark/sink.py)
and each read option (config.READ, through spark/read_options.py). The options
table (``sparkjournal options --markdown``, the README's) lists every one of
them with a default that parses back to the real default, and
conf/sparkjournal.conf is exactly ``sparkjournal options --conf``."""
from __future__ import annotations

import dataclasses
import os

import pytest

from sparkjournal import ConfigError, Journal
from sparkjournal.cli.main import main
from sparkjournal.cli.options import markdown, option_rows
from sparkjournal.config import (JOURNAL, READ, SINK, JournalConfig, conf_text, load_config,
                                 read_conf_file)
from sparkjournal.spark.read_options import parse_read_options
from sparkjournal.spark.sink import split_options

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
JOURNAL_KEYS = [f.name for f in dataclasses.fields(JournalConfig)]

BAD_JOURNAL_VALUES = {
    "createDirs": "maybe", "journalType": "FAST", "syncTransactional": "sometimes",
    "syncNonTransactional": 2, "datasync": "yes please", "fileSize": "5000", "minFiles": 0,
    "poolFiles": -2, "maxIO": 5000, "bufferTimeout": "soon", "bufferSize": "1k",
    "deviceBlockSize": 3000, "compactMinFiles": -1, "compactPercentage": 101, "checksum": "crc",
    "checkForCorruptFiles": "", "archive": "always", "archiveDirectory": "../x",
    "largeRecordSize": "big", "userVersion": -1, "lockWait": "forever", "recover": "attic",
    "retention": "forever", "maxSizeBytes": "lots", "maxRootSizeBytes": "-2",
    "pageSizeBytes": "1k", "maintenanceBytesPerSecond": "fast", "maintenancePriority": "REALTIME", "addressFullPolicy": "SPILL", "laneIdleTimeout": "10 minutes",
    "commitLogCheckpointInterval": -1, "commitLogRetainBatches": "many", "commitLogRetainTime": "an hour",
    "undecidedWarnAfter": "soon",
    "dirMode": "0777", "fileMode": "0666",
}
BAD_READ_VALUES = {
    "skipCorrupt": "perhaps", "allowPartialRead": "half", "startingBatchId": "yesterday",
    "startingTimestamp": "last week",
    "maxRowsPerTrigger": 0, "maxBytesPerTrigger": "a lot", "missingHostWait": "a while",
}
BAD_WRITE_VALUES = {"txnAppId": "team/app", "txnVersion": "-1", "commitLog": " ",
                    "smallBatchRows": "-1", "writer": "scala"}


def assert_names(caught, key: str, value, accepted: str) -> None:
    error = caught.value
    assert (error.key, error.value) == (key, value)
    assert f"option {key}={value!r} is not valid: {key} accepts {accepted}" in str(error)


def accepts(key: str) -> str:
    return JOURNAL[key].accepts


def test_every_option_has_a_bad_value_case_and_both_texts():
    assert sorted(BAD_JOURNAL_VALUES) == sorted(JOURNAL_KEYS) == sorted(JOURNAL.names)
    assert sorted(BAD_READ_VALUES) == sorted(READ.names)
    assert sorted(BAD_WRITE_VALUES) == sorted(SINK.names)
    for option in [*JOURNAL, *READ, *SINK]:
        assert option.accepts and option.meaning and option.default_text, option.name


@pytest.mark.parametrize("key", JOURNAL_KEYS)
def test_a_bad_journal_option_names_key_value_and_what_is_accepted(tmp_path, key):
    value = BAD_JOURNAL_VALUES[key]
    with pytest.raises(ConfigError) as caught:
        load_config({key: value})
    assert_names(caught, key, value, accepts(key))
    lane = str(tmp_path / "lane")
    with pytest.raises(ConfigError) as caught:
        Journal.open(lane, **{key: value})
    assert caught.value.key == key and not os.path.exists(lane)


def test_a_bad_value_in_the_conf_file_names_the_key(tmp_path, monkeypatch):
    conf = tmp_path / "sparkjournal.conf"
    conf.write_text("fileSize 10m\nmaxIO lots\n")
    monkeypatch.setenv("SPARKJOURNAL_CONF", str(conf))
    with pytest.raises(ConfigError) as caught:
        load_config()
    assert_names(caught, "maxIO", "lots", accepts("maxIO"))


SPARK_CASES = ([("read", key, BAD_READ_VALUES[key], READ[key].accepts) for key in READ.names]
               + [("write", key, BAD_WRITE_VALUES[key], SINK[key].accepts) for key in SINK.names])


@pytest.mark.parametrize("kind,key,value,accepted", SPARK_CASES, ids=[c[1] for c in SPARK_CASES])
def test_a_bad_read_or_write_option_names_key_value_and_what_is_accepted(tmp_path, kind, key, value,
                                                                        accepted):
    parse = parse_read_options if kind == "read" else split_options
    with pytest.raises(ConfigError) as caught:
        parse({"path": str(tmp_path), key: value})
    assert_names(caught, key, value, accepted)


def test_a_write_option_in_a_read_is_refused_naming_it(tmp_path):
    with pytest.raises(ConfigError) as caught:
        parse_read_options({"path": str(tmp_path), "txnAppId": "app"})
    assert caught.value.key == "txnAppId" and "a write option" in str(caught.value)


def test_an_unknown_option_lists_the_known_ones(tmp_path):
    with pytest.raises(ConfigError) as caught:
        parse_read_options({"path": str(tmp_path), "fileSiz": "10m"})
    assert caught.value.key == "fileSiz" and "fileSize" in str(caught.value)


# --- the options table -------------------------------------------------------------------------

def test_the_table_lists_every_option_once_with_its_texts():
    table = markdown()
    for option in [*JOURNAL, *READ, *SINK]:
        row = (f"| `{option.name}` | {option.default_text} | {option.accepts} | "
               f"{option.meaning} |")
        assert table.count(f"| `{option.name}` |") == 1 and row in table, option.name
    assert len(option_rows()) == len(JOURNAL) + len(READ) + len(SINK)


@pytest.mark.parametrize("key", JOURNAL_KEYS)
def test_the_default_the_table_shows_parses_back_to_the_default(key):
    default = getattr(JournalConfig(), key)
    assert default == JOURNAL[key].default
    assert getattr(load_config({key: JOURNAL[key].default_text}), key) == default


@pytest.mark.parametrize("option", [o for o in [*READ, *SINK] if o.default is not None],
                         ids=lambda option: option.name)
def test_a_read_or_write_default_that_is_a_value_parses_back_to_it(option):
    assert option.parse(option.default_text) == option.default


def test_the_conf_file_is_the_options_definition_at_its_defaults(capsys):
    path = os.path.join(REPO, "conf", "sparkjournal.conf")
    with open(path, encoding="utf-8") as handle:
        assert handle.read() == conf_text(), \
            "conf/sparkjournal.conf is stale: regenerate it with `sparkjournal options --conf`"
    conf = read_conf_file(path)
    assert list(conf) == JOURNAL_KEYS
    assert load_config(conf) == JournalConfig()
    assert main(["options", "--conf"]) == 0
    assert capsys.readouterr().out == conf_text()


def test_a_bound_names_the_option_the_value_and_what_is_accepted():
    for key, value in [("maxIO", "0"), ("maxIO", 4097), ("fileSize", "4g"), ("fileSize", "10001"),
                       ("deviceBlockSize", "3k"), ("pageSizeBytes", "4095"),
                       ("userVersion", 1 << 32), ("compactPercentage", "101")]:
        with pytest.raises(ConfigError) as caught:
            load_config({key: value})
        assert_names(caught, key, value, accepts(key))
    assert load_config({"maxIO": "4096", "fileSize": (4 << 30) - 4096}).fileSize == (4 << 30) - 4096


def test_the_options_command_prints_the_table(capsys):
    assert main(["options", "--markdown"]) == 0
    assert capsys.readouterr().out == markdown()
