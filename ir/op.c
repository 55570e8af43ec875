/* op.c — operator builders, validation, and the spec parser.
 *
 * Spec grammar (README "Spec grammar"):
 *   spec   := opname { ws key '=' value }
 *   value  := integer | float
 * Keys are case-sensitive as listed per operator; each key may appear once.
 */
#include "ir/ir.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Largest extent of one axis. Kernels index with 32-bit ints per axis. */
#define GS_MAX_EXTENT 2147483647LL

int64_t gs_tensor_elems(const gs_tensor *t) {
    int64_t n = 1;
    for (int d = 0; d < t->ndim; d++) {
        if (__builtin_mul_overflow(n, t->shape[d], &n)) return -1;
    }
    return n;
}

bool gs_tensor_uses_axis(const gs_tensor *t, int a) {
    for (int d = 0; d < t->ndim; d++)
        if (t->idx[d].coeff[a] != 0) return true;
    return false;
}

gs_status gs_op_validate(gs_ctx *ctx, const gs_op *op) {
    if (op->naxes < 1 || op->naxes > GS_MAX_AXES)
        return gs_err(ctx, GS_ERR_INVALID_ARG, "operator has %d axes (1..%d allowed)", op->naxes, GS_MAX_AXES);
    if (op->ninputs < 1 || op->ninputs + 1 > GS_MAX_TENSORS)
        return gs_err(ctx, GS_ERR_INVALID_ARG, "operator has %d inputs (1..%d allowed)", op->ninputs,
                      GS_MAX_TENSORS - 1);
    int nspatial = 0;
    for (int a = 0; a < op->naxes; a++) {
        const gs_axis *ax = &op->axes[a];
        if (ax->extent <= 0 || ax->extent > GS_MAX_EXTENT)
            return gs_err(ctx, GS_ERR_BAD_SHAPE, "axis %s has extent %lld (must be 1..%lld)", ax->name,
                          (long long)ax->extent, (long long)GS_MAX_EXTENT);
        if (ax->kind == GS_AXIS_SPATIAL) nspatial++;
    }
    if (nspatial == 0) return gs_err(ctx, GS_ERR_INVALID_ARG, "operator has no spatial axis");
    for (int t = 0; t <= op->ninputs; t++) {
        const gs_tensor *ts = &op->tensors[t];
        if (ts->ndim < 1 || ts->ndim > GS_MAX_DIMS)
            return gs_err(ctx, GS_ERR_INVALID_ARG, "tensor %s has %d dims (1..%d allowed)", ts->name, ts->ndim,
                          GS_MAX_DIMS);
        for (int d = 0; d < ts->ndim; d++)
            if (ts->shape[d] <= 0 || ts->shape[d] > GS_MAX_EXTENT)
                return gs_err(ctx, GS_ERR_BAD_SHAPE, "tensor %s dim %d has extent %lld", ts->name, d,
                              (long long)ts->shape[d]);
        int64_t n = gs_tensor_elems(ts);
        /* 2^40 floats = 4 TiB: beyond any device; also keeps byte counts in int64 */
        if (n < 0 || n > (1LL << 40))
            return gs_err(ctx, GS_ERR_BAD_SHAPE, "tensor %s is too large (%s elements)", ts->name,
                          n < 0 ? "overflowing" : ">2^40");
    }
    const gs_tensor *out = gs_op_out(op);
    for (int a = 0; a < op->naxes; a++)
        if (op->axes[a].kind == GS_AXIS_REDUCE && gs_tensor_uses_axis(out, a))
            return gs_err(ctx, GS_ERR_INVALID_ARG, "output %s is indexed by reduce axis %s", out->name,
                          op->axes[a].name);
    if (op->combine == GS_COMBINE_MAC && op->ninputs < 1)
        return gs_err(ctx, GS_ERR_INVALID_ARG, "multiply-accumulate needs inputs");
    if ((op->combine == GS_COMBINE_SUM || op->combine == GS_COMBINE_MAX) && op->ninputs != 1)
        return gs_err(ctx, GS_ERR_INVALID_ARG, "sum/max combine takes exactly one input");
    if (op->epi.bias_axis >= op->naxes)
        return gs_err(ctx, GS_ERR_INVALID_ARG, "bias axis %d out of range", op->epi.bias_axis);
    return GS_OK;
}

/* ---- builders -------------------------------------------------------------- */
static void set_axis(gs_op *op, int a, const char *name, int64_t extent, gs_axis_kind kind) {
    snprintf(op->axes[a].name, GS_NAME_LEN, "%s", name);
    op->axes[a].extent = extent;
    op->axes[a].kind = kind;
}

/* A tensor dimension indexed by a single axis with coefficient 1. */
static void set_dim(gs_tensor *t, int d, int64_t shape, int axis) {
    t->shape[d] = shape;
    memset(&t->idx[d], 0, sizeof t->idx[d]);
    t->idx[d].coeff[axis] = 1;
}

