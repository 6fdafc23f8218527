"""The shared constants have one declaration (sparkjournal/format/constants.json)
and every language takes the same values from it: Python at import
(format/constants.py), Java from the class the jar build generates
(spark/jvm_constants.py, read back here with ``javap -constants``), C from
native/sj_format.h, whose numbers must equal the declared ones. And no source
of the package or of the JVM connector spells a declared string as a literal
of its own: it names the declared constant instead. The JSON field names of the
structures on disk (the groups marked json_fields) are ordinary words elsewhere,
so they are searched for only in the files that encode or decode those
structures (FIELD_USERS)."""
from __future__ import annotations

import ast
import os
import pathlib
import re
import subprocess

import pytest

from sparkjournal.format import constants, layout
from sparkjournal.format.constants import GROUPS

REPO = pathlib.Path(__file__).resolve().parent.parent
PACKAGE = REPO / "sparkjournal"
JAVA_MAIN = REPO / "jvm" / "src" / "main" / "java"

# Declared strings that are also ordinary words of unrelated code (a CLI verb,
# a JSON field, a counter's name): not searched for as copies.
COMMON_WORDS = {"delete", "page", "pages", "requests"}

FIELD_GROUPS = {"control_file", "commit_entry", "entry_tx", "checkpoint", "checkpoint_query",
                "checkpoint_lane", "checkpoint_node", "forgotten_node", "xid", "lane_request",
                "delete_request", "page_request", "requested_page"}

# The files that encode or decode a structure on disk (or build a part of one:
# a task message's decided fields become an entry's tx), and the field groups
# of the structures each handles: none of them spells one of those names.
FIELD_USERS = {
    "sparkjournal/journal/swap.py": {"control_file"},
    "sparkjournal/events/xid.py": {"xid"},
    "sparkjournal/events/commit_log.py": {"commit_entry", "entry_tx"},
    "sparkjournal/events/log_checkpoint.py": {"checkpoint", "checkpoint_query", "checkpoint_lane",
                                              "checkpoint_node", "entry_tx"},
    "sparkjournal/events/forgotten.py": {"forgotten_node"},
    "sparkjournal/events/requests.py": {"lane_request"},
    "sparkjournal/events/lane_deletes.py": {"lane_request", "delete_request"},
    "sparkjournal/events/page_records.py": {"requested_page"},
    "sparkjournal/maintenance/page_drop.py": {"lane_request", "page_request"},
    "sparkjournal/maintenance/page_commit.py": {"page_request"},
    "sparkjournal/maintenance/paging.py": {"lane_request", "page_request", "requested_page"},
    "sparkjournal/maintenance/retention.py": {"delete_request"},
    "sparkjournal/spark/delete.py": {"delete_request"},
    "sparkjournal/spark/task_message.py": {"entry_tx"},
    "sparkjournal/spark/committer.py": {"entry_tx"},
    "jvm/src/main/java/io/sparkjournal/journal/ControlFile.java": {"control_file"},
    "jvm/src/main/java/io/sparkjournal/events/BatchXid.java": {"xid"},
    "jvm/src/main/java/io/sparkjournal/events/XidEncoder.java": {"xid"},
    "jvm/src/main/java/io/sparkjournal/events/Decision.java": {"commit_entry", "entry_tx"},
    "jvm/src/main/java/io/sparkjournal/events/CommitLogWriter.java": {"commit_entry", "entry_tx"},
    "jvm/src/main/java/io/sparkjournal/events/LogCheckpoint.java": {
        "checkpoint", "checkpoint_query", "checkpoint_lane", "checkpoint_node"},
    "jvm/src/main/java/io/sparkjournal/events/CheckpointState.java": {
        "checkpoint", "checkpoint_query", "checkpoint_lane", "checkpoint_node", "entry_tx"},
    "jvm/src/main/java/io/sparkjournal/events/ForgottenNode.java": {"forgotten_node"},
    "jvm/src/main/java/io/sparkjournal/events/LaneRequests.java": {
        "lane_request", "page_request", "requested_page"},
    "jvm/src/main/java/io/sparkjournal/events/DeleteRequests.java": {"delete_request"},
    "jvm/src/main/java/io/sparkjournal/events/CommittedLane.java": {"entry_tx"},
    "jvm/src/main/java/io/sparkjournal/events/ForgottenEvents.java": {"entry_tx"},
    "jvm/src/main/java/io/sparkjournal/events/DriverCommit.java": {"entry_tx"},
    "jvm/src/main/java/io/sparkjournal/events/TaskWrite.java": {"entry_tx"},
}
# Files that handle such a structure only through the ones above (no field of
# their own to name): checked for copies all the same.
FIELD_USERS_BY_WAY_OF_OTHERS = {
    "sparkjournal/maintenance/log_checkpointer.py": {"checkpoint"},
    "jvm/src/main/java/io/sparkjournal/events/LogCheckpointWriter.java": {"checkpoint"},
    "jvm/src/main/java/io/sparkjournal/events/PageRef.java": {"requested_page"},
}


