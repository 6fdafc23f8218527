package io.sparkjournal.spark;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.Serializable;
import java.nio.channels.Channels;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import org.apache.arrow.flatbuf.RecordBatch;
import org.apache.arrow.vector.ipc.ReadChannel;
import org.apache.arrow.vector.ipc.WriteChannel;
import org.apache.arrow.vector.ipc.message.MessageMetadataResult;
import org.apache.arrow.vector.ipc.message.MessageSerializer;
import org.apache.arrow.vector.types.pojo.Schema;
import org.apache.spark.SimpleFutureAction;
import org.apache.spark.SparkContext;
import org.apache.spark.rdd.RDD;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.execution.LocalLimitExec;
import org.apache.spark.sql.execution.SparkPlan;
import org.apache.spark.sql.internal.SQLConf;
import org.apache.spark.sql.util.ArrowUtils;
import scala.collection.Iterator;
import scala.concurrent.Await;
import scala.concurrent.duration.Duration;
import scala.jdk.javaapi.CollectionConverters;
import scala.runtime.AbstractFunction0;
import scala.runtime.AbstractFunction1;
import scala.runtime.AbstractFunction2;
import scala.runtime.BoxedUnit;
import scala.util.Try;

/**
 * The sink's small-batch test and collect in one job, for the foreachBatch
 * sink's {@code smallBatchRows} path, run from its Python driver: a
 * micro-batch of at most {@code limit} rows comes to the driver as one Arrow
 * IPC stream file, written where the caller says, for the driver to write
 * into its lane.
 *
 * <p>It runs the batch's own executed plan under a per-partition limit of
 * {@code limit + 1} rows, converted to Arrow on the executors exactly as
 * {@code DataFrame.toArrow} converts it; no new plan and no shuffle, where
 * {@code df.limit(n).toArrow()} plans the batch again and gathers the rows
 * into one partition first. The driver keeps partitions' batches only while
 * the running count is within the limit, so it holds at most {@code limit}
 * rows and one partition's result, however many partitions a large batch has.
 *
 * <p>Crash behaviour: nothing durable is written here. The file is the
 * caller's to remove; a JVM that dies while writing it leaves a partial
 * stream that no one reads (the sink's batch fails with it).
 */
public final class SmallBatchCollect {

    private static final long WAIT_MS = 100;

    private SmallBatchCollect() {
    }

