package io.sparkjournal.spark;

import org.apache.spark.sql.connector.metric.CustomTaskMetric;

/**
 * The scan's metric of string values handed to Spark as one shared on-heap
 * copy per distinct value ({@link StringDictionary}), summed over its tasks
 * and shown with the scan in Spark's SQL UI. A low count beside the rows read
 * says the string columns read were long or mostly distinct, and were read
 * from the mapped records instead.
 */
public final class SharedStringsMetric extends NamedSumMetric {

    static final String NAME = "sharedStringValues";

    /** Spark makes the driver's instance by its class name: public, no arguments. */
    public SharedStringsMetric() {
        super(NAME, "string values read as one shared copy per distinct value");
    }

    /** A task's count so far. */
    static CustomTaskMetric of(long values) {
        return TaskCount.of(NAME, values);
    }
}