def declared_strings() -> dict[str, str]:
    """{value: "group.NAME"} of every declared string searched for as a copy
    everywhere: neither a common word nor a JSON field name."""
    return {value: f"{group}.{name}" for group, values in GROUPS.items()
            if group not in constants.FIELD_GROUPS
            for name, value in values.items()
            if isinstance(value, str) and value not in COMMON_WORDS}


def test_declaration_is_well_formed_and_names_are_unique_per_group():
    assert set(GROUPS) == {"format", "record_types", "record_flags", "user_types",
                           "metadata_columns", "hidden_columns", "schema_metadata",
                           "request_kinds", "magics", "paths"} | FIELD_GROUPS
    for group in GROUPS.values():
        assert group.doc and len(group) > 0
    assert set(constants.FIELD_GROUPS) == FIELD_GROUPS
    for name in FIELD_GROUPS:
        group = GROUPS[name]
        assert re.search(r"(COMMIT_LOG|EVENTS|FORMAT)\.md, \"[A-Z]", group.doc), name
        assert all(isinstance(value, str) and re.fullmatch(r"[a-z0-9_]+", value)
                   for value in group.values()), name
        assert len(set(group.values())) == len(group), name
    assert list(GROUPS["metadata_columns"].extra["types"]) == list(GROUPS["metadata_columns"])


def test_python_modules_take_the_declared_values():
    from sparkjournal.events import deletions, event_records, lane_deletes, page_records
    from sparkjournal.events.read_columns import METADATA
    from sparkjournal.events.node import NODE_ID_FILE
    from sparkjournal.maintenance.page_commit import PAGE_REQUEST
    from sparkjournal.maintenance.page_drop import DROP_REQUEST

    fmt = GROUPS["format"]
    assert layout.FORMAT_VERSION == fmt["FORMAT_VERSION"]
    assert layout.FILE_MAGIC == fmt["FILE_MAGIC"].encode("ascii")
    for name in ("FILE_HEADER_SIZE", "FILE_SIZE_MULTIPLE", "FILE_HEADER_CRC_AT",
                 "FILE_HEADER_V1_CRC_AT", "RECORD_HEADER_SIZE", "RECORD_ALIGN"):
        assert getattr(layout, name) == fmt[name], name
    assert layout.LARGE_REF.size == fmt["LARGE_REF_SIZE"]
    assert layout.TYPE_BY_NAME == dict(GROUPS["record_types"])
    for name, code in GROUPS["record_types"].items():
        assert getattr(layout, name) == code
    assert layout.FLAG_LARGE == GROUPS["record_flags"]["FLAG_LARGE"]
    user = GROUPS["user_types"]
    assert (event_records.EVENTS, deletions.DELETION_VECTOR, page_records.PAGE) == (
        user["EVENTS"], user["DELETION_VECTOR"], user["PAGE"])
    assert METADATA.names == list(GROUPS["metadata_columns"].values())
    assert [str(t) for t in METADATA.types] == list(GROUPS["metadata_columns"].extra["types"].values())
    assert deletions.ROW_COLUMN == GROUPS["hidden_columns"]["ROW_COLUMN"]
    meta = GROUPS["schema_metadata"]
    assert (event_records.META_QUERY, event_records.META_BATCH) == (
        meta["META_QUERY"].encode(), meta["META_BATCH"].encode())
    magics = GROUPS["magics"]
    assert (deletions.MAGIC, page_records.MAGIC) == (magics["DELETION_VECTOR"].encode(),
                                                     magics["PAGE"].encode())
    kinds = GROUPS["request_kinds"]
    assert (lane_deletes.DELETE, PAGE_REQUEST, DROP_REQUEST) == (
        kinds["DELETE"], kinds["PAGE"], kinds["DROP_PAGE"])
    assert (NODE_ID_FILE, page_records.PAGES) == (GROUPS["paths"]["NODE_ID_FILE"],
                                                  GROUPS["paths"]["PAGES"])


