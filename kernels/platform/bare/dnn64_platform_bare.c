/* dnn64_platform_bare.c - the platform layer on an N64 without any SDK.
 *
 * Cartridge reads by PI DMA, text out through the IS-Viewer window, time from
 * CP0 Count, failures reported by a catch-all exception vector.
 * Addresses and registers: /work/shared/N64-NOTES.md, docs/rom-format.md. */
#include "dnn64_platform.h"
#include "dnn64_dcache_bare.h"

#include <stddef.h>

#define REG32(addr) (*(volatile uint32_t *)(uintptr_t)(addr))

/* Peripheral interface (PI): cartridge DMA. */
#define PI_DRAM_ADDR REG32(0xA4600000u)
#define PI_CART_ADDR REG32(0xA4600004u)
#define PI_WR_LEN REG32(0xA460000Cu)      /* cart -> RDRAM, length - 1; starts DMA */
#define PI_STATUS REG32(0xA4600010u)
#define PI_STATUS_BUSY 3u                 /* DMA busy | IO busy */
#define PI_STATUS_CLEAR_INTR 2u
#define CART_PHYS 0x10000000u
/* The most one PI DMA moves: PI_WR_LEN holds length - 1 in bits 0-23 (cen64 and
 * mupen64plus read it as (value & 0xFFFFFF) + 1; libdragon's dma_read_raw_async writes
 * any length there in one go). More than RDRAM, so a weight tile is one transfer. */
#define PI_DMA_MAX 0x1000000u

/* IS-Viewer: text as big-endian words at +0x20, then its length at +0x14. */
#define ISV_LENGTH REG32(0xB3FF0014u)
#define ISV_BUFFER 0xB3FF0020u

#define BOUNCE_SIZE 1024u

/* Asset table header fields (dnn64_platform.h). */
#define TABLE_HEADER_SIZE 16u

void dnn64_bare_start(void);
void dnn64_bare_exception(void);
extern const uint32_t dnn64_bare_vector[];
extern const uint32_t dnn64_bare_vector_end[];
int main(void);

static uint32_t asset_area_size; /* 0 until an asset table is found */
static uint32_t count_last;
static uint32_t count_high;

static void pi_wait(void)
{
    while (PI_STATUS & PI_STATUS_BUSY) {
    }
}

/* Start one PI DMA (after any in flight): dst_phys 8-byte aligned, cart_phys and len
 * even, len <= 16 MiB. pi_dma_finish() waits for it. */
static void pi_dma_start(uint32_t dst_phys, uint32_t cart_phys, uint32_t len)
{
    pi_wait();
    PI_DRAM_ADDR = dst_phys;
    PI_CART_ADDR = cart_phys;
    PI_WR_LEN = len - 1u;
}

static void pi_dma_finish(void)
{
    pi_wait();
    PI_STATUS = PI_STATUS_CLEAR_INTR;
}

static void pi_dma_read(uint32_t dst_phys, uint32_t cart_phys, uint32_t len)
{
    pi_dma_start(dst_phys, cart_phys, len);
    pi_dma_finish();
}

static uint32_t physical(const void *p)
{
    return (uint32_t)(uintptr_t)p & 0x1FFFFFFFu;
}

static void rom_read_unchecked(void *dst, uint32_t offset, uint32_t len)
{
    static uint8_t DNN64_ALIGNED(bounce[BOUNCE_SIZE]);
    uint8_t *d = (uint8_t *)dst;
    uint32_t cart = CART_PHYS + DNN64_ASSET_CART_OFFSET + offset;

    if (((uintptr_t)d & 7u) == 0 && (cart & 1u) == 0 && (len & 1u) == 0) {
        dnn64__dcache_writeback_invalidate(d, len);
        while (len > 0) {
            uint32_t n = len < PI_DMA_MAX ? len : PI_DMA_MAX;
            pi_dma_read(physical(d), cart, n);
            d += n;
            cart += n;
            len -= n;
        }
        return;
    }
    /* Misaligned: DMA an even-sized, even-addressed span into the bounce buffer
     * and copy out the wanted bytes. May read one byte past the area; the
     * packer pads the area to DNN64_ASSET_ALIGN, so that byte exists. */
    while (len > 0) {
        uint32_t lead = cart & 1u;
        uint32_t n = len < BOUNCE_SIZE - 2u ? len : BOUNCE_SIZE - 2u;
        uint32_t span = (lead + n + 1u) & ~1u;
        uint32_t i;
        dnn64__dcache_writeback_invalidate(bounce, span);
        pi_dma_read(physical(bounce), cart - lead, span);
        for (i = 0; i < n; i++)
            d[i] = bounce[lead + i];
        d += n;
        cart += n;
        len -= n;
    }
}

static void check_range(uint32_t offset, uint32_t len)
{
    if (offset > asset_area_size || len > asset_area_size - offset)
        dnn64_fail("dnn64_asset_read: read past the end of the asset area");
}

void dnn64_platform_read(void *dst, uint32_t offset, uint32_t len)
{
    if (len == 0)
        return;
    check_range(offset, len);
    rom_read_unchecked(dst, offset, len);
}

