/* dnn64_rsp_bare.c - running the project's RSP microcode on a bare N64.
 *
 * The CPU loads a kernel into IMEM, moves a job into DMEM and its result out by
 * SP DMA, starts the RSP at PC 0 and waits for it to halt (the microcode ends
 * with `break`). Every wait has a time limit, so a faulty kernel ends the run with
 * a DNN64-FAIL line instead of a hang. Registers: /work/shared/N64-NOTES.md and
 * libdragon's include/rsp.inc (SP_STATUS bits). */
#include "dnn64_platform.h"
#include "dnn64_dcache_bare.h"
#include "dnn64_rsp_bare.h"

#define REG32(addr) (*(volatile uint32_t *)(uintptr_t)(addr))

#define SP_MEM_ADDR REG32(0xA4040000u)  /* DMEM offset; bit 12 selects IMEM */
#define SP_DRAM_ADDR REG32(0xA4040004u)
#define SP_RD_LEN REG32(0xA4040008u)    /* RDRAM -> SP, length - 1; starts the DMA */
#define SP_WR_LEN REG32(0xA404000Cu)    /* SP -> RDRAM */
#define SP_STATUS REG32(0xA4040010u)
#define SP_DMA_BUSY REG32(0xA4040018u)
#define SP_PC REG32(0xA4080000u)
#define SP_IMEM 0x1000u

#define STATUS_HALTED 0x01u
#define STATUS_BROKE 0x02u
#define STATUS_DMA_BUSY 0x04u
#define STATUS_DMA_FULL 0x08u
#define WSTATUS_CLEAR_HALT 0x01u
#define WSTATUS_SET_HALT 0x02u
#define WSTATUS_CLEAR_BROKE 0x04u
#define WSTATUS_CLEAR_INTR 0x08u
#define WSTATUS_CLEAR_SSTEP 0x20u
#define WSTATUS_SET_INTR_BREAK 0x100u

/* A job takes well under a millisecond; a quarter second means the kernel is stuck. */
#define RSP_TIME_LIMIT_DIVISOR 4u

static const uint32_t *loaded; /* the kernel whose code is in IMEM */

static uint32_t physical(const void *p)
{
    return (uint32_t)(uintptr_t)p & 0x1FFFFFFFu;
}

/* op 0x19: hit write-back (the lines stay valid: the CPU may read them again). */
static void dcache_writeback(const void *p, uint32_t len)
{
    uintptr_t a = (uintptr_t)p & ~(uintptr_t)(DNN64__DCACHE_LINE - 1u);
    for (; a < (uintptr_t)p + len; a += DNN64__DCACHE_LINE)
        __asm__ volatile("cache 0x19, 0(%0)" : : "r"(a) : "memory");
}

/* op 0x11: hit invalidate (16-byte lines). */
static void dcache_invalidate(const void *p, uint32_t len)
{
    uintptr_t a = (uintptr_t)p & ~(uintptr_t)(DNN64__DCACHE_LINE - 1u);
    for (; a < (uintptr_t)p + len; a += DNN64__DCACHE_LINE)
        __asm__ volatile("cache 0x11, 0(%0)" : : "r"(a) : "memory");
}

static uint64_t deadline(void)
{
    return dnn64_ticks() + dnn64_ticks_per_second() / RSP_TIME_LIMIT_DIVISOR;
}

/* Until SP DMA is idle: at once when it is (no time limit to work out: a job moves
 * several blocks a start, each after such a test). */
static void dma_wait(void)
{
    uint64_t end;
    if (!((SP_STATUS & (STATUS_DMA_BUSY | STATUS_DMA_FULL)) || SP_DMA_BUSY))
        return;
    end = deadline();
    while ((SP_STATUS & (STATUS_DMA_BUSY | STATUS_DMA_FULL)) || SP_DMA_BUSY) {
        if (dnn64_ticks() > end)
            dnn64_fail("RSP: SP DMA did not finish within the time limit");
    }
}

static void check_transfer(const void *rdram, uint32_t sp_offset, uint32_t len)
{
    if (((uintptr_t)rdram & 7u) || (sp_offset & 7u) || (len & 7u) || len == 0)
        dnn64_fail("RSP: SP DMA address or length not a multiple of 8 bytes");
    if (sp_offset + len > DNN64_RSP_DMEM_BYTES)
        dnn64_fail("RSP: SP DMA past the end of DMEM/IMEM (4 KiB)");
}

