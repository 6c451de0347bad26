/*
 * Element-wise binary ops with numpy broadcasting, fp32 and int8. The
 * broadcast walk visits the output row by row (the last dim is the row);
 * each op is a tight loop over one row with constant input strides.
 */
#include "dnn64_internal.h"
#include "dnn64_math.h"

/* Odometer over the output's outer dims, tracking the two input offsets. */
typedef struct {
    int32_t idx[DNN64_MAX_DIMS];
    int32_t a_off, b_off;
} dnn64__bcast_it;

static int32_t dnn64__bcast_rows(const dnn64_bcast *bc)
{
    int32_t d, rows = 1;
    for (d = 0; d + 1 < bc->rank; ++d)
        rows *= bc->dims[d];
    return rows;
}

static void dnn64__bcast_next(const dnn64_bcast *bc, dnn64__bcast_it *it)
{
    int32_t d;
    for (d = bc->rank - 2; d >= 0; --d) {
        it->a_off += bc->a_strides[d];
        it->b_off += bc->b_strides[d];
        if (++it->idx[d] < bc->dims[d])
            return;
        it->a_off -= bc->a_strides[d] * bc->dims[d];
        it->b_off -= bc->b_strides[d] * bc->dims[d];
        it->idx[d] = 0;
    }
}

static void dnn64__bcast_start(dnn64__bcast_it *it)
{
    int32_t d;
    for (d = 0; d < DNN64_MAX_DIMS; ++d)
        it->idx[d] = 0;
    it->a_off = it->b_off = 0;
}

/* Loop skeleton shared by every op: ROW(ar, sa, br, sb, yr, len) handles one row. */
#define DNN64__FOR_ROWS(bc, a, b, y, ROW)                                               \
    do {                                                                                \
        const int32_t last_ = (bc)->rank - 1, len_ = (bc)->dims[last_];                 \
        const int32_t sa_ = (bc)->a_strides[last_], sb_ = (bc)->b_strides[last_];       \
        int32_t r_, rows_ = dnn64__bcast_rows(bc);                                      \
        dnn64__bcast_it it_;                                                            \
        dnn64__bcast_start(&it_);                                                       \
        for (r_ = 0; r_ < rows_; ++r_) {                                                \
            ROW((a) + it_.a_off, sa_, (b) + it_.b_off, sb_, (y) + r_ * len_, len_);     \
            dnn64__bcast_next(bc, &it_);                                                \
        }                                                                               \
    } while (0)

static void dnn64__row_f32(int32_t op, const float *a, int32_t sa, const float *b, int32_t sb,
                           float *y, int32_t len)
{
    int32_t i;
    switch (op) {
    case DNN64_BINARY_ADD:
        for (i = 0; i < len; ++i)
            y[i] = a[i * sa] + b[i * sb];
        break;
    case DNN64_BINARY_SUB:
        for (i = 0; i < len; ++i)
            y[i] = a[i * sa] - b[i * sb];
        break;
    case DNN64_BINARY_MUL:
        for (i = 0; i < len; ++i)
            y[i] = a[i * sa] * b[i * sb];
        break;
    case DNN64_BINARY_MAX:
        for (i = 0; i < len; ++i)
            y[i] = a[i * sa] > b[i * sb] ? a[i * sa] : b[i * sb];
        break;
    case DNN64_BINARY_MIN:
        for (i = 0; i < len; ++i)
            y[i] = a[i * sa] < b[i * sb] ? a[i * sa] : b[i * sb];
        break;
    case DNN64_BINARY_PRELU:
        for (i = 0; i < len; ++i)
            y[i] = a[i * sa] < 0.0f ? a[i * sa] * b[i * sb] : a[i * sa];
        break;
    case DNN64_BINARY_POW:
        for (i = 0; i < len; ++i)
            y[i] = dnn64_powf(a[i * sa], b[i * sb]);
        break;
    default:
        for (i = 0; i < len; ++i)
            y[i] = a[i * sa] / b[i * sb];
        break;
    }
}