    /**
     * Writes the rows of {@code batch} to {@code path} as an Arrow IPC stream
     * (partition order) and returns how many there are, if at most
     * {@code limit}; otherwise writes nothing and returns -1.
     */
    public static long toArrowFile(Dataset<Row> batch, int limit, String path) throws Exception {
        org.apache.spark.sql.classic.Dataset<Row> dataset = (org.apache.spark.sql.classic.Dataset<Row>) batch;
        SparkPlan plan = dataset.queryExecution().executedPlan();
        RDD<byte[]> arrow = dataset.toArrowBatchRdd(new LocalLimitExec(limit + 1, plan));
        Gathered gathered = new Gathered(arrow.getNumPartitions(), limit);
        SparkContext sc = dataset.sparkSession().sparkContext();
        List<Object> partitions = new ArrayList<>();
        for (int i = 0; i < arrow.getNumPartitions(); i++) {
            partitions.add(i);
        }
        SimpleFutureAction<BoxedUnit> job = sc.submitJob(arrow, new PartitionBatches(),
                CollectionConverters.asScala(partitions).toSeq(), gathered, new Done());
        boolean interrupted = awaitUninterruptibly(job);
        try {
            throwFailure(job);
            if (gathered.over) {
                return -1;
            }
            writeStream(dataset, gathered.batches, path);
            return gathered.rows;
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /** The batches after the schema that toArrowBatchRdd gives them, as one IPC stream. */
    private static void writeStream(org.apache.spark.sql.classic.Dataset<Row> dataset, byte[][][] batches,
                                    String path) throws IOException {
        SQLConf conf = dataset.sparkSession().sessionState().conf();
        Schema schema = ArrowUtils.toArrowSchema(dataset.schema(), conf.sessionLocalTimeZone(),
                "legacy".equals(conf.pandasStructHandlingMode()), conf.arrowUseLargeVarTypes(),
                ArrowUtils.toArrowSchema$default$5());
        try (FileChannel file = FileChannel.open(Path.of(path), StandardOpenOption.CREATE,
                StandardOpenOption.TRUNCATE_EXISTING, StandardOpenOption.WRITE)) {
            WriteChannel out = new WriteChannel(file);
            MessageSerializer.serialize(out, schema);
            for (byte[][] partition : batches) {               // every one set: the job succeeded
                for (byte[] message : partition) {
                    out.write(message);
                }
            }
            out.writeIntLittleEndian(-1);          // end of stream: continuation, length 0
            out.writeIntLittleEndian(0);
        }
    }

    /**
     * Waits for the job to end; returns whether the thread was interrupted
     * meanwhile, for the caller to set again once it is done (an interrupted
     * thread's channel writes fail). A query's stop cancels its job group and
     * then interrupts the stream thread that this call runs on (the
     * foreachBatch function's py4j calls are served by it): the cancelled
     * job's SparkException, which names the query's job group, is what tells
     * Spark the batch failed because the query stopped, where an
     * InterruptedException reaches Python as a py4j error whose Java stack
     * overflows Spark's test for a stop.
     */
    private static boolean awaitUninterruptibly(SimpleFutureAction<BoxedUnit> job) {
        boolean interrupted = false;
        while (!job.isCompleted()) {
            try {
                Await.ready(job, Duration.create(WAIT_MS, TimeUnit.MILLISECONDS));
            } catch (TimeoutException stillRunning) {
                continue;
            } catch (InterruptedException stopping) {
                interrupted = true;
            }
        }
        return interrupted;
    }

    /** Throws what made the ended job fail, if it failed. */
    private static void throwFailure(SimpleFutureAction<BoxedUnit> job) throws Exception {
        Try<BoxedUnit> outcome = job.value().get();
        if (outcome.isFailure()) {
            Throwable failure = outcome.failed().get();
            if (failure instanceof Exception exception) {
                throw exception;
            }
            throw (Error) failure;
        }
    }

    /** The job's result: nothing (the handler keeps the batches). */
    private static final class Done extends AbstractFunction0<BoxedUnit> implements Serializable {
        private static final long serialVersionUID = 1L;

        @Override
        public BoxedUnit apply() {
            return BoxedUnit.UNIT;
        }
    }

    /** A partition's Arrow record batch messages (at most limit + 1 rows). */
    private static final class PartitionBatches extends AbstractFunction1<Iterator<byte[]>, byte[][]>
            implements Serializable {
        private static final long serialVersionUID = 1L;

        @Override
        public byte[][] apply(Iterator<byte[]> messages) {
            List<byte[]> all = new ArrayList<>();
            while (messages.hasNext()) {
                all.add(messages.next());
            }
            return all.toArray(new byte[0][]);
        }
    }

    /** The driver's side: partitions' batches while the rows stay within the limit. */
    private static final class Gathered extends AbstractFunction2<Object, byte[][], BoxedUnit> {
        final byte[][][] batches;
        final int limit;
        long rows;
        boolean over;

        Gathered(int partitions, int limit) {
            this.batches = new byte[partitions][][];
            this.limit = limit;
        }

        @Override
        public BoxedUnit apply(Object partition, byte[][] messages) {
            if (over) {
                return BoxedUnit.UNIT;
            }
            for (byte[] message : messages) {
                rows += rowsOf(message);
            }
            if (rows > limit) {
                over = true;
                Arrays.fill(batches, null);
            } else {
                batches[(Integer) partition] = messages;
            }
            return BoxedUnit.UNIT;
        }
    }

    /** The row count a record batch message's metadata states. */
    static long rowsOf(byte[] message) {
        try {
            MessageMetadataResult read = MessageSerializer.readMessage(
                    new ReadChannel(Channels.newChannel(new ByteArrayInputStream(message))));
            return ((RecordBatch) read.getMessage().header(new RecordBatch())).length();
        } catch (IOException impossible) {                  // a byte array does not fail to read
            throw new IllegalStateException(impossible);
        }
    }
}
