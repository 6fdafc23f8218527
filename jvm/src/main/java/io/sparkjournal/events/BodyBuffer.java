package io.sparkjournal.events;

import java.nio.ByteBuffer;
import java.nio.channels.WritableByteChannel;

/**
 * Where a task serializes one piece's body at a time ({@link EventsBodyWriter#write}):
 * off-heap memory reused from piece to piece, grown (doubled) when a body needs
 * more, so a task allocates and faults in its body memory once, not per piece.
 *
 * <p>Contract: {@link #body} is a view of the bytes written since the last
 * {@link #clear}, valid until the next {@code clear} or write; the caller has
 * handed it on (the appender copies a body before its append returns) before
 * the next piece is written. One task's, never shared.
 */
public final class BodyBuffer implements WritableByteChannel {

    private ByteBuffer buffer;

    public BodyBuffer(int capacity) {
        buffer = ByteBuffer.allocateDirect(Math.max(capacity, 4096));
    }

    /** Forgets what was written: the next body starts at 0. */
    public void clear() {
        buffer.clear();
    }

    /** The bytes written since {@link #clear}. */
    public ByteBuffer body() {
        return buffer.duplicate().flip();
    }

    @Override
    public int write(ByteBuffer source) {
        int length = source.remaining();
        if (buffer.remaining() < length) {
            long wanted = (long) buffer.position() + length;
            ByteBuffer grown = ByteBuffer.allocateDirect((int) Math.min(Integer.MAX_VALUE - 8,
                    Math.max(wanted, 2L * buffer.capacity())));
            grown.put(buffer.flip());
            buffer = grown;
        }
        buffer.put(source);
        return length;
    }

    @Override
    public boolean isOpen() {
        return true;
    }

    @Override
    public void close() {
    }
}