def test_python_field_groups_are_the_declared_ones():
    for name in FIELD_GROUPS:
        group = getattr(constants, name.upper())
        assert group is GROUPS[name] and dict(group) == GROUPS[name]._values, name
        for key, value in group.items():
            assert getattr(group, key) == value


def test_python_encoders_write_the_declared_field_names():
    """What each Python encoder writes is named by its group: every key written
    is a declared field of the structure, and the required ones are there."""
    import json
    from sparkjournal.events.commit_log import Decision
    from sparkjournal.events.forgotten import ForgottenNode
    from sparkjournal.events.log_checkpoint import Checkpoint
    from sparkjournal.events.page_records import PageRef
    from sparkjournal.events.xid import BatchXid
    from sparkjournal.journal.swap import ControlFile

    control = json.loads(ControlFile(3, (("data-1.sjd", 1), ("data-2.sjd", 2)),
                                     (("data-1.sjd", 1),)).encode())
    assert set(control) == set(GROUPS["control_file"].values())
    xid = json.loads(BatchXid("log", "q", 1, 2, 3, 4, 5, 6).encode())
    assert set(xid) == set(GROUPS["xid"].values())
    tx = {"node": "n@h", "lane": "lane-000", "tx": 7, "host": "h", "root": "/r", "rows": 2,
          "bytes": 30, "records": 1}
    assert set(tx) == set(GROUPS["entry_tx"].values())
    entry = json.loads(Decision("q", 1, 5, [tx], epoch=2, aborted=False).to_json())
    assert set(entry) == set(GROUPS["commit_entry"].values()) - {"aborted"}
    abort = json.loads(Decision("q", 1, 5, [], epoch=0, aborted=True).to_json())
    assert set(abort) == set(GROUPS["commit_entry"].values()) - {"epoch"}
    state = Checkpoint(seq=0)
    state.fold(Decision("q", 1, 5, [tx]))
    checkpoint = json.loads(state.to_json())
    assert set(checkpoint) == set(GROUPS["checkpoint"].values())
    for part, group in (("queries", "checkpoint_query"), ("lanes", "checkpoint_lane"),
                        ("nodes", "checkpoint_node")):
        assert set(checkpoint[part][0]) == set(GROUPS[group].values()), part
    forgotten = json.loads(ForgottenNode("n@h", 1, 2, 3, 4, ("lane-000",)).to_json())
    assert set(forgotten) == set(GROUPS["forgotten_node"].values())
    page = PageRef("page-1-0.parquet", 10, 11, 12, (1, 2), (0, 1), (5, 6)).as_request()
    assert set(page) == set(GROUPS["requested_page"].values())


def test_generated_java_source_is_deterministic_and_complete():
    from sparkjournal.spark import jvm_constants
    first, second = jvm_constants.generated_sources(), jvm_constants.generated_sources()
    assert first == second and list(first) == ["io/sparkjournal/format/Constants.java"]
    text = first["io/sparkjournal/format/Constants.java"]
    for group, values in GROUPS.items():
        assert f"public static final class {jvm_constants.class_name(group)} {{" in text
        for name in values:
            assert re.search(rf"public static final \w+ {name} = ", text), (group, name)


def test_the_declaration_is_in_the_jar_key():
    from sparkjournal.spark import jvm_build
    base = {"x.java": "class X {}"}
    assert jvm_build.source_key([], "4", {}, generated=base) != jvm_build.source_key(
        [], "4", {}, generated={"x.java": "class X { }"})


