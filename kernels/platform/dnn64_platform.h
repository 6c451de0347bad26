/*
 * dnn64_platform.h - the platform layer every dnn64 program runs on.
 *
 * Generated inference code and the kernels are platform-free C99; everything
 * that touches the machine goes through this header. Three implementations:
 *   host/       native cc; the asset area is read from a file named by the
 *               environment variable DNN64_ASSETS (an asset image or a .z64).
 *   bare/       an N64 without any SDK: PI DMA from the cartridge, IS-Viewer
 *               output, CP0 Count timer (built with Debian's mips-linux-gnu-gcc).
 *   libdragon/  the libdragon SDK: the asset image is the DragonFS file
 *               "assets.bin"; dma_read, debugf, get_ticks.
 *
 * A program looks like:
 *     int main(void) {
 *         dnn64_platform_init();
 *         ... dnn64_asset_find("weights", &w); dnn64_asset_read(buf, w.offset, w.size); ...
 *         dnn64_done();
 *     }
 *
 * The ASSET AREA is the packed image of named blobs (weights, inputs) that
 * dnn64build's packer writes; offsets passed to dnn64_asset_read are relative to
 * its start. Its first bytes are the asset table (docs/rom-format.md):
 *   header  16 bytes: magic "DN64", u32 version (1), u32 count, u32 area size
 *   entry   48 bytes: char name[40] (NUL padded), u32 offset, u32 size
 * all big-endian; every asset starts at a multiple of DNN64_ASSET_ALIGN.
 * On the cartridge the asset area starts at DNN64_ASSET_CART_OFFSET.
 *
 * Hard limits: one thread, no interrupts; output lines are at most
 * DNN64_LINE_MAX characters (longer text is split into several lines;
 * mupen64plus itself cuts messages at ~505 characters); dnn64_ticks() must be
 * called at least once per 2^32 Count ticks (~91 s on hardware) to extend the
 * 32-bit CP0 Count to 64 bits. bare's dnn64_asset_read_start/wait read it, so an
 * inference stays exact unless one weight tile's compute alone takes longer.
 */
#ifndef DNN64_PLATFORM_H
#define DNN64_PLATFORM_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Cartridge byte offset of the asset area (right after the 1 MiB program slot). */
#define DNN64_ASSET_CART_OFFSET 0x00101000u
/** Every asset starts at a multiple of this many bytes within the asset area. */
#define DNN64_ASSET_ALIGN 16u
/** Alignment the fast DMA path wants for dnn64_asset_read destinations (a D-cache line). */
#define DNN64_DMA_ALIGN 16u
/** Longest line dnn64_print writes in one piece (characters, without the newline). */
#define DNN64_LINE_MAX 200u
/** Longest asset name, without the terminating NUL. */
#define DNN64_ASSET_NAME_MAX 39u
/** The line dnn64_done prints last; runners stop reading at it. */
#define DNN64_DONE_LINE "DNN64-DONE"
/** Prefix of the line dnn64_fail prints; runners report it as a failure. */
#define DNN64_FAIL_PREFIX "DNN64-FAIL"

/** Declare a buffer aligned for the fast dnn64_asset_read path, e.g.
 *  `static int8_t DNN64_ALIGNED(stage[4096]);` */
#define DNN64_ALIGNED(decl) decl __attribute__((aligned(16)))

/* ---- machine ------------------------------------------------------------ */

/** Set up the platform (FPU, output, asset source). Call first in main(). On
 *  failure (e.g. no asset area) it calls dnn64_fail and does not return. */
void dnn64_platform_init(void);

/**
 * Copy `len` bytes from the asset area at byte `offset` into `dst`.
 *
 * dst:    `len` writable bytes, any alignment. The fast path (one DMA straight
 *         into dst) needs dst 8-byte aligned, `offset` and `len` even; asset
 *         offsets are 16-byte aligned, so a 16-byte aligned staging buffer
 *         (DNN64_ALIGNED) and an even length take it. Otherwise the bare
 *         platform goes through a small bounce buffer (correct, slower).
 *         On bare the D-cache lines covering dst are written back and
 *         invalidated first, so dst must not share a cache line with data
 *         written concurrently (there is no concurrency here).
 * offset: byte offset within the asset area; offset + len must lie inside it.
 * len:    bytes to copy; 0 does nothing.
 * An out-of-range read calls dnn64_fail.
 */
void dnn64_asset_read(void *dst, uint32_t offset, uint32_t len);

