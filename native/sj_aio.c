/* Kernel AIO writer through raw syscalls (no libaio), and fdatasync.
 *
 * Contract: sj_aio_write copies the caller's bytes into a reused aligned buffer
 * before it returns, so the caller may reuse its buffer at once. Writes are
 * numbered 1, 2, ... in submit order and accounted complete in that order
 * (a write that finishes early waits for its predecessors), so "seq completed"
 * means every write up to seq reached the device's cache; only a following
 * fdatasync makes them durable. After a failed or short write every call
 * returns the same -errno: nothing later is reported as written.
 *
 * Threads: one mutex guards the state; at most one thread at a time blocks in
 * io_getevents (the "reaper"), the others wait on a condition variable, so a
 * completion can never be taken by a thread that does not account it.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/aio_abi.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include "sj_aio_sys.h"
#include "sj_native.h"

#define SJ_EVENTS_PER_REAP 64

struct sj_slot {
    struct iocb cb;
    char *buf;
    size_t expect;      /* bytes submitted */
    int64_t res;        /* kernel result once done */
    int done;
};

struct sj_aio {
    aio_context_t ctx;
    unsigned max_io;
    size_t max_write, align;
    struct sj_slot *slots;       /* ring: write seq uses slots[(seq - 1) % max_io] */
    int64_t submitted;           /* highest seq submitted */
    int64_t completed;           /* every seq <= completed is done */
    int64_t max_seen;            /* most writes in flight at once */
    int error;                   /* first failure, 0 while healthy */
    int64_t error_offset;        /* file offset of the write that failed, -1 if none */
    int reaping;                 /* a thread is inside io_getevents */
    pthread_mutex_t lock;
    pthread_cond_t reaped;
};

static struct sj_slot *slot_of(sj_aio *a, int64_t seq) { return &a->slots[(seq - 1) % a->max_io]; }

sj_aio *sj_aio_create(unsigned max_io, size_t max_write, size_t align, int *err) {
    *err = EINVAL;
    if (max_io == 0 || align == 0 || (align & (align - 1)) || max_write == 0)
        return NULL;
    max_write = (max_write + align - 1) / align * align;
    sj_aio *a = calloc(1, sizeof *a);
    if (!a || !(a->slots = calloc(max_io, sizeof *a->slots))) {
        free(a);
        *err = ENOMEM;
        return NULL;
    }
    a->max_io = max_io;
    a->error_offset = -1;
    a->max_write = max_write;
    a->align = align;
    for (unsigned i = 0; i < max_io; i++) {
        void *p = NULL;
        size_t page_align = align < 4096 ? 4096 : align;
        if ((*err = posix_memalign(&p, page_align, max_write)) != 0) {
            sj_aio_destroy(a);
            return NULL;
        }
        memset(p, 0, max_write);     /* touch every page now, not on the write path */
        a->slots[i].buf = p;
    }
    if (sys_io_setup(max_io, &a->ctx) < 0) {
        *err = errno;
        a->ctx = 0;
        sj_aio_destroy(a);
        return NULL;
    }
    pthread_mutex_init(&a->lock, NULL);
    pthread_cond_init(&a->reaped, NULL);
    *err = 0;
    return a;
}

/* Accounts finished events; advances `completed` over the in-order prefix. */
static void account(sj_aio *a, struct io_event *ev, long n) {
    for (long i = 0; i < n; i++) {
        struct sj_slot *s = (struct sj_slot *)(uintptr_t)ev[i].data;
        s->res = ev[i].res;
        s->done = 1;
    }
    while (a->completed < a->submitted) {
        struct sj_slot *s = slot_of(a, a->completed + 1);
        if (!s->done)
            break;
        if (!a->error && (s->res < 0 || (size_t)s->res != s->expect)) {
            a->error = s->res < 0 ? (int)-s->res : EIO;
            a->error_offset = (int64_t)s->cb.aio_offset;
        }
        s->done = 0;
        a->completed++;
    }
}

/* With the lock held: blocks until `completed` reaches seq or an error is seen. */
static void wait_until(sj_aio *a, int64_t seq) {
    struct io_event ev[SJ_EVENTS_PER_REAP];
    while (a->completed < seq && !a->error) {
        if (a->reaping) {
            pthread_cond_wait(&a->reaped, &a->lock);
            continue;
        }
        a->reaping = 1;
        pthread_mutex_unlock(&a->lock);
        long n = sys_io_getevents(a->ctx, 1, SJ_EVENTS_PER_REAP, ev);
        int saved = errno;
        pthread_mutex_lock(&a->lock);
        a->reaping = 0;
        if (n > 0)
            account(a, ev, n);
        else if (n < 0 && saved != EINTR && !a->error)
            a->error = saved;
        pthread_cond_broadcast(&a->reaped);
    }
}

