package io.sparkjournal.events;

import java.io.IOException;
import java.util.HashMap;
import java.util.Map;

/**
 * One pass of outcomes (a lane's prepared transactions, one plan): each
 * commit log an XID names is viewed once, at its first use in the pass, and
 * every outcome of the pass is decided against that view
 * ({@link LogView#outcome}, at the XID's epoch). Not thread-safe: one pass,
 * one thread. Errors as {@link Resolver#outcome}.
 */
public final class Resolution {

    private final Resolver resolver;
    private final Map<String, LogView> views = new HashMap<>();

    Resolution(Resolver resolver) {
        this.resolver = resolver;
    }

    /** The outcome of the transaction {@code ref} whose PREPARE carries {@code xid}. */
    public Outcome outcome(byte[] xid, TxRef ref) throws IOException {
        BatchXid batch = BatchXid.decode(xid);
        if (batch == null) {
            return Outcome.FOREIGN;
        }
        LogView view = views.get(batch.log());
        if (view == null) {
            view = resolver.commitLog(batch.log()).view();
            views.put(batch.log(), view);
        }
        return view.outcome(batch.query(), batch.batch(), ref, batch.epoch());
    }
}
