/* The benchmarks' floors: what the disk and a minimal group commit can do,
 * with nothing of the journal in them. Built as their own extension,
 * sparkjournal.tools.bench._sjfloors (native/build_native.py), never into
 * the core (sparkjournal._sjnative) that writers and Spark workers load.
 *
 * The block between SJ-CDEF-BEGIN and SJ-CDEF-END is handed verbatim to cffi's
 * cdef, so it may hold only plain declarations. Every function here is safe
 * to call with the GIL released (cffi API mode releases it).
 */
#ifndef SJ_FLOORS_H
#define SJ_FLOORS_H

#include <stdint.h>
#include <stddef.h>

/* SJ-CDEF-BEGIN */
/* The raw limit (sj_rawloop.c): an existing zero-filled file at path is
 * written bytes_per_write at a time at increasing offsets (wrapping to 0 at
 * its end), each write followed by fdatasync. use_odirect writes from an
 * aligned buffer through O_DIRECT. Returns writes done or -errno;
 * *seconds_out gets the elapsed wall time. */
int64_t sj_raw_sync_loop(const char *path, size_t bytes_per_write, size_t writes,
                         int use_odirect, double *seconds_out);
/* The group-commit floor (sj_group_floor.c): callers' bytes are copied into a
 * shared buffer that a flusher thread writes (O_DIRECT, from offset 0 of an
 * existing zero-filled file of at least capacity bytes, wrapping) and
 * fdatasyncs, with 1-4 flusher threads (so syncs in flight); commit returns
 * once a sync covered them: the caller's sequence number, or -errno. syncs
 * counts the syncs done so far. Not the journal. */
typedef struct sj_group_floor sj_group_floor;
sj_group_floor *sj_group_floor_open(const char *path, size_t capacity, size_t align,
                                    int flushers, int *err);
int64_t sj_group_floor_commit(sj_group_floor *g, const char *data, size_t len);
int64_t sj_group_floor_syncs(sj_group_floor *g);
void sj_group_floor_close(sj_group_floor *g);
/* SJ-CDEF-END */

#endif
