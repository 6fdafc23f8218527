package io.sparkjournal.spark;

import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.connector.write.DataWriter;
import org.apache.spark.sql.connector.write.DataWriterFactory;
import org.apache.spark.sql.connector.write.streaming.StreamingDataWriterFactory;

/**
 * Ships a write's {@link TaskPlan} to the executors and makes each task's
 * {@link JournalDataWriter}: for a batch write the plan's batch, for a stream
 * the epoch Spark gives (its micro-batch id).
 */
final class JournalWriterFactory implements DataWriterFactory, StreamingDataWriterFactory {

    private static final long serialVersionUID = 1L;
    private final TaskPlan plan;

    JournalWriterFactory(TaskPlan plan) {
        this.plan = plan;
    }

    @Override
    public DataWriter<InternalRow> createWriter(int partitionId, long taskId) {
        return new JournalDataWriter(plan, partitionId, taskId);
    }

    @Override
    public DataWriter<InternalRow> createWriter(int partitionId, long taskId, long epochId) {
        return new JournalDataWriter(plan.withBatch(epochId), partitionId, taskId);
    }
}
