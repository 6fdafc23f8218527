/* Record encoding (single and batch) and the file scan of FORMAT.md.
 *
 * Encoding writes only inside buf[pos : pos + record_size]; a record that does
 * not fit is not started, so a caller can flush and retry it in a new buffer.
 * Scanning trusts nothing in the buffer: every header is bounds-checked before
 * it is read and no length from the buffer sizes any allocation.
 */
#include <stdio.h>
#include <string.h>
#include "sj_format.h"
#include "sj_native.h"

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
#define SJ_LE16(x) __builtin_bswap16(x)
#define SJ_LE32(x) __builtin_bswap32(x)
#define SJ_LE64(x) __builtin_bswap64(x)
#else
#define SJ_LE16(x) (x)
#define SJ_LE32(x) (x)
#define SJ_LE64(x) (x)
#endif

static inline void put16(unsigned char *p, uint16_t v) { v = SJ_LE16(v); memcpy(p, &v, 2); }
static inline void put32(unsigned char *p, uint32_t v) { v = SJ_LE32(v); memcpy(p, &v, 4); }
static inline void put64(unsigned char *p, uint64_t v) { v = SJ_LE64(v); memcpy(p, &v, 8); }
static inline uint16_t get16(const unsigned char *p) { uint16_t v; memcpy(&v, p, 2); return SJ_LE16(v); }
static inline uint32_t get32(const unsigned char *p) { uint32_t v; memcpy(&v, p, 4); return SJ_LE32(v); }
static inline uint64_t get64(const unsigned char *p) { uint64_t v; memcpy(&v, p, 8); return SJ_LE64(v); }

/* Writes a whole record at r; the caller has checked that it fits. */
static inline void put_record(unsigned char *r, uint8_t type, uint8_t flags, uint16_t user_type,
                              uint32_t file_id, uint64_t record_id, uint64_t tx_id,
                              uint32_t count, const char *body, size_t body_len) {
    /* the padding after the body (0-7 bytes) is zeros */
    memset(r + SJ_RECORD_HEADER_SIZE + body_len, 0,
           sj_record_size(body_len) - SJ_RECORD_HEADER_SIZE - body_len);
    r[SJ_OFF_TYPE] = type;
    r[SJ_OFF_FLAGS] = flags;
    put16(r + SJ_OFF_USER_TYPE, user_type);
    put32(r + SJ_OFF_FILE_ID, file_id);
    put32(r + SJ_OFF_BODY_LEN, (uint32_t)body_len);
    put64(r + SJ_OFF_RECORD_ID, record_id);
    put64(r + SJ_OFF_TX_ID, tx_id);
    put32(r + SJ_OFF_COUNT, count);
    put32(r + SJ_OFF_COMPACT_COUNT, 0);
    /* a body already in place (the caller put it right after the header) is not copied */
    if (body_len && body != (const char *)r + SJ_RECORD_HEADER_SIZE)
        memmove(r + SJ_RECORD_HEADER_SIZE, body, body_len);
    put32(r + SJ_OFF_CRC, sj_crc32c(0, (const char *)r + 4, SJ_RECORD_HEADER_SIZE - 4 + body_len));
}

int64_t sj_encode_record(char *buf, size_t cap, size_t pos, uint8_t type, uint8_t flags,
                         uint16_t user_type, uint32_t file_id, uint64_t record_id,
                         uint64_t tx_id, uint32_t count, const char *body, size_t body_len) {
    if (pos & (SJ_RECORD_ALIGN - 1))
        return -2;
    if (body_len > 0xFFFFFFFFu)
        return -3;
    size_t size = sj_record_size(body_len);
    if (pos > cap || cap - pos < size)
        return -1;
    put_record((unsigned char *)buf + pos, type, flags, user_type, file_id, record_id,
               tx_id, count, body, body_len);
    return (int64_t)(pos + size);
}

