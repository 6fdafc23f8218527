package io.sparkjournal.spark;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A read limit applied to one trigger, the same in the JVM and the Python
 * stream reader: ends that take whole records, one record from each lane in
 * turn, until the limit (rows or bytes) is reached - and at least one record,
 * so a limit smaller than a record still makes progress. A lane with nothing
 * visible left before its end goes straight to its end.
 */
final class TriggerLimit {

    private TriggerLimit() {
    }

    /**
     * {@code begin}, {@code ends}: {lane key: record id}, ends in the lanes'
     * order; {@code pending}: {lane key: its {record id, rows, bytes} in
     * [begin, end)}, for the lanes visible now; {@code byRows}: the budget
     * counts rows, else bytes.
     */
    static Map<String, Long> apply(LaneOffsets begin, Map<String, Long> ends, Map<String, long[][]> pending,
                                   long budget, boolean byRows) {
        Map<String, Deque<long[]>> queues = new LinkedHashMap<>();
        Map<String, Long> limited = new LinkedHashMap<>();
        for (Map.Entry<String, Long> end : ends.entrySet()) {
            String key = end.getKey();
            long from = begin.next(key);
            limited.put(key, from);
            if (end.getValue() > from && pending.containsKey(key)) {
                queues.put(key, new ArrayDeque<>(List.of(pending.get(key))));
            } else {
                limited.put(key, end.getValue());          // nothing visible to take: to the end
            }
        }
        long taken = 0;
        while (!queues.isEmpty() && (taken < budget || taken == 0)) {
            for (String key : new ArrayList<>(queues.keySet())) {
                Deque<long[]> queue = queues.get(key);
                if (queue.isEmpty()) {
                    limited.put(key, ends.get(key));        // its remaining records are all taken
                    queues.remove(key);
                    continue;
                }
                long[] record = queue.removeFirst();
                limited.put(key, record[0] + 1);
                taken += byRows ? record[1] : record[2];
                if (queue.isEmpty()) {
                    limited.put(key, ends.get(key));
                    queues.remove(key);
                }
                if (taken >= budget) {
                    break;
                }
            }
        }
        return limited;
    }
}
