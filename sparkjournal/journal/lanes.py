"""Lane names under a journal root: ``lane-000``, ``lane-001``, ... (light: no
pyarrow, no C core, so command-line parsing can use it)."""
from __future__ import annotations

import os
import re

from .inside import refuse_link

LANE = re.compile(r"^lane-(\d{3,})$")


def lane_name(number: int) -> str:
    return f"lane-{number:03d}"


def list_lanes(root: str) -> list[str]:
    """The lane folders directly inside ``root``, in lane order ([] if none); a
    lane that is a symbolic link is refused (inside.py)."""
    try:
        names = [n for n in os.listdir(root) if LANE.match(n) and os.path.isdir(os.path.join(root, n))]
    except OSError:
        return []
    for name in names:
        refuse_link(os.path.join(root, name), "lane", root)
    return [os.path.join(root, n) for n in sorted(names, key=lambda n: int(n[5:]))]
