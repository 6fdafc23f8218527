/* The benchmark's group-commit floor: the least a group commit fed by Python
 * threads can cost, with nothing of the journal in it (no records, no state,
 * no Python after the call). Each caller copies its bytes into one shared
 * aligned buffer and sleeps, without the GIL (cffi drops it for the call),
 * until a flusher thread has written (O_DIRECT pwrite, padded to the
 * alignment) and fdatasync'ed a buffer holding them. A free flusher takes the
 * buffer as soon as anything is in it, so writes and the callers' Python
 * overlap completely; with several flushers, syncs overlap too (a buffer's
 * callers are released only when every earlier buffer's sync returned). It shares nothing
 * with the journal's write path; a failed write or sync fails every later
 * commit with its -errno. Not for data anyone keeps: it overwrites the file
 * from offset 0 and wraps around at its end. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "sj_floors.h"

#define SJ_FLOOR_MAX_FLUSHERS 4

struct sj_group_floor {
    pthread_mutex_t mutex;
    pthread_cond_t work, durable_moved;
    pthread_t flushers[SJ_FLOOR_MAX_FLUSHERS];
    int nflushers, fd, closing, error;
    size_t capacity, align, fill;
    char *buffers[SJ_FLOOR_MAX_FLUSHERS + 1];  /* one being filled, one per flusher */
    int current;
    off_t offset, size;
    uint64_t appended, durable, syncs, next_ticket, done_ticket;
};

/* With the mutex held and data in the current buffer: writes and syncs it with
 * the mutex released while callers fill the next buffer, then waits for the
 * syncs of earlier buffers before marking its callers durable. */
static void flush_current(sj_group_floor *g) {
    char *data = g->buffers[g->current];
    size_t length = (g->fill + g->align - 1) / g->align * g->align;
    uint64_t upto = g->appended;
    memset(data + g->fill, 0, length - g->fill);
    if (g->offset + (off_t)length > g->size)
        g->offset = 0;
    off_t at = g->offset;
    g->offset += (off_t)length;
    g->current = (g->current + 1) % (g->nflushers + 1);
    g->fill = 0;
    uint64_t ticket = g->next_ticket++;
    pthread_mutex_unlock(&g->mutex);
    int err = 0;
    ssize_t wrote = pwrite(g->fd, data, length, at);
    if (wrote != (ssize_t)length)
        err = wrote < 0 ? errno : EIO;             /* a short write: no space */
    else if (fdatasync(g->fd) < 0)
        err = errno;
    pthread_mutex_lock(&g->mutex);
    while (g->done_ticket != ticket)
        pthread_cond_wait(&g->durable_moved, &g->mutex);
    g->done_ticket++;
    if (err && !g->error)
        g->error = err;
    g->durable = upto;
    g->syncs++;
    pthread_cond_broadcast(&g->durable_moved);
}

static void *flusher_main(void *arg) {
    sj_group_floor *g = arg;
    pthread_mutex_lock(&g->mutex);
    while (!g->closing || g->fill) {
        if (g->fill)
            flush_current(g);
        else
            pthread_cond_wait(&g->work, &g->mutex);
    }
    pthread_mutex_unlock(&g->mutex);
    return NULL;
}

static void release(sj_group_floor *g) {
    for (int i = 0; i <= SJ_FLOOR_MAX_FLUSHERS; i++)
        free(g->buffers[i]);
    if (g->fd >= 0)
        close(g->fd);
    free(g);
}

sj_group_floor *sj_group_floor_open(const char *path, size_t capacity, size_t align,
                                    int flushers, int *err) {
    sj_group_floor *g = calloc(1, sizeof *g);
    *err = 0;
    if (g == NULL || align == 0 || capacity % align || flushers < 1 ||
        flushers > SJ_FLOOR_MAX_FLUSHERS) {
        *err = g ? EINVAL : ENOMEM;
        free(g);
        return NULL;
    }
    g->fd = open(path, O_RDWR | O_DIRECT | O_CLOEXEC);
    if (g->fd < 0) {
        *err = errno;
        release(g);
        return NULL;
    }
    g->size = lseek(g->fd, 0, SEEK_END);
    g->capacity = capacity;
    g->align = align;
    g->nflushers = flushers;
    if (g->size < (off_t)capacity) {
        *err = EINVAL;
        release(g);
        return NULL;
    }
    for (int i = 0; i <= flushers; i++) {
        if (posix_memalign((void **)&g->buffers[i], 4096, capacity)) {
            g->buffers[i] = NULL;
            *err = ENOMEM;
            release(g);
            return NULL;
        }
    }
    pthread_mutex_init(&g->mutex, NULL);
    pthread_cond_init(&g->work, NULL);
    pthread_cond_init(&g->durable_moved, NULL);
    for (int i = 0; i < flushers; i++) {
        if ((*err = pthread_create(&g->flushers[i], NULL, flusher_main, g)) != 0) {
            g->nflushers = i;          /* the started ones are joined by close */
            sj_group_floor_close(g);
            return NULL;
        }
    }
    return g;
}

int64_t sj_group_floor_commit(sj_group_floor *g, const char *data, size_t len) {
    if (len == 0 || len > g->capacity)
        return -EINVAL;
    pthread_mutex_lock(&g->mutex);
    while (g->fill + len > g->capacity && !g->error)     /* full: wait until a flusher takes it */
        pthread_cond_wait(&g->durable_moved, &g->mutex);
    if (!g->error) {
        memcpy(g->buffers[g->current] + g->fill, data, len);
        g->fill += len;
    }
    uint64_t mine = ++g->appended;
    pthread_cond_signal(&g->work);
    while (g->durable < mine && !g->error)
        pthread_cond_wait(&g->durable_moved, &g->mutex);
    int64_t result = g->error ? -(int64_t)g->error : (int64_t)mine;
    pthread_mutex_unlock(&g->mutex);
    return result;
}

int64_t sj_group_floor_syncs(sj_group_floor *g) {
    pthread_mutex_lock(&g->mutex);
    int64_t syncs = (int64_t)g->syncs;
    pthread_mutex_unlock(&g->mutex);
    return syncs;
}

void sj_group_floor_close(sj_group_floor *g) {
    if (g == NULL)
        return;
    pthread_mutex_lock(&g->mutex);
    g->closing = 1;
    pthread_cond_broadcast(&g->work);
    pthread_mutex_unlock(&g->mutex);
    for (int i = 0; i < g->nflushers; i++)
        pthread_join(g->flushers[i], NULL);
    pthread_cond_destroy(&g->work);
    pthread_cond_destroy(&g->durable_moved);
    pthread_mutex_destroy(&g->mutex);
    release(g);
}
