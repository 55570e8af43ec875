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
    k->combine = (uint32_t)op->combine;
    k->naxes = (uint32_t)op->naxes;
    k->ninputs = (uint32_t)op->ninputs;
    for (int a = 0; a < op->naxes; a++) k->axis_kind[a] = (uint32_t)op->axes[a].kind;
    for (int t = 0; t <= op->ninputs; t++) {
        k->ndim[t] = op->tensors[t].ndim;
        for (int j = 0; j < op->tensors[t].ndim; j++) k->idx[t][j] = op->tensors[t].idx[j];
    }
    k->etir = *e;
    k->etir.level = 0;
    if (p) k->plan = *p;
    k->has_beta = op->epi.beta != 0.0f;
    k->has_bias = op->has_bias && op->epi.bias_axis >= 0;
    k->bias_axis = k->has_bias ? (uint32_t)op->epi.bias_axis : 0;
    k->relu = op->epi.relu != 0;
    if (op->combine == GS_COMBINE_MAX || op->epi.relu) k->flags |= GS_KDESC_MAXN;
    if (op->epi.count_valid) k->flags |= GS_KDESC_COUNT_VALID;
}

/* "non-zero"/"0" and "on"/"off" of a flag */
static const char *nz(uint32_t v) { return v ? "non-zero" : "0"; }
static const char *on(uint32_t v) { return v ? "on" : "off"; }

bool gs_kdesc_diff(const gs_kdesc *mine, const gs_kdesc *theirs, char *buf, size_t n) {
    if (n) buf[0] = '\0';
    if (!memcmp(mine, theirs, sizeof *mine)) return false;
    const gs_kdesc *a = mine, *b = theirs;
    if (a->has_beta != b->has_beta)
        snprintf(buf, n, "beta: the kernel's is %s, the operator's is %s (beta = 0 and beta != 0 are different kernels)",
                 nz(a->has_beta), nz(b->has_beta));
    else if (a->has_bias != b->has_bias)
        snprintf(buf, n, "bias: the kernel's is %s, the operator's is %s", on(a->has_bias), on(b->has_bias));
    else if (a->bias_axis != b->bias_axis)
        snprintf(buf, n, "the bias axis: the kernel's is %u, the operator's is %u", a->bias_axis, b->bias_axis);
    else if (a->relu != b->relu)
        snprintf(buf, n, "relu: the kernel's is %s, the operator's is %s", on(a->relu), on(b->relu));
    else if (a->idx64 != b->idx64)
        snprintf(buf, n, "indexing: the kernel's is %s-bit, the operator needs %s-bit (a tensor over 2^31 elements)",
                 a->idx64 ? "64" : "32", b->idx64 ? "64" : "32");
    else if (a->combine != b->combine || a->naxes != b->naxes || a->ninputs != b->ninputs ||
             memcmp(a->axis_kind, b->axis_kind, sizeof a->axis_kind))
        snprintf(buf, n, "the operator class (its axes or inputs)");
    else if (memcmp(a->ndim, b->ndim, sizeof a->ndim) || memcmp(a->idx, b->idx, sizeof a->idx))
        snprintf(buf, n, "the tensors' indexing (transposes, layout, strides or windows)");
    else if (a->flags != b->flags)
        snprintf(buf, n, "the epilogue's mode (NaN-keeping max, or count_include_pad)");
    else
        snprintf(buf, n, "the kernel's configuration");
    return true;
}

/* The bytes before flags, and flags with its padding only when set: the
 * kernels that predate flags keep their keys. */
uint64_t gs_kdesc_hash(const gs_kdesc *k) {
    return gs_hash_bytes(k, k->flags ? sizeof *k : offsetof(gs_kdesc, flags), 0x67656e736f72ull);
}

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
