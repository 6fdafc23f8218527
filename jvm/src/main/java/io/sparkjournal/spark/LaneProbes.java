package io.sparkjournal.spark;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.apache.spark.SparkContext;
import org.apache.spark.api.java.JavaRDD;
import org.apache.spark.api.java.function.Function;
import org.apache.spark.rdd.RDD;
import scala.Tuple2;
import scala.jdk.javaapi.CollectionConverters;
import scala.reflect.ClassTag;
import scala.reflect.ClassTag$;

import io.sparkjournal.events.NodeIds;

/**
 * Runs a trigger's {@link LaneProbe}s where their lanes are. A lane the
 * driver sees (its folder there, under a root carrying the lane's node id:
 * one machine, local-cluster, a shared mount) is probed on the driver. The
 * others - on a cluster of separate hosts, every lane - are probed by one
 * small Spark job, one task per lane, each preferring the executors of its
 * lane's host (as the scan's partitions do), so the driver never needs to
 * see a node's disk. A probe task that cannot run where its lane is fails
 * the trigger after Spark's retries, naming the lane; the stream's
 * position is then unchanged (nothing is written to the offset log before
 * the trigger's offsets are known).
 */
final class LaneProbes {

    private LaneProbes() {
    }

    /** {lane key: what its probe found}, for every probe. */
    static Map<String, LaneProgress> run(SparkContext sc, List<LaneProbe> probes) {
        Map<String, LaneProgress> found = new LinkedHashMap<>();
        List<LaneProbe> here = new ArrayList<>();
        List<LaneProbe> elsewhere = new ArrayList<>();
        for (LaneProbe probe : probes) {
            (driverSees(probe.lane()) ? here : elsewhere).add(probe);
        }
        // the driver's lanes load side by side (each load checks every record's CRC)
        for (LaneProgress progress : here.parallelStream().map(LaneProbe::run).toList()) {
            found.put(progress.key(), progress);
        }
        if (!elsewhere.isEmpty()) {
            for (LaneProgress progress : onExecutors(sc, elsewhere)) {
                found.put(progress.key(), progress);
            }
        }
        return found;
    }

    static boolean driverSees(LanePartition lane) {
        Path folder = Path.of(lane.lane());
        if (!Files.isDirectory(folder)) {
            return false;
        }
        try {
            return lane.node() == null || lane.node().equals(NodeIds.read(folder.toAbsolutePath().getParent()));
        } catch (io.sparkjournal.events.NodeIdException damaged) {
            throw new java.io.UncheckedIOException(damaged);      // a damaged NODE_ID fails the read
        }
    }

    private static List<LaneProgress> onExecutors(SparkContext sc, List<LaneProbe> probes) {
        List<Tuple2<LaneProbe, scala.collection.immutable.Seq<String>>> placed = new ArrayList<>();
        for (LaneProbe probe : probes) {
            placed.add(new Tuple2<>(probe, CollectionConverters.asScala(List.of(probe.lane().preferredLocations()))
                    .toSeq()));
        }
        ClassTag<LaneProbe> tag = ClassTag$.MODULE$.apply(LaneProbe.class);
        String description = sc.getLocalProperty("spark.job.description");
        sc.setJobDescription("sparkjournal stream: the stable points of " + probes.size() + " lane(s) on their hosts");
        try {
            RDD<LaneProbe> rdd = sc.makeRDD(CollectionConverters.asScala(placed).toSeq(), tag);
            return new JavaRDD<>(rdd, tag).map(new Probe()).collect();
        } finally {
            sc.setLocalProperty("spark.job.description", description);
        }
    }

    /** A probe task's body. */
    private static final class Probe implements Function<LaneProbe, LaneProgress> {
        private static final long serialVersionUID = 1L;

        @Override
        public LaneProgress call(LaneProbe probe) {
            return probe.run();
        }
    }
}
