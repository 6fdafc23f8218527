"""format/JSON.md, rule by rule, as strict_json reads and writes it: each
input a reader must refuse is refused with a message naming what was wrong,
each one it must accept is accepted with its value, typed fields refuse
what Python's int()/str() would coerce, and the canonical form is the bytes
the spec writes."""
from __future__ import annotations

import json

import pytest

from sparkjournal.format import strict_json as sj
from sparkjournal.format.codec import CODEC
from sparkjournal.journal.swap import ControlFile


@pytest.mark.parametrize("raw, named", [
    (b'{"a": "\xff"}', "is not UTF-8"),
    (b'"\xed\xa0\x80"', "is not UTF-8"),                  # a surrogate encoded in UTF-8
    (b'\xef\xbb\xbf{"a": 1}', "byte-order mark"),
    (b'\xff\xfe{\x00}\x00', "is not UTF-8"),              # UTF-16, which json.loads would take
    (b'{"a": 1} {"a": 1}', "not one JSON value (Extra data"),
    (b'{"a": 1}\x0c', "not one JSON value (Extra data"),  # form feed is not JSON whitespace
    (b"", "not one JSON value (Expecting value"),
], ids=["bad-byte", "utf8-surrogate", "bom", "utf16", "two-values", "form-feed", "empty"])
def test_rule_1_bytes_that_are_not_one_utf8_json_value_are_refused(raw, named):
    with pytest.raises(sj.JsonRefused) as refused:
        sj.loads(raw, "the file")
    assert str(refused.value).startswith("the file") and named in str(refused.value)


def test_rule_1_json_whitespace_around_the_value_is_accepted():
    assert sj.loads(b' \t\r\n{"a": [1, 2]}\n\t ', "the file") == {"a": [1, 2]}


@pytest.mark.parametrize("raw, named", [
    (b'{"a": NaN}', "holds NaN"),
    (b'[Infinity]', "holds Infinity"),
    (b'[-Infinity]', "holds -Infinity"),
    (b'[1e400]', "the number 1e400, too large"),
    (b'{"a": 1 /* c */}', "not one JSON value"),
    (b"{'a': 1}", "not one JSON value"),
    (b'{a: 1}', "not one JSON value"),
    (b'[1, 2,]', "not one JSON value"),
    (b'{"a": 1,}', "not one JSON value"),
    (b'[01]', "not one JSON value"),
    (b'[' + b'9' * 5000 + b']', "an integer of more digits"),
], ids=["nan", "infinity", "minus-infinity", "overflowing-number", "comment", "single-quotes",
        "unquoted-name", "trailing-comma-array", "trailing-comma-object", "leading-zero",
        "past-the-digit-limit"])
def test_rule_2_what_is_not_json_is_refused(raw, named):
    with pytest.raises(sj.JsonRefused) as refused:
        sj.loads(raw, "the file")
    assert named in str(refused.value)


@pytest.mark.parametrize("raw", [b'{"a": 1, "a": 1}', b'[{"x": {"b": 1, "b": 2}}]',
                                 b'{"\\u0061": 1, "a": 2}'],
                         ids=["same-value", "nested", "escaped-spelling"])
def test_rule_3_a_name_twice_in_one_object_is_refused_whatever_the_values(raw):
    with pytest.raises(sj.JsonRefused) as refused:
        sj.loads(raw, "the file")
    assert "twice in one object" in str(refused.value)


def test_rule_3_one_name_in_different_objects_is_accepted():
    assert sj.loads(b'[{"a": 1}, {"a": 2}]', "the file") == [{"a": 1}, {"a": 2}]


@pytest.mark.parametrize("raw", [b'"\\ud800"', b'"\\udc00"', b'"\\ud800x"', b'"\\ud800\\u0041"',
                                 b'{"\\udfff": 1}', b'[["\\ud83d"]]'],
                         ids=["high-alone", "low-alone", "high-then-text", "high-then-ascii",
                              "in-a-name", "nested"])
def test_rule_4_a_lone_surrogate_escape_is_refused(raw):
    with pytest.raises(sj.JsonRefused) as refused:
        sj.loads(raw, "the file")
    assert "lone surrogate" in str(refused.value)


def test_rule_4_a_surrogate_pair_and_an_escaped_backslash_u_are_text():
    assert sj.loads(b'["\\ud83d\\ude00", "\\\\ud800"]', "the file") == ["\U0001F600", "\\ud800"]


def nested(depth: int, inner: bytes = b"1") -> bytes:
    opens = b"".join(b'{"k":' if level % 2 else b"[" for level in range(depth))
    closes = b"".join(b"}" if level % 2 else b"]" for level in reversed(range(depth)))
    return opens + inner + closes


def test_rule_5_thirty_two_levels_are_accepted_and_thirty_three_refused():
    assert sj.loads(nested(32), "the file") is not None
    for raw in (nested(33), b"[" * 100_000 + b"]" * 100_000, b"[" * 100_000):
        with pytest.raises(sj.JsonRefused) as refused:
            sj.loads(raw, "the file")
        assert "more than 32 deep" in str(refused.value)


def test_rule_5_brackets_inside_strings_do_not_count_as_nesting():
    raw = json.dumps(["[" * 40, {"a": "{" * 40}]).encode()
    assert sj.loads(raw, "the file") == ["[" * 40, {"a": "{" * 40}]


