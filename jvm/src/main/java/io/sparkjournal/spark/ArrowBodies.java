package io.sparkjournal.spark;

import java.io.IOException;
import java.nio.ByteBuffer;

import org.apache.arrow.memory.ArrowBuf;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.ForeignAllocation;
import org.apache.arrow.memory.util.MemoryUtil;
import org.apache.arrow.vector.VectorLoader;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.ipc.message.ArrowRecordBatch;
import org.apache.arrow.vector.ipc.message.MessageSerializer;

import io.sparkjournal.events.EventsBody;
import io.sparkjournal.events.IpcMessage;

/**
 * An events record body (an Arrow IPC stream: its schema, then one record
 * batch; {@link EventsBody} locates the two messages) as Arrow vectors over
 * the very bytes of the body: when the body is a direct buffer (a
 * memory-mapped data file or large body), the vectors' buffers are slices of
 * it and nothing is copied; a heap buffer is copied once. The vectors are
 * valid while the body's mapping is, so the caller closes them before it lets
 * the snapshot go.
 */
final class ArrowBodies {

    private ArrowBodies() {
    }

    /** The body's record batch, loaded with the body's own schema. */
    static VectorSchemaRoot load(EventsBody body, BufferAllocator allocator) throws IOException {
        IpcMessage message = body.batch();            // a RecordBatch: EventsBody.split checked it
        ByteBuffer bytes = message.body();
        ArrowBuf buffer;
        if (bytes.isDirect()) {
            buffer = allocator.wrapForeignAllocation(
                    new Unowned(bytes.remaining(), MemoryUtil.getByteBufferAddress(bytes)));
        } else {
            buffer = allocator.buffer(bytes.remaining());
            buffer.setBytes(0, bytes.duplicate());
        }
        VectorSchemaRoot root = VectorSchemaRoot.create(body.schema(), allocator);
        // deserializeRecordBatch takes over the buffer (it releases it once sliced).
        try (ArrowRecordBatch batch = MessageSerializer.deserializeRecordBatch(message.message(), buffer)) {
            new VectorLoader(root).load(batch);
        } catch (IOException | RuntimeException bad) {
            root.close();
            throw bad;
        }
        return root;
    }

    /** Memory the mapping owns: Arrow only borrows it. */
    private static final class Unowned extends ForeignAllocation {
        Unowned(long size, long address) {
            super(size, address);
        }

        @Override
        protected void release0() {
            // the mapping is released with the snapshot, not by Arrow
        }
    }
}
