package io.sparkjournal.spark;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.sparkjournal.events.Deletions;
import io.sparkjournal.events.PageRef;
import io.sparkjournal.journal.LaneSnapshot;
import io.sparkjournal.journal.LiveRecord;
import java.io.IOException;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;

/**
 * Reads every live page of each lane folder given ({@code <events columns,
 * comma-separated> <lane>...}) through {@link PageBatches}, with no
 * deletions, asking for the events columns (long {@code id}, string
 * otherwise) and the six metadata columns; prints one JSON line per lane:
 * {@code {"lane", "outcome": "ok", "rows"}} or
 * {@code {"lane", "outcome": "refused", "error": <exception class>, "message"}}
 * for an IOException. Used by tests/test_page_footer.py. Not an API.
 */
public final class PageReadTool {

    private static final ObjectMapper JSON = new ObjectMapper();
    private static final long PAGE = 3;

    private PageReadTool() {
    }

    public static void main(String[] args) throws Exception {
        List<String> events = List.of(args[0].split(","));
        List<StructField> fields = new ArrayList<>();
        for (String name : events) {
            fields.add(DataTypes.createStructField(name, name.equals("id") ? DataTypes.LongType
                    : DataTypes.StringType, true));
        }
        fields.addAll(List.of(JournalSchema.metadata().fields()));
        StructType output = DataTypes.createStructType(fields);
        for (int i = 1; i < args.length; i++) {
            Path lane = Paths.get(args[i]);
            ObjectNode line = JSON.createObjectNode().put("lane", lane.toString());
            try {
                line.put("rows", rows(lane, output, events)).put("outcome", "ok");
            } catch (IOException refused) {
                line.put("outcome", "refused").put("error", refused.getClass().getSimpleName())
                        .put("message", refused.getMessage());
            }
            System.out.println(JSON.writeValueAsString(line));
        }
    }

    private static long rows(Path lane, StructType output, List<String> events) throws IOException {
        long rows = 0;
        try (LaneSnapshot snapshot = LaneSnapshot.read(lane)) {
            for (LiveRecord record : snapshot.records()) {
                if (record.userType() != PAGE) {
                    continue;
                }
                PageRef ref = PageRef.decode(record.body());
                try (PageBatches page = PageBatches.open(lane, ref, output, events, new Deletions(), "h", "l",
                        0, Long.MAX_VALUE)) {
                    while (page.next()) {
                        rows += page.batch().numRows();
                    }
                }
            }
        }
        return rows;
    }
}
