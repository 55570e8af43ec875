/* reference.c — naive interpreter of the operator IR, the oracle for every
 * operator: plain loops over the iteration space, double accumulation, the
 * same out-of-bounds rule as the kernels (an access outside a tensor's shape
 * reads the combine's identity). */
#include "ir/ir.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Linear offset of tensor t at axis point pt, or -1 when out of bounds. */
int64_t gs_tensor_offset(const gs_tensor *t, const int64_t *pt, int naxes) {
    int64_t off = 0;
    for (int d = 0; d < t->ndim; d++) {
        int64_t i = t->idx[d].offset;
        for (int a = 0; a < naxes; a++) i += t->idx[d].coeff[a] * pt[a];
        if (i < 0 || i >= t->shape[d]) return -1;
        off = off * t->shape[d] + i;
    }
    return off;
}

/* ---- the epilogue as steps --------------------------------------------------------- */
int gs_epi_steps(const gs_op *op, gs_epi_step *steps) {
    int n = 0;
    steps[n++] = (gs_epi_step){GS_EPI_SCALE, -1, -1};
    if (op->epi.beta != 0.0f) steps[n++] = (gs_epi_step){GS_EPI_ADD_OLD, -1, -1};
    if (op->has_bias && op->epi.bias_axis >= 0)
        steps[n++] = (gs_epi_step){GS_EPI_ADD_BIAS, op->epi.bias_axis, op->bias_group ? op->bias_group - 1 : -1};
    if (op->unary) steps[n++] = (gs_epi_step){GS_EPI_UNARY, -1, -1};
    if (op->epi.relu) steps[n++] = (gs_epi_step){GS_EPI_RELU, -1, -1};
    if (op->clip & GS_CLIP_LO) steps[n++] = (gs_epi_step){GS_EPI_CLIP_LO, -1, -1};
    if (op->clip & GS_CLIP_HI) steps[n++] = (gs_epi_step){GS_EPI_CLIP_HI, -1, -1};
    return n;
}

bool gs_epi_has(const gs_op *op, gs_epi_kind k, int *axis) {
    gs_epi_step st[GS_EPI_MAX_STEPS];
    int n = gs_epi_steps(op, st);
    for (int i = 0; i < n; i++)
        if (st[i].kind == k) {
            if (axis) *axis = st[i].axis;
            return true;
        }
    return false;
}

double gs_unary_eval(gs_unary u, double p, double y) {
    switch (u) {
    case GS_UN_NONE: return y;
    case GS_UN_NEG: return -y;
    case GS_UN_ABS: return fabs(y);
    case GS_UN_EXP: return exp(y);
    case GS_UN_LOG: return log(y);
    case GS_UN_SQRT: return sqrt(y);
    case GS_UN_RSQRT: return 1.0 / sqrt(y + p);
    case GS_UN_RECIP: return 1.0 / y;
    case GS_UN_TANH: return tanh(y);
    case GS_UN_SIGMOID: return 1.0 / (1.0 + exp(-y));
    case GS_UN_ERF: return erf(y);
    case GS_UN_SOFTPLUS: return (y > 0 ? y : 0.0) + log1p(exp(-fabs(y)));
    case GS_UN_SOFTSIGN: return y / (1.0 + fabs(y));
    case GS_UN_FLOOR: return floor(y);
    case GS_UN_CEIL: return ceil(y);
    case GS_UN_ROUND: return nearbyint(y); /* the default rounding mode: half to even */
    case GS_UN_SIGN: return y > 0 ? 1.0 : y < 0 ? -1.0 : y; /* 0 and NaN as they are */
    case GS_UN_SIN: return sin(y);
    case GS_UN_COS: return cos(y);
    case GS_UN_TAN: return tan(y);
    case GS_UN_ASIN: return asin(y);
    case GS_UN_ACOS: return acos(y);
    case GS_UN_ATAN: return atan(y);
    case GS_UN_SINH: return sinh(y);
    case GS_UN_COSH: return cosh(y);
    case GS_UN_ASINH: return asinh(y);
    case GS_UN_ACOSH: return acosh(y);
    case GS_UN_ATANH: return atanh(y);
    case GS_UN_GELU: return 0.5 * y * (1.0 + erf(y * 0.70710678118654752440));
    case GS_UN_GELU_TANH: return 0.5 * y * (1.0 + tanh(0.79788456080286535588 * (y + 0.044715 * y * y * y)));
    case GS_UN_LEAKYRELU: return y < 0 ? p * y : y;
    case GS_UN_ELU: return y < 0 ? p * (exp(y) - 1.0) : y;
    case GS_UN_CELU: /* fmin drops a NaN: 0 + fmin(0, NaN) would be 0 */
        return isnan(y) ? y : (y > 0 ? y : 0.0) + fmin(0.0, p * (exp(y / p) - 1.0));
    case GS_UN_THRESHOLDED_RELU: return y > p ? y : isnan(y) ? y : 0.0;
    case GS_UN_HARDSIGMOID: return isnan(y) ? y : fmax(0.0, fmin(1.0, y + p));
    case GS_UN_HARDSWISH: return isnan(y) ? y : y * fmax(0.0, fmin(1.0, y / 6.0 + 0.5));
    case GS_UN_MISH: return y * tanh((y > 0 ? y : 0.0) + log1p(exp(-fabs(y))));
    case GS_UN_SWISH: return y / (1.0 + exp(-p * y));
    case GS_UN_LOGP: return log(y + p);
    case GS_UN_COUNT: break;
    }
    return y;
}