/**
 * Start copying `len` bytes from the asset area at `offset` into `dst` and return,
 * possibly before the bytes have arrived, so the CPU can compute meanwhile (the
 * weight prefetch of the generated code). dnn64_asset_read_wait() blocks until they
 * have. Parameters and alignment as dnn64_asset_read.
 *
 * At most one read may be in flight, and nothing may touch [dst, dst + len) until
 * the wait. bare overlaps an aligned read (8-byte aligned dst, even offset and len:
 * one PI DMA of up to 16 MiB) with the CPU; libdragon uses dma_read_async; everything
 * else (host, misaligned reads) completes before this returns.
 */
void dnn64_asset_read_start(void *dst, uint32_t offset, uint32_t len);

/** Wait for the read dnn64_asset_read_start began; returns at once if it is done. */
void dnn64_asset_read_wait(void);

/* The three reads above are portable (dnn64_cart.c): they count what they read and
 * call the platform's own read, below, which nothing else should call except the asset
 * table lookup (dnn64_assets.c, whose few bytes are left out of the count).
 * dnn64_platform_read_start returns 1 when the read may still be in flight (the CPU can
 * compute meanwhile), 0 when it completed before returning. */
void dnn64_platform_read(void *dst, uint32_t offset, uint32_t len);
int dnn64_platform_read_start(void *dst, uint32_t offset, uint32_t len);
void dnn64_platform_read_wait(void);

/* ---- cartridge traffic of one inference (portable: dnn64_cart.c) ---------- */
/* Every read through dnn64_asset_read/_start/_wait is counted: the bytes, the ticks
 * spent inside the read calls (the machine's own transfer time), and for each prefetch
 * (_start ... _wait) its bytes and the ticks the CPU computed while it was in flight.
 * A _start the platform completes at once (host; on bare a misaligned tile) is counted
 * as waited for.
 * Generated code marks each scheduled node (dnn64_cart_step), so the bytes and ticks
 * are also kept per node. dnn64build turns them into a cartridge-aware time
 * (docs/platforms.md, "Cartridge-aware time"). */

/** Prefetch spans and node steps kept one by one: a prefetch past the log is only
 *  counted (async_bytes, spans_past), a node past it is merged into the last entry. */
#define DNN64_CART_SPANS 512u
#define DNN64_CART_STEPS 256u

/** One prefetch: its bytes, and the ticks the CPU spent outside reads while it flew. */
typedef struct dnn64_cart_span {
    uint32_t bytes;
    uint32_t ticks;
} dnn64_cart_span;

/** One scheduled node: its index, bytes read while it ran (waited for, prefetched), and
 *  its ticks (reads included). */
typedef struct dnn64_cart_step_record {
    uint32_t index;
    uint32_t sync_bytes;
    uint32_t async_bytes;
    uint32_t ticks;
} dnn64_cart_step_record;

typedef struct dnn64_cart_stats {
    uint64_t sync_bytes;  /* the CPU waited for them */
    uint64_t async_bytes; /* read by dnn64_asset_read_start in flight beside compute */
    uint64_t read_ticks;  /* ticks spent inside the three read calls */
    uint32_t reads;       /* calls that read at least one byte */
    uint32_t spans;       /* entries of span[] used */
    uint32_t steps;       /* entries of step[] used */
    uint32_t spans_past;  /* prefetches past span[] (see DNN64_CART_SPANS) */
    uint32_t steps_past;  /* nodes past step[], merged into its last entry */
    dnn64_cart_span span[DNN64_CART_SPANS];
    dnn64_cart_step_record step[DNN64_CART_STEPS];
} dnn64_cart_stats;

/** Zero the counters: call just before the inference starts (weights read before, e.g.
 *  loaded once at init, are not its traffic). */
void dnn64_cart_reset(void);
/** Generated code calls this as scheduled node `index` starts. */
void dnn64_cart_step(uint32_t index);
/** Close the last node: call just after the inference ends. */
void dnn64_cart_finish(void);
/** The counters since dnn64_cart_reset. */
const dnn64_cart_stats *dnn64_cart_stats_now(void);
/** Print them (lines CART, CARTS, CARTN of dnn64build/codegen/protocol.py). */
void dnn64_cart_print(const char *symbol);

/** Write one line of text (no newline needed) to the platform's console:
 *  stdout on host, IS-Viewer on N64. `line` is a NUL-terminated string; text
 *  longer than DNN64_LINE_MAX is written as several lines of DNN64_LINE_MAX
 *  characters (the last shorter), identically on every platform. */
void dnn64_print(const char *line);

/** A monotonic tick counter: CP0 Count extended to 64 bits on N64
 *  (mupen64plus advances it by 2 per instruction), nanoseconds on host. */
uint64_t dnn64_ticks(void);

/** Ticks per second of dnn64_ticks (46875000 on N64 hardware, 1e9 on host). */
uint64_t dnn64_ticks_per_second(void);

