/* The benchmark's baseline: the disk's raw durable-write loop (O_DIRECT pwrite of
 * a reused aligned buffer + fdatasync), in C so that no interpreter cost is in it.
 * It shares nothing with the journal's write path. Writes of 2 MiB and more come
 * from transparent huge pages, as the journal's own buffers of that size do: an
 * O_DIRECT write pins each source page, and a baseline on 4 KiB pages would be
 * no floor for them. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/mman.h>
#include <unistd.h>
#include "sj_floors.h"

static double now_seconds(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

int64_t sj_raw_sync_loop(const char *path, size_t bytes_per_write, size_t writes,
                         int use_odirect, double *seconds_out) {
    *seconds_out = 0;
    if (bytes_per_write == 0)
        return -EINVAL;
    int fd = open(path, O_RDWR | (use_odirect ? O_DIRECT : 0));
    if (fd < 0)
        return -errno;
    off_t size = lseek(fd, 0, SEEK_END);
    void *buf = NULL;
    int64_t result = 0;
    if (size < (off_t)bytes_per_write) {
        close(fd);
        return -EINVAL;
    }
    size_t huge = (size_t)2 << 20;
    int on_huge_pages = bytes_per_write >= huge;
    size_t allocated = on_huge_pages ? (bytes_per_write + huge - 1) / huge * huge : bytes_per_write;
    if (posix_memalign(&buf, on_huge_pages ? huge : 4096, allocated)) {
        close(fd);
        return -ENOMEM;
    }
    if (on_huge_pages)
        (void)madvise(buf, allocated, MADV_HUGEPAGE);   /* refused: 4 KiB pages, still correct */
    memset(buf, 0, bytes_per_write);
    off_t offset = 0;
    double t0 = now_seconds();
    for (size_t i = 0; i < writes; i++) {
        if (offset + (off_t)bytes_per_write > size)
            offset = 0;
        if (pwrite(fd, buf, bytes_per_write, offset) != (ssize_t)bytes_per_write) {
            result = errno ? -errno : -EIO;
            break;
        }
        offset += (off_t)bytes_per_write;
        if (fdatasync(fd) < 0) {
            result = -errno;
            break;
        }
        result = (int64_t)(i + 1);
    }
    *seconds_out = now_seconds() - t0;
    free(buf);
    close(fd);
    return result;
}
