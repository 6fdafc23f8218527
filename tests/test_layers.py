"""The tree's layers, bottom to top: format -> io -> journal -> events ->
maintenance -> spark -> tools (bench/, soak/) -> cli. A module imports only its
own layer and the layers below it, plus the shared modules at the package's top
(errors, config, config_keys, faults, units, the C core), which themselves
import nothing above format; each layer builds on the one right below it.
Everything below the Spark layer must import without pyspark.

tools/ is the lab (the benchmarks and the soak): nothing the product runs
imports it, and its C floors are an extension of their own, not part of the
C core every Spark worker loads."""
import ast
import importlib
import pathlib
import subprocess
import sys

import pytest

import sparkjournal

BELOW_SPARK = ("format", "io", "journal", "events", "maintenance")
LAYERS = ("format", "io", "journal", "events", "maintenance", "spark", "tools", "cli")
SHARED = ("errors", "config", "config_keys", "faults", "units", "_sjnative")
ENTRY_POINTS = ("sparkjournal", "sparkjournal.__main__")
TOOLS = ("bench", "soak")                   # the packages of the tools layer
LAB = ("tools", "cli")                      # not the runtime: what only a person runs
FLOOR_SYMBOLS = ("sj_group_floor_open", "sj_group_floor_commit", "sj_raw_sync_loop")
PACKAGE = pathlib.Path(sparkjournal.__file__).parent