/** Print DNN64_DONE_LINE and stop (exit(0) on host, spin forever on N64). */
void dnn64_done(void);

/** Print "DNN64-FAIL <message>" and stop (exit(1) on host, spin on N64).
 *  `message` is a NUL-terminated string. */
void dnn64_fail(const char *message);

/* ---- the RSP (bare only) ------------------------------------------------ */
/* Only a platform with an RSP defines these (bare). The RSP kernels
 * (kernels/dnn64_rsp_*.c) reference them weakly: elsewhere (host, libdragon
 * for now) the references are null and the kernels run their CPU twins. */

/** Size of the RSP's data memory (DMEM): a job and its result must fit. */
#define DNN64_RSP_DMEM_BYTES 4096u

/** 1: this platform runs RSP kernels. */
int dnn64_rsp_available(void);

/** SP DMA `bytes` bytes from RDRAM `src` to DMEM at `dmem_offset` (the RSP must be
 *  stopped). src: 8-byte aligned, cached or not (written back from the D-cache first);
 *  dmem_offset, bytes: multiples of 8, the span inside DNN64_RSP_DMEM_BYTES. */
void dnn64_rsp_write(uint32_t dmem_offset, const void *src, uint32_t bytes);

/** SP DMA `rows` rows of `row_bytes` bytes, `src_stride` bytes apart in RDRAM, to DMEM
 *  at `dmem_offset`, back to back (the RSP must be stopped). The rows' D-cache lines are
 *  written back first (and stay valid). src, row_bytes, src_stride, dmem_offset:
 *  multiples of 8; the DMEM span inside DNN64_RSP_DMEM_BYTES. */
void dnn64_rsp_write_rows(uint32_t dmem_offset, const void *src, uint32_t row_bytes,
                          uint32_t rows, uint32_t src_stride);

/** Start the matmul_s8 microcode (dnn64build/rsp/microcode/matmul_s8.rsp) at PC 0 on
 *  the job in DMEM, loading it into IMEM on first use; returns at once: the CPU may
 *  work (not touch DMEM) until dnn64_rsp_wait. */
void dnn64_rsp_start(void);

/** Start the dwconv_s8 microcode (dnn64build/rsp/microcode/dwconv_s8.rsp) as
 *  dnn64_rsp_start does matmul_s8: it moves its own data by SP DMA from the RDRAM
 *  addresses its job names (dnn64_rsp_dram_address). */
void dnn64_rsp_start_dwconv(void);

/** Start the pwconv_s8 microcode (pwconv_s8.rsp) likewise. */
void dnn64_rsp_start_pwconv(void);

/** Start the gemv_dma_s8 microcode (gemv_dma_s8.rsp) likewise. */
void dnn64_rsp_start_gemv_dma(void);

/** Start the stem_s8 microcode (stem_s8.rsp) likewise. */
void dnn64_rsp_start_stem(void);

/** Start the sums_s8 microcode (sums_s8.rsp) likewise. */
void dnn64_rsp_start_sums(void);

/** Take the D-cache lines lying wholly inside [p, p + bytes) for the CPU to write without
 *  reading them from RDRAM first (bare: CACHE Create Dirty Exclusive): their bytes are
 *  undefined until written, so the caller must write every byte of them before anything
 *  reads them. Only the bare platform defines it; kernels reference it weakly. */
void dnn64_dcache_claim(void *p, uint32_t bytes);

/** Write the D-cache lines over [p, p + bytes) back to RDRAM and invalidate them, so
 *  that an RSP that reads or writes that memory by its own SP DMA sees and leaves what
 *  the CPU then reads (also while the RSP runs, for memory it does not use then). */
void dnn64_rsp_flush(const void *p, uint32_t bytes);

/** The RDRAM (physical) address of p, for the RSP's own SP DMA. */
uint32_t dnn64_rsp_dram_address(const void *p);

/** Wait until the RSP halts at the microcode's `break`. */
void dnn64_rsp_wait(void);

/** SP DMA `bytes` bytes from DMEM at `dmem_offset` to RDRAM `dst` (8-byte aligned; its
 *  D-cache lines are invalidated, so the CPU then reads what the RSP wrote). */
void dnn64_rsp_read(void *dst, uint32_t dmem_offset, uint32_t bytes);

/** As dnn64_rsp_start, at `pc`: DNN64_RSP_PC_HEADER_B starts matmul_s8 on the job
 *  whose header is at DMEM DNN64_RSP_HEADER_B instead of 0. */
#define DNN64_RSP_PC_HEADER_B 8u
#define DNN64_RSP_HEADER_B 48u
void dnn64_rsp_start_at(uint32_t pc);

