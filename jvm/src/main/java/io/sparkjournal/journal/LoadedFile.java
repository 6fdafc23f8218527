package io.sparkjournal.journal;

import io.sparkjournal.format.FileHeader;
import io.sparkjournal.format.ScanResult;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Path;

/**
 * One data file of a load (FORMAT.md, "Data file"): its header, its
 * bytes mapped read only (the whole file as it is on disk, one ByteBuffer, so
 * at most 2 GiB - 1 bytes), the scan of its records, and where its data ends
 * once DataEnd has classified it.
 *
 * <p>The first {@link #dataRecords()} records of {@link #scan()} are the
 * file's data; records after them were dropped (a torn tail) or lie past
 * damage. Fields are set by the loader; the object is not changed after the
 * load returns.
 */
public final class LoadedFile {

    final Path path;
    final String name;
    final FileHeader header;
    final ByteBuffer map;
    final String sizeDamage;
    ScanResult scan;
    int nData;
    long end = io.sparkjournal.format.Layout.FILE_HEADER_SIZE;
    long tornEnd;

    LoadedFile(Path path, FileHeader header, ByteBuffer map, String sizeDamage) {
        this.path = path;
        this.name = path.toString();
        this.header = header;
        this.map = map.duplicate().order(ByteOrder.LITTLE_ENDIAN);
        this.sizeDamage = sizeDamage;
    }

    /** The file as the loader named it (the lane as given, joined with its name). */
    public Path path() {
        return path;
    }

    public FileHeader header() {
        return header;
    }

    /** The file id of its header (u64, read unsigned). */
    public long fileId() {
        return header.fileId();
    }

    /** The scan of the whole file (records of this file id, with CRCs checked unless the
     *  load was asked not to). */
    public ScanResult scan() {
        return scan;
    }

    /** How many of the scan's records are data. */
    public int dataRecords() {
        return nData;
    }

    /** Where its data ends: a writer would append after it. */
    public long end() {
        return end;
    }

    /** End of a dropped torn tail (0 if none): a writer zeroes [end, tornEnd) first. */
    public long tornEnd() {
        return tornEnd;
    }

    /** The file's bytes, read only, little-endian, position 0 (a new view on each call). */
    public ByteBuffer buffer() {
        return map.duplicate().order(ByteOrder.LITTLE_ENDIAN);
    }

    /** The mapped bytes the loader reads (shared; callers must not move it). */
    ByteBuffer bytes() {
        return map;
    }
}
