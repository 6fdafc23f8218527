"""The ``sparkjournal`` command-line tools (entry point: sparkjournal.cli.main:main).

One tool per module: inspect_lanes (what a journal holds), verify (every CRC of
every file, all damage reported), jsonl_export (export / import as JSON lines),
perf_journal (synced-write rate and the bufferTimeout to configure). The
``bench`` and ``soak`` commands run sparkjournal.tools, imported only then.
"""