void dnn64_binary_f32(int32_t op, const dnn64_bcast *bc, const float *a, const float *b,
                      float *y)
{
#define DNN64__ROW_F32(ar, sa, br, sb, yr, len) dnn64__row_f32(op, ar, sa, br, sb, yr, len)
    DNN64__FOR_ROWS(bc, a, b, y, DNN64__ROW_F32);
#undef DNN64__ROW_F32
}

/* TFLite int8 add/sub: each input is first rescaled on its own (a function of
 * its 256 possible values), then their sum or difference is requantised. */
static int32_t dnn64__add_side(int32_t v, int32_t zero_point, int32_t mult, int32_t shift,
                               const dnn64_add_s8_params *p)
{
    return dnn64__mbqm((v - zero_point) * (1 << p->left_shift), mult, shift);
}

/* The second step, from the two rescaled inputs; `sign` is +1 (add) or -1 (sub). */
static int8_t dnn64__add_out(int32_t as, int32_t bs, int32_t sign, const dnn64_add_s8_params *p)
{
    const int32_t raw = dnn64__mbqm(sign > 0 ? as + bs : as - bs, p->out_mult, p->out_shift);
    return (int8_t)(dnn64__clamp(raw, p->act_min - p->out_zero_point,
                                 p->act_max - p->out_zero_point) + p->out_zero_point);
}

/* From this many elements on, tables (512 requantisations to build) pay for themselves. */
#define DNN64__ADD_TABLES_FROM 1024

/* The output stage folded into per-input tables. With as, bs the rescaled inputs
 * (dnn64__add_side), s = as + sign bs, M = out_mult > 0 and e = -out_shift >= 1, the
 * output before the clamp is zp + rdbp(srdhm(s, M), e), where srdhm(s, M) = S =
 * floor((s M + 2^30) / 2^31) and rdbp rounds half away from zero: floor((S + 2^(e-1)) /
 * 2^e) for S >= 0, floor((S + 2^(e-1) - 1) / 2^e) for S < 0 (S = 0 gives 0 either way,
 * so the sign of s, which is S's sign or s < 0 = S, may stand for it). Nested floors
 * merge (floor((floor(X / m) + k) / n) = floor((X + k m) / (m n)) for integers), so with
 * W = floor((s M + 2^30 + 2^(30+e)) / 2^31) + zp 2^e the output is floor(W / 2^e) when
 * s >= 0 and floor((W - 1) / 2^e) when s < 0.
 * The tables hold ta[x] = floor((as(x) M + 2^30) / 2^31) + 2^(e-1) + zp 2^e and
 * tb[x] = floor(bs(x) (sign M) / 2^31), so t = ta[a] + tb[b] is W or W - 1 (a sum of
 * floors loses at most one). When t mod 2^e is neither 0 nor 2^e - 1, t, W - 1 and W
 * share their floor by 2^e, the output whatever the sign: t >> e. The other sums (2 in
 * 2^e of them) take the exact path. Every table entry lies in [-2^30, 2^30), so t does
 * not overflow; parameters that do not allow it (out_shift >= 0, out_mult <= 0, entries
 * out of range) take the exact path for every element. */
typedef struct {
    const int32_t *ta, *tb; /* 256 entries each, indexed by the input + 128 */
    int32_t e;
    uint32_t mask; /* 2^e - 1 */
    int32_t built[512]; /* ta, tb when built here */
} dnn64__add_tables;

/* Fills t, from p->tables when the compiler built them; returns 0 when the parameters
 * do not allow folding. */
static int dnn64__add_tables_of(const dnn64_add_s8_params *p, int32_t sign, dnn64__add_tables *t)
{
    const int32_t e = -p->out_shift, m = p->out_mult;
    int32_t v;
    if (e < 1 || e > 30 || m <= 0)
        return 0;
    t->e = e;
    t->mask = ((uint32_t)1 << e) - 1u;
    t->ta = p->tables ? p->tables : t->built;
    t->tb = t->ta + 256;
    if (p->tables)
        return 1;
    for (v = -128; v < 128; ++v) {
        const int64_t a = (int64_t)dnn64__mul_floor31(
                              dnn64__add_side(v, p->a_zero_point, p->a_mult, p->a_shift, p), m,
                              0x40000000u) +
                          ((int64_t)1 << (e - 1)) + (int64_t)p->out_zero_point * ((int64_t)1 << e);
        const int32_t b = dnn64__mul_floor31(
            dnn64__add_side(v, p->b_zero_point, p->b_mult, p->b_shift, p), sign * m, 0u);
        if (a < -0x40000000 || a >= 0x40000000 || b < -0x40000000 || b >= 0x40000000)
            return 0;
        t->built[v + 128] = (int32_t)a;
        t->built[v + 384] = b;
    }
    return 1;
}

