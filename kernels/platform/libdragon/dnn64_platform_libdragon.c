/* dnn64_platform_libdragon.c - the platform layer on libdragon.
 *
 * The asset image is the DragonFS file "assets.bin"; reads are dma_read from
 * its cartridge address, output is debugf to the IS-Viewer, time is the CP0
 * Count via get_ticks(). Built by the libdragon toolchain only. */
#include "dnn64_platform.h"

#include <libdragon.h>

/* A KSEG0/KSEG1 address -> the physical address, which is the PI bus address. */
#define DNN64_PI_ADDRESS_MASK 0x1FFFFFFFu

static uint32_t assets_rom_addr; /* the PI address of assets.bin's first byte */
static uint32_t assets_size;
static uint32_t count_last;
static uint32_t count_high;

void dnn64_platform_init(void)
{
    static uint8_t DNN64_ALIGNED(header[16]);
    debug_init_isviewer();
    if (dfs_init(DFS_DEFAULT_LOCATION) != DFS_ESUCCESS)
        dnn64_fail("no DragonFS image in the ROM");
    /* dfs_rom_addr gives the file's uncached virtual address (0xB0000000 up), which
     * dma_read masks into the PI's cartridge space but dma_read_async sends to the PI as
     * it is: keep the physical (PI bus) address. */
    assets_rom_addr = dfs_rom_addr("assets.bin") & DNN64_PI_ADDRESS_MASK;
    if (assets_rom_addr == 0)
        return; /* a program without assets; dnn64_asset_read fails loudly */
    data_cache_hit_writeback_invalidate(header, sizeof header);
    dma_read(header, assets_rom_addr, sizeof header);
    assets_size = ((uint32_t)header[12] << 24) | ((uint32_t)header[13] << 16)
                  | ((uint32_t)header[14] << 8) | header[15];
}

int dnn64_platform_read_start(void *dst, uint32_t offset, uint32_t len)
{
    if (len == 0)
        return 0;
    if (offset > assets_size || len > assets_size - offset)
        dnn64_fail("dnn64_asset_read: read past the end of the asset area");
    data_cache_hit_writeback_invalidate(dst, len);
    dma_read_async(dst, assets_rom_addr + offset, len);
    return 1;
}

void dnn64_platform_read_wait(void)
{
    dma_wait();
}

void dnn64_platform_read(void *dst, uint32_t offset, uint32_t len)
{
    (void)dnn64_platform_read_start(dst, offset, len);
    dnn64_platform_read_wait();
}

void dnn64_print(const char *line)
{
    /* Pieces of at most DNN64_LINE_MAX characters, as on the other platforms. */
    do {
        int n = 0;
        while (n < (int)DNN64_LINE_MAX && line[n] != '\0')
            n++;
        debugf("%.*s\n", n, line);
        line += n;
    } while (*line != '\0');
}

uint64_t dnn64_ticks(void)
{
    /* get_ticks() is the 32-bit CP0 Count; extend it like the bare layer. */
    uint32_t count = (uint32_t)get_ticks();
    if (count < count_last)
        count_high++;
    count_last = count;
    return ((uint64_t)count_high << 32) | count;
}

uint64_t dnn64_ticks_per_second(void)
{
    return TICKS_PER_SECOND;
}

void dnn64_done(void)
{
    dnn64_print(DNN64_DONE_LINE);
    for (;;) {
    }
}

void dnn64_fail(const char *message)
{
    debugf("%s %s\n", DNN64_FAIL_PREFIX, message);
    for (;;) {
    }
}
