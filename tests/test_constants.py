"""The shared constants have one declaration (sparkjournal/format/constants.json)
and every language takes the same values from it: Python at import
(format/constants.py), Java from the class the jar build generates
(spark/jvm_constants.py, read back here with ``javap -constants``), C from
native/sj_format.h, whose numbers must equal the declared ones. And no source
of the package or of the JVM connector spells a declared string as a literal
of its own: it names the declared constant instead."""
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

def declared_strings() -> dict[str, str]:
    """{value: "group.NAME"} of every declared string searched for as a copy."""
    return {value: f"{group}.{name}" for group, values in GROUPS.items()
            for name, value in values.items()
            if isinstance(value, str) and value not in COMMON_WORDS}


def test_declaration_is_well_formed_and_names_are_unique_per_group():
    assert set(GROUPS) == {"format", "record_types", "record_flags", "user_types",
                           "metadata_columns", "hidden_columns", "schema_metadata",
                           "request_kinds", "magics", "paths"}
    for group in GROUPS.values():
        assert group.doc and len(group) > 0
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


def test_the_wheel_ships_the_declaration():
    text = (REPO / "pyproject.toml").read_text()
    assert re.search(r'"sparkjournal\.format" = \[[^\]]*"constants\.json"', text)
    assert os.path.isfile(constants.DECLARATION_PATH)
