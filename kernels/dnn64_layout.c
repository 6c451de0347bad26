/*
 * Type-agnostic data movement: Concat (one input per call), Pad, Transpose.
 * Elements are moved as 1-, 2- or 4-byte words, never interpreted.
 */
#include "dnn64_internal.h"

/* Copy `count` elements with source stride `sx` (elements) to contiguous y. */
static void dnn64__copy(int32_t elem_size, const void *x, int32_t sx, void *y, int32_t count)
{
    int32_t i;
    if (sx == 1) { /* the platform's word-wise memcpy */
        __builtin_memcpy(y, x, (size_t)count * (size_t)elem_size);
        return;
    }
    if (elem_size == 4) {
        const uint32_t *s = (const uint32_t *)x;
        uint32_t *d = (uint32_t *)y;
        for (i = 0; i < count; ++i)
            d[i] = s[i * sx];
    } else if (elem_size == 2) {
        const uint16_t *s = (const uint16_t *)x;
        uint16_t *d = (uint16_t *)y;
        for (i = 0; i < count; ++i)
            d[i] = s[i * sx];
    } else {
        const uint8_t *s = (const uint8_t *)x;
        uint8_t *d = (uint8_t *)y;
        for (i = 0; i < count; ++i)
            d[i] = s[i * sx];
    }
}

static const void *dnn64__at_c(const void *p, int32_t elem_size, int32_t i)
{
    return (const uint8_t *)p + (size_t)i * (size_t)elem_size;
}

static void *dnn64__at(void *p, int32_t elem_size, int32_t i)
{
    return (uint8_t *)p + (size_t)i * (size_t)elem_size;
}

void dnn64_concat_copy(int32_t elem_size, int32_t outer, int32_t x_span, int32_t y_span,
                       int32_t y_offset, const void *x, void *y)
{
    int32_t o;
    for (o = 0; o < outer; ++o)
        dnn64__copy(elem_size, dnn64__at_c(x, elem_size, o * x_span), 1,
                    dnn64__at(y, elem_size, o * y_span + y_offset), x_span);
}

void dnn64_gather(int32_t elem_size, int32_t outer, int32_t rows, int32_t inner,
                  const void *x, const int32_t *indices, int32_t count, void *y)
{
    int32_t o, j;
    for (o = 0; o < outer; ++o)
        for (j = 0; j < count; ++j) {
            int32_t row = indices[j] < 0 ? indices[j] + rows : indices[j];
            row = row < 0 ? 0 : (row >= rows ? rows - 1 : row);
            dnn64__copy(elem_size, dnn64__at_c(x, elem_size, (o * rows + row) * inner), 1,
                        dnn64__at(y, elem_size, (o * count + j) * inner), inner);
        }
}

/* The source index of padded index `i` along a dim of size n, or -1 (constant fill). */
static int32_t dnn64__pad_src(int32_t i, int32_t n, int32_t mode)
{
    if (i >= 0 && i < n)
        return i;
    if (mode == DNN64_PAD_EDGE)
        return i < 0 ? 0 : n - 1;
    if (mode == DNN64_PAD_REFLECT) {
        const int32_t period = 2 * (n - 1);
        if (period == 0)
            return 0;
        i %= period;
        if (i < 0)
            i += period;
        return i < n ? i : period - i;
    }
    return -1;
}

static void dnn64__row_strides(int32_t rank, const int32_t *dims, int32_t *strides)
{
    int32_t d, s = 1;
    for (d = rank - 1; d >= 0; --d) {
        strides[d] = s;
        s *= dims[d];
    }
}

/* Trailing dims that Pad leaves alone (no pad, same size) from `rank` on, merged: the
 * rank of the rest plus one; their product multiplies dims[rank - 1] in *merged. */
static int32_t dnn64__pad_rank(int32_t rank, const int32_t *in_dims, const int32_t *pads_begin,
                               const int32_t *out_dims, int32_t *merged)
{
    *merged = 1;
    while (rank > 1 && pads_begin[rank - 1] == 0 && in_dims[rank - 1] == out_dims[rank - 1]) {
        *merged *= in_dims[rank - 1];
        --rank;
    }
    return rank;
}

