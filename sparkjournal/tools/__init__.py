"""The lab beside the product: the benchmarks (bench/, ``sparkjournal bench``)
and the soak (soak/, ``sparkjournal soak``).

Nothing the journal, the sink or the reader runs imports this package, so a
Spark worker never loads it.
"""
