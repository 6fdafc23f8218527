/* CRC-32C (Castagnoli, reflected polynomial 0x82F63B78).
 *
 * Two paths agree bit for bit: the SSE4.2 crc32 instruction (chosen at load
 * time by cpuid, compiled with a per-function target attribute so the library
 * itself runs on any x86-64), and a slicing-by-8 table fallback for other CPUs.
 *
 * The hardware path runs three independent crc streams over adjacent blocks
 * (the instruction has 3-cycle latency, 1-cycle throughput) and joins them by
 * "shifting" a crc over a run of zero bytes with a precomputed linear operator:
 * crc(A || B) = shift(crc(A), |B|) ^ crc0(B), where crc0 starts from 0.
 */
#include <string.h>
#include "sj_native.h"

#define SJ_POLY 0x82F63B78u

static uint32_t sw_table[8][256];

#if defined(__x86_64__)
#include <nmmintrin.h>
#define SJ_LONG 8192   /* bytes per stream in one 3-stream round, large inputs */
#define SJ_SHORT 256   /* bytes per stream for medium inputs */
static uint32_t shift_long[4][256];
static uint32_t shift_short[4][256];
static int use_hw;
#endif

static uint64_t load64(const unsigned char *p) { uint64_t v; memcpy(&v, p, 8); return v; }

static void init_sw_tables(void) {
    for (uint32_t b = 0; b < 256; b++) {
        uint32_t c = b;
        for (int k = 0; k < 8; k++)
            c = (c >> 1) ^ ((c & 1) ? SJ_POLY : 0);
        sw_table[0][b] = c;
    }
    for (uint32_t b = 0; b < 256; b++)
        for (int t = 1; t < 8; t++)
            sw_table[t][b] = (sw_table[t - 1][b] >> 8) ^ sw_table[0][sw_table[t - 1][b] & 0xFF];
}

/* Raw register update (no pre/post inversion). */
static uint32_t crc_sw(uint32_t crc, const unsigned char *p, size_t len) {
    while (len && ((uintptr_t)p & 7)) {
        crc = (crc >> 8) ^ sw_table[0][(crc ^ *p++) & 0xFF];
        len--;
    }
    while (len >= 8) {
        uint64_t v = load64(p) ^ crc;
        crc = sw_table[7][v & 0xFF] ^ sw_table[6][(v >> 8) & 0xFF] ^
              sw_table[5][(v >> 16) & 0xFF] ^ sw_table[4][(v >> 24) & 0xFF] ^
              sw_table[3][(v >> 32) & 0xFF] ^ sw_table[2][(v >> 40) & 0xFF] ^
              sw_table[1][(v >> 48) & 0xFF] ^ sw_table[0][v >> 56];
        p += 8;
        len -= 8;
    }
    while (len--)
        crc = (crc >> 8) ^ sw_table[0][(crc ^ *p++) & 0xFF];
    return crc;
}

#if defined(__x86_64__)
/* A linear map on 32-bit crc registers as the images of its 32 basis bits. */
static uint32_t gf2_apply(const uint32_t *mat, uint32_t v) {
    uint32_t r = 0;
    for (int i = 0; v; i++, v >>= 1)
        if (v & 1)
            r ^= mat[i];
    return r;
}

static void gf2_square(uint32_t *out, const uint32_t *mat) {
    for (int i = 0; i < 32; i++)
        out[i] = gf2_apply(mat, mat[i]);
}

/* Fills table with the operator "feed n zero bytes", split by input byte. */
static void init_shift_table(uint32_t table[4][256], size_t n) {
    uint32_t op[32], sq[32], acc[32], tmp[32];
    op[0] = SJ_POLY;                         /* one zero bit */
    for (int i = 1; i < 32; i++)
        op[i] = 1u << (i - 1);
    for (int k = 0; k < 3; k++) {            /* one zero byte = bit op ^ 8 */
        gf2_square(sq, op);
        memcpy(op, sq, sizeof op);
    }
    for (int i = 0; i < 32; i++)
        acc[i] = 1u << i;                    /* identity */
    for (; n; n >>= 1) {
        if (n & 1) {
            for (int i = 0; i < 32; i++)
                tmp[i] = gf2_apply(op, acc[i]);
            memcpy(acc, tmp, sizeof acc);
        }
        gf2_square(sq, op);
        memcpy(op, sq, sizeof op);
    }
    for (int k = 0; k < 4; k++)
        for (uint32_t b = 0; b < 256; b++)
            table[k][b] = gf2_apply(acc, b << (8 * k));
}

static inline uint32_t shift_crc(uint32_t table[4][256], uint32_t crc) {
    return table[0][crc & 0xFF] ^ table[1][(crc >> 8) & 0xFF] ^
           table[2][(crc >> 16) & 0xFF] ^ table[3][crc >> 24];
}

__attribute__((target("sse4.2")))
static uint32_t crc_hw_rounds(uint32_t crc, const unsigned char **pp, size_t *lenp,
                              size_t block, uint32_t table[4][256]) {
    const unsigned char *p = *pp;
    size_t len = *lenp;
    while (len >= 3 * block) {
        uint64_t c0 = crc, c1 = 0, c2 = 0;
        const unsigned char *end = p + block;
        do {
            c0 = _mm_crc32_u64(c0, load64(p));
            c1 = _mm_crc32_u64(c1, load64(p + block));
            c2 = _mm_crc32_u64(c2, load64(p + 2 * block));
            p += 8;
        } while (p < end);
        crc = shift_crc(table, (uint32_t)c0) ^ (uint32_t)c1;
        crc = shift_crc(table, crc) ^ (uint32_t)c2;
        p += 2 * block;
        len -= 3 * block;
    }
    *pp = p;
    *lenp = len;
    return crc;
}

__attribute__((target("sse4.2")))
static uint32_t crc_hw(uint32_t crc, const unsigned char *p, size_t len) {
    while (len && ((uintptr_t)p & 7)) {
        crc = _mm_crc32_u8(crc, *p++);
        len--;
    }
    crc = crc_hw_rounds(crc, &p, &len, SJ_LONG, shift_long);
    crc = crc_hw_rounds(crc, &p, &len, SJ_SHORT, shift_short);
    uint64_t c = crc;
    while (len >= 8) {
        c = _mm_crc32_u64(c, load64(p));
        p += 8;
        len -= 8;
    }
    crc = (uint32_t)c;
    while (len--)
        crc = _mm_crc32_u8(crc, *p++);
    return crc;
}
#endif

__attribute__((constructor))
static void sj_crc32c_init(void) {
    init_sw_tables();
#if defined(__x86_64__)
    __builtin_cpu_init();
    use_hw = __builtin_cpu_supports("sse4.2") != 0;
    init_shift_table(shift_long, SJ_LONG);
    init_shift_table(shift_short, SJ_SHORT);
#endif
}

uint32_t sj_crc32c(uint32_t crc, const char *data, size_t len) {
    const unsigned char *p = (const unsigned char *)data;
    crc = ~crc;
#if defined(__x86_64__)
    if (use_hw)
        return ~crc_hw(crc, p, len);
#endif
    return ~crc_sw(crc, p, len);
}
