/* codegen.h — the kernel descriptor (kdesc.c) and the lowering of a plan to CUDA C or
 * OpenCL C (lower.c). Nothing here runs a kernel: that is kernels/runtime/. */
#ifndef GS_CODEGEN_H
#define GS_CODEGEN_H

#include "hwmodel/model/model.h"

/* ---- kernel descriptor, lowering and emission -------------------------
 * A kernel is described by a zeroed, fixed-size struct of plain data; its
 * bytes are hashed for the cache and the hash printed in the source's banner.
 * It holds the operator's and the state's own structs whole, not a selection
 * of their fields, so a field added to either is part of the key.
 * Extents and tensor shapes are runtime arguments, so one binary serves every
 * shape that maps to the same descriptor. */
#define GS_CODEGEN_VERSION 2u

typedef struct gs_kdesc {
    uint32_t codegen_version;
    uint32_t dialect;       /* gs_dialect */
    uint32_t arch;          /* sm_XX the source is meant for (0: any) */
    uint32_t idx64;         /* 64-bit linear offsets */
    gs_op op;               /* the operator's structure, whole (gs_op_key: what a kernel
                               takes at run time is cleared) */
    gs_etir etir;
    gs_plan plan;           /* every codegen decision (zeroed when p is NULL) */
    uint32_t flags;         /* GS_KDESC_*: facts the printer derives from op (hashed with the rest) */
} gs_kdesc;
#define GS_KDESC_MAXN 1u        /* max or relu with the NaN-propagating gs_maxn (ir.h's NaN rule) */
#define GS_KDESC_COUNT_VALID 2u /* the epilogue divides by in-bounds reduce points */
#define GS_KDESC_MINN 4u        /* min with the NaN-propagating gs_minn */

/* p may be NULL (an operator-structure key with no kernel decisions). */
void gs_kdesc_make(const gs_op *op, const gs_plan *p, const gs_etir *e, gs_dialect d, int arch, gs_kdesc *k);
uint64_t gs_kdesc_hash(const gs_kdesc *k);
/* Whether two descriptors differ; when they do, buf[n] names the first
 * attribute that differs and the value of each ("beta: the kernel's is
 * non-zero, the operator's is 0"), mine being the kernel's, theirs another
 * operator's. */
bool gs_kdesc_diff(const gs_kdesc *mine, const gs_kdesc *theirs, char *buf, size_t n);

typedef struct gs_kernel_src {
    char *src;          /* malloc'd source text */
    char name[48];      /* kernel entry name, gs_<hash> */
    gs_kdesc desc;
    uint64_t hash;
    int64_t grid, block;/* 1-D launch: grid blocks of block threads */
    int64_t smem_bytes; /* shared memory of the kernel: all stage buffers and the static
                           scratch (what a CUDA program load takes; it launches with the part the
                           module does not declare statically) */
    int smem_dynamic;   /* CUDA: the stage buffers are dynamic shared memory (the total is over
                           48 KiB, opted in at load) */
    int64_t ws_bytes;   /* split-K's workspace for this operator's extents (0: none): passed as
                           the last argument, zeroed before the first launch (each launch leaves
                           it ready for the next); one per launch in flight
                           (gs_plan_workspace_bytes) */
} gs_kernel_src;

/* Plan the ETIR of op for profile hw (gs_plan_make) and print the plan in a
 * dialect. arch: the sm_XX to compile for (0: the profile's; OpenCL: 0). */
gs_status gs_lower_emit(gs_ctx *ctx, const gs_hw *hw, const gs_op *op, const gs_etir *e, gs_dialect d, int arch,
                        gs_kernel_src *out);
/* Print a given plan (tests force fallback plans through this). */
gs_status gs_lower_emit_plan(gs_ctx *ctx, const gs_op *op, const gs_etir *e, const gs_plan *p, gs_dialect d, int arch,
                             gs_kernel_src *out);
void gs_kernel_src_free(gs_kernel_src *k);
/* Integer runtime arguments in order: axis extents, then every tensor's
 * shape (inputs, output). Returns the count (<= cap). */
int gs_kernel_int_args(const gs_op *op, int32_t *vals, int cap);

#endif
