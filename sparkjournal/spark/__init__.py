"""The Spark layer: sinks and readers over journals (imports pyspark).

Importing it changes nothing outside sparkjournal: the JVM connector's jar
reaches a session through ``spark.jars`` or at its first sparkjournal call
(connector.py)."""