def test_rule_5_a_closing_bracket_inside_a_string_hides_no_level():
    raw = b'["]", ' + b"[" * 32 + b"]" * 32 + b', "["]'           # 33 deep, brackets in strings
    with pytest.raises(sj.JsonRefused, match="more than 32 deep"):
        sj.loads(raw, "the file")


def test_rule_2_a_number_of_more_than_4300_digits_is_refused_and_long_text_is_not():
    for raw in (b"[1" + b"0" * 4300 + b"]", b"[1." + b"0" * 4300 + b"]"):
        with pytest.raises(sj.JsonRefused, match="more than 4300|more digits"):
            sj.loads(raw, "the file")
    long_text = {"n" * 60_000: "v" * 100_000}
    assert sj.loads(json.dumps(long_text).encode(), "the file") == long_text


def test_rule_5_many_shallow_containers_are_accepted():
    value = {"txs": [{"node": str(n), "ranges": [[n, n + 1]]} for n in range(100)]}
    assert sj.loads(json.dumps(value).encode(), "the file") == value


@pytest.mark.parametrize("value", [True, 1.0, 1e0, "1", None, -1, 1 << 64, [1], {"a": 1}],
                         ids=["true", "float", "exponent", "string", "null", "negative",
                              "past-u64", "list", "object"])
def test_rule_6_an_integer_field_refuses_what_int_would_coerce(value):
    with pytest.raises(sj.JsonRefused) as refused:
        sj.integer(sj.loads(json.dumps({"batch": value}).encode(), "x"), "batch")
    assert '"batch" must be an integer from 0 to 18446744073709551615' in str(refused.value)


def test_rule_6_an_integer_field_takes_its_range_and_its_default_only_when_absent():
    data = sj.loads(b'{"zero": 0, "top": 18446744073709551615, "minus": -1, "none": null}', "x")
    assert sj.integer(data, "zero") == 0 and sj.integer(data, "top") == (1 << 64) - 1
    assert sj.integer(data, "minus", lo=-1) == -1
    assert sj.integer(data, "absent", default=7) == 7
    with pytest.raises(sj.JsonRefused, match='"none" must be an integer'):
        sj.integer(data, "none", default=7)                  # null is not absent
    with pytest.raises(sj.JsonRefused, match='"absent" is missing'):
        sj.integer(data, "absent")


@pytest.mark.parametrize("getter, value, named", [
    (sj.string, 1, '"f" must be a string, not 1'),
    (sj.string, None, '"f" must be a string, not null'),
    (sj.boolean, 0, '"f" must be true or false, not 0'),
    (sj.boolean, "true", '"f" must be true or false, not "true"'),
    (sj.array, {"a": 1}, '"f" must be a list'),
    (sj.array, "[]", '"f" must be a list'),
    (sj.obj, [1], '"f" must be an object'),
], ids=["string-number", "string-null", "boolean-zero", "boolean-string", "list-object",
        "list-string", "object-list"])
def test_rule_6_each_type_refuses_the_others(getter, value, named):
    with pytest.raises(sj.JsonRefused) as refused:
        getter({"f": value}, "f")
    assert named in str(refused.value)


def test_rule_6_each_type_accepts_its_own():
    data = sj.loads(b'{"s": "x", "b": false, "l": [], "o": {}}', "x")
    assert (sj.string(data, "s"), sj.boolean(data, "b"), sj.array(data, "l"),
            sj.obj(data, "o")) == ("x", False, [], {})


def test_rule_7_a_newer_format_is_told_apart_from_a_damaged_one():
    assert sj.newer_format({"format": 2, "junk": NotImplemented}, 1) == 2
    assert [sj.newer_format({"format": f}, 1) for f in (1, 0, "2", 2.0, True, None)] == [None] * 6
    with pytest.raises(sj.JsonRefused, match='"format" must be an integer from 1 to 1'):
        sj.format_of({"format": "1"}, 1)


def test_canonical_sorts_names_by_code_point_and_writes_no_whitespace():
    value = {"\U0001F600": 1, "\uffff": 2, "a": 3, "B": 4, "é": [True, False, None, -5]}
    assert sj.canonical(value) == ('{"B":4,"a":3,"é":[true,false,null,-5],"\uffff":2,'
                                   '"\U0001F600":1}').encode("utf-8")


def test_canonical_escapes_only_quote_backslash_and_control_characters():
    assert sj.canonical(['"\\', "\n\t\x00\x1f", "\x7f é/"]) == \
        b'["\\"\\\\","\\u000a\\u0009\\u0000\\u001f","\x7f \xc3\xa9/"]'


@pytest.mark.parametrize("value", [1.5, float("nan"), "\ud800", {1: 2}, {"a": b"x"}],
                         ids=["float", "nan", "lone-surrogate", "int-name", "bytes"])
def test_canonical_refuses_what_it_does_not_define(value):
    with pytest.raises(ValueError):
        sj.canonical(value)


def test_canonical_is_todays_crc_form_of_every_control_file_our_compactor_writes():
    for count in (1, 2, 7, 40):
        old = tuple((f"data-{n:010d}.sjd", n + 1) for n in range(count))
        control = ControlFile(count * 3, old, old[: max(1, count // 2)])
        body = control.body()
        assert sj.canonical(body) == json.dumps(body, sort_keys=True, separators=(",", ":")).encode()
        written = json.loads(control.encode())
        assert written["crc32c"] == CODEC.crc32c(sj.canonical(body))
        assert ControlFile.decode(control.encode(), "x") == control
