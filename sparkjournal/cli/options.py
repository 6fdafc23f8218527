"""``sparkjournal options [--markdown]``: every option with its default, what
it accepts and what it does, from the definitions the code validates with
(config_keys.py, spark/sink.py, spark/read_options.py); ``--markdown`` prints
the README's options table.
"""
from __future__ import annotations

import dataclasses

from ..config import JournalConfig
from ..config_keys import KEYS, default_text
from ..spark.read_options import READ_OPTION_DOCS
from ..spark.sink import SINK_OPTION_DOCS


def option_rows() -> list[tuple[str, str, str, str, str]]:
    """(section, option, default, accepted values, meaning) of every option."""
    rows = []
    for field in dataclasses.fields(JournalConfig):
        accepted, meaning = KEYS[field.name]
        rows.append(("journal", field.name, default_text(field.name, field.default), accepted,
                     meaning))
    for name, (default, accepted, meaning) in SINK_OPTION_DOCS.items():
        rows.append(("write", name, default, accepted, meaning))
    for name, (default, accepted, meaning) in READ_OPTION_DOCS.items():
        rows.append(("read", name, default, accepted, meaning))
    return rows


SECTIONS = {
    "journal": "Journal options: `Journal.open(path, key=value)`, `.option(key, value)` on any "
               "sparkjournal read or write, `JournalSink(path, key=value)`, or a line "
               "`key value` in the file SPARKJOURNAL_CONF names (conf/sparkjournal.conf holds "
               "the defaults).",
    "write": "Write options: `JournalSink(path, ...)` and `.format(\"sparkjournal\")` writers.",
    "read": "Read options: `spark.read` / `spark.readStream` `.format(\"sparkjournal\")` and "
            "`sparkjournal.read` (commitLog too).",
}


def markdown() -> str:
    lines = []
    for section, intro in SECTIONS.items():
        lines += [intro, "", "| option | default | accepted values | meaning |",
                  "|---|---|---|---|"]
        lines += [f"| `{name}` | {_cell(default)} | {_cell(accepted)} | {_cell(meaning)} |"
                  for where, name, default, accepted, meaning in option_rows() if where == section]
        lines.append("")
    lines.append("A bad value or an unknown key is an error naming the key, the value and "
                 "what is accepted.")
    return "\n".join(lines) + "\n"


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def run(args) -> int:
    if args.markdown:
        print(markdown(), end="")
        return 0
    for where, name, default, accepted, meaning in option_rows():
        print(f"{where:8} {name:21} {default:12} {meaning}; accepts {accepted}")
    return 0
