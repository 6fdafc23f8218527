/* libFuzzer target for the C core's scan (native/sj_codec.c), built with
 * AddressSanitizer and UndefinedBehaviorSanitizer by tests/fuzz/run.py when
 * clang is installed (target "cscan"). The atheris records target drives the
 * same code through Python, without coverage of the C branches and without a
 * check of every read; this one has both.
 *
 * Input: a control byte (bit 0: scan without CRC checks; bits 1-7: the chunk
 * size, 1..127 records per call, so resuming a scan is exercised), the file
 * id (u32), then the bytes scanned from offset 0. The data is copied into a
 * buffer of exactly its length, so ASan reports any read past it.
 *
 * Checks: a chunked scan finds the same records and state as a scan in one
 * call; every record lies inside the buffer, 8-aligned, in order, without
 * overlap, of this file id, with a valid type and (CRC checks on) a right CRC.
 * A failed check aborts: libFuzzer writes the input as crash-*.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "sj_format.h"
#include "sj_native.h"

#define CHECK(cond) do { if (!(cond)) abort(); } while (0)

struct columns {
    uint8_t *types, *flags;
    uint16_t *user_types;
    uint32_t *body_lens, *counts;
    uint64_t *record_ids, *tx_ids, *offsets;
};

static void alloc_columns(struct columns *c, size_t n) {
    c->types = malloc(n); c->flags = malloc(n);
    c->user_types = malloc(2 * n);
    c->body_lens = malloc(4 * n); c->counts = malloc(4 * n);
    c->record_ids = malloc(8 * n); c->tx_ids = malloc(8 * n); c->offsets = malloc(8 * n);
}

static void free_columns(struct columns *c) {
    free(c->types); free(c->flags); free(c->user_types); free(c->body_lens);
    free(c->counts); free(c->record_ids); free(c->tx_ids); free(c->offsets);
}

/* Scans the whole buffer, cap records per call; returns the records found. */
static size_t scan_all(const char *buf, size_t len, uint32_t fid, int verify, size_t cap,
                       struct sj_scan_state *st, struct columns *all, size_t most) {
    struct columns chunk;
    size_t total = 0;
    alloc_columns(&chunk, cap);
    memset(st, 0, sizeof *st);
    st->first_foreign = -1;
    while (!st->done) {
        int64_t got = sj_scan(buf, len, fid, verify, st, cap, chunk.types, chunk.flags,
                              chunk.user_types, chunk.body_lens, chunk.counts,
                              chunk.record_ids, chunk.tx_ids, chunk.offsets);
        CHECK(got >= 0 && (size_t)got <= cap && total + (size_t)got <= most);
        memcpy(all->types + total, chunk.types, got);
        memcpy(all->flags + total, chunk.flags, got);
        memcpy(all->user_types + total, chunk.user_types, 2 * got);
        memcpy(all->body_lens + total, chunk.body_lens, 4 * got);
        memcpy(all->counts + total, chunk.counts, 4 * got);
        memcpy(all->record_ids + total, chunk.record_ids, 8 * got);
        memcpy(all->tx_ids + total, chunk.tx_ids, 8 * got);
        memcpy(all->offsets + total, chunk.offsets, 8 * got);
        total += (size_t)got;
    }
    free_columns(&chunk);
    return total;
}

static uint32_t get32(const unsigned char *p) { uint32_t v; memcpy(&v, p, 4); return v; }

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 5)
        return 0;
    int verify = !(data[0] & 1);
    size_t cap = (data[0] >> 1) ? (size_t)(data[0] >> 1) : 1;
    uint32_t fid = get32(data + 1);
    size_t len = size - 5;
    char *buf = malloc(len ? len : 1);
    memcpy(buf, data + 5, len);
    size_t most = len / SJ_RECORD_HEADER_SIZE + 1;
    struct columns one, chunked;
    struct sj_scan_state st_one, st_chunked;
    alloc_columns(&one, most);
    alloc_columns(&chunked, most);
    size_t n = scan_all(buf, len, fid, verify, most, &st_one, &one, most);
    size_t m = scan_all(buf, len, fid, verify, cap, &st_chunked, &chunked, most);

    CHECK(n == m && st_one.n == n && st_chunked.n == n);
    CHECK(st_one.n_clean == st_chunked.n_clean && st_one.clean_end == st_chunked.clean_end);
    CHECK(st_one.first_foreign == st_chunked.first_foreign);
    CHECK(strcmp(st_one.reason, st_chunked.reason) == 0);
    CHECK(memcmp(one.offsets, chunked.offsets, 8 * n) == 0);
    CHECK(memcmp(one.record_ids, chunked.record_ids, 8 * n) == 0);
    CHECK(st_one.n_clean <= n);
    uint64_t previous_end = 0;
    for (size_t i = 0; i < n; i++) {
        uint64_t at = one.offsets[i], body = one.body_lens[i];
        CHECK(at % SJ_RECORD_ALIGN == 0 && at >= previous_end);
        CHECK(at + SJ_RECORD_HEADER_SIZE + body <= len);
        CHECK(one.types[i] >= 1 && one.types[i] <= SJ_TYPE_MAX);
        CHECK(get32((const unsigned char *)buf + at + SJ_OFF_FILE_ID) == fid);
        if (verify)
            CHECK(sj_crc32c(0, buf + at + 4, SJ_RECORD_HEADER_SIZE - 4 + body) ==
                  get32((const unsigned char *)buf + at));
        previous_end = at + sj_record_size(body);
        if (i + 1 == st_one.n_clean)
            CHECK(st_one.clean_end == previous_end);
    }
    if (st_one.first_foreign >= 0)
        CHECK((uint64_t)st_one.first_foreign >= st_one.clean_end &&
              (uint64_t)st_one.first_foreign < len);
    free_columns(&one);
    free_columns(&chunked);
    free(buf);
    return 0;
}
