package io.sparkjournal.spark;

import org.apache.spark.sql.connector.metric.CustomTaskMetric;

/**
 * The scan's metric of page file bytes read whole to check their CRC-32C
 * against their PAGE record ({@link PageFileCheck}), summed over its tasks
 * and shown with the scan in Spark's SQL UI. 0 beside pages read says every
 * page had been checked before in its executor, unchanged since
 * ({@link CheckedPages}).
 */
public final class PageBytesCheckedMetric extends NamedSumMetric {

    static final String NAME = "pageBytesChecked";

    /** Spark makes the driver's instance by its class name: public, no arguments. */
    public PageBytesCheckedMetric() {
        super(NAME, "page file bytes read whole to check their CRC-32C");
    }

    /** A task's count so far. */
    static CustomTaskMetric of(long bytes) {
        return TaskCount.of(NAME, bytes);
    }
}
