/* dnn64_cart.c - the asset reads every program makes, counted (portable).
 *
 * The one place cartridge reads go through: dnn64_asset_read/_start/_wait count bytes
 * and time, then call the platform's own read (dnn64_platform_read...). What the
 * counters mean and how dnn64build turns them into a time: dnn64_platform.h,
 * docs/platforms.md ("Cartridge-aware time"). */
#include "dnn64_platform.h"

static dnn64_cart_stats stats;
static uint32_t flying_bytes;     /* the prefetch in flight (0: none) */
static uint64_t flying_since;     /* ticks when it was started */
static uint64_t flying_reads;     /* stats.read_ticks then */
static int step_open;             /* a node has started and not been closed */
static uint32_t step_index;
static uint64_t step_since, step_sync, step_async;

static uint32_t clamp32(uint64_t value)
{
    return value > 0xFFFFFFFFu ? 0xFFFFFFFFu : (uint32_t)value;
}

void dnn64_asset_read(void *dst, uint32_t offset, uint32_t len)
{
    uint64_t t0 = dnn64_ticks();
    dnn64_platform_read(dst, offset, len);
    stats.read_ticks += dnn64_ticks() - t0;
    stats.sync_bytes += len;
    stats.reads += len != 0;
}

void dnn64_asset_read_start(void *dst, uint32_t offset, uint32_t len)
{
    uint64_t t0 = dnn64_ticks(), t1;
    int flying = dnn64_platform_read_start(dst, offset, len);
    t1 = dnn64_ticks();
    stats.read_ticks += t1 - t0;
    stats.reads += len != 0;
    if (!flying) { /* done before returning: the CPU waited for it */
        stats.sync_bytes += len;
        return;
    }
    stats.async_bytes += len;
    flying_bytes = len;
    flying_since = t1;
    flying_reads = stats.read_ticks;
}

void dnn64_asset_read_wait(void)
{
    uint64_t t0 = dnn64_ticks();
    if (flying_bytes != 0) {
        /* the CPU's own work while the bytes flew: reads made meanwhile left out */
        uint32_t ticks = clamp32(t0 - flying_since - (stats.read_ticks - flying_reads));
        if (stats.spans < DNN64_CART_SPANS) {
            stats.span[stats.spans].bytes = flying_bytes;
            stats.span[stats.spans].ticks = ticks;
            stats.spans++;
        } else {
            stats.spans_past++; /* not logged: dnn64build charges its bytes whole */
        }
        flying_bytes = 0;
    }
    dnn64_platform_read_wait();
    stats.read_ticks += dnn64_ticks() - t0;
}

static void close_step(uint64_t now)
{
    dnn64_cart_step_record *rec;
    if (!step_open)
        return;
    step_open = 0;
    if (stats.steps < DNN64_CART_STEPS) {
        rec = &stats.step[stats.steps++];
        rec->index = step_index;
        rec->sync_bytes = rec->async_bytes = rec->ticks = 0;
    } else {
        rec = &stats.step[DNN64_CART_STEPS - 1u];
        stats.steps_past++;
    }
    rec->sync_bytes = clamp32(rec->sync_bytes + (stats.sync_bytes - step_sync));
    rec->async_bytes = clamp32(rec->async_bytes + (stats.async_bytes - step_async));
    rec->ticks = clamp32((uint64_t)rec->ticks + (now - step_since));
}

void dnn64_cart_reset(void)
{
    stats.sync_bytes = stats.async_bytes = stats.read_ticks = 0;
    stats.reads = stats.spans = stats.steps = stats.spans_past = stats.steps_past = 0;
    flying_bytes = 0;
    step_open = 0;
}

void dnn64_cart_step(uint32_t index)
{
    uint64_t now = dnn64_ticks();
    close_step(now);
    step_open = 1;
    step_index = index;
    step_since = now;
    step_sync = stats.sync_bytes;
    step_async = stats.async_bytes;
}

void dnn64_cart_finish(void)
{
    close_step(dnn64_ticks());
}

const dnn64_cart_stats *dnn64_cart_stats_now(void)
{
    return &stats;
}

void dnn64_cart_print(const char *symbol)
{
    dnn64_line line;
    uint32_t i;
    dnn64_line_begin(&line, "CART ");
    dnn64_line_str(&line, symbol);
    dnn64_line_u64(&line, stats.sync_bytes);
    dnn64_line_u64(&line, stats.async_bytes);
    dnn64_line_u64(&line, stats.read_ticks);
    dnn64_line_u32(&line, stats.reads);
    dnn64_line_u32(&line, stats.spans);
    dnn64_line_u32(&line, stats.steps);
    dnn64_line_u32(&line, stats.spans_past);
    dnn64_line_u32(&line, stats.steps_past);
    dnn64_line_end(&line);
    for (i = 0; i < stats.spans; i++) {
        if (i % 6u == 0) {
            dnn64_line_begin(&line, "CARTS ");
            dnn64_line_str(&line, symbol);
            dnn64_line_u32(&line, i);
        }
        dnn64_line_u32(&line, stats.span[i].bytes);
        dnn64_line_u32(&line, stats.span[i].ticks);
        if (i % 6u == 5u || i + 1u == stats.spans)
            dnn64_line_end(&line);
    }
    for (i = 0; i < stats.steps; i++) {
        dnn64_line_begin(&line, "CARTN ");
        dnn64_line_str(&line, symbol);
        dnn64_line_u32(&line, stats.step[i].index);
        dnn64_line_u32(&line, stats.step[i].sync_bytes);
        dnn64_line_u32(&line, stats.step[i].async_bytes);
        dnn64_line_u32(&line, stats.step[i].ticks);
        dnn64_line_end(&line);
    }
}
