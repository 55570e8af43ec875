/* kdesc.c — the kernel descriptor: every fact of a kernel as plain data, hashed for the
 * cache key and printed as the source banner; the integer runtime arguments. */
#include "kernels/codegen/codegen.h"

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
