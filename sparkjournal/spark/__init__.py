"""The Spark layer: sinks and readers over journals (imports pyspark)."""
