/* The kernel AIO system calls (no libaio), for sj_aio.c and sj_aio_alone.c. */
#ifndef SJ_AIO_SYS_H
#define SJ_AIO_SYS_H

#include <linux/aio_abi.h>
#include <sys/syscall.h>
#include <unistd.h>

static inline long sys_io_setup(unsigned nr, aio_context_t *ctx) {
    return syscall(SYS_io_setup, nr, ctx);
}
static inline long sys_io_destroy(aio_context_t ctx) { return syscall(SYS_io_destroy, ctx); }
static inline long sys_io_submit(aio_context_t ctx, long n, struct iocb **cbs) {
    return syscall(SYS_io_submit, ctx, n, cbs);
}
static inline long sys_io_getevents(aio_context_t ctx, long min_nr, long nr, struct io_event *ev) {
    return syscall(SYS_io_getevents, ctx, min_nr, nr, ev, NULL);
}

#endif
