package io.sparkjournal.events;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import org.apache.arrow.flatbuf.Message;
import org.apache.arrow.flatbuf.MessageHeader;
import org.apache.arrow.flatbuf.MetadataVersion;

/**
 * Where one Arrow IPC message lies in a buffer, read as Arrow's IPC format
 * frames it (and Arrow C++'s stream reader reads it): the framing (a continuation
 * marker 0xFFFFFFFF and an int32 metadata length, or, in the framing before
 * Arrow 0.15, the length alone), the Message flatbuffer, then its body of
 * {@code bodyLength} bytes. Nothing is copied: {@link #metadata()} and
 * {@link #body()} are views of the buffer.
 *
 * <p>Damage: every way the bytes cannot be such a message is an
 * {@link EventsBodyException} (EVENTS.md, "EVENTS records", reader
 * requirements: *damaged*), worded as Arrow C++'s reader words the same check
 * where it makes one (end of stream, a cut length, a metadata length
 * beyond the buffer, a negative length, a body beyond the buffer, a metadata
 * version before V4). Arrow C++ also runs a flatbuffers verifier over the
 * metadata; this reader does not, so a flatbuffer whose offsets point astray
 * is refused only where reading it trips over the buffer's bounds (the
 * record's CRC makes such a body a writer's bug, not a disk's).
 */
public final class IpcMessage {

    /** The marker that opens a message in the framing since Arrow 0.15. */
    public static final int CONTINUATION = 0xFFFFFFFF;

    private final ByteBuffer buffer;
    private final int offset;
    private final int metadataOffset;
    private final int metadataLength;
    private final long bodyLength;
    private final Message message;

    private IpcMessage(ByteBuffer buffer, int offset, int metadataOffset, int metadataLength,
                       long bodyLength, Message message) {
        this.buffer = buffer;
        this.offset = offset;
        this.metadataOffset = metadataOffset;
        this.metadataLength = metadataLength;
        this.bodyLength = bodyLength;
        this.message = message;
    }

    /**
     * The message starting at {@code offset} of {@code buffer} (indices from 0
     * up to its limit; its position is ignored), which must hold the whole
     * message, body included.
     */
    public static IpcMessage read(ByteBuffer buffer, int offset) throws EventsBodyException {
        ByteBuffer all = buffer.duplicate().order(ByteOrder.LITTLE_ENDIAN);
        int available = all.limit() - offset;
        if (available <= 0) {
            throw new EventsBodyException("End of Arrow stream");
        }
        if (available < 4) {
            throw new EventsBodyException("Corrupted message, only " + available
                    + " bytes available");
        }
        int first = all.getInt(offset);
        int prefix = 4;
        int length = first;
        if (first == CONTINUATION) {
            if (available < 8) {
                throw new EventsBodyException("Corrupted metadata length, only " + (available - 4)
                        + " bytes available");
            }
            length = all.getInt(offset + 4);
            prefix = 8;
        }
        if (length == 0) {
            throw new EventsBodyException("End of Arrow stream");
        }
        if (length < 0) {
            throw new EventsBodyException("Invalid IPC message: negative metadata length");
        }
        if (available - prefix < length) {
            throw new EventsBodyException("Expected to read " + length
                    + " metadata bytes, but only read " + (available - prefix));
        }
        int metadataOffset = offset + prefix;
        Message message;
        long bodyLength;
        try {
            ByteBuffer metadata = all.duplicate().position(metadataOffset)
                    .limit(metadataOffset + length).slice().order(ByteOrder.LITTLE_ENDIAN);
            message = Message.getRootAsMessage(metadata);
            short version = message.version();
            if (version < MetadataVersion.V4) {
                throw new EventsBodyException("Old metadata version not supported");
            }
            if (version > MetadataVersion.V5) {
                throw new EventsBodyException("Unsupported future MetadataVersion: " + version);
            }
            bodyLength = message.bodyLength();
            message.headerType();
        } catch (RuntimeException broken) {
            throw new EventsBodyException("Invalid flatbuffers message.", broken);
        }
        if (bodyLength < 0) {
            throw new EventsBodyException("Invalid IPC message: negative bodyLength");
        }
        long room = available - prefix - (long) length;
        if (room < bodyLength) {
            throw new EventsBodyException("Expected to be able to read " + bodyLength
                    + " bytes for message body, got " + room);
        }
        return new IpcMessage(all, offset, metadataOffset, length, bodyLength, message);
    }

    /** Where the message (its framing) starts. */
    public int offset() {
        return offset;
    }

    /** Where its Message flatbuffer starts. */
    public int metadataOffset() {
        return metadataOffset;
    }

    public int metadataLength() {
        return metadataLength;
    }

    /** Where its body starts: right after the flatbuffer. */
    public int bodyOffset() {
        return metadataOffset + metadataLength;
    }

    /** Its body's length (fits in the buffer, so in an int). */
    public int bodyLength() {
        return (int) bodyLength;
    }

    /** Where the next message would start. */
    public int end() {
        return bodyOffset() + (int) bodyLength;
    }

    /** The decoded Message flatbuffer, reading the buffer in place. */
    public Message message() {
        return message;
    }

    /** One of {@link MessageHeader}'s values (Schema, RecordBatch, ...). */
    public byte headerType() {
        return message.headerType();
    }

    /** The header type's name in lower-case words, as Arrow C++ names it ("schema", "record batch"). */
    public String typeName() {
        switch (message.headerType()) {
            case MessageHeader.Schema:
                return "schema";
            case MessageHeader.RecordBatch:
                return "record batch";
            case MessageHeader.DictionaryBatch:
                return "dictionary";
            case MessageHeader.Tensor:
                return "tensor";
            case MessageHeader.SparseTensor:
                return "sparse tensor";
            default:
                return "none";
        }
    }

    /** The Message flatbuffer's bytes, a view (little-endian). */
    public ByteBuffer metadata() {
        return slice(metadataOffset, metadataLength);
    }

    /** The body's bytes, a view (little-endian). */
    public ByteBuffer body() {
        return slice(bodyOffset(), (int) bodyLength);
    }

    private ByteBuffer slice(int at, int length) {
        return buffer.duplicate().position(at).limit(at + length).slice()
                .order(ByteOrder.LITTLE_ENDIAN);
    }
}
