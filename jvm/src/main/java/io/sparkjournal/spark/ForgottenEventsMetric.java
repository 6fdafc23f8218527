package io.sparkjournal.spark;

import org.apache.spark.sql.connector.metric.CustomTaskMetric;

/**
 * The scan's driver metric of committed events the read leaves out because
 * their nodes were forgotten ({@code sparkjournal nodes --forget};
 * {@link io.sparkjournal.events.ForgottenEvents}), as the commit log's view
 * credits them when the read was planned. Shown with the scan in Spark's SQL
 * UI (batch reads and each micro-batch of a stream); a stream also reports
 * it in its progress ({@link StreamMetrics}). 0: nothing forgotten.
 */
public final class ForgottenEventsMetric extends NamedSumMetric {

    static final String NAME = "forgottenEvents";

    /** Spark makes the driver's instance by its class name: public, no arguments. */
    public ForgottenEventsMetric() {
        super(NAME, "committed events of forgotten nodes, not read");
    }

    /** The plan's count. */
    static CustomTaskMetric of(long events) {
        return TaskCount.of(NAME, events);
    }
}
