package io.sparkjournal.spark;

import java.util.List;

import io.sparkjournal.events.PageRef;
import io.sparkjournal.format.Constants;

/**
 * Whether a read needs a page file, from its PAGE record alone (the file is
 * not opened; EVENTS.md, "Statistics": the metadata columns may prune, and
 * "PAGE records": a range whose lowest value is negative is unknown). {@code _host} and {@code _lane} are
 * one value for the read (exact); {@code _record_id}, {@code _batch_id} and
 * {@code _commit_time} have the page's [lowest, highest] (inclusive; a batch
 * or time range the PAGE record does not know, -1, prunes nothing); a filter
 * on any other column never prunes a page.
 *
 * <p>This only skips whole pages: a page that may hold a match
 * is read whole, and Spark applies its filters to the rows. The read's
 * starting point (startingBatchId, startingTimestamp) is such a filter for
 * records (one batch each, so exact) but is not applied to a page's rows.
 */
final class PagePruning {

    private PagePruning() {
    }

    static boolean wanted(List<RecordFilter> filters, PageRef page, String host, String lane) {
        for (RecordFilter filter : filters) {
            long[] range = switch (filter.column()) {
                case Constants.MetadataColumns.RECORD_ID -> new long[] {page.firstId(), page.lastId()};
                case Constants.MetadataColumns.BATCH_ID -> known(page.batchRange());
                case Constants.MetadataColumns.COMMIT_TIME -> known(page.timeRange());
                default -> null;
            };
            boolean may;
            if (filter.column().equals(Constants.MetadataColumns.HOST)) {
                may = filter.mayMatchConstant(host);
            } else if (filter.column().equals(Constants.MetadataColumns.LANE)) {
                may = filter.mayMatchConstant(lane);
            } else {
                may = range == null || filter.mayMatchRange(range[0], range[1], 1_000_000L);
            }
            if (!may) {
                return false;
            }
        }
        return true;
    }

    private static long[] known(long[] range) {
        return range[0] >= 0 ? range : null;
    }
}