def javap_constants(classes: list[str]) -> dict[str, dict[str, object]]:
    """{class: {field: value}} of the static final fields javap shows in the connector jar."""
    from sparkjournal.spark import jvm_build
    try:
        jar = jvm_build.jvm_jar()
        javap = os.path.join(os.path.dirname(os.path.realpath(jvm_build.javac_path())), "javap")
    except jvm_build.JvmUnavailableError as why:
        pytest.skip(str(why))
    done = subprocess.run([javap, "-constants", "-cp", jar, *classes], capture_output=True,
                          text=True, timeout=120, check=True)
    found: dict[str, dict[str, object]] = {}
    current = None
    for line in done.stdout.splitlines():
        header = re.match(r".*\bclass ([\w.$]+)", line)
        if header and "{" in line:
            current = found.setdefault(header.group(1), {})
            continue
        field = re.match(r'\s*public static final (int|long|java\.lang\.String) (\w+) = (.*);$', line)
        if field and current is not None:
            kind, name, raw = field.groups()
            current[name] = ast.literal_eval(raw) if kind == "java.lang.String" else int(
                raw.rstrip("lL"))
    return found


def test_the_generated_java_class_holds_the_declared_values():
    from sparkjournal.spark.jvm_constants import class_name
    names = {group: f"io.sparkjournal.format.Constants${class_name(group)}" for group in GROUPS}
    found = javap_constants(list(names.values()))
    for group, values in GROUPS.items():
        assert found[names[group]] == dict(values), group


def test_the_java_classes_that_use_them_hold_the_declared_values():
    found = javap_constants(["io.sparkjournal.format.Layout", "io.sparkjournal.events.UserTypes",
                             "io.sparkjournal.events.EventsBody", "io.sparkjournal.events.Deletions",
                             "io.sparkjournal.events.CommitLog", "io.sparkjournal.events.NodeIds"])
    java_layout = found["io.sparkjournal.format.Layout"]
    for name, value in {**GROUPS["record_types"], **GROUPS["record_flags"]}.items():
        assert java_layout[name] == value, name
    for name in ("FORMAT_VERSION", "FILE_HEADER_SIZE", "RECORD_HEADER_SIZE", "RECORD_ALIGN",
                 "LARGE_REF_SIZE", "FILE_HEADER_CRC_AT", "FILE_HEADER_V1_CRC_AT"):
        assert java_layout[name] == GROUPS["format"][name], name
    assert found["io.sparkjournal.events.UserTypes"] == dict(GROUPS["user_types"])
    body = found["io.sparkjournal.events.EventsBody"]
    assert {k: body[k] for k in GROUPS["schema_metadata"]} == dict(GROUPS["schema_metadata"])
    assert found["io.sparkjournal.events.Deletions"]["ROW_COLUMN"] == "__sj_row"
    assert found["io.sparkjournal.events.CommitLog"]["SCHEMA_FILE"] == GROUPS["paths"]["SCHEMA_FILE"]
    assert found["io.sparkjournal.events.NodeIds"]["FILE"] == GROUPS["paths"]["NODE_ID_FILE"]


def test_the_c_header_states_the_declared_numbers():
    header = (REPO / "native" / "sj_format.h").read_text()
    defines = {name: int(value, 0) for name, value in re.findall(r"#define (SJ_\w+) (\w+)\s", header)
               if re.fullmatch(r"0x[0-9a-fA-F]+|\d+", value)}
    enums = {name: int(code) for name, code in re.findall(r"SJ_(\w+) = (\d+)", header)}
    fmt = GROUPS["format"]
    for name in ("FORMAT_VERSION", "FILE_HEADER_SIZE", "RECORD_HEADER_SIZE", "RECORD_ALIGN"):
        assert defines[f"SJ_{name}"] == fmt[name], name
    assert enums == dict(GROUPS["record_types"])
    assert defines["SJ_TYPE_MAX"] == max(GROUPS["record_types"].values())
    assert defines["SJ_FLAG_LARGE"] == GROUPS["record_flags"]["FLAG_LARGE"]
    known = 0
    for bit in GROUPS["record_flags"].values():
        known |= bit
    assert defines["SJ_KNOWN_FLAGS"] == known


