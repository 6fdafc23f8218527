"""The repository speaks of the product as it is: no tracked file names a
working session or a script kept outside the repository. How figures were
reached, and what was tried, belongs in commit messages."""
from __future__ import annotations

import os
import re
import subprocess

import pytest

CHECKOUT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
WORK, SCRIPT = "sess" + "ion", "scr" + "ipt"    # in two parts, so this file does not match itself
HISTORY = re.compile(rf"\b{WORK}s? \d+\b|\bthis {WORK}\b|\b{WORK}'s changes\b"
                     rf"|\bend-of-{WORK}\b|/tmp {SCRIPT}s?\b", re.IGNORECASE)


def test_no_tracked_file_names_a_working_session_or_an_outside_script():
    listed = subprocess.run(["git", "ls-files"], cwd=CHECKOUT, capture_output=True, text=True)
    if listed.returncode != 0:
        pytest.skip("not a git checkout")
    found = []
    for name in listed.stdout.splitlines():
        try:
            with open(os.path.join(CHECKOUT, name), encoding="utf-8") as handle:
                text = handle.read()
        except (UnicodeDecodeError, FileNotFoundError, IsADirectoryError):
            continue
        for number, line in enumerate(text.splitlines(), 1):
            if HISTORY.search(line):
                found.append(f"{name}:{number}: {line.strip()[:120]}")
    assert not found, "history in tracked files:\n" + "\n".join(found)
