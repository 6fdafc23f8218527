"""The benchmarks (``sparkjournal bench journal|sink|read|maintenance``) and
their report (``sparkjournal bench report JSON... [--out FILE]``).

Each benchmark measures sparkjournal against a baseline in the same run and
reports ratios (report.py: rounds, rows, the table and the JSON); chart.py draws
saved runs. support.py holds what the disk benchmarks share: the work folder,
the cases around them, and the C floors (the raw sync loop and the group-commit
floor, in the extension _sjfloors); jvm_append.py times the JVM appender in a
child JVM for ``bench journal``.
"""