int64_t sj_aio_write(sj_aio *a, int fd, const char *data, size_t len, int64_t offset) {
    if (len == 0 || len > a->max_write || offset < 0 || (size_t)offset % a->align)
        return -EINVAL;
    pthread_mutex_lock(&a->lock);
    int64_t seq = a->submitted + 1;
    wait_until(a, seq - (int64_t)a->max_io);     /* the slot's previous write is done */
    if (a->error) {
        int e = a->error;
        pthread_mutex_unlock(&a->lock);
        return -e;
    }
    struct sj_slot *s = slot_of(a, seq);
    size_t padded = (len + a->align - 1) / a->align * a->align;
    memcpy(s->buf, data, len);
    if (padded > len)
        memset(s->buf + len, 0, padded - len);
    memset(&s->cb, 0, sizeof s->cb);
    s->cb.aio_data = (uint64_t)(uintptr_t)s;
    s->cb.aio_lio_opcode = IOCB_CMD_PWRITE;
    s->cb.aio_fildes = (uint32_t)fd;
    s->cb.aio_buf = (uint64_t)(uintptr_t)s->buf;
    s->cb.aio_nbytes = padded;
    s->cb.aio_offset = offset;
    s->expect = padded;
    s->done = 0;
    struct iocb *cbp = &s->cb;
    long r;
    do
        r = sys_io_submit(a->ctx, 1, &cbp);
    while (r < 0 && errno == EINTR);
    if (r != 1) {
        int e = r < 0 ? errno : EIO;
        pthread_mutex_unlock(&a->lock);
        return -e;                   /* not submitted: the writer stays usable */
    }
    a->submitted = seq;
    if (a->submitted - a->completed > a->max_seen)
        a->max_seen = a->submitted - a->completed;
    pthread_mutex_unlock(&a->lock);
    return seq;
}

int64_t sj_aio_wait(sj_aio *a, int64_t seq) {
    pthread_mutex_lock(&a->lock);
    if (seq > a->submitted)
        seq = a->submitted;
    wait_until(a, seq);
    int64_t r = a->error ? -(int64_t)a->error : a->completed;
    pthread_mutex_unlock(&a->lock);
    return r;
}

/* The single-writer commit in one call (one GIL release): waits until every
 * queued write completed, then writes the caller's aligned buffer synchronously
 * with pwrite on the O_DIRECT descriptor (no copy, no completion to reap) and,
 * if datasync, fdatasyncs. The caller serializes this with its own writes to
 * the context (the appender's one flush at a time). A failed or short pwrite
 * poisons the context like a failed queued write. */
int64_t sj_aio_write_sync(sj_aio *a, int fd, const char *data, size_t len, int64_t offset,
                          int datasync) {
    if (len == 0 || offset < 0 || (size_t)offset % a->align || len % a->align ||
        (uintptr_t)data % a->align)
        return 1;
    pthread_mutex_lock(&a->lock);
    wait_until(a, a->submitted);
    int e = a->error;
    pthread_mutex_unlock(&a->lock);
    if (e)
        return -e;
    size_t done = 0;
    while (done < len) {
        ssize_t n = pwrite(fd, data + done, len - done, offset + (off_t)done);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            e = n < 0 ? errno : ENOSPC;    /* a zero-length write: no space */
            pthread_mutex_lock(&a->lock);
            if (!a->error) {
                a->error = e;
                a->error_offset = offset + (int64_t)done;
            }
            pthread_mutex_unlock(&a->lock);
            return -e;
        }
        done += (size_t)n;
    }
    return datasync ? sj_fdatasync(fd) : 0;
}

int64_t sj_aio_max_seen(sj_aio *a) { return a->max_seen; }

int64_t sj_aio_error_offset(sj_aio *a) {
    pthread_mutex_lock(&a->lock);
    int64_t offset = a->error_offset;
    pthread_mutex_unlock(&a->lock);
    return offset;
}

void sj_aio_destroy(sj_aio *a) {
    if (!a)
        return;
    if (a->ctx) {
        /* drain: the kernel may still DMA into the buffers */
        struct io_event ev[SJ_EVENTS_PER_REAP];
        pthread_mutex_lock(&a->lock);
        while (a->completed < a->submitted) {
            long n = sys_io_getevents(a->ctx, 1, SJ_EVENTS_PER_REAP, ev);
            if (n < 0 && errno != EINTR)
                break;
            if (n > 0)
                account(a, ev, n);
        }
        pthread_mutex_unlock(&a->lock);
        sys_io_destroy(a->ctx);
        pthread_mutex_destroy(&a->lock);
        pthread_cond_destroy(&a->reaped);
    }
    for (unsigned i = 0; i < a->max_io; i++)
        free(a->slots[i].buf);
    free(a->slots);
    free(a);
}

void sj_aio_fail(sj_aio *a, int err, int64_t offset) {
    pthread_mutex_lock(&a->lock);
    if (!a->error) {
        a->error = err ? err : EIO;
        a->error_offset = offset;
    }
    pthread_mutex_unlock(&a->lock);
}

int sj_fdatasync(int fd) {
    int r;
    do
        r = fdatasync(fd);
    while (r < 0 && errno == EINTR);
    return r < 0 ? -errno : 0;
}
