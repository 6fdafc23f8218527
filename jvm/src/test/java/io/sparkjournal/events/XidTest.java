package io.sparkjournal.events;

import static io.sparkjournal.Expect.contains;
import static io.sparkjournal.Expect.equal;
import static io.sparkjournal.Expect.raises;

import java.nio.charset.StandardCharsets;

/** {@link XidEncoder} writes the bytes Python's BatchXid.encode writes; {@link BatchXid#decode}
 *  reads them back, and reads nothing but this sink's XIDs. */
public final class XidTest {

    private XidTest() {
    }

    public static void testXidBytesArePythonsSortedAsciiJson() {
        byte[] xid = XidEncoder.encode("/tmp/c\u00e9", "q\"1\uD83D\uDE00", 7, 3, 0, 12, 2, 1764250000123L);
        // Python: BatchXid("/tmp/c\u00e9", 'q"1\U0001F600', 7, 3, 0, 12, 2, 1764250000123).encode()
        equal("{\"attempt\": 0, \"batch\": 7, \"epoch\": 2, \"kind\": \"sparkjournal-2pc\", \"log\": "
                + "\"/tmp/c\\u00e9\", \"partition\": 3, \"prepared_at_ms\": 1764250000123, "
                + "\"query\": \"q\\\"1\\ud83d\\ude00\", \"task\": 12}",
                new String(xid, StandardCharsets.US_ASCII), "XID bytes");
    }

    public static void testEpochAndPrepareTimeAreWrittenWhenZeroToo() {
        // Python: BatchXid("l", "q", 5).encode()
        equal("{\"attempt\": 0, \"batch\": 5, \"epoch\": 0, \"kind\": \"sparkjournal-2pc\", \"log\": \"l\", "
                + "\"partition\": -1, \"prepared_at_ms\": 0, \"query\": \"q\", \"task\": -1}",
                new String(XidEncoder.encode(new BatchXid("l", "q", 5, -1, 0, -1)), StandardCharsets.US_ASCII),
                "XID bytes of epoch 0");
    }

    public static void testAnEncodedXidDecodesToTheSameFields() throws Exception {
        BatchXid[] xids = {
            new BatchXid("file:///data/_commits", "3f2a-\u00fcber\n\t", Long.MAX_VALUE, -1, 0, -1),
            new BatchXid("", "", 0, Long.MIN_VALUE, 5, 77),
            new BatchXid("l", "q", 3, 1, 0, 9, 4, 1764250000000L),
        };
        for (BatchXid xid : xids) {
            equal(xid, BatchXid.decode(XidEncoder.encode(xid)), "decode of encode of " + xid);
        }
    }

    public static void testAnXidThisSinkDidNotWriteDecodesToNull() throws Exception {
        String[] foreign = {
            "not json",
            "[1, 2]",
            "{\"kind\": \"other\", \"log\": \"l\", \"query\": \"q\", \"batch\": 1}",
            "{\"kind\": \"sparkjournal-2pc\", \"log\": \"l\", \"query\": \"q\"}",
            "{\"kind\": \"sparkjournal-2pc\", \"log\": \"l\", \"query\": \"q\", \"batch\": \"x\"}",
        };
        for (String text : foreign) {
            equal(null, BatchXid.decode(text.getBytes(StandardCharsets.UTF_8)), "decode of " + text);
        }
    }

    public static void testFieldsAreReadAsPythonsStrAndIntReadThem() throws Exception {
        BatchXid xid = BatchXid.decode(("{\"kind\": \"sparkjournal-2pc\", \"log\": 5, \"query\": "
                + "\"q\", \"batch\": \"12\"}").getBytes(StandardCharsets.UTF_8));
        equal(new BatchXid("5", "q", 12, -1, 0, -1, 0, 0), xid, "decode with Python's defaults (epoch 0)");
        BatchXid later = BatchXid.decode(("{\"kind\": \"sparkjournal-2pc\", \"log\": \"l\", \"query\": "
                + "\"q\", \"batch\": 1, \"epoch\": \"3\"}").getBytes(StandardCharsets.UTF_8));
        equal(3L, later.epoch(), "epoch as Python's int() reads it");
        BatchXid huge = BatchXid.decode(("{\"kind\": \"sparkjournal-2pc\", \"log\": \"l\", \"query\": "
                + "\"q\", \"batch\": 1, \"epoch\": 18446744073709551616}").getBytes(StandardCharsets.UTF_8));
        equal(Long.MAX_VALUE, huge.epoch(), "an epoch beyond a long is clamped");
        equal(null, BatchXid.decode(("{\"kind\": \"sparkjournal-2pc\", \"log\": \"l\", \"query\": "
                + "\"q\", \"batch\": 1, \"epoch\": null}").getBytes(StandardCharsets.UTF_8)),
                "an epoch int() refuses: not this sink's");
    }

    public static void testABatchIdBeyond64BitsIsAnEventsException() {
        byte[] raw = ("{\"kind\": \"sparkjournal-2pc\", \"log\": \"l\", \"query\": \"q\", "
                + "\"batch\": 18446744073709551616}").getBytes(StandardCharsets.UTF_8);
        contains(raises(EventsException.class, () -> BatchXid.decode(raw)).getMessage(),
                "18446744073709551616", "beyond 64 bits");
    }
}