/* RDRAM -> SP memory (sp_addr: DMEM offset, or SP_IMEM + offset), `src` written back
 * from the D-cache first unless `in_flight` (the *_beside writes: their caller flushed
 * it), waiting for the transfer's end unless `in_flight` (then the next transfer, start
 * or read waits). */
static void dma_to_sp(uint32_t sp_addr, const void *src, uint32_t len, int in_flight)
{
    check_transfer(src, sp_addr & ~SP_IMEM, len);
    if (!in_flight && dnn64__is_cached(src))
        dnn64__dcache_writeback_invalidate(src, len);
    dma_wait();
    SP_MEM_ADDR = sp_addr;
    SP_DRAM_ADDR = physical(src);
    SP_RD_LEN = len - 1u;
    if (!in_flight)
        dma_wait();
}

/* DMEM -> RDRAM. */
static void dma_from_dmem(void *dst, uint32_t dmem_offset, uint32_t len)
{
    check_transfer(dst, dmem_offset, len);
    if (dnn64__is_cached(dst))
        dnn64__dcache_writeback_invalidate(dst, len); /* no dirty line may land on the result */
    dma_wait();
    SP_MEM_ADDR = dmem_offset;
    SP_DRAM_ADDR = physical(dst);
    SP_WR_LEN = len - 1u;
    dma_wait();
    if (dnn64__is_cached(dst))
        dcache_invalidate(dst, len);
}

static void halt_rsp(void)
{
    SP_STATUS = WSTATUS_SET_HALT;
    dma_wait();
}

/* dnn64_fail with the RSP's status and PC, for the report. */
static void rsp_fail(const char *message, uint32_t status)
{
    dnn64_line line;
    dnn64_line_begin(&line, DNN64_FAIL_PREFIX " RSP: ");
    dnn64_line_str(&line, message);
    dnn64_line_str(&line, " (SP_STATUS");
    dnn64_line_hex32(&line, status);
    dnn64_line_str(&line, ", SP_PC");
    dnn64_line_hex32(&line, SP_PC);
    dnn64_line_str(&line, ")");
    dnn64_line_end(&line);
    for (;;) {
    }
}

static int running; /* started and not yet waited for */

int dnn64_rsp_available(void)
{
    return 1;
}

void dnn64_rsp_write(uint32_t dmem_offset, const void *src, uint32_t bytes)
{
    if (running)
        dnn64_fail("RSP: DMEM written while the kernel runs");
    dma_to_sp(dmem_offset, src, bytes, 0);
}

void dnn64_rsp_write_beside(uint32_t dmem_offset, const void *src, uint32_t bytes)
{
    dma_to_sp(dmem_offset, src, bytes, 1);
}

static void write_rows(uint32_t dmem_offset, const void *src, uint32_t row_bytes,
                       uint32_t rows, uint32_t src_stride, int in_flight)
{
    const uint8_t *row = (const uint8_t *)src;
    uint32_t i;
    if ((src_stride & 7u) || (row_bytes & 7u) || src_stride < row_bytes || rows == 0)
        dnn64_fail("RSP: SP DMA rows: row or stride not a multiple of 8, or overlapping");
    check_transfer(src, dmem_offset, row_bytes * rows);
    if (!in_flight && dnn64__is_cached(src))
        for (i = 0; i < rows; i++)
            dcache_writeback(row + i * src_stride, row_bytes);
    if (src_stride - row_bytes < 4096u && rows <= 256u) {
        /* one transfer: length - 1 | (count - 1) << 12 | skip << 20 */
        dma_wait();
        SP_MEM_ADDR = dmem_offset;
        SP_DRAM_ADDR = physical(src);
        SP_RD_LEN = (row_bytes - 1u) | ((rows - 1u) << 12) | ((src_stride - row_bytes) << 20);
        if (!in_flight)
            dma_wait();
        return;
    }
    for (i = 0; i < rows; i++) {
        dma_wait();
        SP_MEM_ADDR = dmem_offset + i * row_bytes;
        SP_DRAM_ADDR = physical(row + i * src_stride);
        SP_RD_LEN = row_bytes - 1u;
    }
    if (!in_flight)
        dma_wait();
}