/* Rows through the folded tables: per element two table loads, an add, a test, a
 * shift and the clamp. The params are copied so that stores through y (int8_t *, which
 * may alias anything) do not make the compiler reload them for every element. */
static void dnn64__row_add_tables_s8(const int8_t *a, int32_t sa, const int8_t *b, int32_t sb,
                                     int8_t *y, int32_t len, int32_t sign,
                                     const dnn64_add_s8_params *params,
                                     const dnn64__add_tables *t)
{
    const dnn64_add_s8_params p = *params;
    const int32_t *ta = t->ta + 128, *tb = t->tb + 128, e = t->e;
    const uint32_t mask = t->mask;
    int32_t i;
    for (i = 0; i < len; ++i) {
        const int32_t av = a[i * sa], bv = b[i * sb], s = ta[av] + tb[bv];
        /* >> of a negative: arithmetic (dnn64__arithmetic_shift) */
        if ((((uint32_t)s + 1u) & mask) > 1u)
            y[i] = (int8_t)dnn64__clamp(s >> e, p.act_min, p.act_max);
        else
            y[i] = dnn64__add_out(
                dnn64__add_side(av, p.a_zero_point, p.a_mult, p.a_shift, &p),
                dnn64__add_side(bv, p.b_zero_point, p.b_mult, p.b_shift, &p), sign, &p);
    }
}

/* Dense rows (stride 1) through the folded tables, four elements a pass with one test
 * for the four: when every sum is off its rounding edge and every t >> e lies in
 * [act_min, act_max] (the clamp a no-op), the outputs are stored as they are; otherwise
 * the four take dnn64__row_add_tables_s8. Each output depends only on the inputs at its
 * own index, so y may be a or b (in place). */
static void dnn64__dense_add_tables_s8(const int8_t *a, const int8_t *b, int8_t *y,
                                       int32_t len, int32_t sign,
                                       const dnn64_add_s8_params *params,
                                       const dnn64__add_tables *t)
{
    const int32_t *ta = t->ta + 128, *tb = t->tb + 128, e = t->e;
    const int32_t act_min = params->act_min;
    const uint32_t mask = t->mask, range = (uint32_t)(params->act_max - act_min);
    int32_t i;
    for (i = 0; i + 4 <= len; i += 4) {
        const int32_t s0 = ta[a[i]] + tb[b[i]], s1 = ta[a[i + 1]] + tb[b[i + 1]];
        const int32_t s2 = ta[a[i + 2]] + tb[b[i + 2]], s3 = ta[a[i + 3]] + tb[b[i + 3]];
        /* >> of a negative: arithmetic (dnn64__arithmetic_shift) */
        const int32_t r0 = s0 >> e, r1 = s1 >> e, r2 = s2 >> e, r3 = s3 >> e;
        const int edge = ((((uint32_t)s0 + 1u) & mask) < 2u) |
                         ((((uint32_t)s1 + 1u) & mask) < 2u) |
                         ((((uint32_t)s2 + 1u) & mask) < 2u) |
                         ((((uint32_t)s3 + 1u) & mask) < 2u);
        const int clamp = ((uint32_t)(r0 - act_min) > range) | ((uint32_t)(r1 - act_min) > range) |
                          ((uint32_t)(r2 - act_min) > range) | ((uint32_t)(r3 - act_min) > range);
        if (edge | clamp) {
            dnn64__row_add_tables_s8(a + i, 1, b + i, 1, y + i, 4, sign, params, t);
            continue;
        }
        y[i] = (int8_t)r0;
        y[i + 1] = (int8_t)r1;
        y[i + 2] = (int8_t)r2;
        y[i + 3] = (int8_t)r3;
    }
    dnn64__row_add_tables_s8(a + i, 1, b + i, 1, y + i, len - i, sign, params, t);
}

