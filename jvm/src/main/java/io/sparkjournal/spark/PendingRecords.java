package io.sparkjournal.spark;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.vectorized.ColumnVector;

import io.sparkjournal.events.Deletions;
import io.sparkjournal.events.LaneEvents;
import io.sparkjournal.events.PageRef;
import io.sparkjournal.events.VisibleRecord;

/**
 * What a stream's read limit counts, in the JVM as in the Python stream
 * reader: {record id, rows, bytes} of a lane's visible events whose record
 * ids lie in {@code [first, end)}, in record id order. A stored record counts
 * its body's rows (deleted ones included) and its body's bytes; a paged
 * record counts its rows in the page (from the page's {@code _record_id}
 * column alone) and, as bytes, its share of the page file: those rows times
 * the file's size over the page's rows, truncated. A page file whose footer
 * disagrees with its PAGE record or {@code eventsColumns} (the journal's
 * events column names, in order) fails with a PageFileException
 * (PageBatches.checkFooter).
 */
final class PendingRecords {

    private PendingRecords() {
    }

    static List<long[]> of(LaneEvents events, List<String> eventsColumns, long first, long end) throws IOException {
        List<long[]> sizes = new ArrayList<>();
        StructType ids = new StructType().add(PageBatches.RECORD_ID, DataTypes.LongType);
        for (PageRef ref : events.pages()) {
            if (Long.compareUnsigned(ref.lastId(), first) < 0 || Long.compareUnsigned(ref.firstId(), end) >= 0) {
                continue;
            }
            Map<Long, Long> counts = new TreeMap<>();
            try (PageBatches page = PageBatches.open(events.lane(), ref, ids, eventsColumns, new Deletions(), null, null, first,
                    end)) {
                while (page.next()) {
                    ColumnVector column = page.batch().column(0);
                    for (int i = 0; i < page.batch().numRows(); i++) {
                        counts.merge(column.getLong(i), 1L, Long::sum);
                    }
                }
            }
            double perRow = (double) ref.size() / Math.max(ref.rows(), 1);
            counts.forEach((id, rows) -> sizes.add(new long[] {id, rows, (long) (rows * perRow)}));
        }
        for (VisibleRecord record : events.records()) {
            if (Long.compareUnsigned(record.recordId(), first) >= 0
                    && Long.compareUnsigned(record.recordId(), end) < 0) {
                sizes.add(new long[] {record.recordId(), record.body().rows(), record.bodyLength()});
            }
        }
        sizes.sort((a, b) -> a[0] != b[0] ? Long.compareUnsigned(a[0], b[0])
                : a[1] != b[1] ? Long.compare(a[1], b[1]) : Long.compare(a[2], b[2]));
        return sizes;
    }
}
