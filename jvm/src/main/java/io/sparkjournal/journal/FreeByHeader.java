package io.sparkjournal.journal;

import java.util.HashSet;
import java.util.List;
import java.util.Set;

import io.sparkjournal.format.FileHeader;

/**
 * Pool files a load tells apart by their headers alone (FORMAT.md, "Reading:
 * where data ends", free by header). A file
 * is made or freed with a header holding a fresh id and naming no previous
 * file; a roll gives the file it enters another fresh id and names the file it
 * sealed; a writer appends under a header it did not roll into only when the
 * lane holds no data, and then into the lane's lowest-id file. So of the files
 * neither sealed nor naming a previous file, only the lowest-id one can hold
 * records of its own id: a load takes every other one as empty without reading
 * its stale bytes.
 */
final class FreeByHeader {

    private FreeByHeader() {
    }

    /** Ids of the files of {@code files} that are free by their headers. */
    static Set<Long> ids(List<LoadedFile> files) {
        List<Long> unrolled = files.stream().map(LoadedFile::header)
                .filter(header -> header.prevFileId() == 0 && header.sealedEnd() == 0)
                .map(FileHeader::fileId).sorted(Long::compareUnsigned).toList();   // ids are unsigned
        return new HashSet<>(unrolled.subList(Math.min(1, unrolled.size()), unrolled.size()));
    }
}