gs_status gs_op_build_gemm(gs_ctx *ctx, gs_op *op, int64_t M, int64_t N, int64_t K, int transA, int transB,
                           float alpha, float beta) {
    memset(op, 0, sizeof *op);
    op->kind = GS_OPK_GEMM;
    op->naxes = 3;
    enum { m = 0, n = 1, k = 2 };
    set_axis(op, m, "m", M, GS_AXIS_SPATIAL);
    set_axis(op, n, "n", N, GS_AXIS_SPATIAL);
    set_axis(op, k, "k", K, GS_AXIS_REDUCE);
    op->ninputs = 2;
    gs_tensor *A = &op->tensors[0], *B = &op->tensors[1], *C = &op->tensors[2];
    snprintf(A->name, GS_NAME_LEN, "A");
    snprintf(B->name, GS_NAME_LEN, "B");
    snprintf(C->name, GS_NAME_LEN, "C");
    A->ndim = B->ndim = C->ndim = 2;
    /* op(A) is M x K: A is stored [M,K], or [K,M] when transposed. */
    if (transA) { set_dim(A, 0, K, k); set_dim(A, 1, M, m); }
    else        { set_dim(A, 0, M, m); set_dim(A, 1, K, k); }
    if (transB) { set_dim(B, 0, N, n); set_dim(B, 1, K, k); }
    else        { set_dim(B, 0, K, k); set_dim(B, 1, N, n); }
    set_dim(C, 0, M, m);
    set_dim(C, 1, N, n);
    op->combine = GS_COMBINE_MAC;
    op->epi.alpha = alpha;
    op->epi.beta = beta;
    op->epi.bias_axis = -1;
    op->transA = transA != 0;
    op->transB = transB != 0;
    snprintf(op->spec, sizeof op->spec, "gemm M=%lld N=%lld K=%lld transA=%d transB=%d alpha=%g beta=%g",
             (long long)M, (long long)N, (long long)K, op->transA, op->transB, alpha, beta);
    return gs_op_validate(ctx, op);
}

/* ---- spec parser ------------------------------------------------------------ */
typedef enum { KV_INT, KV_BOOL, KV_FLOAT } kv_type;
typedef struct {
    const char *key;
    kv_type type;
    bool required;
    double def;
} kv_def;

typedef struct {
    const char *name;
    const kv_def *keys;
    int nkeys;
} op_def;

static const kv_def gemm_keys[] = {
    {"M", KV_INT, true, 0},       {"N", KV_INT, true, 0},        {"K", KV_INT, true, 0},
    {"transA", KV_BOOL, false, 0}, {"transB", KV_BOOL, false, 0}, {"alpha", KV_FLOAT, false, 1},
    {"beta", KV_FLOAT, false, 0},
};

static const op_def op_defs[] = {
    {"gemm", gemm_keys, (int)(sizeof gemm_keys / sizeof gemm_keys[0])},
};
#define N_OP_DEFS ((int)(sizeof op_defs / sizeof op_defs[0]))

#define MAX_KV 24
typedef struct {
    double val[MAX_KV];
    int64_t ival[MAX_KV];
    bool set[MAX_KV];
} kv_vals;

static void list_keys(const op_def *od, char *buf, size_t n) {
    size_t off = 0;
    buf[0] = 0;
    for (int i = 0; i < od->nkeys && off < n; i++)
        off += (size_t)snprintf(buf + off, n - off, "%s%s", i ? " " : "", od->keys[i].key);
}

static gs_status parse_value(gs_ctx *ctx, const op_def *od, const kv_def *kd, const char *tok, const char *v,
                             kv_vals *out, int slot) {
    if (!*v) return gs_err(ctx, GS_ERR_PARSE, "%s: key '%s' has no value in '%s'", od->name, kd->key, tok);
    char *end = NULL;
    errno = 0;
    if (kd->type == KV_FLOAT) {
        double x = strtod(v, &end);
        if (*end || errno == ERANGE || !isfinite(x))
            return gs_err(ctx, GS_ERR_PARSE, "%s: '%s' is not a finite number", od->name, tok);
        out->val[slot] = x;
    } else {
        /* reject leading '+', spaces and hex: plain decimal only */
        const char *p = v;
        if (*p == '-') p++;
        if (!isdigit((unsigned char)*p))
            return gs_err(ctx, GS_ERR_PARSE, "%s: '%s' is not an integer", od->name, tok);
        long long x = strtoll(v, &end, 10);
        if (*end) return gs_err(ctx, GS_ERR_PARSE, "%s: '%s' is not an integer", od->name, tok);
        if (errno == ERANGE)
            return gs_err(ctx, GS_ERR_BAD_SHAPE, "%s: %s is out of range (max %lld)", od->name, tok,
                          (long long)GS_MAX_EXTENT);
        if (kd->type == KV_BOOL && x != 0 && x != 1)
            return gs_err(ctx, GS_ERR_PARSE, "%s: '%s' must be 0 or 1", od->name, tok);
        if (kd->type == KV_INT && (x <= 0 || x > GS_MAX_EXTENT))
            return gs_err(ctx, GS_ERR_BAD_SHAPE, "%s: %s must be between 1 and %lld", od->name, tok,
                          (long long)GS_MAX_EXTENT);
        out->ival[slot] = x;
        out->val[slot] = (double)x;
    }
    out->set[slot] = true;
    return GS_OK;
}

