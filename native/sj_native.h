/* The public C API of sparkjournal's native core.
 *
 * The block between SJ-CDEF-BEGIN and SJ-CDEF-END is handed verbatim to cffi's
 * cdef by native/build_native.py, so it may hold only plain declarations.
 * Every function here is safe to call with the GIL released (cffi API mode
 * releases it); none keeps a pointer to a caller's buffer after it returns.
 */
#ifndef SJ_NATIVE_H
#define SJ_NATIVE_H

#include <stdint.h>
#include <stddef.h>

/* SJ-CDEF-BEGIN */
/* CRC-32C (Castagnoli) of data, continuing from crc (0 to start). */
uint32_t sj_crc32c(uint32_t crc, const char *data, size_t len);

/* Encodes one record at buf[pos]: header, body, zero padding to 8 bytes.
 * body may already be in place at buf + pos + 40 (then it is not copied).
 * Returns the new position, -1 when the record does not fit in cap,
 * -2 when pos is not 8-byte aligned, -3 when body_len does not fit in u32. */
int64_t sj_encode_record(char *buf, size_t cap, size_t pos, uint8_t type, uint8_t flags,
                         uint16_t user_type, uint32_t file_id, uint64_t record_id,
                         uint64_t tx_id, uint32_t count, const char *body, size_t body_len);

/* Encodes records start..stop-1 whose bodies are data[offsets[i]:offsets[i+1]]
 * (Arrow binary offsets; offset_width is 4 or 8). Body i gets record id
 * ids[i - id_base], or first_id + (i - id_base) when ids is NULL, so a caller
 * resuming after a full buffer changes only start. Stops before the first record that does not fit and
 * stores how many were written in *written. Returns the new position,
 * -2 for a misaligned pos, -3 for offsets out of order or past data_len
 * (*written then counts the records encoded before the bad one),
 * -4 for a bad offset_width. */
int64_t sj_encode_batch(char *buf, size_t cap, size_t pos, uint8_t type, uint16_t user_type,
                        uint32_t file_id, uint64_t tx_id, uint64_t first_id,
                        const uint64_t *ids, size_t id_base, const char *data, size_t data_len,
                        const void *offsets, int offset_width,
                        size_t start, size_t stop, size_t *written);

/* Resumable scan state; zero it (except pos) before the first sj_scan call. */
struct sj_scan_state {
    uint64_t pos;            /* next offset to look at */
    uint64_t n;              /* records of this file found so far */
    uint64_t n_clean;        /* records before first_foreign */
    uint64_t clean_end;      /* end of the last record before first_foreign */
    int64_t first_foreign;   /* -1 while the data is clean */
    int32_t done;            /* 1 once the end of the buffer was reached */
    char reason[96];         /* why first_foreign is foreign, NUL-terminated */
};

/* Scans buf[st->pos:len] for records of file_id (FORMAT.md "Reading: where data
 * ends"), writing up to cap records into the column arrays. Returns how many it
 * wrote this call; call again (same state, fresh arrays) until st->done. Never
 * reads past len; allocates nothing. */
int64_t sj_scan(const char *buf, size_t len, uint32_t file_id, int verify_crc,
                struct sj_scan_state *st, size_t cap,
                uint8_t *types, uint8_t *flags, uint16_t *user_types,
                uint32_t *body_lens, uint32_t *counts,
                uint64_t *record_ids, uint64_t *tx_ids, uint64_t *offsets);

/* Kernel AIO writer: at most max_io writes in flight, each copied into its own
 * reused align-aligned buffer of max_write bytes. Completions are accounted in
 * submit order. Thread-safe; a failed write makes the writer fail every later
 * call with the same -errno (the journal stops on the first I/O error). */
typedef struct sj_aio sj_aio;
sj_aio *sj_aio_create(unsigned max_io, size_t max_write, size_t align, int *err);
/* Returns the write's sequence number (>= 1) or -errno. offset must be aligned;
 * len <= max_write; the tail up to the next align boundary is zero-filled. */
int64_t sj_aio_write(sj_aio *aio, int fd, const char *data, size_t len, int64_t offset);
/* Waits until every write up to seq completed. Returns the highest sequence
 * number completed in order, or the -errno of a failed write (a short write
 * is -EIO). */
int64_t sj_aio_wait(sj_aio *aio, int64_t seq);
/* Waits for every queued write, then writes len bytes at offset straight from
 * data with pwrite (len, offset and the data address aligned to align) and, if
 * datasync, fdatasyncs fd. Returns 0, -errno, or 1 (nothing done) when the
 * buffer, length or offset is not aligned. A failed pwrite fails the writer
 * like a failed queued write. */
int64_t sj_aio_write_sync(sj_aio *aio, int fd, const char *data, size_t len, int64_t offset,
                          int datasync);
