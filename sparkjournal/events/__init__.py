"""The event layer: how a stream's Arrow batches are stored as journal records,
the commit log that decides them, node roots, and which events a reader sees.
Below the Spark layer: nothing here imports pyspark."""
