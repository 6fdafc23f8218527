/* A record written alone (sparkjournal/journal/appender.py, append_alone), with
 * its checksum computed while its body is already on the way to the device.
 *
 * Such a record is larger than the write buffer (an Arrow batch of megabytes),
 * staged in one aligned buffer: the body in place after a header that is not
 * encoded yet. sj_alone_begin submits every block after the first straight from
 * that buffer (no copy) through a kernel AIO context of its own; the caller then
 * encodes the header and CRC-32C into the first block (the body's bytes stay as
 * they are), and sj_alone_finish writes the first block, reaps every write and
 * fdatasyncs. One write and one sync, as before, but the CPU work of the header
 * and checksum overlaps the I/O instead of preceding it.
 *
 * Contract: the caller's buffer must stay untouched beyond the first block from
 * begin until finish returns (the kernel reads it), and finish must follow
 * every successful begin (with first == NULL to abandon: it only reaps). Before
 * submitting, begin waits for every write queued on the ring (sj_aio), so log
 * order holds. A failed or short write fails the ring with its errno, like a
 * failed queued write: the journal stops, nothing acknowledged is lost.
 *
 * Crash behaviour: the blocks of one write were never ordered on the device
 * (a torn write can keep any subset of them), so submitting the first block
 * last changes nothing a reader can see: until the fdatasync returns the record
 * is not acknowledged, and a record without its header, or with a header whose
 * CRC does not match the body, is a torn tail.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/aio_abi.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "sj_aio_sys.h"
#include "sj_native.h"

#define SJ_ALONE_MAX_WRITES 32           /* iocbs per record, the first block included */
#define SJ_ALONE_MIN_CHUNK (256u << 10)  /* smaller pieces only add submission cost */

struct sj_alone {
    aio_context_t ctx;
    struct iocb cbs[SJ_ALONE_MAX_WRITES];
    int pending;                          /* writes submitted and not reaped */
    size_t align;
};

sj_alone *sj_alone_create(size_t align, int *err) {
    sj_alone *w = calloc(1, sizeof *w);
    if (!w) {
        *err = ENOMEM;
        return NULL;
    }
    w->align = align;
    if (sys_io_setup(SJ_ALONE_MAX_WRITES, &w->ctx) < 0) {
        *err = errno;
        free(w);
        return NULL;
    }
    *err = 0;
    return w;
}

static int submit(sj_alone *w, int fd, const char *data, size_t len, int64_t offset) {
    struct iocb *cb = &w->cbs[w->pending];
    memset(cb, 0, sizeof *cb);
    cb->aio_lio_opcode = IOCB_CMD_PWRITE;
    cb->aio_fildes = (uint32_t)fd;
    cb->aio_buf = (uint64_t)(uintptr_t)data;
    cb->aio_nbytes = len;
    cb->aio_offset = offset;
    cb->aio_data = len;                   /* the size a complete write returns */
    long r;
    do
        r = sys_io_submit(w->ctx, 1L, &cb);
    while (r < 0 && errno == EINTR);
    if (r != 1)
        return r < 0 ? errno : EIO;
    w->pending++;
    return 0;
}

/* Reaps every pending write; 0, or the errno of the first that failed or was short
 * (with its offset in *failed_at). */
static int reap(sj_alone *w, int64_t *failed_at) {
    struct io_event ev[SJ_ALONE_MAX_WRITES];
    int e = 0;
    while (w->pending > 0) {
        long n = sys_io_getevents(w->ctx, 1L, (long)w->pending, ev);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            return errno;                 /* the context is unusable: nothing more to reap */
        }
        for (long i = 0; i < n; i++) {
            struct iocb *cb = (struct iocb *)(uintptr_t)ev[i].obj;
            if (!e && (ev[i].res < 0 || (uint64_t)ev[i].res != ev[i].data)) {
                e = ev[i].res < 0 ? (int)-ev[i].res : EIO;
                *failed_at = (int64_t)cb->aio_offset;
            }
        }
        w->pending -= (int)n;
    }
    return e;
}

int64_t sj_alone_begin(sj_alone *w, sj_aio *ring, int fd, const char *data, size_t len,
                       int64_t offset, size_t first) {
    if (w->pending || first == 0 || first >= len || first % w->align || len % w->align ||
        offset < 0 || (size_t)offset % w->align || (uintptr_t)data % w->align)
        return -EINVAL;
    int64_t queued = sj_aio_wait(ring, INT64_MAX);
    if (queued < 0)
        return queued;
    size_t rest = len - first;
    size_t chunk = (rest + SJ_ALONE_MAX_WRITES - 2) / (SJ_ALONE_MAX_WRITES - 1);
    if (chunk < SJ_ALONE_MIN_CHUNK)
        chunk = SJ_ALONE_MIN_CHUNK;
    chunk = (chunk + w->align - 1) / w->align * w->align;
    for (size_t at = first; at < len; at += chunk) {
        size_t n = len - at < chunk ? len - at : chunk;
        int e = submit(w, fd, data + at, n, offset + (int64_t)at);
        if (e) {
            int64_t ignored;
            reap(w, &ignored);
            sj_aio_fail(ring, e, offset + (int64_t)at);
            return -e;
        }
    }
    return 0;
}

int64_t sj_alone_finish(sj_alone *w, sj_aio *ring, int fd, const char *first, size_t first_len,
                        int64_t offset, int datasync) {
    int e = 0;
    int64_t failed_at = offset;
    if (first)
        e = submit(w, fd, first, first_len, offset);
    int reaped = reap(w, &failed_at);
    if (!e)
        e = reaped;
    if (!e && first && datasync)
        return sj_fdatasync(fd);
    if (e)
        sj_aio_fail(ring, e, failed_at);
    return -e;
}

void sj_alone_destroy(sj_alone *w) {
    if (!w)
        return;
    int64_t ignored;
    reap(w, &ignored);                    /* the kernel may still read the caller's buffer */
    sys_io_destroy(w->ctx);
    free(w);
}