int dnn64_platform_read_start(void *dst, uint32_t offset, uint32_t len)
{
    uint32_t cart = CART_PHYS + DNN64_ASSET_CART_OFFSET + offset;
    /* Generated code starts a read per weight tile: reading the clock here keeps the
     * 64-bit tick count exact through long inferences (see dnn64_ticks). */
    (void)dnn64_ticks();
    if (len == 0)
        return 0;
    check_range(offset, len);
    if (((uintptr_t)dst & 7u) == 0 && (cart & 1u) == 0 && (len & 1u) == 0 && len <= PI_DMA_MAX) {
        dnn64__dcache_writeback_invalidate(dst, len);
        pi_dma_start(physical(dst), cart, len);
        return 1;
    }
    rom_read_unchecked(dst, offset, len);
    return 0;
}

void dnn64_platform_read_wait(void)
{
    pi_dma_finish();
    (void)dnn64_ticks();
}

void dnn64_platform_init(void)
{
    static uint8_t DNN64_ALIGNED(header[TABLE_HEADER_SIZE]);
    rom_read_unchecked(header, 0, TABLE_HEADER_SIZE);
    if (header[0] == 'D' && header[1] == 'N' && header[2] == '6' && header[3] == '4')
        asset_area_size = ((uint32_t)header[12] << 24) | ((uint32_t)header[13] << 16)
                          | ((uint32_t)header[14] << 8) | header[15];
    count_last = 0;
    count_high = 0;
}

static void isv_write(const char *text, uint32_t len)
{
    uint32_t i, k;
    for (i = 0; i < len; i += 4u) {
        uint32_t word = 0;
        for (k = 0; k < 4u; k++)
            word = (word << 8) | (i + k < len ? (uint8_t)text[i + k] : 0u);
        pi_wait();
        REG32(ISV_BUFFER + i) = word;
    }
    pi_wait();
    ISV_LENGTH = len;
}

void dnn64_print(const char *line)
{
    static char piece[DNN64_LINE_MAX + 1u];
    /* One IS-Viewer write per piece of at most DNN64_LINE_MAX characters plus
     * its newline: mupen64plus shows each newline-terminated write as one
     * "Core: IS64:" line and cuts messages at ~505 characters. */
    do {
        uint32_t n = 0;
        while (n < DNN64_LINE_MAX && line[n] != '\0') {
            piece[n] = line[n];
            n++;
        }
        piece[n] = '\n';
        isv_write(piece, n + 1u);
        line += n;
    } while (*line != '\0');
}

uint64_t dnn64_ticks(void)
{
    uint32_t count;
    __asm__ volatile("mfc0 %0, $9" : "=r"(count));
    if (count < count_last)
        count_high++;
    count_last = count;
    return ((uint64_t)count_high << 32) | count;
}

uint64_t dnn64_ticks_per_second(void)
{
    return 46875000u;
}

static void halt(void)
{
    for (;;) {
    }
}

void dnn64_done(void)
{
    dnn64_print(DNN64_DONE_LINE);
    halt();
}

void dnn64_fail(const char *message)
{
    dnn64_line line;
    dnn64_line_begin(&line, DNN64_FAIL_PREFIX " ");
    dnn64_line_str(&line, message);
    dnn64_line_end(&line);
    halt();
}

/* Reached through dnn64_bare_vector on any CPU exception. */
void dnn64_bare_exception(void)
{
    uint32_t cause, epc, badvaddr;
    dnn64_line line;
    __asm__ volatile("mfc0 %0, $13" : "=r"(cause));
    __asm__ volatile("mfc0 %0, $14" : "=r"(epc));
    __asm__ volatile("mfc0 %0, $8" : "=r"(badvaddr));
    dnn64_line_begin(&line, DNN64_FAIL_PREFIX " exception code");
    dnn64_line_u32(&line, (cause >> 2) & 31u);
    dnn64_line_str(&line, " cause");
    dnn64_line_hex32(&line, cause);
    dnn64_line_str(&line, " epc");
    dnn64_line_hex32(&line, epc);
    dnn64_line_str(&line, " badvaddr");
    dnn64_line_hex32(&line, badvaddr);
    dnn64_line_end(&line);
    halt();
}

static void install_vectors(void)
{
    static const uint32_t vectors[3] = {0x80000000u, 0x80000080u, 0x80000180u};
    uint32_t words = (uint32_t)(dnn64_bare_vector_end - dnn64_bare_vector);
    uint32_t v, i;
    for (v = 0; v < 3u; v++) {
        volatile uint32_t *slot = (volatile uint32_t *)(uintptr_t)vectors[v];
        for (i = 0; i < words; i++)
            slot[i] = dnn64_bare_vector[i];
        for (i = 0; i < words * 4u; i += DNN64__DCACHE_LINE) {
            uintptr_t a = vectors[v] + i;
            __asm__ volatile("cache 0x19, 0(%0)" : : "r"(a) : "memory"); /* D writeback */
            __asm__ volatile("cache 0x10, 0(%0)" : : "r"(a) : "memory"); /* I invalidate */
        }
    }
}

void dnn64_bare_start(void)
{
    install_vectors();
    (void)main();
    dnn64_done();
}

void dnn64_dcache_claim(void *p, uint32_t bytes)
{
    uintptr_t a = ((uintptr_t)p + DNN64__DCACHE_LINE - 1u) & ~(uintptr_t)(DNN64__DCACHE_LINE - 1u);
    const uintptr_t end = ((uintptr_t)p + bytes) & ~(uintptr_t)(DNN64__DCACHE_LINE - 1u);
    if (!dnn64__is_cached(p))
        return;
    for (; a < end; a += DNN64__DCACHE_LINE)
        __asm__ volatile("cache 0x0D, 0(%0)" : : "r"(a) : "memory"); /* create dirty excl. */
}
