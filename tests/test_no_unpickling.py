"""Nothing sparkjournal reads from disk is unpickled or evaluated: the package
never imports a deserializer that can run code, nor calls eval/exec, so a
tampered journal, request, control file or commit log can at worst be refused
as damaged (the parsers' own errors, tests/test_hostile_input.py)."""
from __future__ import annotations

import ast
import pathlib

import sparkjournal

PACKAGE = pathlib.Path(sparkjournal.__file__).parent
CODE_RUNNING_MODULES = {"pickle", "cPickle", "_pickle", "cloudpickle", "dill", "marshal", "shelve",
                        "jsonpickle"}
CODE_RUNNING_CALLS = {"eval", "exec", "compile", "__import__"}


def findings(path: pathlib.Path) -> list[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    found = []
    for node in ast.walk(tree):
        names = []
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module:
            names = [node.module]
        for name in names:
            if name.split(".")[0] in CODE_RUNNING_MODULES:
                found.append(f"{path.relative_to(PACKAGE)}:{node.lineno} imports {name}")
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) \
                and node.func.id in CODE_RUNNING_CALLS:
            found.append(f"{path.relative_to(PACKAGE)}:{node.lineno} calls {node.func.id}()")
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                and node.func.attr in ("read_pickle", "unpickle"):
            found.append(f"{path.relative_to(PACKAGE)}:{node.lineno} calls {node.func.attr}()")
    return found


def test_the_package_never_unpickles_or_evaluates_what_it_reads():
    sources = sorted(PACKAGE.rglob("*.py"))
    assert len(sources) > 50, "the scan must see the whole package"
    found = [line for path in sources for line in findings(path)]
    assert found == [], "code-running deserialization in the package:\n" + "\n".join(found)


def test_the_scan_flags_what_it_looks_for(tmp_path, monkeypatch):
    planted = tmp_path / "planted.py"
    planted.write_text("import pickle\nfrom marshal import loads\nvalue = eval('1')\n")
    monkeypatch.setattr(__import__(__name__), "PACKAGE", tmp_path)
    assert findings(planted) == ["planted.py:1 imports pickle", "planted.py:2 imports marshal",
                                 "planted.py:3 calls eval()"]
