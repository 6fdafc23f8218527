"""The README's option tables are exactly what ``sparkjournal options
--markdown`` prints from the definitions the code validates with, so an option
added, removed or re-described in the code without the README fails here."""
from __future__ import annotations

import os

from sparkjournal.cli.options import markdown

README = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "README.md")
BEGIN = "<!-- sparkjournal options --markdown -->\n"
END = "<!-- end of sparkjournal options --markdown -->\n"


def readme_tables() -> str:
    with open(README, encoding="utf-8") as handle:
        text = handle.read()
    assert text.count(BEGIN) == 1 and text.count(END) == 1, \
        f"README.md must hold the options tables once, between {BEGIN.strip()} and {END.strip()}"
    return text.split(BEGIN, 1)[1].split(END, 1)[0]


def test_the_readme_option_tables_are_what_sparkjournal_options_prints():
    tables = readme_tables()
    printed = markdown()
    assert "| `fileSize` |" in tables and "| `allowPartialRead` |" in tables
    assert tables == printed, ("README.md's option tables differ from `sparkjournal options "
                               "--markdown`: paste its output between the two markers")