int64_t sj_encode_batch(char *buf, size_t cap, size_t pos, uint8_t type, uint16_t user_type,
                        uint32_t file_id, uint64_t tx_id, uint64_t first_id,
                        const uint64_t *ids, size_t id_base, const char *data, size_t data_len,
                        const void *offsets, int offset_width,
                        size_t start, size_t stop, size_t *written) {
    const int32_t *off32 = (const int32_t *)offsets;
    const int64_t *off64 = (const int64_t *)offsets;
    *written = 0;
    if (pos & (SJ_RECORD_ALIGN - 1))
        return -2;
    if (offset_width != 4 && offset_width != 8)
        return -4;
    if (start < id_base)
        return -3;
    if (pos > cap)
        return (int64_t)pos;
    for (size_t i = start; i < stop; i++) {
        int64_t lo = offset_width == 8 ? off64[i] : off32[i];
        int64_t hi = offset_width == 8 ? off64[i + 1] : off32[i + 1];
        if (lo < 0 || hi < lo || (uint64_t)hi > data_len || hi - lo > 0xFFFFFFFFll)
            return -3;
        size_t body_len = (size_t)(hi - lo);
        size_t size = sj_record_size(body_len);
        if (cap - pos < size)
            break;
        uint64_t id = ids ? ids[i - id_base] : first_id + (i - id_base);
        put_record((unsigned char *)buf + pos, type, 0, user_type, file_id, id, tx_id, 0,
                   data + lo, body_len);
        pos += size;
        (*written)++;
    }
    return (int64_t)pos;
}

/* ---- scan ------------------------------------------------------------------ */

/* First offset >= pos (8-aligned steps) whose 8 bytes are not all zero, or end. */
static size_t skip_zero_words(const unsigned char *b, size_t pos, size_t end) {
    while (pos + 64 <= end) {
        uint64_t any = get64(b + pos) | get64(b + pos + 8) | get64(b + pos + 16) |
                       get64(b + pos + 24) | get64(b + pos + 32) | get64(b + pos + 40) |
                       get64(b + pos + 48) | get64(b + pos + 56);
        if (any)
            break;
        pos += 64;
    }
    while (pos + 8 <= end && get64(b + pos) == 0)
        pos += 8;
    return pos;
}

enum { REC_OK = 0, REC_FOREIGN = 1 };

/* Classifies the non-zero word at pos. On REC_OK *size is the record size;
 * on REC_FOREIGN reason (if not NULL) says why. Reads only b[pos : len]. */
static int check_record(const unsigned char *b, size_t len, size_t pos, uint32_t file_id,
                        int verify_crc, uint64_t *size, char *reason, size_t reason_cap) {
    if (len - pos < SJ_RECORD_HEADER_SIZE) {
        if (reason) snprintf(reason, reason_cap, "header cut off by end of file");
        return REC_FOREIGN;
    }
    const unsigned char *r = b + pos;
    unsigned type = r[SJ_OFF_TYPE], flags = r[SJ_OFF_FLAGS];
    if (type == 0 || type > SJ_TYPE_MAX) {
        if (reason) snprintf(reason, reason_cap, "bad type %u", type);
        return REC_FOREIGN;
    }
    if (flags & ~SJ_KNOWN_FLAGS) {
        if (reason) snprintf(reason, reason_cap, "bad flags 0x%02x", flags);
        return REC_FOREIGN;
    }
    uint32_t body_len = get32(r + SJ_OFF_BODY_LEN);
    if ((uint64_t)body_len > len - pos - SJ_RECORD_HEADER_SIZE) {
        if (reason) snprintf(reason, reason_cap, "body length %u past end of file", body_len);
        return REC_FOREIGN;
    }
    uint32_t fid = get32(r + SJ_OFF_FILE_ID);
    if (reason == NULL && fid != file_id)
        return REC_FOREIGN;          /* the after-damage prefilter: skip the crc */
    if (verify_crc &&
        sj_crc32c(0, (const char *)r + 4, SJ_RECORD_HEADER_SIZE - 4 + body_len) != get32(r)) {
        if (reason) snprintf(reason, reason_cap, "crc mismatch");
        return REC_FOREIGN;
    }
    if (fid != file_id) {
        if (reason) snprintf(reason, reason_cap, "record of file id %u (stale)", fid);
        return REC_FOREIGN;
    }
    *size = sj_record_size(body_len);
    return REC_OK;
}

