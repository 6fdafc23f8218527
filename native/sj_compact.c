/* Compaction's plan: the loader's replay (journal/loader.py replay, journal/
 * state.py) restricted to what a compaction needs, in C, so planning a lane
 * costs no Python per record. maintenance/compaction_plan.py holds the rule it
 * implements and the Python path it must agree with (tests/test_compaction_plan.py).
 *
 * Two open-addressing tables: record id -> index of its current version (-1
 * once deleted), tx id -> the transaction (its records chained through
 * tx_next). Both are sized from n up front; nothing is read outside the
 * caller's arrays, and everything allocated is freed before returning.
 */
#include <stdlib.h>
#include <string.h>
#include "sj_format.h"
#include "sj_native.h"

#define EMPTY (-2)
#define NONE ((uint64_t)-1)

struct tx {
    uint64_t tx_id;
    int64_t head, tail;      /* its records, chained through tx_next; -1 none */
    uint64_t last_file;      /* the file of its latest record (NONE: none yet) */
    uint32_t in_last_file;   /* its records in that file (records come file by file) */
    uint64_t prepare_file;   /* NONE while not prepared */
    int used, open;
};

struct tables {
    size_t mask;
    uint64_t *rec_keys;
    int64_t *rec_vals;       /* EMPTY, -1 deleted, else the live version's index */
    struct tx *txs;
    int64_t *tx_next;
};

static inline size_t mix(uint64_t x) {
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdULL;
    x ^= x >> 33;
    return (size_t)x;
}

static int64_t *rec_slot(struct tables *t, uint64_t rid) {
    size_t i = mix(rid) & t->mask;
    while (t->rec_vals[i] != EMPTY && t->rec_keys[i] != rid)
        i = (i + 1) & t->mask;
    if (t->rec_vals[i] == EMPTY) {
        t->rec_keys[i] = rid;
        t->rec_vals[i] = -1;
    }
    return &t->rec_vals[i];
}

/* The tx's slot; a tx that ended (or never began) is begun afresh when create. */
static struct tx *tx_slot(struct tables *t, uint64_t tx_id, int create, uint64_t *max_tx) {
    size_t i = mix(tx_id) & t->mask;
    while (t->txs[i].used && t->txs[i].tx_id != tx_id)
        i = (i + 1) & t->mask;
    struct tx *tx = &t->txs[i];
    if (tx->used && tx->open)
        return tx;
    if (!create)
        return NULL;
    tx->used = 1;
    tx->open = 1;
    tx->tx_id = tx_id;
    tx->head = tx->tail = -1;
    tx->last_file = tx->prepare_file = NONE;
    tx->in_last_file = 0;
    if (tx_id > *max_tx)
        *max_tx = tx_id;
    return tx;
}

static void commit(struct tables *t, struct tx *tx, const uint8_t *types, const uint64_t *record_ids) {
    for (int64_t j = tx->head; j >= 0; j = t->tx_next[j])
        *rec_slot(t, record_ids[j]) = types[j] == SJ_DELETE_TX ? -1 : j;
}

int64_t sj_compact_plan(size_t n_files, const uint64_t *file_starts, const uint8_t *types,
                        const uint64_t *record_ids, const uint64_t *tx_ids,
                        const uint32_t *counts, uint8_t *out_types, uint64_t *maxima,
                        uint64_t *bad) {
    size_t n = n_files ? (size_t)file_starts[n_files] : 0;
    size_t cap = 16;
    while (cap < 2 * n + 16)
        cap <<= 1;
    struct tables t = {cap - 1, malloc(cap * sizeof(uint64_t)), malloc(cap * sizeof(int64_t)),
                       calloc(cap, sizeof(struct tx)), malloc((n + 1) * sizeof(int64_t))};
    int64_t result = 0;
    uint64_t max_record = 0, max_tx = 0;
    if (!t.rec_keys || !t.rec_vals || !t.txs || !t.tx_next) {
        result = -1;
        goto out;
    }
    for (size_t i = 0; i < cap; i++)
        t.rec_vals[i] = EMPTY;
    for (size_t f = 0; f < n_files && result == 0; f++) {
        for (size_t i = (size_t)file_starts[f]; i < (size_t)file_starts[f + 1]; i++) {
            uint8_t type = types[i];
            uint64_t rid = record_ids[i];
            if (type == SJ_ADD || type == SJ_UPDATE) {
                *rec_slot(&t, rid) = (int64_t)i;
                if (rid > max_record)
                    max_record = rid;
            } else if (type == SJ_DELETE) {
                *rec_slot(&t, rid) = -1;
            } else if (type <= SJ_DELETE_TX) {
                struct tx *tx = tx_slot(&t, tx_ids[i], 1, &max_tx);
                if (tx->prepare_file != NONE) {
                    result = 1;
                    *bad = i;
                    break;
                }
                t.tx_next[i] = -1;
                if (tx->tail >= 0)
                    t.tx_next[tx->tail] = (int64_t)i;
                else
                    tx->head = (int64_t)i;
                tx->tail = (int64_t)i;
                tx->in_last_file = tx->last_file == f ? tx->in_last_file + 1 : 1;
                tx->last_file = f;
                if (rid > max_record)
                    max_record = rid;
            } else if (type == SJ_PREPARE) {
                struct tx *tx = tx_slot(&t, tx_ids[i], 1, &max_tx);
                if (tx->prepare_file != NONE) {
                    result = 2;
                    *bad = i;
                    break;
                }
                tx->prepare_file = f;
            } else {
                struct tx *tx = tx_slot(&t, tx_ids[i], 0, &max_tx);
                if (tx == NULL)
                    continue;                 /* an outcome of no open tx changes nothing */
                uint32_t in_file = tx->last_file == f ? tx->in_last_file : 0;
                if (type == SJ_COMMIT && in_file == counts[i])
                    commit(&t, tx, types, record_ids);
                tx->open = 0;                 /* committed, or rolled back (a broken COMMIT too) */
            }
        }
    }
    if (result != 0)
        goto out;
    for (size_t f = 0; f < n_files; f++) {
        for (size_t i = (size_t)file_starts[f]; i < (size_t)file_starts[f + 1]; i++) {
            uint8_t type = types[i], keep = 0;
            struct tx *tx = type >= SJ_ADD_TX && type <= SJ_PREPARE ?
                tx_slot(&t, tx_ids[i], 0, &max_tx) : NULL;
            if (type >= SJ_ADD_TX && type <= SJ_DELETE_TX && tx != NULL)
                keep = type;
            else if (type == SJ_PREPARE)
                keep = tx != NULL && tx->prepare_file == f ? SJ_PREPARE : 0;
            else if (type != SJ_DELETE && type != SJ_DELETE_TX && type < SJ_PREPARE &&
                     *rec_slot(&t, record_ids[i]) == (int64_t)i)
                keep = SJ_ADD;
            out_types[i] = keep;
        }
    }
    maxima[0] = max_record;
    maxima[1] = max_tx;
out:
    free(t.rec_keys);
    free(t.rec_vals);
    free(t.txs);
    free(t.tx_next);
    return result;
}