/** dnn64_rsp_write, _write_rows and _read also while the kernel runs: the caller keeps
 *  to DMEM that the running job neither reads nor writes (a double-buffered job's other
 *  half). The RSP's own loads and stores and an SP DMA may share DMEM. The two writes
 *  take `src` as RDRAM holds it: the caller writes back what the CPU wrote there
 *  (dnn64_rsp_flush, once for data that many jobs move); they may return with their
 *  transfer still in flight: the caller leaves `src` as it is until its next dnn64_rsp_*
 *  call (every transfer, start and read waits for the last one). */
void dnn64_rsp_write_beside(uint32_t dmem_offset, const void *src, uint32_t bytes);
void dnn64_rsp_write_rows_beside(uint32_t dmem_offset, const void *src, uint32_t row_bytes,
                                 uint32_t rows, uint32_t src_stride);
void dnn64_rsp_read_beside(void *dst, uint32_t dmem_offset, uint32_t bytes);

/* Every call above checks alignment and bounds, and every wait (DMA, halt) has a time
 * limit: a fault calls dnn64_fail instead of hanging. */

/* ---- asset table (portable, over dnn64_asset_read) ------------------------- */

/** One entry of the asset table; offset is relative to the asset area. */
typedef struct dnn64_asset {
    char name[DNN64_ASSET_NAME_MAX + 1];
    uint32_t offset;
    uint32_t size;
} dnn64_asset;

/** Look up asset `name` (NUL-terminated) in the asset table and fill `*out`
 *  (caller-owned, any alignment). Returns 1 if found, 0 if not. */
int dnn64_asset_find(const char *name, dnn64_asset *out);

/** Like dnn64_asset_find, but calls dnn64_fail when the asset is missing. */
dnn64_asset dnn64_asset_get(const char *name);

/* ---- exact, printf-free formatting --------------------------------------- */

/** A line under construction. Text past DNN64_LINE_MAX is dropped and marked
 *  truncated, never written out of bounds. */
typedef struct dnn64_line {
    char text[DNN64_LINE_MAX + 1];
    uint32_t len;
    int truncated;
} dnn64_line;

/** Start `line` (caller-owned) with `prefix` (NUL-terminated, may be ""). */
void dnn64_line_begin(dnn64_line *line, const char *prefix);
/** Append a NUL-terminated string. */
void dnn64_line_str(dnn64_line *line, const char *text);
/** Append a space (unless the line is empty) then the value in decimal. */
void dnn64_line_i32(dnn64_line *line, int32_t value);
void dnn64_line_u32(dnn64_line *line, uint32_t value);
void dnn64_line_u64(dnn64_line *line, uint64_t value);
/** Append a space (unless empty) then exactly 8 lowercase hex digits. */
void dnn64_line_hex32(dnn64_line *line, uint32_t value);
/** Append a space (unless empty) then the float's IEEE-754 bit pattern as 8
 *  hex digits: exact, comparable bit for bit across platforms. */
void dnn64_line_f32(dnn64_line *line, float value);
/** Print the line with dnn64_print. */
void dnn64_line_end(dnn64_line *line);

/** The IEEE-754 bit pattern of `value`. */
uint32_t dnn64_f32_bits(float value);

/** Print `prefix` and a decimal value on one line, e.g. "ticks 1234". */
void dnn64_print_u64(const char *prefix, uint64_t value);

/**
 * Print `count` int8 values as hex, 32 values per line:
 *     "<prefix> <first index> <8 words of 8 hex digits>"
 * each word holding 4 consecutive values, two hex digits each, in array order
 * (a partial last word is padded with "00"). `data`: `count` bytes, any alignment.
 */
void dnn64_print_i8_hex(const char *prefix, const int8_t *data, uint32_t count);

/**
 * Print `count` floats as their bit patterns, 8 per line:
 *     "<prefix> <first index> <8 words of 8 hex digits>"
 * `data`: `count` floats, 4-byte aligned.
 */
void dnn64_print_f32_hex(const char *prefix, const float *data, uint32_t count);

/**
 * Print `count` elements that sit at flat index `first` of an array, 32 bytes a line:
 *     "<prefix> <index> <values on the line> <words>"
 * the words as dnn64_print_i8_hex (`size` 1) or dnn64_print_f32_hex (`size` 4) write
 * them. `data`: `count` x `size` bytes, 4-byte aligned if `size` is 4.
 */
void dnn64_print_hex_piece(const char *prefix, uint32_t first, const void *data,
                           uint32_t count, uint32_t size);

#ifdef __cplusplus
}
#endif

#endif /* DNN64_PLATFORM_H */
