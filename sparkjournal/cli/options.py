"""``sparkjournal options [--markdown | --conf]``: every option with its
default, what it accepts and what it does, from the one definition the code
parses with (config: JOURNAL, SINK, READ); ``--markdown`` prints the README's
options table, ``--conf`` the text of conf/sparkjournal.conf.
"""
from __future__ import annotations

from ..config import JOURNAL, READ, SINK, conf_text

TABLES = (("journal", JOURNAL), ("write", SINK), ("read", READ))


def option_rows() -> list[tuple[str, str, str, str, str]]:
    """(section, option, default, accepted values, meaning) of every option."""
    return [(section, option.name, option.default_text, option.accepts, option.meaning)
            for section, table in TABLES for option in table]


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
    if args.conf:
        print(conf_text(), end="")
        return 0
    if args.markdown:
        print(markdown(), end="")
        return 0
    for where, name, default, accepted, meaning in option_rows():
        print(f"{where:8} {name:21} {default:12} {meaning}; accepts {accepted}")
    return 0