def imported_modules(path: pathlib.Path, module: str) -> list[str]:
    """The sparkjournal modules ``path`` (module ``module``) imports, resolved."""
    package = module.split(".") if path.name == "__init__.py" else module.split(".")[:-1]
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level:
            base = ".".join(package[:len(package) - node.level + 1] +
                            ([node.module] if node.module else []))
            found += [base] if node.module else [f"{base}.{alias.name}" for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            found.append(node.module or "")
    return [name for name in found if name.split(".")[0] == "sparkjournal"]


def layer(module: str) -> str:
    """The layer (or shared module) ``module`` belongs to; a name the package
    exports lazily (``from sparkjournal import delete``) is its module's."""
    parts = module.split(".")
    if len(parts) == 2 and parts[1] in sparkjournal._LAZY:
        parts = ["sparkjournal", *sparkjournal._LAZY[parts[1]].strip(".").split(".")]
    return parts[1] if len(parts) > 1 else ""


def package_modules() -> list[tuple[pathlib.Path, str]]:
    """[(file, module name)] of every module of the package but its entry points."""
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        module = ".".join(path.relative_to(PACKAGE.parent).with_suffix("").parts).removesuffix(".__init__")
        if module not in ENTRY_POINTS:
            found.append((path, module))
    return found


def import_edges() -> list[tuple[str, str]]:
    """[(importing module, imported module)] over the whole package."""
    return [(module, target) for path, module in package_modules()
            for target in imported_modules(path, module)]


def test_every_package_is_a_layer_and_every_layer_a_package():
    packages = sorted(p.parent.name for p in PACKAGE.glob("*/__init__.py"))
    assert packages == sorted(LAYERS)
    tools = sorted(p.parent.name for p in (PACKAGE / "tools").glob("*/__init__.py"))
    assert tools == sorted(TOOLS)


def test_each_layer_imports_only_itself_and_the_layers_below():
    for _path, module in package_modules():
        assert layer(module) in LAYERS + SHARED, f"{module} is in no layer: add it to LAYERS or SHARED"
    upward = []
    edges = import_edges()
    for module, target in edges:
        mine, theirs = layer(module), layer(target)
        if mine in SHARED:
            allowed = theirs in SHARED or theirs == "format"
        else:
            allowed = theirs in SHARED or (theirs in LAYERS and
                                           LAYERS.index(theirs) <= LAYERS.index(mine))
        if not allowed:
            upward.append(f"{module} imports {target}")
    assert len(edges) > 300, f"only {len(edges)} imports found: the scan is broken"
    assert upward == [], "imports against the layer order:\n" + "\n".join(upward)


def test_each_layer_builds_on_the_one_right_below_it():
    """The order is the real one, not merely allowed: every layer imports the
    layer below it (the command line reaches tools/ through its command table,
    imported by name only when a bench or the soak runs)."""
    used = {(layer(module), layer(target)) for module, target in import_edges()}
    pairs = list(zip(LAYERS[1:], LAYERS))
    assert [pair for pair in pairs if pair not in used] == [("cli", "tools")]
    from sparkjournal.cli.main import TOOLS as TOOL_TARGETS, build_parser
    targets = tool_targets(build_parser())
    assert {target.split(":")[0].split(".")[2] for target in targets} == set(TOOLS)
    for target in targets:
        module_name, function = target.split(":")
        assert module_name.startswith(TOOL_TARGETS + ".")
        assert callable(getattr(importlib.import_module(module_name), function)), target


def import_circles() -> list[list[str]]:
    """Each group of modules that import each other round a circle, imports
    inside functions included (Tarjan's strongly connected components); a
    package's ``__init__`` counts as its own module."""
    modules = {module for _, module in package_modules()}
    graph: dict[str, set] = {module: set() for module in modules}
    for source, target in import_edges():
        while target and target not in modules:             # "pkg.mod.name" -> "pkg.mod"
            target = target.rpartition(".")[0]
        if target and target != source and not source.startswith(target + "."):
            graph[source].add(target)
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    circles = []

    def visit(module: str) -> None:
        index[module] = low[module] = len(index)
        stack.append(module)
        for target in sorted(graph[module]):
            if target not in index:
                visit(target)
                low[module] = min(low[module], low[target])
            elif target in stack:
                low[module] = min(low[module], index[target])
        if low[module] == index[module]:
            group = []
            while not group or group[-1] != module:
                group.append(stack.pop())
            if len(group) > 1:
                circles.append(sorted(group))
    for module in sorted(graph):
        if module not in index:
            visit(module)
    return circles


def test_no_modules_import_each_other_round_a_circle():
    """A circle (even through an import inside a function) means two modules
    are one concept split in two, or both need something that belongs below
    them: that goes into a module of its own."""
    assert import_circles() == []


def tool_targets(parser) -> set[str]:
    """The targets (``module:function``) of every command and bench that runs tools/."""
    found = set()
    for action in parser._subparsers._group_actions:
        for command in action.choices.values():
            target = command.get_default("target")
            if target and target.startswith("sparkjournal.tools."):
                found.add(target)
            if command._subparsers is not None:
                found |= tool_targets(command)
    return found


def runtime_modules() -> list[str]:
    """Every module of the product: all but tools/, the command line and the entry points."""
    return [module for _path, module in package_modules() if layer(module) not in LAB]


def test_the_runtime_never_imports_the_tools():
    static = [f"{module} imports {target}" for module, target in import_edges()
              if layer(module) not in LAB and layer(target) == "tools"]
    assert static == []
    modules = runtime_modules() + [module for _path, module in package_modules()
                                   if layer(module) == "cli"]
    assert "sparkjournal.spark.sink" in modules and "sparkjournal.cli.verify" in modules
    script = ("import sys\n" + "".join(f"import {m}\n" for m in modules) +
              "print(','.join(sorted(m for m in sys.modules if m.startswith('sparkjournal.tools'))))\n")
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "", f"the runtime and the command line load: {result.stdout}"


def test_the_c_core_holds_none_of_the_benchmarks_floors():
    core = pytest.importorskip("sparkjournal._sjnative", reason="the C core is not built")
    assert [name for name in FLOOR_SYMBOLS if hasattr(core.lib, name)] == []
    binary = pathlib.Path(core.__file__).read_bytes()
    assert [name for name in FLOOR_SYMBOLS if name.encode() in binary] == []
    floors = pytest.importorskip("sparkjournal.tools.bench._sjfloors",
                                 reason="the benchmarks' C floors are not built")
    assert all(hasattr(floors.lib, name) for name in FLOOR_SYMBOLS)


def modules_below_spark() -> list[str]:
    return [module for _path, module in package_modules() if layer(module) in BELOW_SPARK]


def test_nothing_below_the_spark_layer_imports_pyspark():
    modules = modules_below_spark()
    assert "sparkjournal.events.lane_scan" in modules
    script = ("import sys\n" + "".join(f"import {m}\n" for m in modules) +
              "loaded = sorted(m for m in sys.modules if m == 'pyspark' or m.startswith('pyspark.'))\n"
              "print(','.join(loaded))\n")
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "", f"pyspark imported below the Spark layer: {result.stdout}"
