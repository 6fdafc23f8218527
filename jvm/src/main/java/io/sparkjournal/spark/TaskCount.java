package io.sparkjournal.spark;

import org.apache.spark.sql.connector.metric.CustomTaskMetric;

/** A count a scan reports under one of its custom sum metrics' names. */
final class TaskCount {

    private TaskCount() {
    }

    /** {@code value} under the metric {@code name}. */
    static CustomTaskMetric of(String name, long value) {
        return new CustomTaskMetric() {
            @Override
            public String name() {
                return name;
            }

            @Override
            public long value() {
                return value;
            }
        };
    }
}
