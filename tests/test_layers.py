"""The tree's layers: format -> io -> journal -> events -> maintenance -> spark
-> tools -> cli. A module imports only its own layer and the layers below it,
plus the shared modules at the package's top (errors, config, config_keys,
faults, units, the C core), which themselves import nothing above format. Everything
below the Spark layer must import without pyspark."""
import ast
import pathlib
import subprocess
import sys

import sparkjournal

BELOW_SPARK = ("format", "io", "journal", "events", "maintenance")
LAYERS = ("format", "io", "journal", "events", "maintenance", "spark", "tools", "cli")
SHARED = ("errors", "config", "config_keys", "faults", "units", "_sjnative")
ENTRY_POINTS = ("sparkjournal", "sparkjournal.__main__")


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


def test_each_layer_imports_only_itself_and_the_layers_below():
    root = pathlib.Path(sparkjournal.__file__).parent
    upward = []
    checked = 0
    for path in sorted(root.rglob("*.py")):
        module = ".".join(path.relative_to(root.parent).with_suffix("").parts).removesuffix(".__init__")
        if module in ENTRY_POINTS:
            continue
        mine = layer(module)
        assert mine in LAYERS or mine in SHARED, f"{module} is in no layer: add it to LAYERS or SHARED"
        for target in imported_modules(path, module):
            theirs = layer(target)
            checked += 1
            if mine in SHARED:
                allowed = theirs in SHARED or theirs == "format"
            else:
                allowed = theirs in SHARED or (theirs in LAYERS and
                                               LAYERS.index(theirs) <= LAYERS.index(mine))
            if not allowed:
                upward.append(f"{module} imports {target}")
    assert checked > 300, f"only {checked} imports found: the scan is broken"
    assert upward == [], "imports against the layer order:\n" + "\n".join(upward)


def modules_below_spark() -> list[str]:
    package = pathlib.Path(sparkjournal.__file__).parent
    found = []
    for layer in BELOW_SPARK:
        for path in sorted((package / layer).glob("*.py")):
            name = path.stem
            found.append(f"sparkjournal.{layer}" + ("" if name == "__init__" else f".{name}"))
    return found


def test_nothing_below_the_spark_layer_imports_pyspark():
    modules = modules_below_spark()
    assert "sparkjournal.events.lane_scan" in modules
    script = ("import sys\n" + "".join(f"import {m}\n" for m in modules) +
              "loaded = sorted(m for m in sys.modules if m == 'pyspark' or m.startswith('pyspark.'))\n"
              "print(','.join(loaded))\n")
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "", f"pyspark imported below the Spark layer: {result.stdout}"