/* Offset of the write that failed (the one behind a -errno), -1 if none. */
int64_t sj_aio_error_offset(sj_aio *aio);
/* Most writes ever in flight at once (for tests of the max_io bound). */
int64_t sj_aio_max_seen(sj_aio *aio);
/* Waits for all in-flight writes, then frees everything. */
void sj_aio_destroy(sj_aio *aio);

/* A record written alone, its checksum computed while its body is written
 * (sj_aio_alone.c). begin: waits for ring's queued writes, then submits
 * data[first:len] at offset+first, straight from data (len, first, offset and
 * the address aligned). finish: writes first_len bytes of `first` at offset,
 * waits for all, then fdatasyncs if datasync; first == NULL only waits (abandon).
 * 0 or -errno; a failed write fails the ring. */
typedef struct sj_alone sj_alone;
sj_alone *sj_alone_create(size_t align, int *err);
int64_t sj_alone_begin(sj_alone *w, sj_aio *ring, int fd, const char *data, size_t len,
                       int64_t offset, size_t first);
int64_t sj_alone_finish(sj_alone *w, sj_aio *ring, int fd, const char *first, size_t first_len,
                        int64_t offset, int datasync);
void sj_alone_destroy(sj_alone *w);

/* fdatasync(fd): 0 or -errno. */
int sj_fdatasync(int fd);

/* The commit gate (sj_gate.c): appending threads wait here, without the GIL,
 * for the generation (count of finished flushes) to move past `seen`. */
typedef struct sj_gate sj_gate;
sj_gate *sj_gate_create(void);
uint64_t sj_gate_generation(sj_gate *gate);
uint64_t sj_gate_wait(sj_gate *gate, uint64_t seen);
/* Moves the generation on (a flush finished) and raises the durable mark to
 * durable (never lowers it). */
void sj_gate_advance_durable(sj_gate *gate, uint64_t durable);
/* Waits until the durable mark reaches seq or the generation differs from
 * seen; returns the durable mark. */
uint64_t sj_gate_wait_durable(sj_gate *gate, uint64_t seq, uint64_t seen);
void sj_gate_destroy(sj_gate *gate);
/* Compaction's copy (sj_codec.c): re-encodes records src_offsets[index[k]]
 * (k < n; records of src as its scan found them) at buf[pos] as records of
 * file_id, record k with type types[k] and count counts[k] (0 when counts is
 * NULL); flags, user type, record id and body are the source's, the tx id too
 * when types[k] is a transaction type (>= ADD_TX), else 0. Returns the new
 * position, -1 when a record does not fit in cap (records before it are
 * written), -2 for a misaligned pos, -3 when an index or a source record lies
 * outside src (nothing is read outside src_len). */
int64_t sj_copy_records(char *buf, size_t cap, size_t pos, uint32_t file_id,
                        const char *src, size_t src_len, const uint64_t *src_offsets,
                        size_t src_n, const uint32_t *index, const uint8_t *types,
                        const uint32_t *counts, size_t n);

/* Compaction's plan (sj_compact.c): replays a lane's records, n in all, in log
 * order (files in id order; file_starts[f] .. file_starts[f + 1] are file f's)
 * with the loader's rules (journal/loader.py replay: a COMMIT applies when its
 * count equals the tx's records in its file) and sets out_types[i] to the type
 * record i is written as if its file is compacted, or 0 when it goes
 * (maintenance/compaction_plan.py states the rule). maxima[0] and maxima[1]
 * get the highest record id and tx id the replay saw. Returns 0; -1 when out
 * of memory; 1 for a tx record after its tx's PREPARE, 2 for a second
 * PREPARE, with *bad the index of that record. */
int64_t sj_compact_plan(size_t n_files, const uint64_t *file_starts, const uint8_t *types,
                        const uint64_t *record_ids, const uint64_t *tx_ids,
                        const uint32_t *counts, uint8_t *out_types, uint64_t *maxima,
                        uint64_t *bad);

/* Events' statistics (sj_bounds.c): the indexes, relative to first, of the
 * smallest and largest non-null value among elements first .. first + n - 1
 * of an Arrow string column (offsets of offset_width 4 or 8 bytes, data,
 * validity bitmap or NULL: every value valid). Bytes compare unsigned, then
 * the shorter first. Returns 0; -1 when no value is non-null; -2 for another
 * offset width. */
int64_t sj_string_bounds(const char *offsets, int offset_width, const char *data,
                         const uint8_t *validity, size_t first, size_t n,
                         int64_t *min_at, int64_t *max_at);
/* SJ-CDEF-END */

/* Between the core's files only (sj_aio_alone.c fails its ring), not for Python:
 * fails the writer with err (offset: where), as a failed queued write would;
 * the first failure stays the one reported. */
void sj_aio_fail(sj_aio *aio, int err, int64_t offset);

#endif