void dnn64_rsp_write_rows(uint32_t dmem_offset, const void *src, uint32_t row_bytes,
                          uint32_t rows, uint32_t src_stride)
{
    if (running)
        dnn64_fail("RSP: DMEM written while the kernel runs");
    write_rows(dmem_offset, src, row_bytes, rows, src_stride, 0);
}

void dnn64_rsp_write_rows_beside(uint32_t dmem_offset, const void *src, uint32_t row_bytes,
                                 uint32_t rows, uint32_t src_stride)
{
    write_rows(dmem_offset, src, row_bytes, rows, src_stride, 1);
}

/* Starts `code` at `pc`, loading it into IMEM unless it is there. */
static void start_code(const uint32_t *code, uint32_t bytes, uint32_t pc)
{
    if (loaded != code) {
        halt_rsp();
        dma_to_sp(SP_IMEM, code, bytes, 0);
        loaded = code;
    }
    if (running)
        dnn64_fail("RSP: started while the kernel runs");
    dma_wait(); /* a job's last *_beside transfer */
    running = 1;
    SP_PC = pc;
    /* Interrupt on break: mupen64plus reports a task's end (halt + broke) only through
     * the SP interrupt; the MI mask keeps it from reaching the CPU. */
    SP_STATUS = WSTATUS_CLEAR_HALT | WSTATUS_CLEAR_BROKE | WSTATUS_CLEAR_INTR |
                WSTATUS_CLEAR_SSTEP | WSTATUS_SET_INTR_BREAK;
}

void dnn64_rsp_start(void)
{
    dnn64_rsp_start_at(0);
}

void dnn64_rsp_start_at(uint32_t pc)
{
    start_code(dnn64_rsp_matmul_s8_code, dnn64_rsp_matmul_s8_code_bytes, pc);
}

void dnn64_rsp_start_dwconv(void)
{
    start_code(dnn64_rsp_dwconv_s8_code, dnn64_rsp_dwconv_s8_code_bytes, 0);
}

void dnn64_rsp_start_pwconv(void)
{
    start_code(dnn64_rsp_pwconv_s8_code, dnn64_rsp_pwconv_s8_code_bytes, 0);
}

void dnn64_rsp_start_gemv_dma(void)
{
    start_code(dnn64_rsp_gemv_dma_s8_code, dnn64_rsp_gemv_dma_s8_code_bytes, 0);
}

void dnn64_rsp_start_stem(void)
{
    start_code(dnn64_rsp_stem_s8_code, dnn64_rsp_stem_s8_code_bytes, 0);
}

void dnn64_rsp_start_sums(void)
{
    start_code(dnn64_rsp_sums_s8_code, dnn64_rsp_sums_s8_code_bytes, 0);
}

/* Allowed while the kernel runs: the CPU prepares the next job's memory then. */
void dnn64_rsp_flush(const void *p, uint32_t bytes)
{
    if (dnn64__is_cached(p) && bytes > 0)
        dnn64__dcache_writeback_invalidate(p, bytes);
}

uint32_t dnn64_rsp_dram_address(const void *p)
{
    return physical(p);
}

void dnn64_rsp_wait(void)
{
    const uint64_t end = deadline();
    uint32_t status;
    while (!((status = SP_STATUS) & STATUS_HALTED)) {
        if (dnn64_ticks() > end) {
            halt_rsp();
            rsp_fail("the kernel did not halt within the time limit", status);
        }
    }
    running = 0;
    SP_STATUS = WSTATUS_CLEAR_INTR;
    if (!(status & STATUS_BROKE))
        rsp_fail("the kernel halted without reaching its break", status);
}

void dnn64_rsp_read(void *dst, uint32_t dmem_offset, uint32_t bytes)
{
    if (running)
        dnn64_fail("RSP: DMEM read while the kernel runs");
    dma_from_dmem(dst, dmem_offset, bytes);
}

void dnn64_rsp_read_beside(void *dst, uint32_t dmem_offset, uint32_t bytes)
{
    dma_from_dmem(dst, dmem_offset, bytes);
}
