/* dnn64_platform_host.c - the platform layer on a POSIX host.
 *
 * The asset area comes from the file named by $DNN64_ASSETS: either a bare
 * asset image (offset 0 = asset table) or a whole .z64 ROM, recognised by its
 * PI config word, whose asset area starts at DNN64_ASSET_CART_OFFSET.
 *
 * With $DNN64_READ_TRACE set (non-empty), every asset read also prints
 * "READ <offset> <bytes>": what an N64 would move by PI DMA, for tests that count
 * the cartridge bytes an inference reads (the protocol's parsers skip the line). */
#define _POSIX_C_SOURCE 199309L
#include "dnn64_platform.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static FILE *assets_file;
static long assets_base;
static uint32_t assets_size;
static int trace_reads;

void dnn64_platform_init(void)
{
    const char *path = getenv("DNN64_ASSETS");
    const char *trace = getenv("DNN64_READ_TRACE");
    unsigned char magic[4];
    long file_size;

    trace_reads = trace != NULL && trace[0] != '\0';
    if (path == NULL || path[0] == '\0')
        return; /* a program without assets; dnn64_asset_read will fail loudly */
    assets_file = fopen(path, "rb");
    if (assets_file == NULL)
        dnn64_fail("cannot open $DNN64_ASSETS");
    if (fseek(assets_file, 0, SEEK_END) != 0 || (file_size = ftell(assets_file)) < 0)
        dnn64_fail("cannot size $DNN64_ASSETS");
    rewind(assets_file);
    if (fread(magic, 1, 4, assets_file) == 4 && magic[0] == 0x80 && magic[1] == 0x37
        && magic[2] == 0x12 && magic[3] == 0x40)
        assets_base = (long)DNN64_ASSET_CART_OFFSET;
    if (file_size < assets_base)
        dnn64_fail("$DNN64_ASSETS is a ROM without an asset area");
    assets_size = (uint32_t)(file_size - assets_base);
}

void dnn64_platform_read(void *dst, uint32_t offset, uint32_t len)
{
    if (len == 0)
        return;
    if (assets_file == NULL)
        dnn64_fail("dnn64_asset_read: no asset file (set DNN64_ASSETS)");
    if (offset > assets_size || len > assets_size - offset)
        dnn64_fail("dnn64_asset_read: read past the end of the asset area");
    if (fseek(assets_file, assets_base + (long)offset, SEEK_SET) != 0
        || fread(dst, 1, len, assets_file) != len)
        dnn64_fail("dnn64_asset_read: read error");
    if (trace_reads) {
        dnn64_line line;
        dnn64_line_begin(&line, "READ");
        dnn64_line_u32(&line, offset);
        dnn64_line_u32(&line, len);
        dnn64_line_end(&line);
    }
}

/* A file read cannot overlap the caller: start completes it, wait has nothing to do. */
int dnn64_platform_read_start(void *dst, uint32_t offset, uint32_t len)
{
    dnn64_platform_read(dst, offset, len);
    return 0;
}

void dnn64_platform_read_wait(void)
{
}

void dnn64_print(const char *line)
{
    /* Pieces of at most DNN64_LINE_MAX characters, as on the N64. */
    do {
        size_t n = strlen(line);
        if (n > DNN64_LINE_MAX)
            n = DNN64_LINE_MAX;
        fwrite(line, 1, n, stdout);
        fputc('\n', stdout);
        line += n;
    } while (*line != '\0');
    fflush(stdout);
}

uint64_t dnn64_ticks(void)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (uint64_t)now.tv_sec * 1000000000u + (uint64_t)now.tv_nsec;
}

uint64_t dnn64_ticks_per_second(void)
{
    return 1000000000u;
}

void dnn64_done(void)
{
    dnn64_print(DNN64_DONE_LINE);
    exit(0);
}

void dnn64_fail(const char *message)
{
    fputs(DNN64_FAIL_PREFIX " ", stdout);
    dnn64_print(message);
    exit(1);
}