/* The steps applied to acc at point pt (old: the output's previous value). */
static double epi_eval(const gs_op *op, const float *bias, const int64_t *pt, double acc, double old, int64_t valid) {
    gs_epi_step st[GS_EPI_MAX_STEPS];
    int n = gs_epi_steps(op, st);
    double y = acc;
    for (int i = 0; i < n; i++) {
        switch (st[i].kind) {
        case GS_EPI_SCALE: /* count_valid: over the in-bounds reduce points (a window with none: 0) */
            y = (double)op->epi.alpha * acc;
            if (op->epi.count_valid) y /= (double)(valid > 0 ? valid : 1);
            break;
        case GS_EPI_ADD_OLD: y += (double)op->epi.beta * old; break;
        case GS_EPI_ADD_BIAS: {
            int64_t b = pt[st[i].axis];
            if (st[i].group >= 0) b += pt[st[i].group] * op->axes[st[i].axis].extent; /* a group's channel */
            y += (double)bias[b];
            break;
        }
        case GS_EPI_UNARY: y = gs_unary_eval((gs_unary)op->unary, (double)op->unary_p, y); break;
        case GS_EPI_RELU:
            if (y < 0) y = 0; /* NaN < 0 is false: relu(NaN) = NaN */
            break;
        case GS_EPI_CLIP_LO: /* NaN stays NaN, as in relu */
            if (y < (double)op->clip_lo) y = (double)op->clip_lo;
            break;
        case GS_EPI_CLIP_HI:
            if (y > (double)op->clip_hi) y = (double)op->clip_hi;
            break;
        }
    }
    return y;
}

/* One output point: the reduction over every reduce axis at the spatial
 * point held in pt (its reduce entries are used as the loop counters), then
 * the epilogue. */
