/* dnn64_dcache_bare.h - D-cache maintenance around the bare platform's DMAs (PI and SP
 * DMA bypass the VR4300's D-cache: 8 KiB, direct-mapped, 16-byte lines).
 *
 * dnn64__dcache_writeback_invalidate(p, len): afterwards RDRAM holds every byte the CPU
 * wrote to [p, p + len) and no line of it stays cached. Below 8 KiB one hit operation a
 * line of the range; from 8 KiB on one index operation a line of the cache (512, not one
 * a line of a weight tile that may span a megabyte): the lines a range can occupy are
 * among them, and writing back and dropping the others changes no memory. p: any
 * address; nothing is done outside KSEG0 (uncached addresses). */
#ifndef DNN64_DCACHE_BARE_H
#define DNN64_DCACHE_BARE_H

#include <stdint.h>

#define DNN64__DCACHE_LINE 16u
#define DNN64__DCACHE_BYTES 8192u
#define DNN64__KSEG0 0x80000000u

static inline int dnn64__is_cached(const void *p)
{
    const uintptr_t a = (uintptr_t)p;
    return a >= DNN64__KSEG0 && a < 0xA0000000u;
}

static inline void dnn64__dcache_writeback_invalidate(const void *p, uint32_t len)
{
    uintptr_t a = (uintptr_t)p & ~(uintptr_t)(DNN64__DCACHE_LINE - 1u);
    if (!dnn64__is_cached(p))
        return;
    if (len >= DNN64__DCACHE_BYTES) {
        for (a = DNN64__KSEG0; a < DNN64__KSEG0 + DNN64__DCACHE_BYTES; a += DNN64__DCACHE_LINE)
            __asm__ volatile("cache 0x01, 0(%0)" : : "r"(a) : "memory"); /* index wb-inv. */
        return;
    }
    for (; a < (uintptr_t)p + len; a += DNN64__DCACHE_LINE)
        __asm__ volatile("cache 0x15, 0(%0)" : : "r"(a) : "memory"); /* hit wb-inv. */
}

#endif /* DNN64_DCACHE_BARE_H */
