/*
 * libdragon.h - the part of libdragon's public API that dnn64build's libdragon sources
 * use, declared from the facts of libdragon's own headers so that those sources can be
 * compiled with -fsyntax-only where libdragon is not installed (tests/build/test_library.py).
 * Written for this project, not copied: each declaration states the signature (or value)
 * libdragon declares, with the header it comes from.
 *
 * Pinned to github.com/DragonMinded/libdragon at commit
 * 535d75170238218a261b1101e583f5a414a9afb0 (2024-10-25). A test checks this file's
 * checksum and its list of declarations: changing either is a deliberate update, made
 * against a newer libdragon's headers.
 */
#ifndef DNN64_TEST_PINNED_LIBDRAGON_H
#define DNN64_TEST_PINNED_LIBDRAGON_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

/* include/dragonfs.h: dfs_init searches the ROM for the filesystem given this location. */
#define DFS_DEFAULT_LOCATION 0
/* include/dragonfs.h: the success code of the dfs_* functions. */
#define DFS_ESUCCESS 0
/* include/dragonfs.h */
int dfs_init(uint32_t base_fs_loc);
/* include/dragonfs.h: the PI address of a file's body, 0 when there is no such file. */
uint32_t dfs_rom_addr(const char *path);

/* include/dma.h */
void dma_read(void *ram_address, unsigned long pi_address, unsigned long len);
/* include/dma.h */
void dma_read_async(void *ram_address, unsigned long pi_address, unsigned long len);
/* include/dma.h */
void dma_wait(void);

/* include/n64sys.h */
void data_cache_hit_writeback_invalidate(volatile void *addr, unsigned long length);
/* include/n64sys.h: a 64-bit counter at TICKS_PER_SECOND. */
uint64_t get_ticks(void);
/* include/n64sys.h: half the CPU clock (93.75 MHz on a retail console). */
#define TICKS_PER_SECOND (93750000 / 2)

/* include/debug.h */
bool debug_init_isviewer(void);
/* include/debug.h: a macro writing a formatted message to stderr. */
#define debugf(...) fprintf(stderr, __VA_ARGS__)

#endif /* DNN64_TEST_PINNED_LIBDRAGON_H */