def python_literals(path: pathlib.Path) -> list[tuple[int, str]]:
    """(line, text) of every str or ASCII bytes constant in the module but its docstrings."""
    tree = ast.parse(path.read_text())
    docstrings = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            if node.body and isinstance(node.body[0], ast.Expr) and isinstance(
                    node.body[0].value, ast.Constant):
                docstrings.add(id(node.body[0].value))
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and id(node) not in docstrings:
            if isinstance(node.value, str):
                found.append((node.lineno, node.value))
            elif isinstance(node.value, bytes) and node.value.isascii():
                found.append((node.lineno, node.value.decode()))
    return found


def java_literals(path: pathlib.Path) -> list[tuple[int, str]]:
    """(line, text) of every string literal and char-array initializer ({'S', 'J', ...})
    of a Java source, comments left out."""
    text, found, code, i, line = path.read_text(), [], [], 0, 1
    while i < len(text):
        c = text[i]
        if text.startswith("//", i):
            i = text.find("\n", i)
            i = len(text) if i < 0 else i
        elif text.startswith("/*", i):
            end = text.find("*/", i + 2)
            line += text.count("\n", i, end)
            code.append(" ")
            i = end + 2
        elif c in "\"'":
            j = i + 1
            while text[j] != c:
                j += 2 if text[j] == "\\" else 1
            if c == '"':
                found.append((line, ast.literal_eval(text[i:j + 1])))
            code.append(text[i:j + 1])
            i = j + 1
        else:
            line += c == "\n"
            code.append(c)
            i += 1
    for chars in re.findall(r"\{\s*('.'(?:\s*,\s*'.')+)\s*\}", "".join(code)):
        found.append((0, "".join(re.findall(r"'(.)'", chars))))
    return found


def test_no_source_spells_a_declared_string_itself():
    wanted = declared_strings()
    copies = []
    sources = [(p, python_literals) for p in PACKAGE.rglob("*.py")]
    sources += [(p, java_literals) for p in JAVA_MAIN.rglob("*.java")]
    for path, literals in sources:
        where = path.relative_to(REPO).as_posix()
        for line, text in literals(path):
            if text in wanted:
                copies.append(f"{where}:{line}: {text!r} (declared as {wanted[text]})")
    assert not copies, ("these spell a declared constant instead of naming it (constants.json; "
                        "Python: sparkjournal.format.constants, Java: io.sparkjournal.format."
                        "Constants):\n" + "\n".join(copies))


def test_no_encoder_or_decoder_spells_a_field_name_itself():
    """In the files that encode or decode a structure on disk, no literal is a
    field name of a structure the file handles: the names come from the
    declaration (Python: sparkjournal.format.constants.GROUP.NAME, Java:
    io.sparkjournal.format.Constants.Group.NAME)."""
    from sparkjournal.spark.jvm_constants import class_name
    copies, unnamed = [], []
    for where, groups in {**FIELD_USERS, **FIELD_USERS_BY_WAY_OF_OTHERS}.items():
        path = REPO / where
        assert path.is_file(), where
        wanted = {value: f"{group}.{name}" for group in sorted(groups)
                  for name, value in GROUPS[group].items()}
        literals = java_literals if where.endswith(".java") else python_literals
        for line, text in literals(path):
            if text in wanted:
                copies.append(f"{where}:{line}: {text!r} (declared as {wanted[text]})")
        if where in FIELD_USERS:
            source = path.read_text()
            names = ([f"Constants.{class_name(g)}." for g in groups] if where.endswith(".java")
                     else [g.upper() for g in groups])
            if not any(name in source for name in names):
                unnamed.append(where)
    assert not copies, ("these spell a field name of a structure on disk instead of naming it "
                        "(constants.json):\n" + "\n".join(copies))
    assert not unnamed, f"these name none of their structures' fields from the declaration: {unnamed}"


def test_the_wheel_ships_the_declaration_and_every_spec_page():
    text = (REPO / "pyproject.toml").read_text()
    shipped = re.search(r'"sparkjournal\.format" = \[([^\]]*)\]', text).group(1)
    pages = sorted(p.name for p in (PACKAGE / "format").iterdir() if p.suffix == ".md")
    assert pages and all(f'"{name}"' in shipped for name in [*pages, "constants.json"]), shipped
    assert os.path.isfile(constants.DECLARATION_PATH)
