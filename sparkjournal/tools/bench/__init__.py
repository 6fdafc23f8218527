"""The benchmarks (``sparkjournal bench journal|sink|read|maintenance``).

Each measures sparkjournal against a baseline in the same run and reports ratios
(report.py: rounds, rows, the table and the JSON). support.py holds what the
disk benchmarks share: the work folder, the cases around them, and the C floors
(the raw sync loop and the group-commit floor, in the extension _sjfloors).
"""
