/* kdesc.c — the kernel descriptor: every fact of a kernel as plain data, hashed for the
 * cache key and printed as the source banner; the integer runtime arguments. */
#include "kernels/codegen/codegen.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void gs_kdesc_make(const gs_op *op, const gs_plan *p, const gs_etir *e, gs_dialect d, int arch, gs_kdesc *k) {
    memset(k, 0, sizeof *k);
    k->codegen_version = GS_CODEGEN_VERSION;
    k->dialect = (uint32_t)d;
    k->arch = (uint32_t)arch;
    for (int t = 0; t <= op->ninputs; t++)
        if (gs_tensor_elems(&op->tensors[t]) > 2147483647LL) k->idx64 = 1;
    gs_op_key(op, &k->op);
    k->etir = *e;
    k->etir.level = 0;
    if (p) k->plan = *p;
    if (op->combine == GS_COMBINE_MAX || op->combine == GS_COMBINE_MAXE || op->epi.relu || op->clip)
        k->flags |= GS_KDESC_MAXN;
    if (op->epi.count_valid) k->flags |= GS_KDESC_COUNT_VALID;
    if (op->combine == GS_COMBINE_MIN || op->combine == GS_COMBINE_MINE) k->flags |= GS_KDESC_MINN;
}

/* "non-zero"/"0" and "on"/"off" of a value */
static const char *nz(double v) { return v != 0.0 ? "non-zero" : "0"; }
static const char *on(int v) { return v ? "on" : "off"; }

bool gs_kdesc_diff(const gs_kdesc *mine, const gs_kdesc *theirs, char *buf, size_t n) {
    if (n) buf[0] = '\0';
    if (!memcmp(mine, theirs, sizeof *mine)) return false;
    const gs_op *a = &mine->op, *b = &theirs->op;
    if (a->dtype_in != b->dtype_in || a->dtype_out != b->dtype_out)
        snprintf(buf, n, "the element types: the kernel's are %s/%s, the operator's %s/%s (inputs/output)",
                 gs_dtype_name((gs_dtype)a->dtype_in), gs_dtype_name((gs_dtype)a->dtype_out),
                 gs_dtype_name((gs_dtype)b->dtype_in), gs_dtype_name((gs_dtype)b->dtype_out));
    else if (a->math != b->math)
        snprintf(buf, n, "math: the kernel's is %s, the operator's is %s", a->math ? "tf32" : "f32",
                 b->math ? "tf32" : "f32");
    else if (a->epi.beta != b->epi.beta)
        snprintf(buf, n, "beta: the kernel's is %s, the operator's is %s (beta = 0 and beta != 0 are different kernels)",
                 nz(a->epi.beta), nz(b->epi.beta));
    else if (a->has_bias != b->has_bias)
        snprintf(buf, n, "bias: the kernel's is %s, the operator's is %s", on(a->has_bias), on(b->has_bias));
    else if (a->epi.bias_axis != b->epi.bias_axis)
        snprintf(buf, n, "the bias axis: the kernel's is %d, the operator's is %d", a->epi.bias_axis, b->epi.bias_axis);
    else if (a->epi.relu != b->epi.relu)
        snprintf(buf, n, "relu: the kernel's is %s, the operator's is %s", on(a->epi.relu), on(b->epi.relu));
    else if (a->clip != b->clip || a->clip_lo != b->clip_lo || a->clip_hi != b->clip_hi)
        snprintf(buf, n, "clip: the kernel's is %s%g..%s%g, the operator's is %s%g..%s%g (the bounds are in the kernel)",
                 a->clip & GS_CLIP_LO ? "" : "-inf/", (double)a->clip_lo, a->clip & GS_CLIP_HI ? "" : "inf/",
                 (double)a->clip_hi, b->clip & GS_CLIP_LO ? "" : "-inf/", (double)b->clip_lo,
                 b->clip & GS_CLIP_HI ? "" : "inf/", (double)b->clip_hi);
    else if (a->epi.count_valid != b->epi.count_valid)
        snprintf(buf, n, "count_include_pad: the kernel's is %d, the operator's is %d", !a->epi.count_valid,
                 !b->epi.count_valid);
    else if (mine->idx64 != theirs->idx64)
        snprintf(buf, n, "indexing: the kernel's is %s-bit, the operator needs %s-bit (a tensor over 2^31 elements)",
                 mine->idx64 ? "64" : "32", theirs->idx64 ? "64" : "32");
    else if (a->kind != b->kind || a->combine != b->combine || a->naxes != b->naxes || a->ninputs != b->ninputs ||
             memcmp(a->axes, b->axes, sizeof a->axes))
        snprintf(buf, n, "the operator class (its kind, axes or inputs)");
    else if (memcmp(a->tensors, b->tensors, sizeof a->tensors) || a->transA != b->transA || a->transB != b->transB)
        snprintf(buf, n, "the tensors' indexing (transposes, layout, strides or windows)");
    else
        snprintf(buf, n, "the kernel's configuration");
    return true;
}

uint64_t gs_kdesc_hash(const gs_kdesc *k) { return gs_hash_bytes(k, sizeof *k, 0x67656e736f72ull); }

int gs_kernel_int_args(const gs_op *op, int32_t *vals, int cap) {
    int n = 0;
    for (int a = 0; a < op->naxes && n < cap; a++) vals[n++] = (int32_t)op->axes[a].extent;
    for (int t = 0; t <= op->ninputs; t++)
        for (int j = 0; j < op->tensors[t].ndim && n < cap; j++) vals[n++] = (int32_t)op->tensors[t].shape[j];
    return n;
}

void gs_kernel_src_free(gs_kernel_src *k) {
    if (!k) return;
    free(k->src);
    k->src = NULL;
}
