package io.sparkjournal.events;

import static io.sparkjournal.Expect.contains;
import static io.sparkjournal.Expect.equal;
import static io.sparkjournal.Expect.raises;

import java.nio.charset.StandardCharsets;

/** {@link XidEncoder} writes XIDs in JSON.md's canonical form; {@link BatchXid#decode} reads them
 *  back strictly, and reads nothing but this sink's XIDs (COMMIT_LOG.md, "XIDs"). */
public final class XidTest {

    private XidTest() {
    }

    public static void testXidBytesAreCanonicalJson() {
        byte[] xid = XidEncoder.encode("/tmp/c\u00e9", "q\"1\uD83D\uDE00\n", 7, 3, 0, 12, 2, 1764250000123L);
        equal("{\"attempt\":0,\"batch\":7,\"epoch\":2,\"kind\":\"sparkjournal-2pc\",\"log\":"
                + "\"/tmp/c\u00e9\",\"partition\":3,\"prepared_at_ms\":1764250000123,"
                + "\"query\":\"q\\\"1\uD83D\uDE00\\u000a\",\"task\":12}",
                new String(xid, StandardCharsets.UTF_8), "XID bytes");
    }

    public static void testEpochAndPrepareTimeAreWrittenWhenZeroToo() {
        equal("{\"attempt\":0,\"batch\":5,\"epoch\":0,\"kind\":\"sparkjournal-2pc\",\"log\":\"l\","
                + "\"partition\":-1,\"prepared_at_ms\":0,\"query\":\"q\",\"task\":-1}",
                new String(XidEncoder.encode(new BatchXid("l", "q", 5, -1, 0, -1)), StandardCharsets.UTF_8),
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
        String ours = "\"kind\": \"sparkjournal-2pc\", \"log\": \"l\", \"query\": \"q\"";
        String[] foreign = {
            "not json",
            "[1, 2]",
            "{\"kind\": \"other\", \"log\": \"l\", \"query\": \"q\", \"batch\": 1}",
            "{" + ours + "}",
            "{" + ours + ", \"batch\": \"12\"}",
            "{" + ours + ", \"batch\": 12.0}",
            "{" + ours + ", \"batch\": true}",
            "{" + ours + ", \"batch\": -1}",
            "{" + ours + ", \"batch\": 18446744073709551616}",
            "{" + ours + ", \"batch\": 1, \"epoch\": null}",
            "{" + ours + ", \"batch\": 1, \"epoch\": \"3\"}",
            "{" + ours + ", \"batch\": 1} x",
            "{" + ours + ", \"batch\": 1, \"batch\": 2}",
            "{\"kind\": \"sparkjournal-2pc\", \"log\": 5, \"query\": \"q\", \"batch\": 1}",
        };
        for (String text : foreign) {
            equal(null, BatchXid.decode(text.getBytes(StandardCharsets.UTF_8)), "decode of " + text);
        }
    }

    public static void testOptionalFieldsTakeTheirDefaults() throws Exception {
        BatchXid xid = BatchXid.decode(("{\"kind\": \"sparkjournal-2pc\", \"log\": \"l\", \"query\": "
                + "\"q\", \"batch\": 12, \"unknown\": [1.5]}").getBytes(StandardCharsets.UTF_8));
        equal(new BatchXid("l", "q", 12, -1, 0, -1, 0, 0), xid, "decode with the spec's defaults");
    }
}
