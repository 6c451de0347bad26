/* ReduceMean, ReduceSum and ReduceMax over any set of axes (rank <= 6), fp32 and int8. */
#include "dnn64_internal.h"

/* The kept and reduced dims of a reduction, each with its input stride. */
typedef struct {
    int32_t n_kept, n_red;
    int32_t kept_dims[DNN64_MAX_DIMS], kept_strides[DNN64_MAX_DIMS];
    int32_t red_dims[DNN64_MAX_DIMS], red_strides[DNN64_MAX_DIMS];
    int32_t out_count, red_count;
} dnn64__reduce_plan;

static void dnn64__reduce_split(int32_t rank, const int32_t *in_dims, int32_t axes_mask,
                                dnn64__reduce_plan *r)
{
    int32_t d, stride = 1;
    r->n_kept = r->n_red = 0;
    r->out_count = r->red_count = 1;
    for (d = rank - 1; d >= 0; --d) {
        /* stored innermost first so that the odometers below step the last dim fastest */
        if (axes_mask & (1 << d)) {
            r->red_dims[r->n_red] = in_dims[d];
            r->red_strides[r->n_red++] = stride;
            r->red_count *= in_dims[d];
        } else {
            r->kept_dims[r->n_kept] = in_dims[d];
            r->kept_strides[r->n_kept++] = stride;
            r->out_count *= in_dims[d];
        }
        stride *= in_dims[d];
    }
}

/* Whether the reduced dims are the last n_red: then output o sums the red_count
 * contiguous elements from o * red_count. */
static int dnn64__reduce_trailing(int32_t rank, int32_t axes_mask, const dnn64__reduce_plan *r)
{
    return axes_mask == (((1 << rank) - 1) & ~((1 << (rank - r->n_red)) - 1));
}

/* Advance an odometer (innermost first); returns the change of the input offset. */
static int32_t dnn64__odo_step(int32_t n, const int32_t *dims, const int32_t *strides,
                               int32_t *idx)
{
    int32_t d, delta = 0;
    for (d = 0; d < n; ++d) {
        delta += strides[d];
        if (++idx[d] < dims[d])
            return delta;
        delta -= strides[d] * dims[d];
        idx[d] = 0;
    }
    return delta;
}

/* Every output's reduced elements folded into ACC_T acc_ (from INIT, which may read x[base_],
 * the output's first reduced element, by COMBINE(acc_, v)) in increasing input offset
 * order; EMIT(o, acc) writes output o. */
#define DNN64__REDUCE(r, x, ACC_T, INIT, COMBINE, EMIT)                                    \
    do {                                                                                   \
        int32_t kidx_[DNN64_MAX_DIMS] = {0}, ridx_[DNN64_MAX_DIMS];                        \
        int32_t o_, e_, d_, base_ = 0;                                                     \
        for (o_ = 0; o_ < (r).out_count; ++o_) {                                           \
            ACC_T acc_ = (INIT);                                                           \
            int32_t off_ = base_;                                                          \
            for (d_ = 0; d_ < DNN64_MAX_DIMS; ++d_)                                        \
                ridx_[d_] = 0;                                                             \
            for (e_ = 0; e_ < (r).red_count; ++e_) {                                       \
                COMBINE(acc_, (x)[off_]);                                                  \
                off_ += dnn64__odo_step((r).n_red, (r).red_dims, (r).red_strides, ridx_);  \
            }                                                                              \
            EMIT(o_, acc_);                                                                \
            base_ += dnn64__odo_step((r).n_kept, (r).kept_dims, (r).kept_strides, kidx_);  \
        }                                                                                  \
    } while (0)
#define DNN64__ADD(acc, v) acc += (v)
/* v > acc fails for a NaN acc: a NaN first element stays; a later NaN is skipped. */
#define DNN64__MAX(acc, v) acc = (v) > acc ? (v) : acc
#define DNN64__REDUCE_SUMS(r, x, ACC_T, EMIT) DNN64__REDUCE(r, x, ACC_T, 0, DNN64__ADD, EMIT)

void dnn64_reduce_mean_f32(int32_t rank, const int32_t *in_dims, int32_t axes_mask,
                           const float *x, float *y)
{
    dnn64__reduce_plan r;
    float inv;
    dnn64__reduce_split(rank, in_dims, axes_mask, &r);
    inv = 1.0f / (float)r.red_count;
#define DNN64__EMIT_F32(o, acc) y[o] = (acc) * inv
    DNN64__REDUCE_SUMS(r, x, float, DNN64__EMIT_F32);
#undef DNN64__EMIT_F32
}

void dnn64_reduce_mean_s8(int32_t rank, const int32_t *in_dims, int32_t axes_mask,
                          int32_t x_zero_point, int32_t mult, int32_t shift,
                          int32_t out_zero_point, const int8_t *x, int8_t *y)
{
    dnn64__reduce_plan r;
    int32_t o;
    dnn64__reduce_split(rank, in_dims, axes_mask, &r);
#define DNN64__EMIT_S8(o, acc)                                                              \
    y[o] = dnn64__reduce_mean_out_s8(acc, r.red_count, x_zero_point, mult, shift,          \
                                     out_zero_point)
    if (dnn64__reduce_trailing(rank, axes_mask, &r)) {
        for (o = 0; o < r.out_count; ++o) {
            DNN64__EMIT_S8(o, dnn64__sum_s8(x + o * r.red_count, r.red_count));
        }
        return;
    }
    DNN64__REDUCE_SUMS(r, x, int32_t, DNN64__EMIT_S8);
#undef DNN64__EMIT_S8
}

/* --- structural operators (issue 22): ReduceSum, ReduceMax --- */

void dnn64_reduce_sum_f32(int32_t rank, const int32_t *in_dims, int32_t axes_mask,
                          const float *x, float *y)
{
    dnn64__reduce_plan r;
    dnn64__reduce_split(rank, in_dims, axes_mask, &r);
#define DNN64__EMIT_F32(o, acc) y[o] = (acc)
    DNN64__REDUCE_SUMS(r, x, float, DNN64__EMIT_F32);
#undef DNN64__EMIT_F32
}

#define DNN64__REDUCE_MAX_BODY(T)                                                           \
    dnn64__reduce_plan r;                                                                   \
    dnn64__reduce_split(rank, in_dims, axes_mask, &r);                                      \
    DNN64__REDUCE(r, x, T, x[base_], DNN64__MAX, DNN64__EMIT_MAX)
#define DNN64__EMIT_MAX(o, acc) y[o] = (acc)

void dnn64_reduce_max_f32(int32_t rank, const int32_t *in_dims, int32_t axes_mask,
                          const float *x, float *y)
{
    DNN64__REDUCE_MAX_BODY(float);
}

void dnn64_reduce_max_s8(int32_t rank, const int32_t *in_dims, int32_t axes_mask,
                         const int8_t *x, int8_t *y)
{
    DNN64__REDUCE_MAX_BODY(int8_t);
}
