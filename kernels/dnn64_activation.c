/* fp32 activations, applied fused (per output value) or as a stand-alone kernel. */
#include "dnn64_internal.h"
#include "dnn64_math.h"

/* ln(1 + exp(x)) without overflow: x + ln(1 + exp(-x)) for x > 0. */
static float dnn64__softplusf(float v)
{
    const float e = dnn64_expf(v > 0.0f ? -v : v);
    /* ln(1 + e) = e - e^2 / 2 (+ e^3 / 3, below rounding) where 1 + e would round */
    const float l = e < 2.44140625e-4f ? e - 0.5f * e * e : dnn64_logf(1.0f + e);
    return v > 0.0f ? v + l : l;
}

/* The unary element-wise ops (kinds from DNN64_ACT_NEG on). */
static float dnn64__unary_f32(const dnn64_act_f32 *act, float v)
{
    switch (act->kind) {
    case DNN64_ACT_NEG:
        return -v;
    case DNN64_ACT_ABS:
        return v < 0.0f ? -v : v;
    case DNN64_ACT_EXP:
        return dnn64_expf(v);
    case DNN64_ACT_LOG:
        return dnn64_logf(v);
    case DNN64_ACT_SQRT:
        return dnn64_sqrtf(v);
    case DNN64_ACT_RECIPROCAL:
        return 1.0f / v;
    case DNN64_ACT_SIGN:
        return v > 0.0f ? 1.0f : (v < 0.0f ? -1.0f : v);
    case DNN64_ACT_ERF:
        return dnn64_erff(v);
    case DNN64_ACT_GELU:
        return 0.5f * v * (1.0f + dnn64_erff(v * 0.707106781f));
    case DNN64_ACT_GELU_TANH:
        return 0.5f * v * (1.0f + dnn64_tanhf(0.797884561f * (v + 0.044715f * v * v * v)));
    case DNN64_ACT_ELU:
        return v < 0.0f ? act->alpha * dnn64_expm1f(v) : v;
    case DNN64_ACT_SELU:
        return act->beta * (v <= 0.0f ? act->alpha * dnn64_expm1f(v) : v);
    case DNN64_ACT_CELU:
        return v > 0.0f ? v : act->alpha * dnn64_expm1f(v / act->alpha);
    case DNN64_ACT_THRESHOLDED_RELU:
        return v > act->alpha ? v : 0.0f;
    case DNN64_ACT_SOFTPLUS:
        return dnn64__softplusf(v);
    case DNN64_ACT_SOFTSIGN:
        return v / (1.0f + (v < 0.0f ? -v : v));
    case DNN64_ACT_MISH:
        return v * dnn64_tanhf(dnn64__softplusf(v));
    case DNN64_ACT_SHRINK:
        return v < -act->alpha ? v + act->beta : (v > act->alpha ? v - act->beta : 0.0f);
    case DNN64_ACT_SWISH:
        return v * dnn64_sigmoidf(act->alpha * v);
    default:
        return v;
    }
}

float dnn64__act_f32(const dnn64_act_f32 *act, float v)
{
    float t;
    if (!act)
        return v;
    switch (act->kind) {
    case DNN64_ACT_RELU:
        return v > 0.0f ? v : 0.0f;
    case DNN64_ACT_CLIP:
        v = v < act->alpha ? act->alpha : v;
        return v > act->beta ? act->beta : v;
    case DNN64_ACT_LEAKY_RELU:
        return v < 0.0f ? act->alpha * v : v;
    case DNN64_ACT_SIGMOID:
        return dnn64_sigmoidf(v);
    case DNN64_ACT_TANH:
        return dnn64_tanhf(v);
    case DNN64_ACT_HARD_SIGMOID:
        t = act->alpha * v + act->beta;
        return t < 0.0f ? 0.0f : (t > 1.0f ? 1.0f : t);
    case DNN64_ACT_HARD_SWISH:
        t = v * (1.0f / 6.0f) + 0.5f;
        return v * (t < 0.0f ? 0.0f : (t > 1.0f ? 1.0f : t));
    case DNN64_ACT_SILU:
        return v * dnn64_sigmoidf(v);
    default:
        return dnn64__unary_f32(act, v);
    }
}

void dnn64_activation_f32(const dnn64_act_f32 *act, const float *x, float *y, int32_t count)
{
    int32_t i;
    for (i = 0; i < count; ++i)
        y[i] = dnn64__act_f32(act, x[i]);
}
