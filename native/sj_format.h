/* The byte layout of sparkjournal/format/FORMAT.md for C.
 * sparkjournal/format/layout.py states the same numbers for Python;
 * tests/test_format_agreement.py checks that both produce identical bytes. */
#ifndef SJ_FORMAT_H
#define SJ_FORMAT_H

#include <stdint.h>
#include <stddef.h>

#define SJ_FORMAT_VERSION 2
#define SJ_FILE_HEADER_SIZE 4096
#define SJ_RECORD_HEADER_SIZE 40
#define SJ_RECORD_ALIGN 8

enum sj_record_type {
    SJ_ADD = 1, SJ_UPDATE = 2, SJ_DELETE = 3,
    SJ_ADD_TX = 4, SJ_UPDATE_TX = 5, SJ_DELETE_TX = 6,
    SJ_PREPARE = 7, SJ_COMMIT = 8, SJ_ROLLBACK = 9
};
#define SJ_TYPE_MAX 9
#define SJ_FLAG_LARGE 0x01
#define SJ_KNOWN_FLAGS 0x01

/* Header field offsets within a record (little-endian). */
#define SJ_OFF_CRC 0
#define SJ_OFF_TYPE 4
#define SJ_OFF_FLAGS 5
#define SJ_OFF_USER_TYPE 6
#define SJ_OFF_FILE_ID 8
#define SJ_OFF_BODY_LEN 12
#define SJ_OFF_RECORD_ID 16
#define SJ_OFF_TX_ID 24
#define SJ_OFF_COUNT 32
#define SJ_OFF_COMPACT_COUNT 36

static inline uint64_t sj_record_size(uint64_t body_len) {
    return (SJ_RECORD_HEADER_SIZE + body_len + SJ_RECORD_ALIGN - 1) & ~(uint64_t)(SJ_RECORD_ALIGN - 1);
}

#endif
