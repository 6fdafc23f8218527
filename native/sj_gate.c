/* The commit gate: where appending threads wait for a group-commit flush.
 *
 * Waiting in C (cffi drops the GIL for the call) lets many threads sleep and wake
 * without each wake-up running Python code under the GIL, which is what bounds
 * group commit in pure Python. The gate only counts finished flushes: a thread
 * reads the generation under the appender's lock, drops that lock, and waits
 * until the generation moves on; a flush that finished in between is never
 * missed because the generation already differs.
 *
 * The gate also carries the durable mark: the sequence number of the last
 * append a finished sync covered. A follower that only needs its own append
 * durable waits for the mark (sj_gate_wait_durable) and returns straight from C
 * when it is reached, without taking the appender's lock again; it goes back to
 * Python only when a flush ended without covering it (it may have to lead the
 * next one) or the journal failed or closed (the generation moved). The mark
 * only ever rises, and only after the sync covering it returned. */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include "sj_native.h"

struct sj_gate {
    pthread_mutex_t mutex;
    pthread_cond_t moved;
    uint64_t generation;
    uint64_t durable;
};

sj_gate *sj_gate_create(void) {
    sj_gate *gate = calloc(1, sizeof *gate);
    if (gate == NULL) return NULL;
    pthread_mutex_init(&gate->mutex, NULL);
    pthread_cond_init(&gate->moved, NULL);
    return gate;
}

uint64_t sj_gate_generation(sj_gate *gate) {
    pthread_mutex_lock(&gate->mutex);
    uint64_t generation = gate->generation;
    pthread_mutex_unlock(&gate->mutex);
    return generation;
}

void sj_gate_advance_durable(sj_gate *gate, uint64_t durable) {
    pthread_mutex_lock(&gate->mutex);
    if (durable > gate->durable)
        gate->durable = durable;
    gate->generation++;
    pthread_cond_broadcast(&gate->moved);
    pthread_mutex_unlock(&gate->mutex);
}

uint64_t sj_gate_wait_durable(sj_gate *gate, uint64_t seq, uint64_t seen) {
    pthread_mutex_lock(&gate->mutex);
    while (gate->durable < seq && gate->generation == seen)
        pthread_cond_wait(&gate->moved, &gate->mutex);
    uint64_t durable = gate->durable;
    pthread_mutex_unlock(&gate->mutex);
    return durable;
}

uint64_t sj_gate_wait(sj_gate *gate, uint64_t seen) {
    pthread_mutex_lock(&gate->mutex);
    while (gate->generation == seen)
        pthread_cond_wait(&gate->moved, &gate->mutex);
    uint64_t generation = gate->generation;
    pthread_mutex_unlock(&gate->mutex);
    return generation;
}

void sj_gate_destroy(sj_gate *gate) {
    if (gate == NULL) return;
    pthread_cond_destroy(&gate->moved);
    pthread_mutex_destroy(&gate->mutex);
    free(gate);
}
