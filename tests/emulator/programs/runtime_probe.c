/* runtime_probe.c - the bare runtime's libgcc and libc replacements.
 * Reads pairs of big-endian u64 (n, d) from asset "pairs" and prints
 * quotients and remainders; then exercises memcpy/memmove/memset/memcmp. */
#include "dnn64_platform.h"

#include <string.h>

static uint8_t DNN64_ALIGNED(raw[16 * 64]);
static uint8_t DNN64_ALIGNED(mem[256]);

static uint64_t be64(const uint8_t *p)
{
    uint64_t v = 0;
    uint32_t i;
    for (i = 0; i < 8u; i++)
        v = (v << 8) | p[i];
    return v;
}

static uint32_t fnv1a(const uint8_t *p, uint32_t n)
{
    uint32_t h = 2166136261u, i;
    for (i = 0; i < n; i++)
        h = (h ^ p[i]) * 16777619u;
    return h;
}

int main(void)
{
    dnn64_asset pairs;
    uint32_t i, count;
    dnn64_line line;

    dnn64_platform_init();
    pairs = dnn64_asset_get("pairs");
    count = pairs.size / 16u;
    dnn64_asset_read(raw, pairs.offset, pairs.size);
    for (i = 0; i < count; i++) {
        uint64_t n = be64(raw + 16u * i), d = be64(raw + 16u * i + 8u);
        int64_t sn = (int64_t)n, sd = (int64_t)d;
        dnn64_line_begin(&line, "div");
        dnn64_line_u32(&line, i);
        dnn64_line_u64(&line, n / d);
        dnn64_line_u64(&line, n % d);
        dnn64_line_u64(&line, (uint64_t)(sn / sd));
        dnn64_line_u64(&line, (uint64_t)(sn % sd));
        dnn64_line_u32(&line, (uint32_t)__builtin_clz((uint32_t)d | 1u));
        dnn64_line_u32(&line, (uint32_t)__builtin_ctz((uint32_t)n | 0x80000000u));
        dnn64_line_end(&line);
    }

    for (i = 0; i < 256u; i++)
        mem[i] = (uint8_t)(i * 7u + 3u);
    memmove(mem + 5, mem + 1, 100);   /* overlapping, forwards */
    memmove(mem + 130, mem + 133, 90); /* overlapping, backwards */
    memset(mem + 17, 0xA5, 33);
    memcpy(mem + 201, mem + 3, 41);
    dnn64_line_begin(&line, "mem");
    dnn64_line_hex32(&line, fnv1a(mem, 256));
    dnn64_line_i32(&line, memcmp(mem, mem + 1, 10) < 0 ? -1 : 1);
    dnn64_line_i32(&line, memcmp(mem + 17, mem + 18, 20));
    dnn64_line_end(&line);
    dnn64_done();
    return 0;
}
