"""The lab beside the product: the benchmarks (bench/, ``sparkjournal bench``)
and the soak (soak/, ``sparkjournal soak``).

Nothing the journal, the sink or the reader runs imports this package, so a
Spark worker never loads it; the benchmarks' C floors are an extension of their
own (bench/_sjfloors, native/floors/), not part of the C core the workers load.
"""