void dnn64_pad(int32_t elem_size, int32_t rank, const int32_t *in_dims,
               const int32_t *pads_begin, const int32_t *out_dims, int32_t mode,
               const void *value, const void *x, void *y)
{
    static const uint32_t zero = 0;
    int32_t in_strides[DNN64_MAX_DIMS], idx[DNN64_MAX_DIMS];
    int32_t merged;
    const int32_t last = dnn64__pad_rank(rank, in_dims, pads_begin, out_dims, &merged) - 1;
    /* a row: dim `last`'s elements, each `merged` elements that move together */
    const int32_t row = out_dims[last], unit = elem_size * merged;
    int32_t d, r, rows = 1, i;
    if (!value)
        value = &zero;
    dnn64__row_strides(last + 1, in_dims, in_strides);
    for (d = 0; d < last; ++d) {
        rows *= out_dims[d];
        idx[d] = 0;
    }
    for (r = 0; r < rows; ++r) {
        uint8_t *yr = (uint8_t *)y + (size_t)r * (size_t)row * (size_t)unit;
        int32_t base = 0, inside = 1;
        for (d = 0; d < last; ++d) {
            const int32_t s = dnn64__pad_src(idx[d] - pads_begin[d], in_dims[d], mode);
            if (s < 0)
                inside = 0;
            else
                base += s * in_strides[d];
        }
        for (i = 0; i < row; ++i) {
            const int32_t s = inside ? dnn64__pad_src(i - pads_begin[last], in_dims[last], mode)
                                     : -1;
            int32_t run = 1; /* elements copied from consecutive sources at once */
            if (s < 0) {
                for (d = 0; d < merged; ++d)
                    dnn64__copy(elem_size, value, 0, yr + (size_t)(i * merged + d) * elem_size,
                                1);
                continue;
            }
            while (i + run < row && s + run < in_dims[last] &&
                   i + run - pads_begin[last] == s + run)
                ++run;
            dnn64__copy(elem_size, (const uint8_t *)x + (size_t)(base + s) * (size_t)unit, 1,
                        yr + (size_t)i * (size_t)unit, run * merged);
            i += run - 1;
        }
        for (d = last - 1; d >= 0; --d) {
            if (++idx[d] < out_dims[d])
                break;
            idx[d] = 0;
        }
    }
}

void dnn64_transpose(int32_t elem_size, int32_t rank, const int32_t *in_dims,
                     const int32_t *perm, const void *x, void *y)
{
    int32_t in_strides[DNN64_MAX_DIMS], out_dims[DNN64_MAX_DIMS], src_strides[DNN64_MAX_DIMS];
    int32_t d;
    dnn64__row_strides(rank, in_dims, in_strides);
    for (d = 0; d < rank; ++d) {
        out_dims[d] = in_dims[perm[d]];
        src_strides[d] = in_strides[perm[d]];
    }
    dnn64_strided_copy(elem_size, rank, out_dims, src_strides, x, y);
}

void dnn64_strided_copy(int32_t elem_size, int32_t rank, const int32_t *out_dims,
                        const int32_t *src_strides, const void *x, void *y)
{
    int32_t idx[DNN64_MAX_DIMS], dims[DNN64_MAX_DIMS], strides[DNN64_MAX_DIMS];
    int32_t last = 0, d, r, rows = 1, off = 0;
    /* merge each dim into the one before when the source runs on across them (a
       Transpose's unmoved trailing dims become one contiguous row) */
    dims[0] = out_dims[0];
    strides[0] = src_strides[0];
    for (d = 1; d < rank; ++d) {
        if (dims[last] == 1 || strides[last] == src_strides[d] * out_dims[d]) {
            dims[last] *= out_dims[d];
            strides[last] = src_strides[d];
        } else {
            ++last;
            dims[last] = out_dims[d];
            strides[last] = src_strides[d];
        }
    }
    for (d = 0; d <= last; ++d)
        idx[d] = 0;
    for (d = 0; d < last; ++d)
        rows *= dims[d];
    for (r = 0; r < rows; ++r) {
        dnn64__copy(elem_size, dnn64__at_c(x, elem_size, off), strides[last],
                    dnn64__at(y, elem_size, r * dims[last]), dims[last]);
        for (d = last - 1; d >= 0; --d) {
            off += strides[d];
            if (++idx[d] < dims[d])
                break;
            off -= strides[d] * dims[d];
            idx[d] = 0;
        }
    }
}

void dnn64_select(int32_t elem_size, const dnn64_bcast *bc, const uint8_t *mask, const void *a,
                  const void *b, void *y)
{
    int32_t idx[DNN64_MAX_DIMS];
    int32_t d, i, count = 1, oa = 0, ob = 0;
    for (d = 0; d < bc->rank; ++d) {
        idx[d] = 0;
        count *= bc->dims[d];
    }
    for (i = 0; i < count; ++i) {
        if (mask[i])
            dnn64__copy(elem_size, dnn64__at_c(a, elem_size, oa), 1, dnn64__at(y, elem_size, i), 1);
        else
            dnn64__copy(elem_size, dnn64__at_c(b, elem_size, ob), 1, dnn64__at(y, elem_size, i), 1);
        for (d = bc->rank - 1; d >= 0; --d) {
            oa += bc->a_strides[d];
            ob += bc->b_strides[d];
            if (++idx[d] < bc->dims[d])
                break;
            oa -= bc->a_strides[d] * bc->dims[d];
            ob -= bc->b_strides[d] * bc->dims[d];
            idx[d] = 0;
        }
    }
}
