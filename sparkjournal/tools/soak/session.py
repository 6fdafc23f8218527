"""The SparkSession every soak driver uses (tool_session, with executors small
enough for local-cluster[2,1,1024] and no console progress bars in the logs),
and a child driver's exit status."""
from __future__ import annotations

from ...spark.tool_session import tool_session


def soak_session(master: str, name: str):
    return tool_session(master, name, **{"spark.executor.memory": "768m",
                                         "spark.ui.showConsoleProgress": "false"})


def exit_status(query) -> int:
    """A child driver's exit status once its query ended: 1 (with the error on
    stdout for the soak's log) if it failed, else 0."""
    if query.exception():
        print(f"FAILED {query.exception()}", flush=True)
        return 1
    return 0