double gs_op_reference_point(const gs_op *op, const float *const *ins, const float *bias, int64_t *pt, double old) {
    int rd[GS_MAX_AXES], nrd = 0;
    for (int a = 0; a < op->naxes; a++)
        if (op->axes[a].kind == GS_AXIS_REDUCE) rd[nrd++] = a;
    /* a sum from -0 (acc + v is v for every v, -0 too) without reduce axes, as the kernels start */
    double acc = op->combine == GS_COMBINE_MAX ? -INFINITY : op->combine == GS_COMBINE_MIN ? INFINITY : nrd ? 0.0 : -0.0;
    int64_t valid = 0; /* reduce points whose input-0 read is in bounds (count_valid) */
    for (int i = 0; i < nrd; i++) pt[rd[i]] = 0;
    for (;;) {
        if (gs_combine_eltwise(op->combine)) { /* element-wise: no padding, no reduce axis */
            double v[GS_MAX_TENSORS] = {0};
            for (int t = 0; t < op->ninputs; t++) {
                int64_t o = gs_tensor_offset(&op->tensors[t], pt, op->naxes);
                v[t] = o < 0 ? 0.0 : (double)ins[t][o];
            }
            double a = v[0], b = v[1], r = a;
            switch (op->combine) {
            case GS_COMBINE_SUB: r = a - b; break;
            case GS_COMBINE_DIV: r = a / b; break;
            case GS_COMBINE_POW: r = pow(a, b); break;
            case GS_COMBINE_PRELU: r = a < 0 ? a * b : a; break;
            default: /* max/min over the inputs; a NaN input wins (ir.h's NaN rule) */
                for (int t = 1; t < op->ninputs; t++)
                    if (isnan(v[t]) || (!isnan(r) && (op->combine == GS_COMBINE_MAXE ? v[t] > r : v[t] < r))) r = v[t];
                break;
            }
            acc += r;
        } else if (op->combine == GS_COMBINE_ADD) {
            for (int t = 0; t < op->ninputs; t++) {
                int64_t o = gs_tensor_offset(&op->tensors[t], pt, op->naxes);
                acc += o < 0 ? 0.0 : (double)ins[t][o];
            }
        } else if (op->combine == GS_COMBINE_MAC) {
            double p = 1.0;
            for (int t = 0; t < op->ninputs; t++) {
                int64_t o = gs_tensor_offset(&op->tensors[t], pt, op->naxes);
                /* math=tf32: the inputs as the hardware rounds them */
                p *= o < 0 ? 0.0 : op->math ? (double)gs_tf32_round(ins[t][o]) : (double)ins[t][o];
            }
            acc += p;
        } else {
            int64_t o = gs_tensor_offset(&op->tensors[0], pt, op->naxes);
            valid += o >= 0;
            /* max propagates NaN (ir.h's NaN rule): a NaN read replaces acc,
             * and nothing replaces a NaN acc */
            if (op->combine == GS_COMBINE_SUM) acc += o < 0 ? 0.0 : (double)ins[0][o];
            else if (op->combine == GS_COMBINE_MIN) {
                if (o >= 0 && ((double)ins[0][o] < acc || isnan(ins[0][o]))) acc = ins[0][o];
            } else if (o >= 0 && ((double)ins[0][o] > acc || isnan(ins[0][o])))
                acc = ins[0][o];
        }
        int i = nrd - 1;
        for (; i >= 0; i--) {
            if (++pt[rd[i]] < op->axes[rd[i]].extent) break;
            pt[rd[i]] = 0;
        }
        if (i < 0) break;
    }
    return epi_eval(op, bias, pt, acc, old, valid);
}

gs_status gs_op_reference(gs_ctx *ctx, const gs_op *op, const float *const *ins, const float *bias, float *out) {
    gs_status s = gs_op_validate(ctx, op);
    if (s != GS_OK) return s;
    if (!ins || !out) return gs_err(ctx, GS_ERR_INVALID_ARG, "reference: NULL buffers");
    if (op->has_bias && !bias) return gs_err(ctx, GS_ERR_INVALID_ARG, "reference: op has a bias but none was given");
    int sp[GS_MAX_AXES], nsp = 0;
    for (int a = 0; a < op->naxes; a++)
        if (op->axes[a].kind == GS_AXIS_SPATIAL) sp[nsp++] = a;
    const gs_tensor *ot = gs_op_out(op);
    int64_t pt[GS_MAX_AXES] = {0};
    /* odometer over spatial axes */
    for (;;) {
        int64_t o = gs_tensor_offset(ot, pt, op->naxes);
        /* rounded once to the output's type (through f32, as a kernel's f32 epilogue is) */
        if (o >= 0)
            out[o] = gs_dtype_round((gs_dtype)op->dtype_out, (float)gs_op_reference_point(op, ins, bias, pt, (double)out[o]));
        int i = nsp - 1;
        for (; i >= 0; i--) {
            if (++pt[sp[i]] < op->axes[sp[i]].extent) break;
            pt[sp[i]] = 0;
        }
        if (i < 0) break;
    }
    return GS_OK;
}