/* Without tables, for small tensors and parameters that do not fold. */
static void dnn64__row_add_direct_s8(const int8_t *a, int32_t sa, const int8_t *b, int32_t sb,
                                     int8_t *y, int32_t len, int32_t sign,
                                     const dnn64_add_s8_params *p)
{
    int32_t i;
    for (i = 0; i < len; ++i)
        y[i] = dnn64__add_out(dnn64__add_side(a[i * sa], p->a_zero_point, p->a_mult,
                                              p->a_shift, p),
                              dnn64__add_side(b[i * sb], p->b_zero_point, p->b_mult,
                                              p->b_shift, p),
                              sign, p);
}

/* Whether neither input is broadcast: then the op is one row of every element. */
static int dnn64__bcast_dense(const dnn64_bcast *bc)
{
    int32_t d, stride = 1;
    for (d = bc->rank - 1; d >= 0; --d) {
        if (bc->dims[d] != 1 && (bc->a_strides[d] != stride || bc->b_strides[d] != stride))
            return 0;
        stride *= bc->dims[d];
    }
    return 1;
}

static void dnn64__add_or_sub_s8(const dnn64_bcast *bc, const int8_t *a, const int8_t *b,
                                 const dnn64_add_s8_params *p, int32_t sign, int8_t *y)
{
    const int32_t count = dnn64__bcast_rows(bc) * bc->dims[bc->rank - 1];
    dnn64__add_tables t;
    if ((count < DNN64__ADD_TABLES_FROM && !p->tables) || !dnn64__add_tables_of(p, sign, &t)) {
#define DNN64__ROW_ADD(ar, sa, br, sb, yr, len) \
    dnn64__row_add_direct_s8(ar, sa, br, sb, yr, len, sign, p)
        DNN64__FOR_ROWS(bc, a, b, y, DNN64__ROW_ADD);
#undef DNN64__ROW_ADD
        return;
    }
    if (dnn64__bcast_dense(bc)) {
        dnn64__dense_add_tables_s8(a, b, y, count, sign, p, &t);
        return;
    }
#define DNN64__ROW_ADD(ar, sa, br, sb, yr, len) \
    dnn64__row_add_tables_s8(ar, sa, br, sb, yr, len, sign, p, &t)
    DNN64__FOR_ROWS(bc, a, b, y, DNN64__ROW_ADD);
#undef DNN64__ROW_ADD
}

void dnn64_add_s8(const dnn64_bcast *bc, const int8_t *a, const int8_t *b,
                  const dnn64_add_s8_params *p, int8_t *y)
{
    dnn64__add_or_sub_s8(bc, a, b, p, 1, y);
}

void dnn64_sub_s8(const dnn64_bcast *bc, const int8_t *a, const int8_t *b,
                  const dnn64_add_s8_params *p, int8_t *y)
{
    dnn64__add_or_sub_s8(bc, a, b, p, -1, y);
}

static int8_t dnn64__mul_out(int32_t v, const dnn64_mul_s8_params *p)
{
    v = dnn64__mbqm(v, p->mult, p->shift);
    return (int8_t)(dnn64__clamp(v, p->act_min - p->out_zero_point,
                                 p->act_max - p->out_zero_point) + p->out_zero_point);
}

static void dnn64__row_mul_s8(const int8_t *a, int32_t sa, const int8_t *b, int32_t sb, int8_t *y,
                              int32_t len, const dnn64_mul_s8_params *params)
{
    /* a copy: stores through y (int8_t *) could alias *params */
    const dnn64_mul_s8_params p = *params;
    int32_t i;
    for (i = 0; i < len; ++i)
        y[i] = dnn64__mul_out((a[i * sa] - p.a_zero_point) * (b[i * sb] - p.b_zero_point), &p);
}