gs_status gs_op_parse_into(gs_ctx *ctx, const char *spec, gs_op *op) {
    if (!spec || !op) return gs_err(ctx, GS_ERR_INVALID_ARG, "NULL spec");
    size_t len = strlen(spec);
    if (len >= 1024) return gs_err(ctx, GS_ERR_PARSE, "spec is too long (%zu chars, max 1023)", len);
    char buf[1024];
    memcpy(buf, spec, len + 1);
    char *save = NULL;
    char *tok = strtok_r(buf, " \t\n", &save);
    if (!tok) return gs_err(ctx, GS_ERR_PARSE, "empty spec");
    const op_def *od = NULL;
    for (int i = 0; i < N_OP_DEFS; i++)
        if (!strcmp(tok, op_defs[i].name)) od = &op_defs[i];
    if (!od) {
        char known[256] = "";
        size_t off = 0;
        for (int i = 0; i < N_OP_DEFS; i++)
            off += (size_t)snprintf(known + off, sizeof known - off, "%s%s", i ? " " : "", op_defs[i].name);
        return gs_err(ctx, GS_ERR_UNKNOWN_OP, "unknown operator '%s' (known: %s)", tok, known);
    }
    kv_vals kv;
    memset(&kv, 0, sizeof kv);
    while ((tok = strtok_r(NULL, " \t\n", &save))) {
        char *eq = strchr(tok, '=');
        if (!eq || eq == tok)
            return gs_err(ctx, GS_ERR_PARSE, "%s: expected key=value, got '%s'", od->name, tok);
        *eq = 0;
        int slot = -1;
        for (int i = 0; i < od->nkeys; i++)
            if (!strcmp(tok, od->keys[i].key)) slot = i;
        if (slot < 0) {
            char keys[256];
            list_keys(od, keys, sizeof keys);
            return gs_err(ctx, GS_ERR_PARSE, "%s: unknown key '%s' (accepted: %s)", od->name, tok, keys);
        }
        if (kv.set[slot]) return gs_err(ctx, GS_ERR_PARSE, "%s: key '%s' given twice", od->name, tok);
        char full[160];
        snprintf(full, sizeof full, "%s=%.120s", tok, eq + 1);
        gs_status s = parse_value(ctx, od, &od->keys[slot], full, eq + 1, &kv, slot);
        if (s != GS_OK) return s;
    }
    for (int i = 0; i < od->nkeys; i++) {
        if (kv.set[i]) continue;
        if (od->keys[i].required) return gs_err(ctx, GS_ERR_PARSE, "%s: missing required key '%s'", od->name, od->keys[i].key);
        kv.val[i] = od->keys[i].def;
        kv.ival[i] = (int64_t)od->keys[i].def;
    }
    /* dispatch on the operator: the one switch from specs to builders */
    if (od == &op_defs[0])
        return gs_op_build_gemm(ctx, op, kv.ival[0], kv.ival[1], kv.ival[2], (int)kv.ival[3], (int)kv.ival[4],
                                (float)kv.val[5], (float)kv.val[6]);
    return gs_err(ctx, GS_ERR_UNKNOWN_OP, "operator '%s' has no builder", od->name);
}

/* ---- public wrappers ---------------------------------------------------------- */
gs_status gs_op_parse(gs_ctx *ctx, const char *spec, gs_op **out) {
    if (!out) return gs_err(ctx, GS_ERR_INVALID_ARG, "NULL out");
    *out = NULL;
    gs_op *op = calloc(1, sizeof *op);
    if (!op) return gs_err(ctx, GS_ERR_NOMEM, "out of memory allocating an operator");
    gs_status s = gs_op_parse_into(ctx, spec, op);
    if (s != GS_OK) {
        free(op);
        return s;
    }
    *out = op;
    return GS_OK;
}

gs_status gs_op_create_gemm(gs_ctx *ctx, int64_t M, int64_t N, int64_t K, int transA, int transB, float alpha,
                            float beta, gs_op **out) {
    if (!out) return gs_err(ctx, GS_ERR_INVALID_ARG, "NULL out");
    *out = NULL;
    gs_op *op = calloc(1, sizeof *op);
    if (!op) return gs_err(ctx, GS_ERR_NOMEM, "out of memory allocating an operator");
    gs_status s = gs_op_build_gemm(ctx, op, M, N, K, transA, transB, alpha, beta);
    if (s != GS_OK) {
        free(op);
        return s;
    }
    *out = op;
    return GS_OK;
}

void gs_op_destroy(gs_op *op) { free(op); }
const char *gs_op_spec(const gs_op *op) { return op ? op->spec : ""; }

double gs_op_flops(const gs_op *op) {
    double it = 1;
    for (int a = 0; a < op->naxes; a++) it *= (double)op->axes[a].extent;
    return op->combine == GS_COMBINE_MAC ? 2.0 * it : it;
}
