/* Test stand-in for <libdragon.h>: only the declarations the libdragon
 * platform layer uses, with libdragon's documented signatures, so that
 * dnn64_platform_libdragon.c can be type-checked without the SDK. */
#ifndef FAKE_LIBDRAGON_H
#define FAKE_LIBDRAGON_H
#include <stdbool.h>
#include <stdint.h>

#define DFS_DEFAULT_LOCATION 0xB0101000
#define DFS_ESUCCESS 0
#define TICKS_PER_SECOND (93750000 / 2)

bool debug_init_isviewer(void);
void debugf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
int dfs_init(uint32_t base_fs_loc);
uint32_t dfs_rom_addr(const char *path);
void data_cache_hit_writeback_invalidate(volatile void *addr, unsigned long length);
void dma_read(void *ram_address, unsigned long pi_address, unsigned long len);
void dma_read_async(void *ram_address, unsigned long pi_address, unsigned long len);
void dma_wait(void);
uint32_t get_ticks(void);
#endif
