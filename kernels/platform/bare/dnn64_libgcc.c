/* dnn64_libgcc.c - the libgcc helpers a -march=vr4300 -mabi=32 program needs.
 *
 * Debian's mips-linux-gnu libgcc.a is built for MIPS32r2 and uses `mul` and
 * `clz`, which the VR4300 (MIPS III) does not have, so it is NOT linked; these
 * plain-C versions (restoring shift-subtract division) replace it. */
#include <stdint.h>

uint64_t __udivdi3(uint64_t n, uint64_t d);
uint64_t __umoddi3(uint64_t n, uint64_t d);
int64_t __divdi3(int64_t n, int64_t d);
int64_t __moddi3(int64_t n, int64_t d);
int __clzsi2(uint32_t x);
int __ctzsi2(uint32_t x);

/* Quotient of n / d, remainder in *rem. d == 0 gives quotient ~0, rem n. */
static uint64_t udivmod64(uint64_t n, uint64_t d, uint64_t *rem)
{
    uint64_t q = 0;
    uint64_t r = 0;
    int bit;
    if (d == 0) {
        *rem = n;
        return ~(uint64_t)0;
    }
    if ((n >> 32) == 0 && (d >> 32) == 0) { /* 32-bit divu suffices */
        uint32_t n32 = (uint32_t)n, d32 = (uint32_t)d;
        *rem = n32 % d32;
        return n32 / d32;
    }
    for (bit = 63; bit >= 0; bit--) {
        r = (r << 1) | ((n >> bit) & 1u);
        if (r >= d) {
            r -= d;
            q |= (uint64_t)1 << bit;
        }
    }
    *rem = r;
    return q;
}

uint64_t __udivdi3(uint64_t n, uint64_t d)
{
    uint64_t r;
    return udivmod64(n, d, &r);
}

uint64_t __umoddi3(uint64_t n, uint64_t d)
{
    uint64_t r;
    (void)udivmod64(n, d, &r);
    return r;
}

static uint64_t magnitude(int64_t v)
{
    return v < 0 ? 0u - (uint64_t)v : (uint64_t)v;
}

int64_t __divdi3(int64_t n, int64_t d)
{
    uint64_t r;
    uint64_t q = udivmod64(magnitude(n), magnitude(d), &r);
    return (int64_t)(((n < 0) != (d < 0)) ? 0u - q : q);
}

int64_t __moddi3(int64_t n, int64_t d)
{
    uint64_t r;
    (void)udivmod64(magnitude(n), magnitude(d), &r);
    return (int64_t)(n < 0 ? 0u - r : r);
}

int __clzsi2(uint32_t x)
{
    int n = 0;
    if (x == 0)
        return 32;
    while ((x & 0x80000000u) == 0) {
        x <<= 1;
        n++;
    }
    return n;
}

int __ctzsi2(uint32_t x)
{
    int n = 0;
    if (x == 0)
        return 32;
    while ((x & 1u) == 0) {
        x >>= 1;
        n++;
    }
    return n;
}
