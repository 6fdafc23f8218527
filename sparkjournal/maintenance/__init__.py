"""The maintenance layer: compaction, retention and deletes, paging. Runs beside
a lane's writer (another process) and never imports pyspark; the Spark jobs
and the CLI drive it."""
