package io.sparkjournal.spark;

import org.apache.spark.sql.connector.metric.CustomSumMetric;

/**
 * A scan's custom metric summed over its tasks, named and described once.
 * Spark makes the driver's instance of each by its class name: each is a
 * public class with a public constructor of no arguments.
 */
abstract class NamedSumMetric extends CustomSumMetric {

    private final String name;
    private final String description;

    NamedSumMetric(String name, String description) {
        this.name = name;
        this.description = description;
    }

    @Override
    public final String name() {
        return name;
    }

    @Override
    public final String description() {
        return description;
    }
}