void dnn64_mul_s8(const dnn64_bcast *bc, const int8_t *a, const int8_t *b,
                  const dnn64_mul_s8_params *p, int8_t *y)
{
#define DNN64__ROW_MUL(ar, sa, br, sb, yr, len) dnn64__row_mul_s8(ar, sa, br, sb, yr, len, p)
    DNN64__FOR_ROWS(bc, a, b, y, DNN64__ROW_MUL);
#undef DNN64__ROW_MUL
}

/* (num * 2^16) / den rounded half away from zero; den != 0, |num|, |den| <= 255. */
static int32_t dnn64__div_q16(int32_t num, int32_t den)
{
    int32_t n = (den < 0 ? -num : num) * 65536;
    int32_t d = den < 0 ? -den : den;
    int32_t mag = ((n < 0 ? -n : n) * 2 + d) / (2 * d);
    return n < 0 ? -mag : mag;
}

static void dnn64__row_div_s8(const int8_t *a, int32_t sa, const int8_t *b, int32_t sb, int8_t *y,
                              int32_t len, const dnn64_mul_s8_params *p)
{
    int32_t i;
    for (i = 0; i < len; ++i) {
        const int32_t num = a[i * sa] - p->a_zero_point, den = b[i * sb] - p->b_zero_point;
        if (den != 0)
            y[i] = dnn64__mul_out(dnn64__div_q16(num, den), p);
        else
            y[i] = (int8_t)(num > 0 ? p->act_max
                                    : num < 0 ? p->act_min
                                              : dnn64__clamp(p->out_zero_point, p->act_min,
                                                             p->act_max));
    }
}

void dnn64_div_s8(const dnn64_bcast *bc, const int8_t *a, const int8_t *b,
                  const dnn64_mul_s8_params *p, int8_t *y)
{
#define DNN64__ROW_DIV(ar, sa, br, sb, yr, len) dnn64__row_div_s8(ar, sa, br, sb, yr, len, p)
    DNN64__FOR_ROWS(bc, a, b, y, DNN64__ROW_DIV);
#undef DNN64__ROW_DIV
}

/* int8 Max / Min: each input rescaled to the output steps, then compared. */
static int32_t dnn64__minmax_side(int32_t v, int32_t zero_point, int32_t mult, int32_t shift,
                                  int32_t out_zero_point)
{
    return dnn64__clamp(out_zero_point + dnn64__mbqm(v - zero_point, mult, shift), -128, 127);
}

static void dnn64__minmax_row_s8(int32_t maximum, const int8_t *a, int32_t sa, const int8_t *b,
                                 int32_t sb, const dnn64_minmax_s8_params *p, int8_t *y,
                                 int32_t len)
{
    int32_t i;
    for (i = 0; i < len; ++i) {
        const int32_t ra = dnn64__minmax_side(a[i * sa], p->a_zero_point, p->a_mult,
                                              p->a_shift, p->out_zero_point);
        const int32_t rb = dnn64__minmax_side(b[i * sb], p->b_zero_point, p->b_mult,
                                              p->b_shift, p->out_zero_point);
        y[i] = (int8_t)(maximum ? (ra > rb ? ra : rb) : (ra < rb ? ra : rb));
    }
}

void dnn64_max_s8(const dnn64_bcast *bc, const int8_t *a, const int8_t *b,
                  const dnn64_minmax_s8_params *p, int8_t *y)
{
#define DNN64__ROW_MAX(ar, sa, br, sb, yr, len) dnn64__minmax_row_s8(1, ar, sa, br, sb, p, yr, len)
    DNN64__FOR_ROWS(bc, a, b, y, DNN64__ROW_MAX);
#undef DNN64__ROW_MAX
}

void dnn64_min_s8(const dnn64_bcast *bc, const int8_t *a, const int8_t *b,
                  const dnn64_minmax_s8_params *p, int8_t *y)
{
#define DNN64__ROW_MIN(ar, sa, br, sb, yr, len) dnn64__minmax_row_s8(0, ar, sa, br, sb, p, yr, len)
    DNN64__FOR_ROWS(bc, a, b, y, DNN64__ROW_MIN);
#undef DNN64__ROW_MIN
}
