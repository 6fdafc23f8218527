"""The tree's layers: format -> io -> journal -> events -> maintenance -> spark
-> cli. Everything below the Spark layer must import without pyspark."""
import pathlib
import subprocess
import sys

import sparkjournal

BELOW_SPARK = ("format", "io", "journal", "events", "maintenance")


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