int64_t sj_scan(const char *buf, size_t len, uint32_t file_id, int verify_crc,
                struct sj_scan_state *st, size_t cap,
                uint8_t *types, uint8_t *flags, uint16_t *user_types,
                uint32_t *body_lens, uint32_t *counts,
                uint64_t *record_ids, uint64_t *tx_ids, uint64_t *offsets) {
    const unsigned char *b = (const unsigned char *)buf;
    size_t end = len & ~(size_t)(SJ_RECORD_ALIGN - 1);
    size_t pos = (size_t)((st->pos + SJ_RECORD_ALIGN - 1) & ~(uint64_t)(SJ_RECORD_ALIGN - 1));
    size_t got = 0;
    if (st->done)
        return 0;
    while (got < cap) {
        pos = skip_zero_words(b, pos, end);
        if (pos >= end) {
            st->done = 1;
            break;
        }
        uint64_t size = 0;
        int clean = st->first_foreign < 0;
        int verdict = check_record(b, len, pos, file_id, verify_crc, &size,
                                   clean ? st->reason : NULL, sizeof st->reason);
        if (verdict != REC_OK) {
            if (clean) {
                st->first_foreign = (int64_t)pos;
                st->n_clean = st->n;
            }
            pos += SJ_RECORD_ALIGN;
            continue;
        }
        const unsigned char *r = b + pos;
        types[got] = r[SJ_OFF_TYPE];
        flags[got] = r[SJ_OFF_FLAGS];
        user_types[got] = get16(r + SJ_OFF_USER_TYPE);
        body_lens[got] = get32(r + SJ_OFF_BODY_LEN);
        counts[got] = get32(r + SJ_OFF_COUNT);
        record_ids[got] = get64(r + SJ_OFF_RECORD_ID);
        tx_ids[got] = get64(r + SJ_OFF_TX_ID);
        offsets[got] = pos;
        got++;
        st->n++;
        pos += size;
        if (clean)
            st->clean_end = pos;
    }
    st->pos = pos;
    if (st->done && st->first_foreign < 0)
        st->n_clean = st->n;
    return (int64_t)got;
}

/* ---- copy (compaction) ------------------------------------------------------ */

int64_t sj_copy_records(char *buf, size_t cap, size_t pos, uint32_t file_id,
                        const char *src, size_t src_len, const uint64_t *src_offsets,
                        size_t src_n, const uint32_t *index, const uint8_t *types,
                        const uint32_t *counts, size_t n) {
    const unsigned char *s = (const unsigned char *)src;
    if (pos & (SJ_RECORD_ALIGN - 1))
        return -2;
    for (size_t k = 0; k < n; k++) {
        uint32_t i = index[k];
        if (i >= src_n)
            return -3;
        uint64_t off = src_offsets[i];
        if (off > src_len || src_len - off < SJ_RECORD_HEADER_SIZE)
            return -3;
        const unsigned char *r = s + off;
        uint32_t body_len = get32(r + SJ_OFF_BODY_LEN);
        if ((uint64_t)body_len > src_len - off - SJ_RECORD_HEADER_SIZE)
            return -3;
        size_t size = sj_record_size(body_len);
        if (pos > cap || cap - pos < size)
            return -1;
        uint8_t type = types[k];
        /* only records of a transaction still open keep their tx id */
        uint64_t tx_id = type >= SJ_ADD_TX ? get64(r + SJ_OFF_TX_ID) : 0;
        put_record((unsigned char *)buf + pos, type, r[SJ_OFF_FLAGS], get16(r + SJ_OFF_USER_TYPE),
                   file_id, get64(r + SJ_OFF_RECORD_ID), tx_id, counts ? counts[k] : 0,
                   (const char *)r + SJ_RECORD_HEADER_SIZE, body_len);
        pos += size;
    }
    return (int64_t)pos;
}
