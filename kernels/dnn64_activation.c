/* fp32 activations, applied fused (per output value) or as a stand-alone kernel. */
#include "dnn64_internal.h"
#include "dnn64_math.h"

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
        return v;
    }
}

void dnn64_activation_f32(const dnn64_act_f32 *act, const float *x, float *y, int32_t count)
{
    int32_t i;
    for (i = 0; i < count; ++i)
        y[i] = dnn64__act_f32(act, x[i]);
}
