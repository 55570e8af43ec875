/* onnx.c — ONNX models in: the ModelProto subset gensor needs, read with
 * proto.c, then the graph-level work every frontend does (shapes propagated
 * from the bound inputs, batch norm folded into the conv before it, a Relu
 * fused into the kernel before it) and each node mapped to a gs_op through
 * its spec, or listed as unsupported with the reason.
 *
 * Field numbers are those of onnx/onnx.proto. Everything the file makes the
 * reader allocate is bounded by the file's own size (a repeated field of n
 * elements takes at least n bytes), and every string and tensor lives in the
 * model's arena. */
#include "ir/onnx/onnx.h"

#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* ---- what the file holds ------------------------------------------------- */
#define ONNX_DIM_MAX 2147483647LL /* a bound dim, as the spec parser bounds extents */
enum { DT_FLOAT = 1, DT_INT32 = 6, DT_INT64 = 7, DT_BOOL = 9, DT_FLOAT16 = 10, DT_DOUBLE = 11, DT_BFLOAT16 = 16 };
/* The floating types a kernel takes: FLOAT, FLOAT16 and BFLOAT16 (gs_dtype f32, f16, bf16). */
static int dt_float(int t) { return t == DT_FLOAT || t == DT_FLOAT16 || t == DT_BFLOAT16; }
static gs_dtype dt_gs(int t) { return t == DT_FLOAT16 ? GS_DTYPE_F16 : t == DT_BFLOAT16 ? GS_DTYPE_BF16 : GS_DTYPE_F32; }
/* The integer types the import computes with (shapes and what is made of them): INT64, INT32, BOOL. */
static int dt_int(int t) { return t == DT_INT64 || t == DT_INT32 || t == DT_BOOL; }
enum { AT_FLOAT = 1, AT_INT = 2, AT_STRING = 3, AT_TENSOR = 4, AT_FLOATS = 6, AT_INTS = 7 };

typedef struct otensor {
    const char *name;
    int dtype, ndim;
    int64_t dims[GS_ONNX_MAX_RANK];
    int64_t n;     /* elements */
    float *f;      /* FLOAT, FLOAT16, BFLOAT16 or DOUBLE data as floats (NULL: another type); the
                      16-bit types exactly (each of their values is a float) */
    int64_t *i;    /* INT32, INT64 or BOOL data (NULL: another type) */
} otensor;

typedef struct oattr {
    const char *name;
    int type;
    float f;
    int64_t i;
    const char *s;
    int64_t *ints;
    int nints;
    otensor *t;
} oattr;

typedef struct onode {
    const char *name, *op_type, *domain;
    const char **in, **out;
    int nin, nout, nattr;
    oattr *attr;
} onode;

typedef struct ovalue { /* a ValueInfoProto: graph input, output or value_info */
    const char *name;
    int elem, ndim, has_shape;
    int64_t dims[GS_ONNX_MAX_RANK]; /* > 0 known; 0 symbolic or unknown */
    const char *param[GS_ONNX_MAX_RANK];
} ovalue;

/* A tensor the import knows: its shape, type and, for constants, data. */
typedef struct tinfo {
    const char *name;
    int ndim, dtype;
    int64_t dims[GS_ONNX_MAX_RANK];
    const otensor *c; /* constant data (an initializer, a Constant node or a folded weight) */
    int producer;     /* node index, -1 for graph inputs and initializers */
    int uses;         /* node inputs that read it, plus 1 when it is a graph output */
    int consumer;     /* the node reading it when uses == 1 */
} tinfo;

struct gs_model {
    gs_arena arena;   /* the file's structures: freed with the model */
    gs_arena iarena;  /* the last import's: freed on re-import */
    char *dir;        /* the model's directory, for external data */
    int64_t ir_version, opset;
    onode *nodes;
    int nnodes, ninit, ninputs, noutputs, nvinfo;
    otensor *init;
    ovalue *inputs, *outputs, *vinfo;
    /* symbolic dims of the graph inputs and their bindings */
    int ndims;
    const char **dim_name;
    int64_t *dim_val; /* 0: unbound */
    /* the import */
    int imported;
    gs_model_node *out; /* per node */
    gs_op *ops;         /* per node (kernel nodes) */
    tinfo **tab;        /* open addressing by name */
    size_t tabcap;
    int64_t filled;     /* elements of ConstantOfShape data made by this import */
    /* the probe: when a symbolic dim is bound to 1, the shapes of an import with
     * those dims at GS_ONNX_PROBE_DIM (NULL otherwise, or when it failed). A 1
     * that is such a dim then tells itself from a literal 1 (imp_binary) */
    gs_arena parena;
    tinfo **ptab;
    size_t ptabcap;
};
#define GS_ONNX_PROBE_DIM 7

/* ---- reading ---------------------------------------------------------------- */
typedef struct rd {
    gs_ctx *ctx;
    gs_model *m;
    const uint8_t *base; /* the file, for offsets in messages */
    const char *path;
} rd;

static gs_status bad(rd *r, const gs_pb *pb, const char *what) {
    return gs_err(r->ctx, GS_ERR_PARSE, "%s: malformed ONNX model at byte %lld (%s): %s", r->path,
                  (long long)(pb->p - r->base), what, pb->err ? pb->err : "bad field");
}

static char *str_dup(rd *r, const uint8_t *p, size_t n) {
    char *s = gs_arena_alloc(&r->m->arena, n + 1);
    if (s && n) memcpy(s, p, n);
    if (s) s[n] = 0;
    return s;
}

/* A growable array of 64-bit values, for repeated fields whose count is
 * known only at the end of their message. */
typedef struct vec {
    uint64_t *v;
    size_t n, cap;
} vec;
static int vec_push(vec *a, uint64_t x) {
    if (a->n == a->cap) {
        size_t c = a->cap ? a->cap * 2 : 16;
        uint64_t *nv = realloc(a->v, c * sizeof *nv);
        if (!nv) return -1;
        a->v = nv;
        a->cap = c;
    }
    a->v[a->n++] = x;
    return 0;
}
/* Every element of field f (packed or not) onto a; -1 with pb->err on a
 * malformed field or no memory. */
static int vec_take(vec *a, const gs_pb_field *f, gs_pb_wire wire, gs_pb *pb) {
    gs_pb it = {0};
    uint64_t v;
    int rc;
    while ((rc = gs_pb_repeated(f, wire, &it, &v)) == 1)
        if (vec_push(a, v) < 0) {
            pb->err = "out of memory";
            return -1;
        }
    if (rc < 0) pb->err = it.err;
    return rc;
}

/* A list of strings (repeated string fields), collected then copied. */
typedef struct svec {
    const char **v;
    int n, cap;
} svec;
static int svec_push(svec *a, const char *s) {
    if (!s) return -1;
    if (a->n == a->cap) {
        int c = a->cap ? a->cap * 2 : 8;
        const char **nv = realloc(a->v, (size_t)c * sizeof *nv);
        if (!nv) return -1;
        a->v = nv;
        a->cap = c;
    }
    a->v[a->n++] = s;
    return 0;
}
static const char **svec_keep(rd *r, svec *a) {
    const char **k = gs_arena_alloc(&r->m->arena, (size_t)(a->n ? a->n : 1) * sizeof *k);
    if (k && a->n) memcpy(k, a->v, (size_t)a->n * sizeof *k);
    free(a->v);
    a->v = NULL;
    return k;
}

/* External data: location is relative to the model's directory and may not
 * leave it; offset and length are decimal strings. */
static gs_status read_external(rd *r, otensor *t, const char *loc, const char *off_s, const char *len_s, size_t esz,
                               uint8_t **out) {
    if (!loc || !*loc) return gs_err(r->ctx, GS_ERR_PARSE, "%s: tensor '%s': external data without a location", r->path, t->name);
    if (!r->m->dir)
        return gs_err(r->ctx, GS_ERR_UNSUPPORTED, "%s: tensor '%s': external data, but the model was read from memory "
                      "with no directory", r->path, t->name);
    if (loc[0] == '/' || !strcmp(loc, "..") || !strncmp(loc, "../", 3) || strstr(loc, "/../") ||
        (strlen(loc) >= 3 && !strcmp(loc + strlen(loc) - 3, "/..")))
        return gs_err(r->ctx, GS_ERR_PARSE, "%s: tensor '%s': external data location '%s' leaves the model's directory",
                      r->path, t->name, loc);
    char *end = NULL;
    long long off = 0, len = -1;
    if (off_s) {
        errno = 0;
        off = strtoll(off_s, &end, 10);
        if (errno || *end || off < 0)
            return gs_err(r->ctx, GS_ERR_PARSE, "%s: tensor '%s': external data offset '%s' is not a byte offset", r->path,
                          t->name, off_s);
    }
    if (len_s) {
        errno = 0;
        len = strtoll(len_s, &end, 10);
        if (errno || *end || len < 0)
            return gs_err(r->ctx, GS_ERR_PARSE, "%s: tensor '%s': external data length '%s' is not a byte count", r->path,
                          t->name, len_s);
    }
    size_t want = (size_t)t->n * esz;
    if (len >= 0 && (size_t)len != want)
        return gs_err(r->ctx, GS_ERR_PARSE, "%s: tensor '%s': external data length %lld, the shape needs %zu bytes",
                      r->path, t->name, len, want);
    char path[4096];
    if ((size_t)snprintf(path, sizeof path, "%s/%s", r->m->dir, loc) >= sizeof path)
        return gs_err(r->ctx, GS_ERR_PARSE, "%s: tensor '%s': external data path too long", r->path, t->name);
    FILE *f = fopen(path, "rb");
    if (!f) return gs_err(r->ctx, GS_ERR_IO, "%s: tensor '%s': cannot open external data %s: %s", r->path, t->name, path,
                          strerror(errno));
    uint8_t *buf = gs_arena_alloc(&r->m->arena, want ? want : 1);
    gs_status s = GS_OK;
    if (!buf) s = gs_err(r->ctx, GS_ERR_NOMEM, "%s: out of memory for tensor '%s'", r->path, t->name);
    else if (fseeko(f, (off_t)off, SEEK_SET) != 0 || fread(buf, 1, want, f) != want)
        s = gs_err(r->ctx, GS_ERR_PARSE, "%s: tensor '%s': external data %s holds fewer than %lld + %zu bytes", r->path,
                   t->name, path, off, want);
    fclose(f);
    *out = buf;
    return s;
}

/* Little-endian element i of a raw buffer of esz-byte elements. */
static uint64_t raw_at(const uint8_t *p, size_t esz, int64_t i) {
    uint64_t v = 0;
    for (size_t b = esz; b-- > 0;) v = v << 8 | p[(size_t)i * esz + b];
    return v;
}

/* The first element of a half tensor's int32_data outside 0..0xffff (its
 * 16 bits are the word; a negative int32 is a sign-extended varint), or -1. */
static int64_t wide_word(const vec *id) {
    for (size_t i = 0; i < id->n; i++)
        if (id->v[i] > 0xffffu) return (int64_t)i;
    return -1;
}

/* TensorProto: dims 1, data_type 2, segment 3, float_data 4, int32_data 5,
 * int64_data 7, name 8, raw_data 9, double_data 10, external_data 13
 * (StringStringEntryProto: key 1, value 2), data_location 14. */
static gs_status read_tensor(rd *r, gs_pb *pb, otensor *t) {
    gs_pb_field f;
    vec dims = {0}, fd = {0}, id = {0};
    const uint8_t *raw = NULL;
    size_t raw_len = 0;
    int has_raw = 0, external = 0, rc;
    const char *loc = NULL, *off_s = NULL, *len_s = NULL;
    gs_status s = GS_OK;
    while (s == GS_OK && (rc = gs_pb_next(pb, &f)) == 1) {
        switch (f.num) {
        case 1: if (vec_take(&dims, &f, GS_PB_VARINT, pb) < 0) s = bad(r, pb, "tensor dims"); break;
        case 2: t->dtype = f.wire == GS_PB_VARINT ? (int)f.v : 0; break;
        case 3: s = gs_err(r->ctx, GS_ERR_UNSUPPORTED, "%s: segmented tensors are not supported", r->path); break;
        case 4: if (vec_take(&fd, &f, GS_PB_FIXED32, pb) < 0) s = bad(r, pb, "float_data"); break;
        case 5:
        case 7: if (vec_take(&id, &f, GS_PB_VARINT, pb) < 0) s = bad(r, pb, "int data"); break;
        case 10: if (vec_take(&fd, &f, GS_PB_FIXED64, pb) < 0) s = bad(r, pb, "double_data"); break;
        case 8: if (f.wire == GS_PB_LEN) t->name = str_dup(r, f.data, f.len); break;
        case 9: if (f.wire == GS_PB_LEN) { raw = f.data; raw_len = f.len; has_raw = 1; } break;
        case 13: {
            gs_pb e;
            gs_pb_field g;
            const char *k = NULL, *v = NULL;
            if (gs_pb_sub(pb, &f, &e) < 0) { s = bad(r, &e, "external_data"); break; }
            while ((rc = gs_pb_next(&e, &g)) == 1) {
                if (g.num == 1 && g.wire == GS_PB_LEN) k = str_dup(r, g.data, g.len);
                if (g.num == 2 && g.wire == GS_PB_LEN) v = str_dup(r, g.data, g.len);
            }
            if (rc < 0) { s = bad(r, &e, "external_data entry"); break; }
            if (k && !strcmp(k, "location")) loc = v;
            else if (k && !strcmp(k, "offset")) off_s = v;
            else if (k && !strcmp(k, "length")) len_s = v;
            break;
        }
        case 14: external = f.wire == GS_PB_VARINT && f.v == 1; break;
        default: break;
        }
    }
    if (s == GS_OK && rc < 0) s = bad(r, pb, "tensor");
    if (!t->name) t->name = "";
    if (s == GS_OK && dims.n > GS_ONNX_MAX_RANK)
        s = gs_err(r->ctx, GS_ERR_UNSUPPORTED, "%s: tensor '%s' has %zu dims (at most %d)", r->path, t->name, dims.n,
                   GS_ONNX_MAX_RANK);
    t->ndim = (int)dims.n;
    t->n = 1;
    for (size_t d = 0; s == GS_OK && d < dims.n; d++) {
        int64_t v = (int64_t)dims.v[d];
        if (v < 0 || (v > 0 && t->n > (1LL << 40) / v))
            s = gs_err(r->ctx, GS_ERR_PARSE, "%s: tensor '%s' dim %zu is %lld", r->path, t->name, d, (long long)v);
        else {
            t->dims[d] = v;
            t->n *= v;
        }
    }
    int half = t->dtype == DT_FLOAT16 || t->dtype == DT_BFLOAT16;
    int64_t i16;
    size_t esz = t->dtype == DT_FLOAT || t->dtype == DT_INT32 ? 4 : t->dtype == DT_INT64 || t->dtype == DT_DOUBLE ? 8
                 : half                                       ? 2
                 : t->dtype == DT_BOOL                        ? 1 /* int32_data, or raw_data a byte each */
                                                              : 0;
    uint8_t *ext = NULL;
    if (s == GS_OK && external && esz) {
        s = read_external(r, t, loc, off_s, len_s, esz, &ext);
        raw = ext;
        raw_len = (size_t)t->n * esz;
        has_raw = 1;
    }
    if (s == GS_OK && esz) {
        /* exactly one source: raw bytes or the typed field, with n elements */
        size_t typed = t->dtype == DT_FLOAT || t->dtype == DT_DOUBLE ? fd.n : id.n; /* half: int32_data */
        if (has_raw && typed)
            s = gs_err(r->ctx, GS_ERR_PARSE, "%s: tensor '%s' has both raw_data and %zu typed data elements (one of them)",
                       r->path, t->name, typed);
        else if (has_raw && raw_len != (size_t)t->n * esz)
            s = gs_err(r->ctx, GS_ERR_PARSE, "%s: tensor '%s': raw_data has %zu bytes, its shape needs %lld", r->path,
                       t->name, raw_len, (long long)t->n * (long long)esz);
        else if (!has_raw && typed != (size_t)t->n)
            s = gs_err(r->ctx, GS_ERR_PARSE, "%s: tensor '%s': %zu data elements, its shape needs %lld", r->path, t->name,
                       typed, (long long)t->n);
        else if (half && !has_raw && (i16 = wide_word(&id)) >= 0)
            s = gs_err(r->ctx, GS_ERR_PARSE, "%s: tensor '%s': int32_data[%lld] is %lld, not a 16-bit %s word", r->path,
                       t->name, (long long)i16, (long long)id.v[i16], t->dtype == DT_FLOAT16 ? "FLOAT16" : "BFLOAT16");
        else if (t->dtype == DT_FLOAT || t->dtype == DT_DOUBLE || half) {
            t->f = gs_arena_alloc(&r->m->arena, (size_t)(t->n ? t->n : 1) * sizeof *t->f);
            if (!t->f) s = gs_err(r->ctx, GS_ERR_NOMEM, "out of memory");
            for (int64_t i = 0; s == GS_OK && i < t->n; i++) {
                /* the 16-bit types: raw_data 2 bytes each, or int32_data's low 16 bits (onnx.proto) */
                uint64_t b = has_raw ? raw_at(raw, esz, i) : half ? id.v[i] : fd.v[i];
                t->f[i] = t->dtype == DT_FLOAT      ? gs_pb_f32(b)
                          : t->dtype == DT_FLOAT16  ? gs_f16_to_f32((uint16_t)b)
                          : t->dtype == DT_BFLOAT16 ? gs_bf16_to_f32((uint16_t)b)
                                                    : (float)gs_pb_f64(b);
            }
        } else {
            t->i = gs_arena_alloc(&r->m->arena, (size_t)(t->n ? t->n : 1) * sizeof *t->i);
            if (!t->i) s = gs_err(r->ctx, GS_ERR_NOMEM, "out of memory");
            for (int64_t i = 0; s == GS_OK && i < t->n; i++) {
                uint64_t b = has_raw ? raw_at(raw, esz, i) : id.v[i];
                /* int32_data holds int32s as (sign-extended) varints; raw INT32 is 4 bytes */
                t->i[i] = t->dtype == DT_INT32 ? (int64_t)(int32_t)(uint32_t)b : t->dtype == DT_BOOL ? b != 0 : (int64_t)b;
            }
        }
    }
    free(dims.v);
    free(fd.v);
    free(id.v);
    return s;
}

/* AttributeProto: name 1, f 2, i 3, s 4, t 5, floats 7, ints 8, type 20. */
static gs_status read_attr(rd *r, gs_pb *pb, oattr *a) {
    gs_pb_field f;
    vec ints = {0};
    int rc;
    gs_status s = GS_OK;
    while (s == GS_OK && (rc = gs_pb_next(pb, &f)) == 1) {
        switch (f.num) {
        case 1: if (f.wire == GS_PB_LEN) a->name = str_dup(r, f.data, f.len); break;
        case 2: if (f.wire == GS_PB_FIXED32) a->f = gs_pb_f32(f.v); break;
        case 3: if (f.wire == GS_PB_VARINT) a->i = (int64_t)f.v; break;
        case 4: if (f.wire == GS_PB_LEN) a->s = str_dup(r, f.data, f.len); break;
        case 5: {
            gs_pb sub;
            if (gs_pb_sub(pb, &f, &sub) < 0) { s = bad(r, &sub, "attribute tensor"); break; }
            a->t = gs_arena_alloc(&r->m->arena, sizeof *a->t);
            if (!a->t) s = gs_err(r->ctx, GS_ERR_NOMEM, "out of memory");
            else s = read_tensor(r, &sub, a->t);
            break;
        }
        case 8: if (vec_take(&ints, &f, GS_PB_VARINT, pb) < 0) s = bad(r, pb, "attribute ints"); break;
        case 20: a->type = (int)f.v; break;
        default: break;
        }
    }
    if (s == GS_OK && rc < 0) s = bad(r, pb, "attribute");
    if (s == GS_OK && ints.n) {
        a->ints = gs_arena_alloc(&r->m->arena, ints.n * sizeof *a->ints);
        if (!a->ints) s = gs_err(r->ctx, GS_ERR_NOMEM, "out of memory");
        else {
            for (size_t i = 0; i < ints.n; i++) a->ints[i] = (int64_t)ints.v[i];
            a->nints = ints.n > 1000000 ? 1000000 : (int)ints.n;
        }
    }
    if (!a->name) a->name = "";
    free(ints.v);
    return s;
}

/* NodeProto: input 1, output 2, name 3, op_type 4, attribute 5, domain 7. */
static gs_status read_node(rd *r, gs_pb *pb, onode *n) {
    gs_pb_field f;
    svec in = {0}, out = {0};
    oattr *attr = NULL;
    int nattr = 0, cap = 0, rc;
    gs_status s = GS_OK;
    while (s == GS_OK && (rc = gs_pb_next(pb, &f)) == 1) {
        if (f.wire != GS_PB_LEN) continue;
        switch (f.num) {
        case 1: if (svec_push(&in, str_dup(r, f.data, f.len)) < 0) s = gs_err(r->ctx, GS_ERR_NOMEM, "out of memory"); break;
        case 2: if (svec_push(&out, str_dup(r, f.data, f.len)) < 0) s = gs_err(r->ctx, GS_ERR_NOMEM, "out of memory"); break;
        case 3: n->name = str_dup(r, f.data, f.len); break;
        case 4: n->op_type = str_dup(r, f.data, f.len); break;
        case 7: n->domain = str_dup(r, f.data, f.len); break;
        case 5: {
            if (nattr == cap) {
                int c = cap ? cap * 2 : 8;
                oattr *na = realloc(attr, (size_t)c * sizeof *na);
                if (!na) { s = gs_err(r->ctx, GS_ERR_NOMEM, "out of memory"); break; }
                attr = na;
                cap = c;
            }
            memset(&attr[nattr], 0, sizeof attr[nattr]);
            gs_pb sub;
            if (gs_pb_sub(pb, &f, &sub) < 0) s = bad(r, &sub, "attribute");
            else s = read_attr(r, &sub, &attr[nattr++]);
            break;
        }
        default: break;
        }
    }
    if (s == GS_OK && rc < 0) s = bad(r, pb, "node");
    n->nin = in.n;
    n->nout = out.n;
    n->in = svec_keep(r, &in);
    n->out = svec_keep(r, &out);
    n->attr = gs_arena_alloc(&r->m->arena, (size_t)(nattr ? nattr : 1) * sizeof *n->attr);
    if (n->attr && nattr) memcpy(n->attr, attr, (size_t)nattr * sizeof *attr);
    n->nattr = nattr;
    free(attr);
    if (s == GS_OK && (!n->in || !n->out || !n->attr)) s = gs_err(r->ctx, GS_ERR_NOMEM, "out of memory");
    if (!n->name) n->name = "";
    if (!n->op_type) n->op_type = "";
    if (!n->domain) n->domain = "";
    return s;
}

/* ValueInfoProto: name 1, type 2 -> TypeProto: tensor_type 1 -> elem_type 1,
 * shape 2 -> TensorShapeProto: dim 1 -> dim_value 1, dim_param 2. */
static gs_status read_value(rd *r, gs_pb *pb, ovalue *v) {
    gs_pb_field f, g, h, k;
    int rc;
    while ((rc = gs_pb_next(pb, &f)) == 1) {
        if (f.num == 1 && f.wire == GS_PB_LEN) v->name = str_dup(r, f.data, f.len);
        if (f.num != 2 || f.wire != GS_PB_LEN) continue;
        gs_pb ty;
        if (gs_pb_sub(pb, &f, &ty) < 0) return bad(r, &ty, "value type");
        while ((rc = gs_pb_next(&ty, &g)) == 1) {
            if (g.num != 1 || g.wire != GS_PB_LEN) continue; /* sequences and maps: no shape */
            gs_pb tt;
            if (gs_pb_sub(&ty, &g, &tt) < 0) return bad(r, &tt, "tensor type");
            while ((rc = gs_pb_next(&tt, &h)) == 1) {
                if (h.num == 1 && h.wire == GS_PB_VARINT) v->elem = (int)h.v;
                if (h.num != 2 || h.wire != GS_PB_LEN) continue;
                gs_pb sh;
                if (gs_pb_sub(&tt, &h, &sh) < 0) return bad(r, &sh, "shape");
                v->has_shape = 1;
                while ((rc = gs_pb_next(&sh, &k)) == 1) {
                    if (k.num != 1 || k.wire != GS_PB_LEN) continue;
                    if (v->ndim >= GS_ONNX_MAX_RANK)
                        return gs_err(r->ctx, GS_ERR_UNSUPPORTED, "%s: value '%s' has more than %d dims", r->path,
                                      v->name ? v->name : "", GS_ONNX_MAX_RANK);
                    gs_pb dm;
                    gs_pb_field e;
                    if (gs_pb_sub(&sh, &k, &dm) < 0) return bad(r, &dm, "dimension");
                    int d = v->ndim++;
                    while ((rc = gs_pb_next(&dm, &e)) == 1) {
                        if (e.num == 1 && e.wire == GS_PB_VARINT) v->dims[d] = (int64_t)e.v > 0 ? (int64_t)e.v : 0;
                        if (e.num == 2 && e.wire == GS_PB_LEN) v->param[d] = str_dup(r, e.data, e.len);
                    }
                    if (rc < 0) return bad(r, &dm, "dimension");
                }
                if (rc < 0) return bad(r, &sh, "shape");
            }
            if (rc < 0) return bad(r, &tt, "tensor type");
        }
        if (rc < 0) return bad(r, &ty, "value type");
    }
    if (rc < 0) return bad(r, pb, "value info");
    if (!v->name) v->name = "";
    return GS_OK;
}

/* Grow a per-kind array of the graph by one zeroed element (realloc'd: the
 * graph's lists are copied into the arena at the end). */
static void *grow(void **arr, int *n, int *cap, size_t esz) {
    if (*n == *cap) {
        int c = *cap ? *cap * 2 : 16;
        void *na = realloc(*arr, (size_t)c * esz);
        if (!na) return NULL;
        *arr = na;
        *cap = c;
    }
    void *e = (char *)*arr + (size_t)(*n) * esz;
    memset(e, 0, esz);
    (*n)++;
    return e;
}
static void *keep(rd *r, void *arr, int n, size_t esz) {
    void *k = gs_arena_alloc(&r->m->arena, (size_t)(n ? n : 1) * esz);
    if (k && n) memcpy(k, arr, (size_t)n * esz);
    free(arr);
    return k;
}

/* GraphProto: node 1, initializer 5, input 11, output 12, value_info 13. */
static gs_status read_graph(rd *r, gs_pb *pb) {
    gs_model *m = r->m;
    gs_pb_field f;
    void *nodes = NULL, *init = NULL, *ins = NULL, *outs = NULL, *vi = NULL;
    int cn = 0, ci = 0, cin = 0, cout = 0, cvi = 0, rc;
    gs_status s = GS_OK;
    while (s == GS_OK && (rc = gs_pb_next(pb, &f)) == 1) {
        if (f.wire != GS_PB_LEN) continue;
        gs_pb sub;
        void *e = NULL;
        if (f.num == 1 && m->nnodes >= GS_ONNX_MAX_NODES) {
            s = gs_err(r->ctx, GS_ERR_UNSUPPORTED, "%s: more than %d nodes", r->path, GS_ONNX_MAX_NODES);
            break;
        }
        switch (f.num) {
        case 1: e = grow(&nodes, &m->nnodes, &cn, sizeof(onode)); break;
        case 5: e = grow(&init, &m->ninit, &ci, sizeof(otensor)); break;
        case 11: e = grow(&ins, &m->ninputs, &cin, sizeof(ovalue)); break;
        case 12: e = grow(&outs, &m->noutputs, &cout, sizeof(ovalue)); break;
        case 13: e = grow(&vi, &m->nvinfo, &cvi, sizeof(ovalue)); break;
        default: continue;
        }
        if (!e) {
            s = gs_err(r->ctx, GS_ERR_NOMEM, "out of memory");
            break;
        }
        if (gs_pb_sub(pb, &f, &sub) < 0) {
            s = bad(r, &sub, "graph entry");
            break;
        }
        if (f.num == 1) s = read_node(r, &sub, e);
        else if (f.num == 5) s = read_tensor(r, &sub, e);
        else s = read_value(r, &sub, e);
    }
    if (s == GS_OK && rc < 0) s = bad(r, pb, "graph");
    m->nodes = keep(r, nodes, m->nnodes, sizeof(onode));
    m->init = keep(r, init, m->ninit, sizeof(otensor));
    m->inputs = keep(r, ins, m->ninputs, sizeof(ovalue));
    m->outputs = keep(r, outs, m->noutputs, sizeof(ovalue));
    m->vinfo = keep(r, vi, m->nvinfo, sizeof(ovalue));
    if (s == GS_OK && (!m->nodes || !m->init || !m->inputs || !m->outputs || !m->vinfo))
        s = gs_err(r->ctx, GS_ERR_NOMEM, "out of memory");
    return s;
}

/* ModelProto: ir_version 1, graph 7, opset_import 8 (OperatorSetIdProto:
 * domain 1, version 2). */
static gs_status read_model(rd *r, const uint8_t *buf, size_t n) {
    gs_pb pb;
    gs_pb_field f;
    gs_pb_init(&pb, buf, n);
    int rc, graphs = 0;
    gs_status s = GS_OK;
    while (s == GS_OK && (rc = gs_pb_next(&pb, &f)) == 1) {
        if (f.num == 1 && f.wire == GS_PB_VARINT) r->m->ir_version = (int64_t)f.v;
        else if (f.num == 8 && f.wire == GS_PB_LEN) {
            gs_pb sub;
            gs_pb_field g;
            const uint8_t *dom = NULL;
            size_t dl = 0;
            int64_t ver = 0;
            if (gs_pb_sub(&pb, &f, &sub) < 0) return bad(r, &sub, "opset_import");
            while ((rc = gs_pb_next(&sub, &g)) == 1) {
                if (g.num == 1 && g.wire == GS_PB_LEN) { dom = g.data; dl = g.len; }
                if (g.num == 2 && g.wire == GS_PB_VARINT) ver = (int64_t)g.v;
            }
            if (rc < 0) return bad(r, &sub, "opset_import");
            if (!dom || dl == 0 || (dl == 7 && !memcmp(dom, "ai.onnx", 7))) r->m->opset = ver;
        } else if (f.num == 7 && f.wire == GS_PB_LEN) {
            gs_pb sub;
            if (graphs++) return gs_err(r->ctx, GS_ERR_PARSE, "%s: malformed ONNX model: two graphs", r->path);
            if (gs_pb_sub(&pb, &f, &sub) < 0) return bad(r, &sub, "graph");
            s = read_graph(r, &sub);
        }
    }
    if (s == GS_OK && rc < 0) s = bad(r, &pb, "model");
    if (s == GS_OK && !graphs)
        s = gs_err(r->ctx, GS_ERR_PARSE, "%s: not an ONNX model: no graph (ir_version %lld)", r->path,
                   (long long)r->m->ir_version);
    if (s == GS_OK && r->m->ir_version <= 0)
        s = gs_err(r->ctx, GS_ERR_PARSE, "%s: not an ONNX model: no ir_version", r->path);
    return s;
}

/* ---- the node order ---------------------------------------------------------
 * ONNX asks for the nodes in topological order; ONNX Runtime sorts them
 * itself, and so does the load, before the composites are expanded: a
 * sorted graph keeps its order, else of the nodes whose inputs are ready the
 * first in the file goes next (a min-heap of the ready nodes' indices). A name
 * defined twice (by two node outputs, or a node output that is a graph input
 * or an initializer) and a cycle are refused, as ONNX Runtime refuses them:
 * the import would make kernels of them that read a tensor before it is
 * written, or two kernels writing one tensor. */
typedef struct defn {
    const char *name;
    int node; /* the node writing it; -1 a graph input, -2 an initializer */
} defn;
typedef struct defs {
    defn *v;
    size_t cap;
} defs;
static defn *def_slot(defs *d, const char *name) {
    size_t mask = d->cap - 1, h = (size_t)gs_fnv1a64(name, strlen(name)) & mask;
    while (d->v[h].name && strcmp(d->v[h].name, name)) h = (h + 1) & mask;
    return &d->v[h];
}
/* The node writing name, or -1 (none: a graph input, an initializer, an
 * empty or unknown name). */
static int def_node(defs *d, const char *name) {
    if (!*name) return -1;
    defn *e = def_slot(d, name);
    return e->name && e->node >= 0 ? e->node : -1;
}
/* Every name the graph defines into d (calloc'd; the caller frees d->v),
 * or a parse error naming the one defined twice. */
static gs_status def_table(rd *r, defs *d) {
    const gs_model *m = r->m;
    const onode *nd = m->nodes;
    size_t names = (size_t)m->ninit + (size_t)m->ninputs + 1;
    for (int i = 0; i < m->nnodes; i++) names += (size_t)nd[i].nout;
    d->cap = 16;
    while (d->cap < 2 * names) d->cap *= 2;
    d->v = calloc(d->cap, sizeof *d->v);
    if (!d->v) return gs_err(r->ctx, GS_ERR_NOMEM, "out of memory");
    for (int k = 0; k < m->ninit + m->ninputs; k++) { /* an input with an initializer is one name */
        const char *nm = k < m->ninit ? m->init[k].name : m->inputs[k - m->ninit].name;
        defn *e = nm && *nm ? def_slot(d, nm) : NULL;
        if (e && !e->name) *e = (defn){nm, k < m->ninit ? -2 : -1};
    }
    for (int i = 0; i < m->nnodes; i++)
        for (int k = 0; k < nd[i].nout; k++) {
            const char *nm = nd[i].out[k];
            if (!*nm) continue;
            defn *e = def_slot(d, nm);
            if (!e->name) {
                *e = (defn){nm, i};
                continue;
            }
            if (e->node < 0)
                return gs_err(r->ctx, GS_ERR_PARSE, "%s: invalid ONNX graph: node %d '%s' (%s) writes '%s', %s",
                              r->path, i, nd[i].name, nd[i].op_type, nm,
                              e->node == -1 ? "a graph input" : "an initializer");
            return gs_err(r->ctx, GS_ERR_PARSE, "%s: invalid ONNX graph: '%s' is written by node %d '%s' (%s) and "
                          "node %d '%s' (%s)", r->path, nm, e->node, nd[e->node].name, nd[e->node].op_type, i,
                          nd[i].name, nd[i].op_type);
        }
    return GS_OK;
}
/* A cycle among the nodes the sort left (indeg > 0): from one of them, back
 * along inputs written by others left, until the walk is on the cycle. */
static gs_status cycle_err(rd *r, defs *d, const int *indeg) {
    const onode *nd = r->m->nodes;
    int v = 0, via = 0;
    while (!indeg[v]) v++;
    for (int step = 0; step <= r->m->nnodes; step++)
        for (int k = 0; k < nd[v].nin; k++) {
            int p = def_node(d, nd[v].in[k]);
            if (p >= 0 && indeg[p]) {
                v = p;
                break;
            }
        }
    for (int k = 0; k < nd[v].nin; k++) {
        int p = def_node(d, nd[v].in[k]);
        if (p >= 0 && indeg[p]) {
            via = k;
            break;
        }
    }
    return gs_err(r->ctx, GS_ERR_PARSE, "%s: invalid ONNX graph: a cycle: node %d '%s' (%s) reads '%s', which depends "
                  "on its own output", r->path, v, nd[v].name, nd[v].op_type, nd[v].in[via]);
}
static void heap_push(int *h, int *n, int v) {
    int i = (*n)++;
    for (; i > 0 && h[(i - 1) / 2] > v; i = (i - 1) / 2) h[i] = h[(i - 1) / 2];
    h[i] = v;
}
static int heap_pop(int *h, int *n) {
    int top = h[0], v = h[--*n], i = 0;
    for (;;) {
        int c = 2 * i + 1;
        if (c >= *n) break;
        if (c + 1 < *n && h[c + 1] < h[c]) c++;
        if (h[c] >= v) break;
        h[i] = h[c];
        i = c;
    }
    if (*n) h[i] = v;
    return top;
}
static gs_status sort_nodes(rd *r) {
    gs_model *m = r->m;
    const onode *nd = m->nodes;
    int nn = m->nnodes, sorted = 1, nh = 0, no = 0;
    defs d = {NULL, 0};
    gs_status s = def_table(r, &d);
    /* the edges writer -> reader, one per input naming a node's output, grouped by writer */
    int *indeg = calloc((size_t)nn + 1, sizeof *indeg), *start = calloc((size_t)nn + 2, sizeof *start);
    int *succ = NULL, *heap = NULL, *order = NULL;
    if (s == GS_OK && (!indeg || !start)) s = gs_err(r->ctx, GS_ERR_NOMEM, "out of memory");
    for (int i = 0; s == GS_OK && i < nn; i++)
        for (int k = 0; k < nd[i].nin; k++) {
            int p = def_node(&d, nd[i].in[k]);
            if (p < 0) continue;
            sorted &= p < i;
            indeg[i]++;
            start[p + 2]++;
        }
    if (s == GS_OK && !sorted) {
        for (int i = 0; i < nn; i++) start[i + 2] += start[i + 1];
        succ = malloc((size_t)(start[nn + 1] ? start[nn + 1] : 1) * sizeof *succ);
        heap = malloc((size_t)nn * sizeof *heap);
        order = malloc((size_t)nn * sizeof *order);
        if (!succ || !heap || !order) s = gs_err(r->ctx, GS_ERR_NOMEM, "out of memory");
    }
    if (s == GS_OK && !sorted) {
        for (int i = 0; i < nn; i++) /* start[p + 1] counts p's edges placed so far, then ends at its end */
            for (int k = 0; k < nd[i].nin; k++) {
                int p = def_node(&d, nd[i].in[k]);
                if (p >= 0) succ[start[p + 1]++] = i;
            }
        for (int i = 0; i < nn; i++)
            if (!indeg[i]) heap_push(heap, &nh, i);
        while (nh) {
            int v = heap_pop(heap, &nh);
            order[no++] = v;
            for (int e = start[v]; e < start[v + 1]; e++)
                if (!--indeg[succ[e]]) heap_push(heap, &nh, succ[e]);
        }
        onode *sv = no < nn ? NULL : gs_arena_alloc(&m->arena, (size_t)nn * sizeof *sv);
        if (no < nn) s = cycle_err(r, &d, indeg);
        else if (!sv) s = gs_err(r->ctx, GS_ERR_NOMEM, "out of memory");
        else {
            for (int i = 0; i < nn; i++) sv[i] = nd[order[i]];
            m->nodes = sv;
        }
    }
    free(d.v);
    free(indeg);
    free(start);
    free(succ);
    free(heap);
    free(order);
    return s;
}

/* The graph inputs' symbolic dims, each name once. */
static gs_status expand_composites(rd *r);
static gs_status collect_dims(gs_ctx *ctx, gs_model *m) {
    int cap = 0;
    for (int i = 0; i < m->ninputs; i++) cap += m->inputs[i].ndim;
    m->dim_name = gs_arena_alloc(&m->arena, (size_t)(cap ? cap : 1) * sizeof *m->dim_name);
    m->dim_val = gs_arena_alloc(&m->arena, (size_t)(cap ? cap : 1) * sizeof *m->dim_val);
    if (!m->dim_name || !m->dim_val) return gs_err(ctx, GS_ERR_NOMEM, "out of memory");
    for (int i = 0; i < m->ninputs; i++)
        for (int d = 0; d < m->inputs[i].ndim; d++) {
            const char *p = m->inputs[i].param[d];
            if (!p || !*p || m->inputs[i].dims[d] > 0) continue;
            int k = 0;
            while (k < m->ndims && strcmp(m->dim_name[k], p)) k++;
            if (k == m->ndims) m->dim_name[m->ndims++] = p;
        }
    return GS_OK;
}

static gs_status load_buffer(gs_ctx *ctx, const void *data, size_t n, const char *dir, const char *what,
                             gs_model **out);

gs_status gs_model_load(gs_ctx *ctx, const char *path, gs_model **out) {
    if (!out) return gs_err(ctx, GS_ERR_INVALID_ARG, "gs_model_load: NULL out");
    *out = NULL;
    if (!path) return gs_err(ctx, GS_ERR_INVALID_ARG, "gs_model_load: NULL path");
    FILE *f = fopen(path, "rb");
    if (!f) return gs_err(ctx, GS_ERR_IO, "%s: cannot open: %s", path, strerror(errno));
    struct stat st;
    if (fstat(fileno(f), &st) != 0 || !S_ISREG(st.st_mode)) {
        fclose(f);
        return gs_err(ctx, GS_ERR_IO, "%s: not a regular file", path);
    }
    if ((long long)st.st_size > GS_ONNX_MAX_FILE) {
        fclose(f);
        return gs_err(ctx, GS_ERR_UNSUPPORTED, "%s: %lld bytes (at most %lld: keep large weights as external data)",
                      path, (long long)st.st_size, (long long)GS_ONNX_MAX_FILE);
    }
    size_t n = (size_t)st.st_size;
    uint8_t *buf = malloc(n ? n : 1);
    if (!buf) {
        fclose(f);
        return gs_err(ctx, GS_ERR_NOMEM, "%s: out of memory for %zu bytes", path, n);
    }
    size_t got = fread(buf, 1, n, f);
    fclose(f);
    if (got != n) {
        free(buf);
        return gs_err(ctx, GS_ERR_IO, "%s: short read (%zu of %zu bytes)", path, got, n);
    }
    /* the model's directory: external data files are relative to it */
    char dir[4096];
    snprintf(dir, sizeof dir, "%s", path);
    char *slash = strrchr(dir, '/');
    if (slash) *(slash == dir ? slash + 1 : slash) = 0;
    else snprintf(dir, sizeof dir, ".");
    gs_status s = load_buffer(ctx, buf, n, dir, path, out);
    free(buf);
    return s;
}

gs_status gs_model_load_buffer(gs_ctx *ctx, const void *data, size_t n, const char *dir, gs_model **out) {
    if (!out) return gs_err(ctx, GS_ERR_INVALID_ARG, "gs_model_load_buffer: NULL out");
    *out = NULL;
    if (!data && n) return gs_err(ctx, GS_ERR_INVALID_ARG, "gs_model_load_buffer: NULL data");
    return load_buffer(ctx, data, n, dir, "model", out);
}

static gs_status load_buffer(gs_ctx *ctx, const void *data, size_t n, const char *dir, const char *what,
                             gs_model **out) {
    gs_model *m = calloc(1, sizeof *m);
    if (!m) return gs_err(ctx, GS_ERR_NOMEM, "out of memory");
    gs_arena_init(&m->arena, 1 << 16);
    gs_arena_init(&m->iarena, 1 << 16);
    if (dir) { /* NULL: no directory, external data is refused */
        size_t dl = strlen(dir);
        m->dir = gs_arena_alloc(&m->arena, dl + 1);
        if (!m->dir) {
            gs_model_destroy(m);
            return gs_err(ctx, GS_ERR_NOMEM, "out of memory");
        }
        memcpy(m->dir, dir, dl + 1);
    }
    rd r = {ctx, m, data, what};
    gs_status s = n ? read_model(&r, data, n) : gs_err(ctx, GS_ERR_PARSE, "%s: empty file: not an ONNX model", what);
    if (s == GS_OK) s = sort_nodes(&r);
    if (s == GS_OK) s = expand_composites(&r);
    if (s == GS_OK) s = collect_dims(ctx, m);
    if (s != GS_OK) {
        gs_model_destroy(m);
        return s;
    }
    *out = m;
    return GS_OK;
}

/* ---- composite operators as their decompositions ------------------------------
 * Softmax, LogSoftmax and LayerNormalization are replaced at load, in place,
 * by the nodes that compute them along their axes (each a kernel: row or
 * middle reductions, element-wise steps with broadcasting), as ONNX's own
 * function bodies do. The reductions run in f32 with the maximum subtracted
 * first (softmax) and the mean subtracted before the variance (layer norm).
 * The new nodes are named "<node>/<Op>.<step>"; their intermediate tensors
 * "<output>/<Op>.<step>". The model's node list is the expanded one. */
typedef struct xb { /* the nodes being built */
    rd *r;
    onode *v;
    int n, cap;
} xb;
static const char *xstr(rd *r, const char *fmt, const char *a, const char *b) {
    char tmp[600];
    snprintf(tmp, sizeof tmp, fmt, a, b);
    return str_dup(r, (const uint8_t *)tmp, strlen(tmp));
}
/* A node op_type(ins) -> out with attrs (copied); NULL when out of memory. */
static onode *xnode(xb *x, const onode *src, const char *op_type, const char *step, const char *in0, const char *in1,
                    const char *out, const oattr *attrs, int nattr) {
    if (x->n == x->cap) {
        int c = x->cap ? 2 * x->cap : 64;
        onode *nv = realloc(x->v, (size_t)c * sizeof *nv);
        if (!nv) return NULL;
        x->v = nv;
        x->cap = c;
    }
    onode *n = &x->v[x->n];
    memset(n, 0, sizeof *n);
    n->name = xstr(x->r, "%s/%s", *src->name ? src->name : src->out[0], step);
    n->op_type = op_type;
    n->domain = "";
    n->in = gs_arena_alloc(&x->r->m->arena, 2 * sizeof *n->in);
    n->out = gs_arena_alloc(&x->r->m->arena, sizeof *n->out);
    n->attr = gs_arena_alloc(&x->r->m->arena, (size_t)(nattr ? nattr : 1) * sizeof *n->attr);
    if (!n->name || !n->in || !n->out || !n->attr || !out) return NULL;
    n->in[0] = in0;
    n->in[1] = in1;
    n->nin = in1 ? 2 : 1;
    n->out[0] = out;
    n->nout = 1;
    if (nattr) memcpy(n->attr, attrs, (size_t)nattr * sizeof *attrs);
    n->nattr = nattr;
    x->n++;
    return n;
}
static int64_t node_attr_i(const onode *n, const char *name, int64_t def) {
    for (int k = 0; k < n->nattr; k++)
        if (!strcmp(n->attr[k].name, name)) return n->attr[k].i;
    return def;
}
static float node_attr_f(const onode *n, const char *name, float def) {
    for (int k = 0; k < n->nattr; k++)
        if (!strcmp(n->attr[k].name, name)) return n->attr[k].f;
    return def;
}
/* Node n's decomposition appended to x; 0, or -1 when out of memory. */
static int expand_node(xb *x, const onode *n, int64_t opset) {
    rd *r = x->r;
    int ln = !strcmp(n->op_type, "LayerNormalization"), logsm = !strcmp(n->op_type, "LogSoftmax");
    const char *pfx = ln ? "LayerNormalization" : n->op_type, *out = n->out[0];
    char step[64];
#define XT(s) xstr(r, "%s/%s", out, (snprintf(step, sizeof step, "%s.%s", pfx, s), step))
#define XS(s) (snprintf(step, sizeof step, "%s.%s", pfx, s), step)
    /* the reduced axes: Softmax from opset 13 one axis (default -1); before
     * it, and LayerNormalization always, every axis from 'axis' on (the
     * import resolves that attribute, gensor_axes_from, at the known rank) */
    int64_t axis = node_attr_i(n, "axis", ln || opset >= 13 ? -1 : 1);
    int64_t *ax = gs_arena_alloc(&r->m->arena, sizeof *ax);
    if (!ax) return -1;
    *ax = axis;
    oattr red = {0}, bred = {0};
    if (!ln && opset >= 13) red = (oattr){.name = "axes", .type = AT_INTS, .ints = ax, .nints = 1};
    else red = (oattr){.name = "gensor_axes_from", .type = AT_INT, .i = axis};
    /* on the steps that combine X with its reduction: the reduced axes, so that
     * the broadcast's class does not depend on them being 1 (imp_binary) */
    bred = (oattr){.name = !ln && opset >= 13 ? "gensor_reduced_axis" : "gensor_reduced_from", .type = AT_INT, .i = axis};
    if (!ln) {
        const char *mx = XT("max"), *d = XT("shifted"), *e = XT("exp"), *sum = XT("sum");
        if (!xnode(x, n, "ReduceMax", XS("max"), n->in[0], NULL, mx, &red, 1) ||
            !xnode(x, n, "Sub", XS("shift"), n->in[0], mx, d, &bred, 1) ||
            !xnode(x, n, "Exp", XS("exp"), d, NULL, e, NULL, 0) ||
            !xnode(x, n, "ReduceSum", XS("sum"), e, NULL, sum, &red, 1))
            return -1;
        if (!logsm) return xnode(x, n, "Div", XS("div"), e, sum, out, &bred, 1) ? 0 : -1;
        const char *lg = XT("logsum");
        if (!xnode(x, n, "Log", XS("log"), sum, NULL, lg, NULL, 0) ||
            !xnode(x, n, "Sub", XS("sub"), d, lg, out, &bred, 1))
            return -1;
        return 0;
    }
    /* LayerNormalization(X, Scale, B) -> Y, Mean, InvStdDev */
    const char *mean = n->nout > 1 && *n->out[1] ? n->out[1] : XT("mean");
    const char *inv = n->nout > 2 && *n->out[2] ? n->out[2] : XT("invstddev");
    const char *d = XT("centered"), *d2 = XT("squared"), *var = XT("var"), *nrm = XT("normalized");
    int bias = n->nin > 2 && *n->in[2];
    const char *scaled = bias ? XT("scaled") : out;
    oattr eps = {.name = "epsilon", .type = AT_FLOAT, .f = node_attr_f(n, "epsilon", 1e-5f)};
    if (!xnode(x, n, "ReduceMean", XS("mean"), n->in[0], NULL, mean, &red, 1) ||
        !xnode(x, n, "Sub", XS("center"), n->in[0], mean, d, &bred, 1) ||
        !xnode(x, n, "Mul", XS("square"), d, d, d2, NULL, 0) ||
        !xnode(x, n, "ReduceMean", XS("var"), d2, NULL, var, &red, 1) ||
        !xnode(x, n, "LayerNormalization.InvStdDev", XS("invstddev"), var, NULL, inv, &eps, 1) ||
        !xnode(x, n, "Mul", XS("normalize"), d, inv, nrm, &bred, 1))
        return -1;
    if (n->nin < 2 || !*n->in[1]) return 0; /* no Scale: left to the import's reason (input 1 missing) */
    if (!xnode(x, n, "Mul", XS("scale"), nrm, n->in[1], scaled, NULL, 0)) return -1;
    if (bias && !xnode(x, n, "Add", XS("bias"), scaled, n->in[2], out, NULL, 0)) return -1;
    return 0;
#undef XT
#undef XS
}
/* Concat of n inputs: n nodes "Concat.Part", part k copying input k into its
 * slice of the output (a `place` kernel); each reads every input (the slice's
 * offset and the output's extent come from their shapes), and part k > 0
 * starts from part k-1's output (out_init), the last one writing the
 * Concat's output. */
static int expand_concat(xb *x, const onode *n) {
    rd *r = x->r;
    for (int k = 0; k < n->nin; k++) {
        char step[40];
        snprintf(step, sizeof step, "Concat.%d", k);
        const char *out = k == n->nin - 1 ? n->out[0] : xstr(r, "%s/%s", n->out[0], step);
        onode *p = xnode(x, n, "Concat.Part", step, n->in[0], NULL, out, NULL, 0);
        if (!p) return -1;
        p->in = gs_arena_alloc(&r->m->arena, (size_t)n->nin * sizeof *p->in);
        p->attr = gs_arena_alloc(&r->m->arena, 2 * sizeof *p->attr);
        if (!p->in || !p->attr) return -1;
        memcpy(p->in, n->in, (size_t)n->nin * sizeof *p->in);
        p->nin = n->nin;
        p->attr[0] = (oattr){.name = "axis", .type = AT_INT, .i = node_attr_i(n, "axis", 0)};
        p->attr[1] = (oattr){.name = "gensor_part", .type = AT_INT, .i = k};
        p->nattr = 2;
    }
    return 0;
}
/* LRN (across channels): s = alpha/size * the channel window's sum of squares
 * (chansq), t = log(bias + s), p = exp(-beta t), y = x * p: four nodes
 * "<node>/LRN.sum", ".log", ".pow", ".mul". */
static int expand_lrn(xb *x, const onode *n) {
    rd *r = x->r;
    const char *out = n->out[0];
    const char *s = xstr(r, "%s/%s", out, "LRN.sum"), *t = xstr(r, "%s/%s", out, "LRN.log"),
               *p = xstr(r, "%s/%s", out, "LRN.pow");
    oattr a1[2] = {{.name = "size", .type = AT_INT, .i = node_attr_i(n, "size", 0)},
                   {.name = "alpha", .type = AT_FLOAT, .f = node_attr_f(n, "alpha", 1e-4f)}};
    oattr a2 = {.name = "bias", .type = AT_FLOAT, .f = node_attr_f(n, "bias", 1.0f)};
    oattr a3 = {.name = "beta", .type = AT_FLOAT, .f = node_attr_f(n, "beta", 0.75f)};
    if (!xnode(x, n, "LRN.Sum", "LRN.sum", n->in[0], NULL, s, a1, 2) ||
        !xnode(x, n, "LRN.Log", "LRN.log", s, NULL, t, &a2, 1) ||
        !xnode(x, n, "LRN.Pow", "LRN.pow", t, NULL, p, &a3, 1) ||
        !xnode(x, n, "Mul", "LRN.mul", n->in[0], p, out, NULL, 0))
        return -1;
    return 0;
}
static int expandable(const onode *n) {
    if (*n->domain && strcmp(n->domain, "ai.onnx")) return 0;
    if (n->nin < 1 || n->nout < 1 || !*n->in[0] || !*n->out[0]) return 0;
    if (!strcmp(n->op_type, "Concat")) {
        for (int k = 0; k < n->nin; k++)
            if (!*n->in[k]) return 0;
        for (int k = 0; k < n->nattr; k++)
            if (!strcmp(n->attr[k].name, "axis")) return 1;
        return 0; /* axis is required: left to the import's reason */
    }
    return !strcmp(n->op_type, "Softmax") || !strcmp(n->op_type, "LogSoftmax") ||
           !strcmp(n->op_type, "LayerNormalization") || !strcmp(n->op_type, "LRN");
}
static gs_status expand_composites(rd *r) {
    gs_model *m = r->m;
    int any = 0;
    for (int i = 0; i < m->nnodes; i++) any |= expandable(&m->nodes[i]);
    if (!any) return GS_OK;
    xb x = {r, NULL, 0, 0};
    for (int i = 0; i < m->nnodes; i++) {
        const onode *n = &m->nodes[i];
        int rc = 0;
        if (expandable(n))
            rc = !strcmp(n->op_type, "Concat") ? expand_concat(&x, n)
                 : !strcmp(n->op_type, "LRN")  ? expand_lrn(&x, n)
                                               : expand_node(&x, n, m->opset);
        else if (xnode(&x, n, n->op_type, "", NULL, NULL, "", NULL, 0)) x.v[x.n - 1] = *n; /* as it is */
        else rc = -1;
        if (rc < 0 || x.n > GS_ONNX_MAX_NODES) {
            free(x.v);
            return rc < 0 ? gs_err(r->ctx, GS_ERR_NOMEM, "out of memory")
                          : gs_err(r->ctx, GS_ERR_UNSUPPORTED, "%s: more than %d nodes once Softmax and "
                                   "LayerNormalization are expanded", r->path, GS_ONNX_MAX_NODES);
        }
    }
    onode *nv = gs_arena_alloc(&m->arena, (size_t)x.n * sizeof *nv);
    if (!nv) {
        free(x.v);
        return gs_err(r->ctx, GS_ERR_NOMEM, "out of memory");
    }
    memcpy(nv, x.v, (size_t)x.n * sizeof *nv);
    free(x.v);
    m->nodes = nv;
    m->nnodes = x.n;
    return GS_OK;
}

void gs_model_destroy(gs_model *m) {
    if (!m) return;
    gs_arena_free(&m->parena);
    gs_arena_free(&m->iarena);
    gs_arena_free(&m->arena);
    free(m);
}

int64_t gs_model_opset(const gs_model *m) { return m ? m->opset : 0; }
int gs_model_num_nodes(const gs_model *m) { return m ? m->nnodes : 0; }
int gs_model_num_dims(const gs_model *m) { return m ? m->ndims : 0; }
const char *gs_model_dim_name(const gs_model *m, int i) {
    return m && i >= 0 && i < m->ndims ? m->dim_name[i] : NULL;
}

gs_status gs_model_bind_dim(gs_ctx *ctx, gs_model *m, const char *name, int64_t value) {
    if (!m || !name) return gs_err(ctx, GS_ERR_INVALID_ARG, "gs_model_bind_dim: NULL model or name");
    if (value < 1 || value > ONNX_DIM_MAX)
        return gs_err(ctx, GS_ERR_INVALID_ARG, "dim %s=%lld must be between 1 and %lld", name, (long long)value,
                      (long long)ONNX_DIM_MAX);
    for (int k = 0; k < m->ndims; k++)
        if (!strcmp(m->dim_name[k], name)) {
            m->dim_val[k] = value;
            m->imported = 0;
            return GS_OK;
        }
    gs_sb sb;
    gs_sb_init(&sb);
    for (int k = 0; k < m->ndims; k++) gs_sb_printf(&sb, "%s%s", k ? ", " : "", m->dim_name[k]);
    char *l = gs_sb_take(&sb);
    gs_status s = gs_err(ctx, GS_ERR_INVALID_ARG, "the model has no symbolic dim '%s' (its dims: %s)", name,
                         l && *l ? l : "none");
    free(l);
    return s;
}

/* ---- the import: shapes, fusions, one gs_op per kernel node ------------------- */
typedef struct imp {
    gs_ctx *ctx;
    gs_model *m;
    int i;         /* the node being imported */
    const onode *n;
    int fused[4], nfused; /* the nodes fused into it so far (a batch norm, a unary, a Relu, a Clip) */
    int ft;               /* the floating type of its inputs (DT_FLOAT, DT_FLOAT16, DT_BFLOAT16): its
                             kernel's operand and output type, and the type of what it makes */
} imp;

static uint64_t name_hash(const char *s) { return gs_fnv1a64(s, strlen(s)); }

/* The table entry of a tensor name, made (unknown shape) when make is set. */
/* t's shape in the probe import (its rank the same), or NULL. */
static const tinfo *probe_t(const gs_model *m, const tinfo *t) {
    if (!m->ptab || !t) return NULL;
    size_t mask = m->ptabcap - 1, h = (size_t)name_hash(t->name) & mask;
    for (; m->ptab[h]; h = (h + 1) & mask)
        if (!strcmp(m->ptab[h]->name, t->name)) return m->ptab[h]->ndim == t->ndim ? m->ptab[h] : NULL;
    return NULL;
}

static tinfo *tab(gs_model *m, const char *name, int make) {
    if (!name || !*name) return NULL;
    size_t mask = m->tabcap - 1, h = (size_t)name_hash(name) & mask;
    while (m->tab[h]) {
        if (!strcmp(m->tab[h]->name, name)) return m->tab[h];
        h = (h + 1) & mask;
    }
    if (!make) return NULL;
    tinfo *t = gs_arena_alloc(&m->iarena, sizeof *t);
    if (!t) return NULL;
    t->name = name;
    t->ndim = -1;
    t->producer = -1;
    t->consumer = -1;
    m->tab[h] = t;
    return t;
}

static char *isprintf(gs_model *m, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static char *isprintf(gs_model *m, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    char tmp[512];
    vsnprintf(tmp, sizeof tmp, fmt, ap);
    va_end(ap);
    size_t l = strlen(tmp);
    char *s = gs_arena_alloc(&m->iarena, l + 1);
    if (s) memcpy(s, tmp, l + 1);
    return s ? s : (char *)"out of memory";
}

static void unsup(imp *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void unsup(imp *c, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    char tmp[512];
    vsnprintf(tmp, sizeof tmp, fmt, ap);
    va_end(ap);
    gs_model_node *o = &c->m->out[c->i];
    o->kind = GS_MODEL_UNSUPPORTED;
    o->reason = isprintf(c->m, "%s", tmp);
    /* what was fused into it has no kernel either */
    for (int k = 0; k < c->nfused; k++) {
        gs_model_node *f = &c->m->out[c->fused[k]];
        f->kind = GS_MODEL_UNSUPPORTED;
        f->fused_into = -1;
        f->reason = isprintf(c->m, "fused into node %d (%s), which is unsupported", c->i, c->n->op_type);
    }
    c->nfused = 0;
}

static const oattr *attr(const onode *n, const char *name) {
    for (int k = 0; k < n->nattr; k++)
        if (!strcmp(n->attr[k].name, name)) return &n->attr[k];
    return NULL;
}
static int64_t attr_i(const onode *n, const char *name, int64_t def) {
    const oattr *a = attr(n, name);
    return a ? a->i : def;
}
static float attr_f(const onode *n, const char *name, float def) {
    const oattr *a = attr(n, name);
    return a ? a->f : def;
}
/* An ints attribute of exactly want values into out (def when absent); -1
 * when present with another count. */
static int attr_ints(const onode *n, const char *name, int want, int64_t def, int64_t *out) {
    const oattr *a = attr(n, name);
    for (int k = 0; k < want; k++) out[k] = def;
    if (!a) return 0;
    if (a->nints != want) return -1;
    for (int k = 0; k < want; k++) out[k] = a->ints[k];
    return 0;
}

static const char *dtype_name(int t) {
    static const char *names[] = {"UNDEFINED", "FLOAT", "UINT8", "INT8", "UINT16", "INT16", "INT32", "INT64",
                                  "STRING", "BOOL", "FLOAT16", "DOUBLE", "UINT32", "UINT64", "COMPLEX64",
                                  "COMPLEX128", "BFLOAT16", "FLOAT8E4M3FN", "FLOAT8E4M3FNUZ", "FLOAT8E5M2",
                                  "FLOAT8E5M2FNUZ", "UINT4", "INT4", "FLOAT4E2M1", "FLOAT8E8M0", "UINT2", "INT2"};
    return t >= 0 && t < (int)(sizeof names / sizeof names[0]) ? names[t] : "an unknown type";
}

static void shape_text(const tinfo *t, char *buf, size_t n) {
    size_t o = (size_t)snprintf(buf, n, "[");
    for (int d = 0; d < t->ndim && o < n; d++) o += (size_t)snprintf(buf + o, n - o, "%s%lld", d ? "," : "", (long long)t->dims[d]);
    if (o < n) snprintf(buf + o, n - o, "]");
}

/* Input k of the node with a known shape (any element type or rank), or NULL
 * with the node unsupported, naming why. */
static tinfo *any_in(imp *c, int k) {
    const char *nm = k < c->n->nin ? c->n->in[k] : NULL;
    tinfo *t = tab(c->m, nm, 0);
    if (!nm || !*nm) unsup(c, "input %d is missing", k);
    else if (!t) unsup(c, "input '%s' is not a graph input, an initializer or a node's output", nm);
    else if (t->ndim < 0) unsup(c, "input '%s' has no known shape (from an unsupported node)", nm);
    else return t;
    return NULL;
}

/* any_in, of a floating type, rank lo..hi and dims the specs take; NULL
 * after marking the node unsupported with the reason. */
static tinfo *in_t(imp *c, int k, int lo, int hi) {
    tinfo *t = any_in(c, k);
    if (!t) return NULL;
    const char *nm = c->n->in[k];
    if (!dt_float(t->dtype) && !(t->c && t->c->f)) /* a DOUBLE constant was read as fp32 */
        unsup(c, "input '%s' is %s; gensor kernels take FLOAT, FLOAT16 and BFLOAT16", nm, dtype_name(t->dtype));
    else if (t->ndim < lo || t->ndim > hi) {
        char sh[128];
        shape_text(t, sh, sizeof sh);
        unsup(c, "input '%s' has rank %d %s (%d..%d here)", nm, t->ndim, sh, lo, hi);
    } else {
        for (int d = 0; d < t->ndim; d++)
            if (t->dims[d] < 1 || t->dims[d] > ONNX_DIM_MAX) {
                unsup(c, "input '%s' dim %d is %lld (1..%lld here)", nm, d, (long long)t->dims[d],
                      (long long)ONNX_DIM_MAX);
                return NULL;
            }
        return t;
    }
    return NULL;
}

/* The product of d[a..b), saturating at 2^62 (a bound no spec accepts). */
static int64_t prod(const int64_t *d, int a, int b) {
    int64_t p = 1;
    for (int k = a; k < b; k++)
        if (__builtin_mul_overflow(p, d[k], &p) || p > (1LL << 62)) return 1LL << 62;
    return p;
}

/* Output k of node i gets a shape. A floating output (DT_FLOAT) has the
 * node's floating type: a kernel writes its operands' type. */
static void set_out(imp *c, int k, int ndim, const int64_t *dims, int dtype, const otensor *cst) {
    if (k >= c->n->nout) return;
    tinfo *t = tab(c->m, c->n->out[k], 0);
    if (!t) return;
    t->ndim = ndim;
    for (int d = 0; d < ndim; d++) t->dims[d] = dims[d];
    t->dtype = dtype == DT_FLOAT ? c->ft : dtype;
    t->c = cst;
    t->producer = c->i;
}

/* The node j > i that alone reads tensor name, when its op_type is want
 * and it is not imported yet; else -1. */
static int sole_consumer(imp *c, const char *name, const char *want) {
    tinfo *t = tab(c->m, name, 0);
    if (!t || t->uses != 1 || t->consumer <= c->i) return -1;
    const onode *n = &c->m->nodes[t->consumer];
    if (strcmp(n->op_type, want) || (*n->domain && strcmp(n->domain, "ai.onnx"))) return -1;
    if (c->m->out[t->consumer].kind != GS_MODEL_UNSUPPORTED || c->m->out[t->consumer].reason) return -1;
    return t->consumer;
}

/* Mark node j fused into node i; its outputs take shape and type of the tensor fused. */
static void mark_fused(imp *c, int j, const tinfo *like) {
    gs_model_node *o = &c->m->out[j];
    if (o->kind != GS_MODEL_FUSED && c->nfused < 4) c->fused[c->nfused++] = j;
    o->kind = GS_MODEL_FUSED;
    o->fused_into = c->i;
    o->reason = NULL;
    const onode *n = &c->m->nodes[j];
    if (n->nout > 0) {
        tinfo *t = tab(c->m, n->out[0], 0);
        if (t) {
            t->ndim = like->ndim;
            memcpy(t->dims, like->dims, sizeof t->dims);
            t->dtype = like->dtype == DT_FLOAT ? c->ft : like->dtype;
            t->producer = c->i;
        }
    }
}

/* A constant the import made (a folded weight), registered by name: of the
 * node's floating type (its float data computed in f32; a runner rounds it
 * to a half type once, as it packs the kernel's buffer). */
static otensor *derive(imp *c, const char *name, int64_t n) {
    otensor *t = gs_arena_alloc(&c->m->iarena, sizeof *t);
    float *f = gs_arena_alloc(&c->m->iarena, (size_t)(n ? n : 1) * sizeof *f);
    tinfo *ti = tab(c->m, name, 1);
    if (!t || !f || !ti) return NULL;
    t->name = ti->name;
    t->dtype = c->ft;
    t->ndim = 1;
    t->dims[0] = n;
    t->n = n;
    t->f = f;
    ti->ndim = 1;
    ti->dims[0] = n;
    ti->dtype = c->ft;
    ti->c = t;
    ti->producer = c->i;
    return t;
}

/* Constants the import makes (ConstantOfShape's data, and the broadcasts
 * expand_const writes out) stop at 2^26 elements in all, per import. */
#define GS_ONNX_FILL_MAX (1LL << 26)

/* Constant t broadcast to dims[0..nd) by numpy's rule (t's dims aligned from
 * the right, each 1 or the target's): a constant the import makes, of the
 * target's shape, named "<t>@<node output>". It lets a kernel whose operand
 * must have the full shape (the first of sub/div/pow, a batch of bgemm, a
 * gemm's C) read a constant that broadcasts, with no change to the
 * arithmetic: each element is a copy. The caller checked that t broadcasts
 * to dims. NULL with the node unsupported (what names the operand). */
static tinfo *expand_const(imp *c, const tinfo *t, int nd, const int64_t *dims, const char *what) {
    int64_t cnt = prod(dims, 0, nd);
    if (cnt > GS_ONNX_FILL_MAX - c->m->filled) {
        unsup(c, "%s: expanding the constant '%s' to %lld elements would pass the import's %lld elements of "
                 "made constants", what, t->name, (long long)cnt, (long long)GS_ONNX_FILL_MAX);
        return NULL;
    }
    otensor *e = derive(c, isprintf(c->m, "%s@%s", t->name, c->n->nout ? c->n->out[0] : ""), cnt);
    tinfo *ti = e ? tab(c->m, e->name, 0) : NULL;
    if (!ti) {
        unsup(c, "%s: out of memory expanding the constant '%s'", what, t->name);
        return NULL;
    }
    /* the source's stride per target dim: 0 where t has 1 (or no dim) */
    int64_t st[GS_ONNX_MAX_RANK] = {0}, s = 1;
    for (int d = nd - 1, k = t->ndim - 1; d >= 0 && k >= 0; d--, k--) {
        st[d] = t->dims[k] == 1 ? 0 : s;
        s *= t->dims[k];
    }
    int64_t idx[GS_ONNX_MAX_RANK] = {0}, src = 0;
    for (int64_t i = 0; i < cnt; i++) {
        e->f[i] = t->c->f[src];
        for (int d = nd - 1; d >= 0; d--) { /* the next index, odometer-wise */
            src += st[d];
            if (++idx[d] < dims[d]) break;
            src -= st[d] * dims[d];
            idx[d] = 0;
        }
    }
    c->m->filled += cnt;
    e->ndim = ti->ndim = nd;
    memcpy(e->dims, dims, (size_t)nd * sizeof *dims);
    memcpy(ti->dims, dims, (size_t)nd * sizeof *dims);
    return ti;
}

/* True when a's dims (aligned from the right) are each 1 or dims'. */
static bool broadcasts_to(const tinfo *a, int nd, const int64_t *dims) {
    if (a->ndim > nd) return false;
    for (int k = 0; k < a->ndim; k++) {
        int64_t x = a->dims[a->ndim - 1 - k];
        if (x != 1 && x != dims[nd - 1 - k]) return false;
    }
    return true;
}

/* The node is one kernel: its spec parsed into the model's op, its operands
 * and output of the node's floating type (gs_op_set_dtype), and the tensors
 * bound to the op's buffers in order (inputs, output, bias). */
static void kernel_typed(imp *c, const char *spec, const char *const *tensors, int ntensors, const char *out_init,
                         int in_dt, int out_dt);
static void kernel(imp *c, const char *spec, const char *const *tensors, int ntensors, const char *out_init) {
    kernel_typed(c, spec, tensors, ntensors, out_init, c->ft, c->ft);
}
static void kernel_typed(imp *c, const char *spec, const char *const *tensors, int ntensors, const char *out_init,
                         int in_dt, int out_dt) {
    gs_model *m = c->m;
    gs_op *op = &m->ops[c->i];
    gs_status s = gs_op_parse_into(c->ctx, spec, op);
    if (s == GS_OK && (in_dt != DT_FLOAT || out_dt != DT_FLOAT))
        s = gs_op_set_dtype(c->ctx, op, dt_gs(in_dt), dt_gs(out_dt));
    if (s != GS_OK) {
        unsup(c, "%s (spec '%s')", gs_ctx_errmsg(c->ctx), spec);
        return;
    }
    int nb = gs_op_num_buffers(op);
    gs_model_binding *b = gs_arena_alloc(&m->iarena, (size_t)nb * sizeof *b);
    if (!b) {
        unsup(c, "out of memory");
        return;
    }
    if (nb != ntensors) {
        unsup(c, "internal: %d buffers for %d tensors", nb, ntensors);
        return;
    }
    for (int k = 0; k < nb; k++) {
        tinfo *t = tab(m, tensors[k], 0);
        b[k].buffer = gs_op_buffer_name(op, k);
        b[k].tensor = t ? t->name : isprintf(m, "%s", tensors[k]);
        b[k].constant = t && t->c;
        b[k].output = k == op->ninputs;
    }
    gs_model_node *o = &m->out[c->i];
    o->kind = GS_MODEL_KERNEL;
    o->op = op;
    o->reason = NULL;
    o->out_init = out_init ? tab(m, out_init, 0)->name : NULL;
    o->nbindings = nb;
    o->bindings = b;
}

/* auto_pad SAME_UPPER / SAME_LOWER: the padding that gives ceil(in/stride)
 * outputs, the odd cell at the end (UPPER) or the start (LOWER). */
static int window_pads(imp *c, const int64_t *in, const int64_t *k, const int64_t *st, const int64_t *dl, int64_t *pads) {
    const oattr *ap = attr(c->n, "auto_pad");
    const char *mode = ap && ap->s ? ap->s : "NOTSET";
    if (!strcmp(mode, "NOTSET")) {
        if (attr_ints(c->n, "pads", 4, 0, pads) < 0) {
            unsup(c, "pads must hold 4 values for a 2-D window");
            return -1;
        }
        for (int d = 0; d < 4; d++)
            if (pads[d] < 0 || pads[d] > ONNX_DIM_MAX) {
                unsup(c, "pads[%d] = %lld (0..%lld here)", d, (long long)pads[d], (long long)ONNX_DIM_MAX);
                return -1;
            }
        return 0;
    }
    if (!strcmp(mode, "VALID")) {
        for (int d = 0; d < 4; d++) pads[d] = 0;
        return 0;
    }
    if (strcmp(mode, "SAME_UPPER") && strcmp(mode, "SAME_LOWER")) {
        unsup(c, "auto_pad '%s' is not one of NOTSET, VALID, SAME_UPPER, SAME_LOWER", mode);
        return -1;
    }
    for (int d = 0; d < 2; d++) {
        int64_t out = (in[d] + st[d] - 1) / st[d], span = dl[d] * (k[d] - 1) + 1;
        int64_t total = (out - 1) * st[d] + span - in[d];
        if (total < 0) total = 0;
        int64_t small = total / 2, big = total - small;
        pads[d] = !strcmp(mode, "SAME_UPPER") ? small : big;
        pads[d + 2] = total - pads[d];
    }
    return 0;
}

/* Clip node n's bounds (GS_CLIP_LO/HI in *flags): attributes min/max before
 * opset 11, then optional scalar inputs 1 and 2, which must be constants.
 * 0 read, -1 not constant or not scalar (why[]). ONNX's defaults are the
 * float range's ends: an absent or infinite side is unbounded. */
static int clip_bounds(imp *c, const onode *n, int *flags, float *lo, float *hi, char *why, size_t nwhy) {
    *flags = 0;
    *lo = *hi = 0.0f;
    float v[2] = {-INFINITY, INFINITY};
    if (c->m->opset > 0 && c->m->opset < 11) {
        v[0] = attr_f(n, "min", -INFINITY);
        v[1] = attr_f(n, "max", INFINITY);
    } else
        for (int k = 0; k < 2; k++) {
            const char *nm = k + 1 < n->nin ? n->in[k + 1] : NULL;
            if (!nm || !*nm) continue;
            tinfo *t = tab(c->m, nm, 0);
            if (!t || !t->c || !t->c->f || t->c->n != 1) {
                snprintf(why, nwhy, "Clip's %s '%s' is not a constant float scalar", k ? "max" : "min", nm);
                return -1;
            }
            v[k] = t->c->f[0];
        }
    if (isnan(v[0]) || isnan(v[1])) {
        snprintf(why, nwhy, "Clip's bound is NaN");
        return -1;
    }
    if (v[0] > -FLT_MAX && isfinite(v[0])) *flags |= GS_CLIP_LO, *lo = v[0];
    if (v[1] < FLT_MAX && isfinite(v[1])) *flags |= GS_CLIP_HI, *hi = v[1];
    return 0;
}

/* ONNX's element-wise functions of one input and their gensor unary
 * (gs_unary): the attribute that is its parameter, with ONNX's default.
 * HardSigmoid's alpha scales the input first (the unary op's alpha=);
 * Gelu's approximate attribute picks the erf or the tanh form. */
typedef struct un_def {
    const char *op_type;
    gs_unary u;
    const char *p_attr; /* NULL: no parameter */
    float p_def;
} un_def;
static const un_def un_defs[] = {
    {"Neg", GS_UN_NEG, NULL, 0},           {"Abs", GS_UN_ABS, NULL, 0},
    {"Exp", GS_UN_EXP, NULL, 0},           {"Log", GS_UN_LOG, NULL, 0},
    {"Sqrt", GS_UN_SQRT, NULL, 0},         {"Reciprocal", GS_UN_RECIP, NULL, 0},
    {"Tanh", GS_UN_TANH, NULL, 0},         {"Sigmoid", GS_UN_SIGMOID, NULL, 0},
    {"Erf", GS_UN_ERF, NULL, 0},           {"Softplus", GS_UN_SOFTPLUS, NULL, 0},
    {"Softsign", GS_UN_SOFTSIGN, NULL, 0}, {"Floor", GS_UN_FLOOR, NULL, 0},
    {"Ceil", GS_UN_CEIL, NULL, 0},         {"Round", GS_UN_ROUND, NULL, 0},
    {"Sign", GS_UN_SIGN, NULL, 0},         {"Sin", GS_UN_SIN, NULL, 0},
    {"Cos", GS_UN_COS, NULL, 0},           {"Tan", GS_UN_TAN, NULL, 0},
    {"Asin", GS_UN_ASIN, NULL, 0},         {"Acos", GS_UN_ACOS, NULL, 0},
    {"Atan", GS_UN_ATAN, NULL, 0},         {"Sinh", GS_UN_SINH, NULL, 0},
    {"Cosh", GS_UN_COSH, NULL, 0},         {"Asinh", GS_UN_ASINH, NULL, 0},
    {"Acosh", GS_UN_ACOSH, NULL, 0},       {"Atanh", GS_UN_ATANH, NULL, 0},
    {"Gelu", GS_UN_GELU, NULL, 0},         {"LeakyRelu", GS_UN_LEAKYRELU, "alpha", 0.01f},
    {"Elu", GS_UN_ELU, "alpha", 1.0f},     {"Celu", GS_UN_CELU, "alpha", 1.0f},
    {"ThresholdedRelu", GS_UN_THRESHOLDED_RELU, "alpha", 1.0f},
    {"HardSigmoid", GS_UN_HARDSIGMOID, "beta", 0.5f},
    {"HardSwish", GS_UN_HARDSWISH, NULL, 0}, {"Mish", GS_UN_MISH, NULL, 0},
    {"Swish", GS_UN_SWISH, "alpha", 1.0f},
    /* a step of LayerNormalization's decomposition (expand_node): 1/sqrt(var + epsilon) */
    {"LayerNormalization.InvStdDev", GS_UN_RSQRT, "epsilon", 1e-5f},
    /* LRN's steps (expand_lrn): log(bias + s), then exp(-beta t) */
    {"LRN.Log", GS_UN_LOGP, "bias", 1.0f}, {"LRN.Pow", GS_UN_EXP, NULL, 0},
};
static const un_def *un_find(const char *op_type) {
    for (size_t k = 0; k < sizeof un_defs / sizeof un_defs[0]; k++)
        if (!strcmp(un_defs[k].op_type, op_type)) return &un_defs[k];
    return NULL;
}
/* Node n's function as spec keys (" act=NAME act_p=P") into buf; *alpha
 * gets HardSigmoid's input scale (1 for the others). -1 with why[] when an
 * attribute has no gensor form. */
static int un_keys(const onode *n, const un_def *d, char *buf, size_t nbuf, float *alpha, char *why, size_t nwhy) {
    gs_unary u = d->u;
    *alpha = 1.0f;
    if (u == GS_UN_GELU) {
        const oattr *a = attr(n, "approximate");
        const char *ap = a && a->s ? a->s : "none";
        if (!strcmp(ap, "tanh")) u = GS_UN_GELU_TANH;
        else if (strcmp(ap, "none")) {
            snprintf(why, nwhy, "Gelu: approximate='%s' (none or tanh here)", ap);
            return -1;
        }
    }
    if (u == GS_UN_HARDSIGMOID) *alpha = attr_f(n, "alpha", 0.2f);
    if (!strcmp(n->op_type, "LRN.Pow")) *alpha = -attr_f(n, "beta", 0.75f); /* exp(-beta t) */
    float p = d->p_attr ? attr_f(n, d->p_attr, d->p_def) : 0.0f;
    if (!isfinite(p) || !isfinite(*alpha) || (u == GS_UN_CELU && p == 0.0f)) {
        snprintf(why, nwhy, "%s: attribute %s=%g is not usable", n->op_type, d->p_attr ? d->p_attr : "alpha",
                 (double)(isfinite(p) ? *alpha : p));
        return -1;
    }
    size_t l = (size_t)snprintf(buf, nbuf, " act=%s", gs_unaries[u].name);
    if (gs_unaries[u].has_p && l < nbuf) gs_snprintf_c(buf + l, nbuf - l, " act_p=%.9g", (double)p);
    return 0;
}

/* The activations alone reading tensor name, fused in order: an element-wise
 * function (un_defs; not HardSigmoid, whose input scale would apply before
 * the bias), a Relu, then a Clip with constant bounds (ReLU6). Their spec
 * keys go into sfx (" relu=0" at least); *final becomes the last fused
 * node's output. */
static void fuse_act(imp *c, const char **final, const tinfo *like, char *sfx, size_t nsfx) {
    char un[80] = "";
    tinfo *ft = tab(c->m, *final, 0);
    if (ft && ft->uses == 1 && ft->consumer > c->i) {
        const onode *fn = &c->m->nodes[ft->consumer];
        const un_def *d = un_find(fn->op_type);
        float a;
        char why[160];
        if (d && d->u != GS_UN_HARDSIGMOID && sole_consumer(c, *final, fn->op_type) == ft->consumer &&
            un_keys(fn, d, un, sizeof un, &a, why, sizeof why) == 0) {
            mark_fused(c, ft->consumer, like);
            *final = fn->out[0];
        } else
            un[0] = 0;
    }
    int relu = 0, j = sole_consumer(c, *final, "Relu");
    if (j >= 0) {
        mark_fused(c, j, like);
        *final = c->m->nodes[j].out[0];
        relu = 1;
    }
    size_t l = (size_t)snprintf(sfx, nsfx, "%s relu=%d", un, relu);
    int flags;
    float lo, hi;
    char why[200];
    j = sole_consumer(c, *final, "Clip");
    if (j < 0 || clip_bounds(c, &c->m->nodes[j], &flags, &lo, &hi, why, sizeof why) < 0) return;
    if ((flags & GS_CLIP_LO) && (flags & GS_CLIP_HI) && lo > hi) return; /* left to imp_clip's reason */
    mark_fused(c, j, like);
    *final = c->m->nodes[j].out[0];
    if ((flags & GS_CLIP_LO) && l < nsfx) l += (size_t)gs_snprintf_c(sfx + l, nsfx - l, " clip_lo=%.9g", (double)lo);
    if ((flags & GS_CLIP_HI) && l < nsfx) gs_snprintf_c(sfx + l, nsfx - l, " clip_hi=%.9g", (double)hi);
}

static int positive(imp *c, const char *what, const int64_t *v, int n) {
    for (int k = 0; k < n; k++)
        if (v[k] < 1 || v[k] > ONNX_DIM_MAX) {
            unsup(c, "%s[%d] = %lld (1..%lld here)", what, k, (long long)v[k], (long long)ONNX_DIM_MAX);
            return 0;
        }
    return 1;
}

static void imp_conv(imp *c) {
    const onode *n = c->n;
    tinfo *X = in_t(c, 0, 4, 4), *W = X ? in_t(c, 1, 4, 4) : NULL, *B = NULL;
    if (!W) return; /* the reason names the rank: 2-D convs only */
    if (n->nin > 2 && *n->in[2] && !(B = in_t(c, 2, 1, 1))) return;
    int64_t N = X->dims[0], C = X->dims[1], H = X->dims[2], Wd = X->dims[3];
    int64_t K = W->dims[0], R = W->dims[2], S = W->dims[3], g = attr_i(n, "group", 1);
    int64_t ks[2], st[2], dl[2], pads[4];
    if (attr_ints(n, "kernel_shape", 2, 0, ks) < 0 || (attr(n, "kernel_shape") && (ks[0] != R || ks[1] != S))) {
        unsup(c, "kernel_shape does not match the weight's %lldx%lld", (long long)R, (long long)S);
        return;
    }
    if (attr_ints(n, "strides", 2, 1, st) < 0 || attr_ints(n, "dilations", 2, 1, dl) < 0) {
        unsup(c, "strides and dilations must hold 2 values for a 2-D conv");
        return;
    }
    if (!positive(c, "strides", st, 2) || !positive(c, "dilations", dl, 2)) return;
    int64_t in2[2] = {H, Wd}, k2[2] = {R, S};
    if (window_pads(c, in2, k2, st, dl, pads) < 0) return;
    /* group g: output channels g*K/G.. read input channels g*C/G.. (conv2d groups=G); group = C = K is
     * the depthwise conv */
    if (g < 1 || g > C || C % g || K % g) {
        unsup(c, "group=%lld must divide both the input channels C=%lld and the weight's output channels K=%lld",
              (long long)g, (long long)C, (long long)K);
        return;
    }
    if (W->dims[1] != C / g) {
        unsup(c, "weight [%lld,%lld,%lld,%lld] has %lld input channels per group; group=%lld of C=%lld needs %lld",
              (long long)K, (long long)W->dims[1], (long long)R, (long long)S, (long long)W->dims[1], (long long)g,
              (long long)C, (long long)(C / g));
        return;
    }
    const bool dw = g > 1 && g == C && K == C; /* group 1 is conv2d even when C = K = 1 */
    const char *kind = dw ? "dwconv2d" : "conv2d";
    if (B && B->dims[0] != K) {
        unsup(c, "bias has %lld values for %lld output channels", (long long)B->dims[0], (long long)K);
        return;
    }
    const char *wname = W->name, *bname = B ? B->name : NULL, *final = n->nout ? n->out[0] : "";
    /* batch norm right after, on constants: fold it into the weights and the bias */
    int j = sole_consumer(c, final, "BatchNormalization"), folded = -1;
    if (j >= 0) {
        const onode *bn = &c->m->nodes[j];
        const tinfo *p[4] = {0};
        int ok = bn->nin == 5 && W->c && W->c->f && (!B || (B->c && B->c->f));
        for (int k = 0; ok && k < 4; k++) {
            p[k] = tab(c->m, bn->in[k + 1], 0);
            ok = p[k] && p[k]->c && p[k]->c->f && p[k]->c->n == K;
        }
        for (int k = 1; ok && k < bn->nout; k++) ok = !*bn->out[k] || !tab(c->m, bn->out[k], 0) || !tab(c->m, bn->out[k], 0)->uses;
        if (ok && !attr_i(bn, "training_mode", 0)) {
            float eps = attr_f(bn, "epsilon", 1e-5f);
            const char *wn = isprintf(c->m, "%s+%s", W->name, bn->out[0]);
            const char *bnn = isprintf(c->m, "%s+%s:bias", B ? B->name : final, bn->out[0]);
            otensor *w2 = derive(c, wn, W->c->n), *b2 = derive(c, bnn, K);
            if (!w2 || !b2) {
                unsup(c, "out of memory folding batch norm");
                return;
            }
            int64_t per = W->c->n / K;
            for (int64_t k = 0; k < K; k++) {
                /* y = scale*(conv - mean)/sqrt(var + eps) + beta, conv = W*x + b */
                double sc = (double)p[0]->c->f[k] / sqrt((double)p[3]->c->f[k] + (double)eps);
                for (int64_t e = 0; e < per; e++) w2->f[k * per + e] = (float)(W->c->f[k * per + e] * sc);
                double b0 = B ? (double)B->c->f[k] : 0.0;
                b2->f[k] = (float)((b0 - (double)p[2]->c->f[k]) * sc + (double)p[1]->c->f[k]);
            }
            wname = wn;
            bname = bnn;
            tinfo like = {.ndim = 4, .dtype = DT_FLOAT};
            mark_fused(c, j, &like);
            final = bn->out[0];
            folded = j;
        }
    }
    /* the output shape, from the builder's own window rule */
    char spec[512], kpart[64] = "";
    if (g == 1) snprintf(kpart, sizeof kpart, " K=%lld", (long long)K);
    else if (!dw) snprintf(kpart, sizeof kpart, " K=%lld groups=%lld", (long long)K, (long long)g);
    snprintf(spec, sizeof spec,
             "%s N=%lld C=%lld H=%lld W=%lld%s R=%lld S=%lld strideh=%lld stridew=%lld pad_top=%lld "
             "pad_bottom=%lld pad_left=%lld pad_right=%lld dilh=%lld dilw=%lld layout=nchw bias=%d",
             kind, (long long)N, (long long)C, (long long)H, (long long)Wd, kpart, (long long)R, (long long)S,
             (long long)st[0], (long long)st[1], (long long)pads[0], (long long)pads[2], (long long)pads[1],
             (long long)pads[3], (long long)dl[0], (long long)dl[1], bname != NULL);
    gs_op probe;
    if (gs_op_parse_into(c->ctx, spec, &probe) != GS_OK) {
        unsup(c, "%s", gs_ctx_errmsg(c->ctx));
        return;
    }
    const gs_tensor *O = gs_op_out(&probe);
    tinfo like = {.ndim = 4, .dtype = DT_FLOAT};
    memcpy(like.dims, O->shape, 4 * sizeof(int64_t));
    if (folded >= 0) mark_fused(c, folded, &like); /* the batch norm's output takes the conv's shape */
    char act[200];
    fuse_act(c, &final, &like, act, sizeof act);
    size_t l = strlen(spec);
    snprintf(spec + l, sizeof spec - l, "%s", act);
    set_out(c, 0, 4, like.dims, DT_FLOAT, NULL);
    const char *tens[4] = {X->name, wname, final, bname};
    kernel(c, spec, tens, bname ? 4 : 3, NULL);
}

static void imp_gemm(imp *c) {
    const onode *n = c->n;
    tinfo *A = in_t(c, 0, 2, 2), *Bt = A ? in_t(c, 1, 2, 2) : NULL, *C = NULL;
    if (!Bt) return;
    if (n->nin > 2 && *n->in[2] && !(C = in_t(c, 2, 0, 2))) return;
    int tA = attr_i(n, "transA", 0) != 0, tB = attr_i(n, "transB", 0) != 0;
    float alpha = attr_f(n, "alpha", 1.0f), beta = attr_f(n, "beta", 1.0f);
    int64_t M = tA ? A->dims[1] : A->dims[0], K = tA ? A->dims[0] : A->dims[1];
    int64_t Kb = tB ? Bt->dims[1] : Bt->dims[0], N = tB ? Bt->dims[0] : Bt->dims[1];
    if (K != Kb) {
        unsup(c, "Gemm: A's K=%lld and B's K=%lld differ", (long long)K, (long long)Kb);
        return;
    }
    const char *bias = NULL, *init = NULL;
    float ebeta = 0.0f;
    if (C && beta != 0.0f) {
        int64_t cn = C->ndim ? C->dims[C->ndim - 1] : 1, cm = C->ndim == 2 ? C->dims[0] : 1;
        if (C->ndim >= 1 && cm == 1 && cn == N) { /* a row vector: the bias, scaled by beta */
            bias = C->name;
            if (beta != 1.0f) {
                if (!C->c || !C->c->f) {
                    unsup(c, "Gemm: beta=%g on a bias that is not a constant", (double)beta);
                    return;
                }
                otensor *b2 = derive(c, isprintf(c->m, "%s*beta:%s", C->name, n->out[0]), N);
                if (!b2) {
                    unsup(c, "out of memory");
                    return;
                }
                for (int64_t k = 0; k < N; k++) b2->f[k] = C->c->f[k] * beta;
                bias = b2->name;
            }
        } else if (C->ndim == 2 && cm == M && cn == N) { /* a whole matrix: beta * C_old */
            init = C->name;
            ebeta = beta;
        } else {
            /* C of one element ([], [1], [1,1]) or [M,1], broadcast to [M,N]
             * (unidirectionally): a constant one is made the bias of N equal values
             * (beta * C, as for a row vector) or, a column, expanded to a whole
             * [M,N] (expand_const) */
            char sh[128];
            shape_text(C, sh, sizeof sh);
            int64_t mn[2] = {M, N};
            if (!broadcasts_to(C, 2, mn)) {
                unsup(c, "Gemm: C of shape %s does not broadcast to [%lld,%lld]", sh, (long long)M, (long long)N);
                return;
            }
            if (!C->c || !C->c->f) {
                unsup(c, "Gemm: C of shape %s broadcasts to [%lld,%lld] and is not a constant (a computed C is an [N] "
                         "bias or a whole [M,N] here; a constant one of any shape that broadcasts is expanded)", sh,
                      (long long)M, (long long)N);
                return;
            }
            if (cm == 1) { /* one element */
                if (N > GS_ONNX_FILL_MAX - c->m->filled) {
                    unsup(c, "Gemm: a bias of N=%lld values from C %s would pass the import's %lld elements of "
                             "made constants", (long long)N, sh, (long long)GS_ONNX_FILL_MAX);
                    return;
                }
                c->m->filled += N;
                otensor *b2 = derive(c, isprintf(c->m, "%s*beta:%s", C->name, n->out[0]), N);
                if (!b2) {
                    unsup(c, "out of memory");
                    return;
                }
                for (int64_t k = 0; k < N; k++) b2->f[k] = C->c->f[0] * beta;
                bias = b2->name;
            } else {
                tinfo *e = expand_const(c, C, 2, mn, "Gemm");
                if (!e) return;
                init = e->name;
                ebeta = beta;
            }
        }
    }
    const char *final = n->out[0];
    int64_t od[2] = {M, N};
    tinfo like = {.ndim = 2, .dtype = DT_FLOAT, .dims = {M, N}};
    char act[200], spec[300];
    fuse_act(c, &final, &like, act, sizeof act);
    gs_snprintf_c(spec, sizeof spec, "gemm M=%lld N=%lld K=%lld transA=%d transB=%d alpha=%.9g beta=%.9g bias=%d%s",
             (long long)M, (long long)N, (long long)K, tA, tB, (double)alpha, (double)ebeta, bias != NULL, act);
    set_out(c, 0, 2, od, DT_FLOAT, NULL);
    const char *tens[4] = {A->name, Bt->name, final, bias};
    kernel(c, spec, tens, bias ? 4 : 3, init);
}

/* MatMul by numpy's rules: a 1-D A is [1,K] and a 1-D B [K,1], that 1
 * dropped from the output; the batch dims (all but the last two) broadcast.
 * With B's batch all 1 (a [K,N] B: weights), the leading dims are rows of one
 * gemm; with A's all 1 and N = 1, one gemm with the roles swapped (B's
 * batches as rows, times A transposed: C[b,m] = B[b,:] . A[m,:]); with equal
 * batches, bgemm. Otherwise the operand whose batch broadcasts must be a
 * constant, expanded to the output's batch (expand_const) for a bgemm. No
 * reshape: a 1-D operand's buffer is its promoted matrix. */
static void imp_matmul(imp *c) {
    tinfo *A = in_t(c, 0, 1, GS_ONNX_MAX_RANK), *B = A ? in_t(c, 1, 1, GS_ONNX_MAX_RANK) : NULL;
    if (!B) return;
    char sa[128], sb[128];
    shape_text(A, sa, sizeof sa);
    shape_text(B, sb, sizeof sb);
    /* the promoted shapes: pa, pb of rank >= 2 */
    tinfo pa = *A, pb = *B;
    if (A->ndim == 1) pa.ndim = 2, pa.dims[0] = 1, pa.dims[1] = A->dims[0];
    if (B->ndim == 1) pb.ndim = 2, pb.dims[0] = B->dims[0], pb.dims[1] = 1;
    int ra = pa.ndim, rb = pb.ndim;
    int64_t M = pa.dims[ra - 2], K = pa.dims[ra - 1], Kb = pb.dims[rb - 2], N = pb.dims[rb - 1];
    if (K != Kb) {
        unsup(c, "MatMul of %s and %s: A's K=%lld and B's K=%lld differ", sa, sb, (long long)K, (long long)Kb);
        return;
    }
    /* the batch dims, aligned from the right, 1 where an operand has none */
    int nb = (ra > rb ? ra : rb) - 2;
    int64_t ab[GS_ONNX_MAX_RANK], bb[GS_ONNX_MAX_RANK], ob[GS_ONNX_MAX_RANK];
    bool aone = true, bone = true, aeq = true, beq = true;
    for (int d = 0; d < nb; d++) {
        int da = d - (nb - (ra - 2)), db = d - (nb - (rb - 2));
        ab[d] = da >= 0 ? pa.dims[da] : 1;
        bb[d] = db >= 0 ? pb.dims[db] : 1;
        if (ab[d] != bb[d] && ab[d] != 1 && bb[d] != 1) {
            unsup(c, "MatMul of %s and %s: the batch dims do not broadcast", sa, sb);
            return;
        }
        ob[d] = ab[d] == 1 ? bb[d] : ab[d];
    }
    for (int d = 0; d < nb; d++) {
        aone &= ab[d] == 1;
        bone &= bb[d] == 1;
        aeq &= ab[d] == ob[d];
        beq &= bb[d] == ob[d];
    }
    /* the output: the batch, then M unless A was 1-D, N unless B was */
    int64_t od[GS_ONNX_MAX_RANK];
    int ro = nb;
    memcpy(od, ob, (size_t)nb * sizeof *od);
    if (A->ndim > 1) od[ro++] = M;
    if (B->ndim > 1) od[ro++] = N;
    if (ro > GS_ONNX_MAX_RANK) { /* a 1-D operand against a rank-8 one keeps rank 8: not reached */
        unsup(c, "MatMul of %s and %s: the output has rank %d", sa, sb, ro);
        return;
    }
    int64_t P = prod(ob, 0, nb);
    const char *final = c->n->out[0], *t0 = A->name, *t1 = B->name;
    char spec[300];
    if (bone || (aone && N == 1)) { /* one gemm; fused activations as for Gemm */
        tinfo like = {.ndim = ro, .dtype = DT_FLOAT};
        memcpy(like.dims, od, sizeof od);
        char act[200];
        fuse_act(c, &final, &like, act, sizeof act);
        if (bone)
            snprintf(spec, sizeof spec, "gemm M=%lld N=%lld K=%lld%s", (long long)prod(pa.dims, 0, ra - 1),
                     (long long)N, (long long)K, act); /* A's batch is the output's: its rows */
        else { /* C[b,m] = sum_k B[b,k] A[m,k]: B's batches as the gemm's rows, A transposed */
            snprintf(spec, sizeof spec, "gemm M=%lld N=%lld K=%lld transB=1%s", (long long)P, (long long)M,
                     (long long)K, act);
            t0 = B->name;
            t1 = A->name;
        }
    } else {
        if (!(aeq && beq)) { /* the side whose batch broadcasts, if a constant, expanded */
            tinfo *small = aeq ? B : A, *ps = aeq ? &pb : &pa;
            if (!(aeq || beq) || !small->c || !small->c->f) {
                unsup(c, "MatMul of %s and %s broadcasts batch dims over %s (a gemm shares a B of batch 1; bgemm "
                         "takes equal batches; a constant operand is expanded to the other's batch)", sa, sb,
                      !(aeq || beq) ? "both operands" : "an operand that is not a constant");
                return;
            }
            int64_t td[GS_ONNX_MAX_RANK];
            memcpy(td, ob, (size_t)nb * sizeof *td);
            td[nb] = ps->dims[ps->ndim - 2];
            td[nb + 1] = ps->dims[ps->ndim - 1];
            tinfo *e = expand_const(c, ps, nb + 2, td, "MatMul");
            if (!e) return;
            if (aeq) t1 = e->name;
            else t0 = e->name;
        }
        snprintf(spec, sizeof spec, "bgemm B=%lld M=%lld N=%lld K=%lld", (long long)P, (long long)M, (long long)N,
                 (long long)K);
    }
    set_out(c, 0, ro, od, DT_FLOAT, NULL);
    const char *tens[3] = {t0, t1, final};
    kernel(c, spec, tens, 3, NULL);
}

/* MaxPool, AveragePool, GlobalMaxPool, GlobalAveragePool over NCHW. */
static void imp_pool(imp *c) {
    const onode *n = c->n;
    tinfo *X = in_t(c, 0, 4, 4);
    if (!X) return;
    int avg = strstr(n->op_type, "Average") != NULL, global = !strncmp(n->op_type, "Global", 6);
    int64_t N = X->dims[0], C = X->dims[1], H = X->dims[2], W = X->dims[3];
    int64_t ks[2] = {H, W}, st[2] = {1, 1}, dl[2] = {1, 1}, pads[4] = {0, 0, 0, 0};
    if (!global) {
        if (!attr(n, "kernel_shape") || attr_ints(n, "kernel_shape", 2, 0, ks) < 0) {
            unsup(c, "%s needs kernel_shape with 2 values (2-D pooling only)", n->op_type);
            return;
        }
        if (attr_ints(n, "strides", 2, 1, st) < 0 || attr_ints(n, "dilations", 2, 1, dl) < 0) {
            unsup(c, "strides and dilations must hold 2 values for 2-D pooling");
            return;
        }
        if (!positive(c, "kernel_shape", ks, 2) || !positive(c, "strides", st, 2) || !positive(c, "dilations", dl, 2))
            return;
        int64_t in2[2] = {H, W};
        if (window_pads(c, in2, ks, st, dl, pads) < 0) return;
        if (attr_i(n, "ceil_mode", 0)) { /* the IR floors; equal when the division is exact */
            for (int d = 0; d < 2; d++) {
                int64_t span = dl[d] * (ks[d] - 1) + 1, padded = in2[d] + pads[d] + pads[d + 2] - span;
                if (padded >= 0 && padded % st[d]) {
                    unsup(c, "ceil_mode=1 adds a partial window along %s (the IR's windows floor)", d ? "W" : "H");
                    return;
                }
            }
        }
    }
    if (n->nout > 1 && *n->out[1] && tab(c->m, n->out[1], 0) && tab(c->m, n->out[1], 0)->uses) {
        unsup(c, "MaxPool's Indices output is read; gensor pools produce values only");
        return;
    }
    char spec[400];
    snprintf(spec, sizeof spec,
             "%s N=%lld C=%lld H=%lld W=%lld R=%lld S=%lld strideh=%lld stridew=%lld pad_top=%lld pad_bottom=%lld "
             "pad_left=%lld pad_right=%lld dilh=%lld dilw=%lld layout=nchw",
             avg ? "avgpool2d" : "maxpool2d", (long long)N, (long long)C, (long long)H, (long long)W, (long long)ks[0],
             (long long)ks[1], (long long)st[0], (long long)st[1], (long long)pads[0], (long long)pads[2],
             (long long)pads[1], (long long)pads[3], (long long)dl[0], (long long)dl[1]);
    /* ONNX's AveragePool divides by the in-bounds cells unless count_include_pad=1;
     * without padding every cell is in bounds and the fixed 1/(R*S) is the same */
    if (avg && !attr_i(n, "count_include_pad", 0) && (pads[0] || pads[1] || pads[2] || pads[3])) {
        size_t l = strlen(spec);
        snprintf(spec + l, sizeof spec - l, " count_include_pad=0");
    }
    gs_op probe;
    if (gs_op_parse_into(c->ctx, spec, &probe) != GS_OK) {
        unsup(c, "%s", gs_ctx_errmsg(c->ctx));
        return;
    }
    set_out(c, 0, 4, gs_op_out(&probe)->shape, DT_FLOAT, NULL);
    const char *tens[2] = {X->name, n->out[0]};
    kernel(c, spec, tens, 2, NULL);
}

/* Element-wise over a tensor viewed as [M, N]: NCHW as [N*C, H*W] (the model
 * lists' residual adds), other ranks as [rows, last dim]. */
static void rows_cols(const tinfo *t, int64_t *M, int64_t *N) {
    int split = t->ndim == 4 ? 2 : t->ndim - 1;
    if (split < 0) split = 0;
    *M = prod(t->dims, 0, split);
    *N = prod(t->dims, split, t->ndim);
}

static void imp_relu(imp *c) {
    tinfo *X = in_t(c, 0, 0, GS_ONNX_MAX_RANK);
    if (!X) return;
    int64_t M, N;
    rows_cols(X, &M, &N);
    char spec[100];
    snprintf(spec, sizeof spec, "relu M=%lld N=%lld", (long long)M, (long long)N);
    set_out(c, 0, X->ndim, X->dims, DT_FLOAT, NULL);
    const char *tens[2] = {X->name, c->n->out[0]};
    kernel(c, spec, tens, 2, NULL);
}

/* An element-wise function of one input (un_defs) of its own. */
static void imp_unary(imp *c) {
    tinfo *X = in_t(c, 0, 0, GS_ONNX_MAX_RANK);
    if (!X) return;
    const un_def *d = un_find(c->n->op_type);
    char keys[80], why[160];
    float alpha;
    if (!d || un_keys(c->n, d, keys, sizeof keys, &alpha, why, sizeof why) < 0) {
        unsup(c, "%s", d ? why : "internal: no unary");
        return;
    }
    int64_t M, N;
    rows_cols(X, &M, &N);
    char spec[200];
    gs_snprintf_c(spec, sizeof spec, "unary M=%lld N=%lld%s alpha=%.9g", (long long)M, (long long)N, keys, (double)alpha);
    set_out(c, 0, X->ndim, X->dims, DT_FLOAT, NULL);
    const char *tens[2] = {X->name, c->n->out[0]};
    kernel(c, spec, tens, 2, NULL);
}

/* A Clip of its own: the elementwise clip over the tensor's rows. */
static void imp_clip(imp *c) {
    tinfo *X = in_t(c, 0, 0, GS_ONNX_MAX_RANK);
    if (!X) return;
    int flags;
    float lo, hi;
    char why[200];
    if (clip_bounds(c, c->n, &flags, &lo, &hi, why, sizeof why) < 0) {
        unsup(c, "%s", why);
        return;
    }
    int64_t M, N;
    rows_cols(X, &M, &N);
    char spec[160];
    size_t l = (size_t)snprintf(spec, sizeof spec, "clip M=%lld N=%lld", (long long)M, (long long)N);
    if (flags & GS_CLIP_LO) l += (size_t)gs_snprintf_c(spec + l, sizeof spec - l, " clip_lo=%.9g", (double)lo);
    if (flags & GS_CLIP_HI) gs_snprintf_c(spec + l, sizeof spec - l, " clip_hi=%.9g", (double)hi);
    set_out(c, 0, X->ndim, X->dims, DT_FLOAT, NULL);
    const char *tens[2] = {X->name, c->n->out[0]};
    kernel(c, spec, tens, 2, NULL);
}

static void view(imp *c, const tinfo *X, int ndim, const int64_t *dims);

/* The kernel of a binary (or 3-input) elementwise step: spec over X's shape. */
static void binary_kernel(imp *c, const char *spec, const tinfo *X, const char *const *tens, int ntens) {
    set_out(c, 0, X->ndim, X->dims, DT_FLOAT, NULL);
    kernel(c, spec, tens, ntens, NULL);
}

/* Sum, Max, Min or Mean of three inputs of one shape (opn the kernel's). */
static void binary_three(imp *c, const char *ot, const char *opn) {
    tinfo *T[3];
    for (int k = 0; k < 3; k++)
        if (!(T[k] = in_t(c, k, 0, GS_ONNX_MAX_RANK))) return;
    for (int k = 1; k < 3; k++)
        if (T[k]->ndim != T[0]->ndim || memcmp(T[k]->dims, T[0]->dims, (size_t)T[0]->ndim * sizeof(int64_t))) {
            unsup(c, "%s of 3 inputs of different shapes (broadcasting takes two here)", ot);
            return;
        }
    int64_t M, N;
    rows_cols(T[0], &M, &N);
    char spec[100];
    snprintf(spec, sizeof spec, "%s M=%lld N=%lld inputs=3", opn, (long long)M, (long long)N);
    const char *tens[4] = {T[0]->name, T[1]->name, T[2]->name, c->n->out[0]};
    binary_kernel(c, spec, T[0], tens, 4);
}

/* A Softmax or LayerNormalization step, Y being X reduced over [f, g): the
 * form Y has when those extents are not 1, so that a symbolic dim bound to 1
 * there (seq 1) keeps the kernel's class. True when it emitted the step. */
static bool binary_reduced(imp *c, const tinfo *X, const tinfo *Y, const char *opn) {
    const oattr *ra = attr(c->n, "gensor_reduced_axis"), *rf = attr(c->n, "gensor_reduced_from");
    if (!(ra || rf) || Y->ndim != X->ndim) return false;
    int64_t f = (ra ? ra : rf)->i;
    if (f < 0) f += X->ndim;
    int64_t g = ra ? f + 1 : X->ndim;
    int fits = f >= 0 && f < X->ndim && !(f == 0 && g == X->ndim);
    for (int d = 0; fits && d < X->ndim; d++) fits = d >= f && d < g ? Y->dims[d] == 1 : Y->dims[d] == X->dims[d];
    if (!fits) return false;
    char spec[100];
    if (g == X->ndim)
        snprintf(spec, sizeof spec, "%sc A=1 C=%lld B=%lld", opn, (long long)prod(X->dims, 0, (int)f),
                 (long long)prod(X->dims, (int)f, X->ndim));
    else if (f == 0)
        snprintf(spec, sizeof spec, "%s M=%lld N=%lld bcast=1", opn, (long long)prod(X->dims, 0, (int)g),
                 (long long)prod(X->dims, (int)g, X->ndim));
    else
        snprintf(spec, sizeof spec, "%sm A=%lld R=%lld B=%lld", opn, (long long)prod(X->dims, 0, (int)f),
                 (long long)prod(X->dims, (int)f, (int)g), (long long)prod(X->dims, (int)g, X->ndim));
    const char *tens[3] = {X->name, Y->name, c->n->out[0]};
    binary_kernel(c, spec, X, tens, 3);
    return true;
}

/* Sub, Div, Pow or PRelu whose first operand *X broadcasts over the second,
 * y (c - x, 1 / x, 2 ^ x): the element-wise kernels broadcast their second
 * operand only, and no rewriting with them is exact for a computed first
 * operand (-(x - c) is -0 where c - x is +0; c * (1 / x) rounds twice). A
 * constant one is expanded to y's shape (expand_const), then the kernel is
 * the plain one of two equal shapes, so its rounding is the same as for
 * x - c. A Div of a constant of ones is `unary act=reciprocal` instead: its
 * 1.0f / y is the div kernel's own division, with no constant to expand.
 * As binary_broadcast returns. */
static int first_broadcast(imp *c, tinfo **X, tinfo *y, const char *opn, char *spec, size_t n) {
    const char *ot = c->n->op_type;
    tinfo *x = *X;
    char sx[128], sy[128];
    shape_text(x, sx, sizeof sx);
    shape_text(y, sy, sizeof sy);
    if (!broadcasts_to(x, y->ndim, y->dims)) {
        unsup(c, "%s of %s and %s: the first operand does not broadcast to the second's shape (and the second "
                 "broadcasts only over the first)", ot, sx, sy);
        return -1;
    }
    if (!x->c || !x->c->f) {
        unsup(c, "%s of %s and %s: the first operand broadcasts and is not a constant (a constant one is expanded "
                 "to the second's shape; the element-wise kernels broadcast their second operand only)", ot, sx, sy);
        return -1;
    }
    int64_t M, N;
    rows_cols(y, &M, &N);
    int ones = !strcmp(ot, "Div");
    for (int64_t k = 0; ones && k < x->c->n; k++) ones = x->c->f[k] == 1.0f;
    if (ones) { /* 1 / y */
        snprintf(spec, n, "unary M=%lld N=%lld act=%s", (long long)M, (long long)N, gs_unaries[GS_UN_RECIP].name);
        const char *tens[2] = {y->name, c->n->out[0]};
        binary_kernel(c, spec, y, tens, 2);
        return 0;
    }
    tinfo *e = expand_const(c, x, y->ndim, y->dims, ot);
    if (!e) return -1;
    *X = e;
    snprintf(spec, n, "%s M=%lld N=%lld", opn, (long long)M, (long long)N);
    return 1;
}

/* One side broadcast over the other (*X the larger after a swap, *Y the
 * broadcast one, pX and pY their probe shapes): its dims other than 1,
 * aligned from the right, are one run [lo, hi] of the other's (a vector over
 * the last dim: bcast=1; over a middle run, e.g. NCHW's [C,1,1]:
 * addc/mulc), or Y has X's rank with X's dims before and after a run of 1s
 * (a reduction over middle axes kept with keepdims: X as [A, R, B], Y as
 * [A, B], emitted here). Returns 1 with the kernel's spec, 0 when it emitted
 * the step itself, -1 when the node is unsupported (said). */
static int binary_broadcast(imp *c, tinfo **X, tinfo **Y, const tinfo *pX, const tinfo *pY, const char *opn,
                            int ordered, char *spec, size_t n) {
    const char *ot = c->n->op_type;
    if (prod((*X)->dims, 0, (*X)->ndim) < prod((*Y)->dims, 0, (*Y)->ndim) ||
        (pY && prod((*X)->dims, 0, (*X)->ndim) == prod((*Y)->dims, 0, (*Y)->ndim) &&
         prod(pX->dims, 0, (*X)->ndim) < prod(pY->dims, 0, (*Y)->ndim))) {
        if (ordered) return first_broadcast(c, X, *Y, opn, spec, n);
        tinfo *t = *X;
        const tinfo *pt = pX;
        *X = *Y;
        *Y = t;
        pX = pY;
        pY = pt;
    }
    const tinfo *x = *X, *y = *Y;
    int lo = x->ndim, hi = -1, ok = y->ndim <= x->ndim;
    for (int d = 0; ok && d < y->ndim; d++) {
        int xd = x->ndim - y->ndim + d;
        if (y->dims[d] == 1 && !(x->dims[xd] == 1 && pY && pY->dims[d] != 1 && pY->dims[d] == pX->dims[xd])) continue;
        ok = y->dims[d] == x->dims[xd];
        if (xd < lo) lo = xd;
        hi = xd;
    }
    int run = ok;
    for (int d = lo; run && d <= hi; d++) run = d - (x->ndim - y->ndim) >= 0 && y->dims[d - (x->ndim - y->ndim)] == x->dims[d];
    int p = 0, q = 0;
    if (ok && !run && y->ndim == x->ndim) {
        while (p < x->ndim && y->dims[p] == x->dims[p]) p++;
        q = p;
        while (q < x->ndim && y->dims[q] == 1) q++;
        int tail = q > p;
        for (int d = q; tail && d < x->ndim; d++) tail = y->dims[d] == x->dims[d];
        if (tail) {
            snprintf(spec, n, "%sm A=%lld R=%lld B=%lld", opn, (long long)prod(x->dims, 0, p),
                     (long long)prod(x->dims, p, q), (long long)prod(x->dims, q, x->ndim));
            const char *tens[3] = {x->name, y->name, c->n->out[0]};
            binary_kernel(c, spec, x, tens, 3);
            return 0;
        }
    }
    if (!run) {
        char sx[128], sy[128];
        shape_text(x, sx, sizeof sx);
        shape_text(y, sy, sizeof sy);
        unsup(c, "%s of %s and %s broadcasts other than one vector over a run of dims", ot, sx, sy);
        return -1;
    }
    if (hi < 0) lo = hi = x->ndim; /* a scalar: one channel */
    int64_t A = prod(x->dims, 0, lo), C = prod(x->dims, lo, hi + 1 < x->ndim ? hi + 1 : x->ndim),
            B = hi + 1 < x->ndim ? prod(x->dims, hi + 1, x->ndim) : 1;
    if (hi >= 0 && hi == x->ndim - 1 && lo <= hi)
        snprintf(spec, n, "%s M=%lld N=%lld bcast=1", opn, (long long)A, (long long)C);
    else
        snprintf(spec, n, "%sc A=%lld C=%lld B=%lld", opn, (long long)(A ? A : 1), (long long)C, (long long)B);
    return 1;
}

/* Before opset 7, Add, Sub, Mul, Div and Pow broadcast B over A only with
 * broadcast=1, and with an axis, from that axis on: B's dims are A's dims
 * axis..axis+rank(B)-1 (a 1-element B any), not aligned from the right as
 * numpy (and opset 7 on) does. *Y then becomes *yl: B with A's rank, its dims
 * after those of 1 (the same buffer), which the broadcasts below take. 0, or
 * -1 with the node unsupported. */
static int legacy_axis(imp *c, const tinfo *X, tinfo **Y, tinfo *yl) {
    const char *ot = c->n->op_type;
    const oattr *ax = attr(c->n, "axis");
    if (c->m->opset <= 0 || c->m->opset >= 7 || !ax || !attr_i(c->n, "broadcast", 0) ||
        (strcmp(ot, "Add") && strcmp(ot, "Sub") && strcmp(ot, "Mul") && strcmp(ot, "Div") && strcmp(ot, "Pow")))
        return 0;
    const tinfo *y = *Y;
    if (prod(y->dims, 0, y->ndim) == 1) return 0; /* a scalar broadcasts from anywhere */
    int64_t a = ax->i < 0 ? ax->i + X->ndim : ax->i;
    int fits = a >= 0 && a + y->ndim <= X->ndim;
    for (int d = 0; fits && d < y->ndim; d++) fits = y->dims[d] == X->dims[a + d];
    if (!fits) {
        char sx[128], sy[128];
        shape_text(X, sx, sizeof sx);
        shape_text(y, sy, sizeof sy);
        unsup(c, "%s (opset %lld, broadcast=1): B %s is not the dims of %s from axis=%lld", ot, (long long)c->m->opset,
              sy, sx, (long long)ax->i);
        return -1;
    }
    *yl = *y;
    yl->ndim = X->ndim - (int)a;
    for (int d = y->ndim; d < yl->ndim; d++) yl->dims[d] = 1;
    *Y = yl;
    return 0;
}

static void imp_binary(imp *c) {
    const char *ot = c->n->op_type;
    int variadic = !strcmp(ot, "Sum") || !strcmp(ot, "Max") || !strcmp(ot, "Min") || !strcmp(ot, "Mean");
    if (variadic && c->n->nin == 1) { /* one input: itself */
        tinfo *X = in_t(c, 0, 0, GS_ONNX_MAX_RANK);
        if (X) view(c, X, X->ndim, X->dims);
        return;
    }
    const char *opn = !strcmp(ot, "Mul") ? "mul" : !strcmp(ot, "Sub") ? "sub" : !strcmp(ot, "Div") ? "div"
                      : !strcmp(ot, "Max") ? "max" : !strcmp(ot, "Min") ? "min" : !strcmp(ot, "Pow") ? "pow"
                      : !strcmp(ot, "PRelu") ? "prelu" : !strcmp(ot, "Mean") ? "mean" : "add";
    if (c->n->nin == 3 && variadic) { /* three inputs of one shape */
        binary_three(c, ot, opn);
        return;
    }
    if (c->n->nin != 2) {
        unsup(c, "%s of %d inputs (%s here)", ot, c->n->nin, variadic ? "1 to 3" : "two");
        return;
    }
    tinfo *X = in_t(c, 0, 0, GS_ONNX_MAX_RANK), *Y = X ? in_t(c, 1, 0, GS_ONNX_MAX_RANK) : NULL;
    if (!Y) return;
    tinfo yl;
    const tinfo *y0 = Y;
    if (legacy_axis(c, X, &Y, &yl) < 0) return;
    /* X op Y: the broadcast side must be Y */
    int ordered = !strcmp(ot, "Sub") || !strcmp(ot, "Div") || !strcmp(ot, "Pow") || !strcmp(ot, "PRelu");
    if (binary_reduced(c, X, Y, opn)) return;
    /* the probe's shapes (a symbolic dim bound to 1 at another size): X and Y
     * of one shape only when they are there too; a 1 of Y against a 1 of X is a
     * match when both are the same symbolic dim there, else a broadcast (none
     * for a legacy B, whose rank the probe does not have) */
    const tinfo *pX = Y == y0 ? probe_t(c->m, X) : NULL, *pY = pX ? probe_t(c->m, Y) : NULL;
    char spec[100];
    if (X->ndim == Y->ndim && !memcmp(X->dims, Y->dims, (size_t)X->ndim * sizeof(int64_t)) &&
        (!pY || !memcmp(pX->dims, pY->dims, (size_t)X->ndim * sizeof(int64_t)))) {
        int64_t M, N;
        rows_cols(X, &M, &N);
        snprintf(spec, sizeof spec, "%s M=%lld N=%lld", opn, (long long)M, (long long)N);
    } else if (!strcmp(ot, "Mean")) {
        unsup(c, "Mean of inputs of different shapes (broadcasting is not mapped for Mean)");
        return;
    } else if (binary_broadcast(c, &X, &Y, pX, pY, opn, ordered, spec, sizeof spec) <= 0) {
        return;
    }
    const char *tens[3] = {X->name, Y->name, c->n->out[0]};
    binary_kernel(c, spec, X, tens, 3);
}

/* ReduceSum/Mean/Max over the last axis. The axes are an attribute up to
 * opset 12 (ReduceSum) or 17 (the others) and an optional input after. */
static void imp_reduce(imp *c) {
    const onode *n = c->n;
    tinfo *X = in_t(c, 0, 1, GS_ONNX_MAX_RANK);
    if (!X) return;
    const int64_t *axes = NULL;
    int naxes = 0;
    const oattr *a = attr(n, "axes"), *from = attr(n, "gensor_axes_from");
    int64_t fromv[GS_ONNX_MAX_RANK];
    if (from) { /* every axis from this one on (a Softmax or LayerNormalization step) */
        int64_t f = from->i < 0 ? from->i + X->ndim : from->i;
        if (f < 0 || f >= X->ndim) {
            unsup(c, "%s: axis %lld of a rank-%d tensor", n->op_type, (long long)from->i, X->ndim);
            return;
        }
        for (int64_t k = f; k < X->ndim; k++) fromv[k - f] = k;
        axes = fromv;
        naxes = (int)(X->ndim - f);
    } else if (a) {
        axes = a->ints;
        naxes = a->nints;
    } else if (n->nin > 1 && *n->in[1]) {
        tinfo *t = tab(c->m, n->in[1], 0);
        if (!t || !t->c || !t->c->i) {
            unsup(c, "the axes input '%s' is not a constant integer tensor", n->in[1]);
            return;
        }
        axes = t->c->i;
        naxes = (int)t->c->n;
    }
    if (!naxes && attr_i(n, "noop_with_empty_axes", 0)) {
        unsup(c, "noop_with_empty_axes: an identity, not a reduction");
        return;
    }
    /* the reduced dims must be adjacent: X is then [A, R, B] (rowsum etc. when B = 1) */
    int red[GS_ONNX_MAX_RANK] = {0}, lo = X->ndim, hi = -1;
    for (int k = 0; k < (naxes ? naxes : X->ndim); k++) {
        int64_t ax = naxes ? axes[k] : k;
        if (ax < 0) ax += X->ndim;
        if (ax < 0 || ax >= X->ndim) {
            unsup(c, "%s: axis %lld of a rank-%d tensor", n->op_type, (long long)(naxes ? axes[k] : k), X->ndim);
            return;
        }
        red[ax] = 1;
        if (ax < lo) lo = (int)ax;
        if (ax > hi) hi = (int)ax;
    }
    for (int d = lo; d <= hi; d++)
        if (!red[d]) {
            unsup(c, "%s over axes that are not adjacent (the IR reduces one run of dims)", n->op_type);
            return;
        }
    int kind = !strcmp(n->op_type, "ReduceSum")    ? 0
               : !strcmp(n->op_type, "ReduceMean") ? 1
               : !strcmp(n->op_type, "ReduceMax")  ? 2
                                                   : 3;
    static const char *const row[] = {"rowsum", "rowmean", "rowmax", "rowmin"},
                             *const mid[] = {"midsum", "midmean", "midmax", "midmin"};
    int64_t A = prod(X->dims, 0, lo), R = prod(X->dims, lo, hi + 1), B = prod(X->dims, hi + 1, X->ndim);
    int64_t od[GS_ONNX_MAX_RANK];
    int keep = attr_i(n, "keepdims", 1) != 0, nd = 0;
    for (int d = 0; d < X->ndim; d++)
        if (!red[d]) od[nd++] = X->dims[d];
        else if (keep) od[nd++] = 1;
    char spec[100];
    if (B == 1) snprintf(spec, sizeof spec, "%s M=%lld K=%lld", row[kind], (long long)A, (long long)R);
    else snprintf(spec, sizeof spec, "%s A=%lld R=%lld B=%lld", mid[kind], (long long)A, (long long)R, (long long)B);
    set_out(c, 0, nd, od, DT_FLOAT, NULL);
    const char *tens[2] = {X->name, n->out[0]};
    kernel(c, spec, tens, 2, NULL);
}

/* No kernel: a new shape over the same buffer. */
static void view(imp *c, const tinfo *X, int ndim, const int64_t *dims) {
    char sh[128];
    tinfo t = {.ndim = ndim};
    memcpy(t.dims, dims, (size_t)ndim * sizeof *dims);
    shape_text(&t, sh, sizeof sh);
    set_out(c, 0, ndim, dims, X->dtype, X->c);
    gs_model_node *o = &c->m->out[c->i];
    o->kind = GS_MODEL_VIEW;
    o->reason = isprintf(c->m, "a view of '%s' as %s (no kernel)", X->name, sh);
    gs_model_binding *b = gs_arena_alloc(&c->m->iarena, 2 * sizeof *b);
    tinfo *y = tab(c->m, c->n->out[0], 0);
    if (!b || !y) return;
    b[0] = (gs_model_binding){"in", X->name, X->c != NULL, 0};
    b[1] = (gs_model_binding){"out", y->name, X->c != NULL, 1};
    o->nbindings = 2;
    o->bindings = b;
}

static const int64_t *ivals(const tinfo *t);
static void imp_view(imp *c) {
    const onode *n = c->n;
    tinfo *X = any_in(c, 0);
    if (!X) return;
    int64_t d[GS_ONNX_MAX_RANK];
    if (!strcmp(n->op_type, "Flatten")) {
        int64_t ax = attr_i(n, "axis", 1);
        if (ax < 0) ax += X->ndim;
        if (ax < 0 || ax > X->ndim) {
            unsup(c, "Flatten axis %lld is outside rank %d", (long long)attr_i(n, "axis", 1), X->ndim);
            return;
        }
        d[0] = prod(X->dims, 0, (int)ax);
        d[1] = prod(X->dims, (int)ax, X->ndim);
        view(c, X, 2, d);
    } else if (!strcmp(n->op_type, "Reshape")) {
        tinfo *S = tab(c->m, n->nin > 1 ? n->in[1] : NULL, 0);
        if (!S || !S->c || !S->c->i || S->c->n > GS_ONNX_MAX_RANK) {
            unsup(c, "Reshape's shape is not a constant integer tensor of at most %d values", GS_ONNX_MAX_RANK);
            return;
        }
        int nd = (int)S->c->n, infer = -1, allowzero = attr_i(n, "allowzero", 0) != 0;
        int64_t known = 1, total = prod(X->dims, 0, X->ndim);
        for (int k = 0; k < nd; k++) {
            int64_t v = S->c->i[k];
            if (v == 0 && !allowzero && k < X->ndim) v = X->dims[k];
            if (v == -1 && infer < 0) { infer = k; v = 1; }
            else if (v < 1) {
                unsup(c, "Reshape to a dim of %lld", (long long)S->c->i[k]);
                return;
            }
            d[k] = v;
            if (k != infer && (__builtin_mul_overflow(known, v, &known) || known > (1LL << 62))) {
                unsup(c, "Reshape to more than 2^62 elements");
                return;
            }
        }
        if (infer >= 0) d[infer] = known ? total / known : 0;
        if (prod(d, 0, nd) != total) {
            unsup(c, "Reshape of %lld elements to a shape of %lld", (long long)total, (long long)prod(d, 0, nd));
            return;
        }
        view(c, X, nd, d);
    } else if (!strcmp(n->op_type, "Unsqueeze") || !strcmp(n->op_type, "Squeeze")) {
        /* the axes: an attribute before opset 13, an optional constant input after */
        const oattr *a = attr(n, "axes");
        const int64_t *axes = a ? a->ints : NULL;
        int na = a ? a->nints : 0, sq = n->op_type[0] == 'S';
        if (!a && n->nin > 1 && *n->in[1]) {
            tinfo *t = tab(c->m, n->in[1], 0);
            if (!t || !t->c || !t->c->i) {
                unsup(c, "%s's axes '%s' are not a constant integer tensor", n->op_type, n->in[1]);
                return;
            }
            axes = t->c->i;
            na = (int)t->c->n;
        }
        int rank = sq ? X->ndim : X->ndim + na, mark[GS_ONNX_MAX_RANK] = {0};
        if ((!sq && !na) || rank > GS_ONNX_MAX_RANK || na > GS_ONNX_MAX_RANK) {
            unsup(c, "%s to rank %d (axes %d; 0..%d here)", n->op_type, rank, na, GS_ONNX_MAX_RANK);
            return;
        }
        for (int k = 0; k < na; k++) {
            int64_t v = axes[k] < 0 ? axes[k] + rank : axes[k];
            if (v < 0 || v >= rank || mark[v] || (sq && X->dims[v] != 1)) {
                unsup(c, "%s: axis %lld of rank %d is out of range, repeated or not 1", n->op_type, (long long)axes[k],
                      rank);
                return;
            }
            mark[v] = 1;
        }
        int nd = 0;
        for (int k = 0, j = 0; k < rank; k++) {
            if (sq) {
                if (!(na ? mark[k] : X->dims[k] == 1)) d[nd++] = X->dims[k];
            } else
                d[nd++] = mark[k] ? 1 : X->dims[j++];
        }
        view(c, X, nd, d);
    } else { /* Identity, Dropout at inference */
        if (n->nout > 1 && *n->out[1] && tab(c->m, n->out[1], 0) && tab(c->m, n->out[1], 0)->uses) {
            unsup(c, "Dropout's mask output is read");
            return;
        }
        const tinfo *tm = n->nin > 2 ? tab(c->m, n->in[2], 0) : NULL; /* Dropout's training_mode (opset 12) */
        if (tm && (!ivals(tm) || tm->c->n != 1 || tm->c->i[0])) {
            unsup(c, "Dropout's training_mode '%s' is %s: inference only", tm->name,
                  ivals(tm) && tm->c->n == 1 ? "true" : "not a constant false");
            return;
        }
        view(c, X, X->ndim, X->dims);
    }
}

/* Cast and CastLike between the floating types (FLOAT, FLOAT16, BFLOAT16):
 * to its own type a view; of a constant a constant (its values rounded to
 * the new type, to nearest even); else a conversion kernel: clip without
 * bounds (a copy) reading the source type and writing the target type,
 * rounding once to nearest even as every kernel's store does. Other types
 * are unsupported with the reason. */
static void imp_cast(imp *c) {
    const onode *n = c->n;
    tinfo *X = any_in(c, 0);
    if (!X) return;
    int to = (int)attr_i(n, "to", 0), from = X->dtype;
    if (n->op_type[4] == 'L') {
        tinfo *L = n->nin > 1 ? tab(c->m, n->in[1], 0) : NULL;
        if (!L || L->ndim < 0) {
            unsup(c, "CastLike's target_type input has no known type");
            return;
        }
        to = L->dtype;
    }
    if (X->c && X->c->f && from == DT_DOUBLE) from = DT_FLOAT; /* a DOUBLE constant was read as fp32 */
    if (!dt_float(from) || !dt_float(to)) {
        unsup(c, "%s from %s to %s (between FLOAT, FLOAT16 and BFLOAT16 only: the kernels' types)", n->op_type,
              dtype_name(X->dtype), dtype_name(to));
        return;
    }
    c->ft = to; /* what the node makes */
    if (from == to) {
        view(c, X, X->ndim, X->dims);
        return;
    }
    if (X->c) { /* a constant: converted here */
        otensor *t = gs_arena_alloc(&c->m->iarena, sizeof *t);
        float *f = t ? gs_arena_alloc(&c->m->iarena, (size_t)(X->c->n ? X->c->n : 1) * sizeof *f) : NULL;
        if (!f) {
            unsup(c, "out of memory");
            return;
        }
        *t = *X->c;
        t->name = n->out[0];
        t->dtype = to;
        t->f = f;
        t->i = NULL;
        for (int64_t k = 0; k < t->n; k++) f[k] = gs_dtype_round(dt_gs(to), X->c->f[k]);
        set_out(c, 0, X->ndim, X->dims, to, t);
        gs_model_node *o = &c->m->out[c->i];
        o->kind = GS_MODEL_VIEW;
        o->reason = isprintf(c->m, "a constant: '%s' converted from %s to %s (no kernel)", X->name, dtype_name(from),
                             dtype_name(to));
        gs_model_binding *b = gs_arena_alloc(&c->m->iarena, sizeof *b);
        tinfo *y = tab(c->m, n->out[0], 0);
        if (!b || !y) return;
        b[0] = (gs_model_binding){"out", y->name, 1, 1};
        o->nbindings = 1;
        o->bindings = b;
        return;
    }
    if (!(X = in_t(c, 0, 0, GS_ONNX_MAX_RANK))) return;
    int64_t M, N;
    rows_cols(X, &M, &N);
    char spec[100];
    snprintf(spec, sizeof spec, "clip M=%lld N=%lld", (long long)M, (long long)N);
    set_out(c, 0, X->ndim, X->dims, to, NULL);
    const char *tens[2] = {X->name, n->out[0]};
    kernel_typed(c, spec, tens, 2, NULL, from, to);
}

static void imp_constant(imp *c) {
    const oattr *v = attr(c->n, "value");
    const oattr *vf = attr(c->n, "value_float"), *vi = attr(c->n, "value_int"), *vis = attr(c->n, "value_ints");
    if ((!v || !v->t) && (vf || vi || vis)) { /* the scalar and integer-list forms */
        otensor *t = gs_arena_alloc(&c->m->iarena, sizeof *t);
        int64_t n = vis ? vis->nints : 1;
        if (!t) {
            unsup(c, "out of memory");
            return;
        }
        memset(t, 0, sizeof *t);
        t->name = c->n->out[0];
        t->ndim = vis ? 1 : 0;
        t->dims[0] = n;
        t->n = n;
        if (vf) {
            t->dtype = DT_FLOAT;
            t->f = gs_arena_alloc(&c->m->iarena, sizeof *t->f);
            if (t->f) t->f[0] = vf->f;
        } else {
            t->dtype = DT_INT64;
            t->i = gs_arena_alloc(&c->m->iarena, (size_t)(n ? n : 1) * sizeof *t->i);
            for (int64_t k = 0; t->i && k < n; k++) t->i[k] = vis ? vis->ints[k] : vi->i;
        }
        if (!t->f && !t->i) {
            unsup(c, "out of memory");
            return;
        }
        oattr *fake = gs_arena_alloc(&c->m->iarena, sizeof *fake);
        if (!fake) {
            unsup(c, "out of memory");
            return;
        }
        *fake = (oattr){.name = "value", .type = AT_TENSOR, .t = t};
        v = fake;
    }
    if (!v || !v->t) {
        unsup(c, "Constant without a tensor 'value', 'value_float', 'value_int' or 'value_ints' (sparse, float-list "
                 "and string forms are not read)");
        return;
    }
    set_out(c, 0, v->t->ndim, v->t->dims, v->t->dtype, v->t);
    gs_model_node *o = &c->m->out[c->i];
    o->kind = GS_MODEL_VIEW;
    o->reason = isprintf(c->m, "a constant (%lld elements, no kernel)", (long long)v->t->n);
    gs_model_binding *b = gs_arena_alloc(&c->m->iarena, sizeof *b);
    tinfo *y = tab(c->m, c->n->out[0], 0);
    if (!b || !y) return;
    b[0] = (gs_model_binding){"out", y->name, 1, 1};
    o->nbindings = 1;
    o->bindings = b;
}

/* ConstantOfShape (the weights of the onnx wheel's light models): a constant
 * of the shape its constant input gives, every element the 'value'
 * attribute's (0 when absent). Its data is made while the import's total of
 * such elements stays under GS_ONNX_FILL_MAX (2^26, with the constants
 * expand_const makes); beyond that it has a shape and no data. */
static otensor *made(imp *c, int nd, const int64_t *dims, int dt);
static void folded(imp *c, otensor *t);
static void imp_const_shape(imp *c) {
    const onode *n = c->n;
    tinfo *S = tab(c->m, n->nin ? n->in[0] : NULL, 0);
    if (!S || !S->c || !S->c->i || S->c->n > GS_ONNX_MAX_RANK) {
        unsup(c, "ConstantOfShape's shape is not a constant integer tensor of at most %d values", GS_ONNX_MAX_RANK);
        return;
    }
    int64_t d[GS_ONNX_MAX_RANK];
    for (int k = 0; k < (int)S->c->n; k++) {
        d[k] = S->c->i[k];
        if (d[k] < 1 || d[k] > ONNX_DIM_MAX) {
            unsup(c, "ConstantOfShape dim %d is %lld", k, (long long)d[k]);
            return;
        }
    }
    int nd = (int)S->c->n;
    int64_t cnt = prod(d, 0, nd);
    const oattr *v = attr(n, "value");
    if (v && (!v->t || v->t->n != 1 || (!v->t->f && !v->t->i))) {
        unsup(c, "ConstantOfShape's value is not a one-element number");
        return;
    }
    int dtype = v ? v->t->dtype : DT_FLOAT;
    if (dt_int(dtype) && v->t->i) { /* an integer constant: folded (it feeds shapes) */
        otensor *ti = made(c, nd, d, dtype);
        if (!ti) return;
        for (int64_t k = 0; k < cnt; k++) ti->i[k] = v->t->i[0];
        folded(c, ti);
        return;
    }
    otensor *t = NULL;
    if ((dt_float(dtype) || dtype == DT_DOUBLE) && cnt <= GS_ONNX_FILL_MAX - c->m->filled) {
        t = gs_arena_alloc(&c->m->iarena, sizeof *t);
        float *f = t ? gs_arena_alloc(&c->m->iarena, (size_t)cnt * sizeof *f) : NULL;
        if (!f) {
            unsup(c, "out of memory for a %lld-element constant", (long long)cnt);
            return;
        }
        float x = v ? v->t->f[0] : 0.0f;
        for (int64_t k = 0; k < cnt; k++) f[k] = x;
        t->name = n->nout ? n->out[0] : "";
        t->dtype = dtype == DT_DOUBLE ? DT_FLOAT : dtype;
        t->ndim = nd;
        memcpy(t->dims, d, (size_t)nd * sizeof *d);
        t->n = cnt;
        t->f = f;
        c->m->filled += cnt;
    }
    set_out(c, 0, nd, d, dtype == DT_DOUBLE ? DT_FLOAT : dtype, t);
    gs_model_node *o = &c->m->out[c->i];
    o->kind = GS_MODEL_VIEW;
    o->reason = isprintf(c->m, "a constant of %lld elements%s (no kernel)", (long long)cnt, t ? "" : ", shape only");
    gs_model_binding *b = gs_arena_alloc(&c->m->iarena, sizeof *b);
    tinfo *y = tab(c->m, n->nout ? n->out[0] : NULL, 0);
    if (!b || !y) return;
    b[0] = (gs_model_binding){"out", y->name, t != NULL, 1};
    o->nbindings = 1;
    o->bindings = b;
}

/* A batch norm not folded into a conv: for inference, the per-channel
 * affine y = x * s[c] + t[c] with s = scale / sqrt(var + eps) and
 * t = bias - mean * s (constants the import derives): mulc with a bias. */
static void imp_bn(imp *c) {
    const onode *n = c->n;
    tinfo *X = in_t(c, 0, 2, GS_ONNX_MAX_RANK);
    if (!X) return;
    if (attr_i(n, "training_mode", 0) || n->nin != 5) {
        unsup(c, "BatchNormalization in training mode (or without its 4 parameters): inference only");
        return;
    }
    for (int k = 1; k < n->nout; k++)
        if (*n->out[k] && tab(c->m, n->out[k], 0) && tab(c->m, n->out[k], 0)->uses) {
            unsup(c, "BatchNormalization's running statistics are read: inference only");
            return;
        }
    int64_t C = X->dims[1];
    const tinfo *p[4] = {0};
    for (int k = 0; k < 4; k++) {
        p[k] = tab(c->m, n->in[k + 1], 0);
        if (!p[k] || !p[k]->c || !p[k]->c->f || p[k]->c->n != C) {
            unsup(c, "BatchNormalization's parameter '%s' is not a constant of %lld floats", n->in[k + 1], (long long)C);
            return;
        }
    }
    float eps = attr_f(n, "epsilon", 1e-5f);
    const char *sn = isprintf(c->m, "%s:scale", n->out[0]), *tn = isprintf(c->m, "%s:shift", n->out[0]);
    otensor *sc = derive(c, sn, C), *sh = derive(c, tn, C);
    if (!sc || !sh) {
        unsup(c, "out of memory deriving the batch norm's affine");
        return;
    }
    for (int64_t k = 0; k < C; k++) {
        double s = (double)p[0]->c->f[k] / sqrt((double)p[3]->c->f[k] + (double)eps);
        sc->f[k] = (float)s;
        sh->f[k] = (float)((double)p[1]->c->f[k] - (double)p[2]->c->f[k] * s);
    }
    char spec[120];
    snprintf(spec, sizeof spec, "mulc A=%lld C=%lld B=%lld bias=1", (long long)X->dims[0], (long long)C,
             (long long)prod(X->dims, 2, X->ndim));
    set_out(c, 0, X->ndim, X->dims, DT_FLOAT, NULL);
    const char *tens[4] = {X->name, sn, n->out[0], tn};
    kernel(c, spec, tens, 4, NULL);
}

/* Transpose: a copy with the dims permuted (perm, default reversed); dims of
 * extent 1 are dropped first, so a rank above 6 may still fit. */
static void imp_transpose(imp *c) {
    const onode *n = c->n;
    tinfo *X = in_t(c, 0, 1, GS_ONNX_MAX_RANK);
    if (!X) return;
    int64_t perm[GS_ONNX_MAX_RANK];
    const oattr *pa = attr(n, "perm");
    if (pa && pa->nints != X->ndim) {
        unsup(c, "Transpose: perm has %d values for rank %d", pa->nints, X->ndim);
        return;
    }
    int seen[GS_ONNX_MAX_RANK] = {0};
    for (int j = 0; j < X->ndim; j++) {
        perm[j] = pa ? pa->ints[j] : X->ndim - 1 - j;
        if (perm[j] < 0 || perm[j] >= X->ndim || seen[perm[j]]++) {
            unsup(c, "Transpose: perm is not a permutation of 0..%d", X->ndim - 1);
            return;
        }
    }
    /* every dim while the rank fits the operator's 6, so that the kernel's
     * structure does not depend on which symbolic dims are bound to 1 (one
     * constructed at batch 1 runs at batch 3); past 6, the dims other than 1
     * (in X's order), renumbered */
    int nk = 0, newidx[GS_ONNX_MAX_RANK], keep_ones = X->ndim <= 6;
    int64_t kd[GS_ONNX_MAX_RANK], od[GS_ONNX_MAX_RANK];
    for (int i = 0; i < X->ndim; i++) {
        newidx[i] = X->dims[i] == 1 && !keep_ones ? -1 : nk;
        if (X->dims[i] != 1 || keep_ones) kd[nk++] = X->dims[i];
    }
    char spec[300];
    size_t l = (size_t)snprintf(spec, sizeof spec, "transpose");
    if (nk == 0) {
        l += (size_t)snprintf(spec + l, sizeof spec - l, " d0=1 p0=0");
    } else if (nk > 6) {
        unsup(c, "Transpose of %d dims other than 1 (6 here)", nk);
        return;
    } else {
        for (int j = 0; j < nk; j++) l += (size_t)snprintf(spec + l, sizeof spec - l, " d%d=%lld", j, (long long)kd[j]);
        for (int j = 0, q = 0; j < X->ndim; j++)
            if (newidx[perm[j]] >= 0) l += (size_t)snprintf(spec + l, sizeof spec - l, " p%d=%d", q++, newidx[perm[j]]);
    }
    for (int j = 0; j < X->ndim; j++) od[j] = X->dims[perm[j]];
    set_out(c, 0, X->ndim, od, DT_FLOAT, NULL);
    const char *tens[2] = {X->name, n->out[0]};
    kernel(c, spec, tens, 2, NULL);
}

/* LRN's sum of squares over the channel window (expand_lrn), scaled by alpha/size. */
static void imp_lrn_sum(imp *c) {
    tinfo *X = in_t(c, 0, 3, GS_ONNX_MAX_RANK);
    if (!X) return;
    int64_t size = attr_i(c->n, "size", 0);
    float alpha = attr_f(c->n, "alpha", 1e-4f);
    if (size < 1 || size > ONNX_DIM_MAX || !isfinite(alpha)) {
        unsup(c, "LRN: size=%lld, alpha=%g", (long long)size, (double)alpha);
        return;
    }
    char spec[200];
    gs_snprintf_c(spec, sizeof spec, "chansq N=%lld C=%lld X=%lld size=%lld alpha=%.9g", (long long)X->dims[0],
             (long long)X->dims[1], (long long)prod(X->dims, 2, X->ndim), (long long)size, (double)(alpha / (float)size));
    set_out(c, 0, X->ndim, X->dims, DT_FLOAT, NULL);
    const char *tens[3] = {X->name, X->name, c->n->out[0]};
    kernel(c, spec, tens, 3, NULL);
}

/* One input of a Concat (expand_concat) into its slice of the output. */
static void imp_concat_part(imp *c) {
    const onode *n = c->n;
    int k = (int)attr_i(n, "gensor_part", -1);
    if (k < 0 || k >= n->nin) {
        unsup(c, "Concat.Part without its part number");
        return;
    }
    tinfo *X[64];
    if (n->nin > 64) {
        unsup(c, "Concat of %d inputs (64 here)", n->nin);
        return;
    }
    for (int j = 0; j < n->nin; j++)
        if (!(X[j] = in_t(c, j, 1, GS_ONNX_MAX_RANK))) return;
    int rank = X[0]->ndim;
    int64_t ax = attr_i(n, "axis", 0);
    if (ax < 0) ax += rank;
    if (ax < 0 || ax >= rank) {
        unsup(c, "Concat: axis %lld of rank %d", (long long)attr_i(n, "axis", 0), rank);
        return;
    }
    int64_t T = 0, at = 0;
    for (int j = 0; j < n->nin; j++) {
        int same = X[j]->ndim == rank;
        for (int d = 0; same && d < rank; d++) same = d == ax || X[j]->dims[d] == X[0]->dims[d];
        if (!same) {
            char s0[128], sj[128];
            shape_text(X[0], s0, sizeof s0);
            shape_text(X[j], sj, sizeof sj);
            unsup(c, "Concat of %s and %s along axis %lld: the other dims differ", s0, sj, (long long)ax);
            return;
        }
        if (j < k) at += X[j]->dims[ax];
        T += X[j]->dims[ax];
    }
    int64_t od[GS_ONNX_MAX_RANK];
    memcpy(od, X[0]->dims, sizeof od);
    od[ax] = T;
    char spec[160];
    snprintf(spec, sizeof spec, "place A=%lld R=%lld B=%lld T=%lld at=%lld", (long long)prod(X[k]->dims, 0, (int)ax),
             (long long)X[k]->dims[ax], (long long)prod(X[k]->dims, (int)ax + 1, rank), (long long)T, (long long)at);
    set_out(c, 0, rank, od, DT_FLOAT, NULL);
    const char *tens[2] = {X[k]->name, n->out[0]};
    /* part k > 0 starts from the previous part's output (the slices before it) */
    kernel(c, spec, tens, 2, k > 0 ? c->m->nodes[c->i - 1].out[0] : NULL);
}

/* ---- integer tensors folded at import --------------------------------------------
 * Exporters compute the targets of Reshape, Expand and ConstantOfShape from
 * the inputs' shapes (torch: Shape, Gather, Unsqueeze, Concat; also Slice,
 * Cast, integer arithmetic, Equal and Where, Range). The import evaluates
 * these integer tensors (INT64, INT32, BOOL) at the bound dims as it
 * propagates the shapes: each such node is a constant of the import (a view
 * node of one binding, its output; no kernel), and the nodes after it read
 * it as they read an initializer. An import at other dims (onnx_run --dim,
 * the probe at GS_ONNX_PROBE_DIM) evaluates them again at those dims, so a
 * Reshape's target made from a symbolic dim follows it; a floating constant
 * made from one (a Cast of a shape value) has other values there, which a
 * runner checks before it launches a kernel built at the first dims. Their
 * elements count with the constants the import makes (GS_ONNX_FILL_MAX). */

/* t's data when it is an integer tensor the import knows (an initializer, a
 * Constant or a value folded here), else NULL. */
static const int64_t *ivals(const tinfo *t) {
    if (!t || t->ndim < 0 || !dt_int(t->dtype) || !t->c || !t->c->i) return NULL;
    return t->c->n == prod(t->dims, 0, t->ndim) ? t->c->i : NULL;
}

/* Input k as an integer tensor the import knows; NULL with the node
 * unsupported, naming why. */
static tinfo *iin(imp *c, int k) {
    tinfo *t = any_in(c, k);
    if (!t || ivals(t)) return t;
    unsup(c, "input '%s' (%s) is %s: the import folds integer tensors it knows (initializers, Constants, values "
             "computed from shapes)", t->name, dtype_name(t->dtype),
          !dt_int(t->dtype) ? "not an integer tensor" : t->producer < 0 && !t->c ? "a graph input"
                                                                                   : "not known at import");
    return NULL;
}

/* A tensor the import makes for output 0, of dims[0..nd) and type dt: an
 * integer one (its data in ->i) or a floating one (->f); NULL with the node
 * unsupported past the import's budget of made elements. */
static otensor *made(imp *c, int nd, const int64_t *dims, int dt) {
    int64_t n = prod(dims, 0, nd);
    if (n > GS_ONNX_FILL_MAX - c->m->filled) {
        unsup(c, "%s: a tensor of %lld elements would pass the import's %lld elements of made constants",
              c->n->op_type, (long long)n, (long long)GS_ONNX_FILL_MAX);
        return NULL;
    }
    otensor *t = gs_arena_alloc(&c->m->iarena, sizeof *t);
    void *v = gs_arena_alloc(&c->m->iarena, (size_t)(n ? n : 1) * (dt_int(dt) ? sizeof(int64_t) : sizeof(float)));
    if (!t || !v) {
        unsup(c, "out of memory for a %lld-element tensor", (long long)n);
        return NULL;
    }
    memset(t, 0, sizeof *t);
    t->name = c->n->nout ? c->n->out[0] : "";
    t->dtype = dt;
    t->ndim = nd;
    if (nd) memcpy(t->dims, dims, (size_t)nd * sizeof *dims);
    t->n = n;
    if (dt_int(dt)) t->i = v;
    else t->f = v;
    c->m->filled += n;
    return t;
}

/* The node is a constant of the import: its output 0, no kernel; why says what. */
static void const_view(imp *c, const char *why) {
    gs_model_node *o = &c->m->out[c->i];
    o->kind = GS_MODEL_VIEW;
    o->reason = why;
    gs_model_binding *b = gs_arena_alloc(&c->m->iarena, sizeof *b);
    tinfo *y = tab(c->m, c->n->nout ? c->n->out[0] : NULL, 0);
    if (!b || !y) return;
    b[0] = (gs_model_binding){"out", y->name, 1, 1};
    o->nbindings = 1;
    o->bindings = b;
}

/* Up to 8 values of integer tensor t as text: "[2,8,4,16]". */
static void ivals_text(const otensor *t, char *buf, size_t n) {
    size_t o = (size_t)snprintf(buf, n, "[");
    for (int64_t k = 0; k < t->n && k < 8 && o < n; k++)
        o += (size_t)snprintf(buf + o, n - o, "%s%lld", k ? "," : "", (long long)t->i[k]);
    if (o < n) snprintf(buf + o, n - o, "%s]", t->n > 8 ? ",..." : "");
}

/* Output 0 is the integer tensor t, folded. */
static void folded(imp *c, otensor *t) {
    tinfo sh = {.ndim = t->ndim};
    memcpy(sh.dims, t->dims, sizeof sh.dims);
    char ss[128], vs[200];
    shape_text(&sh, ss, sizeof ss);
    ivals_text(t, vs, sizeof vs);
    set_out(c, 0, t->ndim, t->dims, t->dtype, t);
    const_view(c, isprintf(c->m, "%s %s folded at import: %s (no kernel)", dtype_name(t->dtype), ss, vs));
}

/* numpy's broadcast of the shapes of T[0..n) into dims[0..*nd); -1 when two
 * dims differ and neither is 1. */
static int bcast_dims(const tinfo *const *T, int n, int64_t *dims, int *nd) {
    *nd = 0;
    for (int k = 0; k < n; k++)
        if (T[k]->ndim > *nd) *nd = T[k]->ndim;
    for (int d = 0; d < *nd; d++) dims[d] = 1;
    for (int k = 0; k < n; k++)
        for (int j = 0; j < T[k]->ndim; j++) {
            int64_t x = T[k]->dims[j], *y = &dims[*nd - T[k]->ndim + j];
            if (*y == 1) *y = x;
            else if (x != 1 && x != *y) return -1;
        }
    return 0;
}

/* The element of integer tensor t that element i of the broadcast shape
 * dims[0..nd) reads (t's dims aligned from the right, a 1 repeated). */
static int64_t bcast_at(const tinfo *t, int nd, const int64_t *dims, int64_t i) {
    int64_t src = 0, st = 1;
    for (int d = nd - 1, k = t->ndim - 1; k >= 0; d--, k--) {
        int64_t x = i % dims[d];
        i /= dims[d];
        if (t->dims[k] != 1) src += x * st;
        st *= t->dims[k];
    }
    return t->c->i[src];
}

/* Shape (opset 15: the dims start..end, clamped as Python slices are) and Size. */
static void fold_shape(imp *c) {
    tinfo *X = any_in(c, 0);
    if (!X) return;
    int64_t r = X->ndim, one = 1, n;
    if (!strcmp(c->n->op_type, "Size")) {
        otensor *t = made(c, 0, &one, DT_INT64);
        if (!t) return;
        t->i[0] = prod(X->dims, 0, X->ndim);
        folded(c, t);
        return;
    }
    int64_t s = attr_i(c->n, "start", 0), e = attr_i(c->n, "end", r);
    s = s < 0 ? s + r : s;
    e = e < 0 ? e + r : e;
    s = s < 0 ? 0 : s > r ? r : s;
    e = e < 0 ? 0 : e > r ? r : e;
    n = e > s ? e - s : 0;
    otensor *t = made(c, 1, &n, DT_INT64);
    if (!t) return;
    for (int64_t k = 0; k < n; k++) t->i[k] = X->dims[s + k];
    folded(c, t);
}

/* Gather along axis (negative indices count from the end). */
static void fold_gather(imp *c) {
    tinfo *D = iin(c, 0), *I = D ? iin(c, 1) : NULL;
    if (!I) return;
    int64_t ax = attr_i(c->n, "axis", 0), r = D->ndim;
    if (ax < -r || ax >= r) {
        unsup(c, "Gather: axis %lld of a rank-%lld tensor", (long long)ax, (long long)r);
        return;
    }
    ax = ax < 0 ? ax + r : ax;
    if (r - 1 + I->ndim > GS_ONNX_MAX_RANK) {
        unsup(c, "Gather to rank %lld (%d here)", (long long)(r - 1 + I->ndim), GS_ONNX_MAX_RANK);
        return;
    }
    int64_t od[GS_ONNX_MAX_RANK], ext = D->dims[ax], outer = prod(D->dims, 0, (int)ax),
            inner = prod(D->dims, (int)ax + 1, (int)r), ni = I->c->n;
    int nd = 0;
    for (int d = 0; d < ax; d++) od[nd++] = D->dims[d];
    for (int d = 0; d < I->ndim; d++) od[nd++] = I->dims[d];
    for (int d = (int)ax + 1; d < r; d++) od[nd++] = D->dims[d];
    for (int64_t j = 0; j < ni; j++)
        if (I->c->i[j] < -ext || I->c->i[j] >= ext) {
            unsup(c, "Gather: index %lld of '%s' is outside [-%lld, %lld) (axis %lld of '%s')", (long long)I->c->i[j],
                  I->name, (long long)ext, (long long)ext, (long long)ax, D->name);
            return;
        }
    otensor *t = made(c, nd, od, D->dtype);
    if (!t) return;
    for (int64_t o = 0, at = 0; o < outer; o++)
        for (int64_t j = 0; j < ni; j++) {
            int64_t k = I->c->i[j] < 0 ? I->c->i[j] + ext : I->c->i[j];
            for (int64_t q = 0; q < inner; q++) t->i[at++] = D->c->i[(o * ext + k) * inner + q];
        }
    folded(c, t);
}

/* Slice's starts, ends, axes and steps (inputs from opset 10, attributes
 * before) into the n entries of v[0..3]; -1 with the node unsupported. */
static int slice_args(imp *c, int rank, int64_t v[4][GS_ONNX_MAX_RANK], int *n) {
    static const char *const names[4] = {"starts", "ends", "axes", "steps"};
    *n = -1;
    for (int a = 0; a < 4; a++) {
        const int64_t *x = NULL;
        int nx = 0;
        if (c->m->opset > 0 && c->m->opset < 10) {
            const oattr *at = a < 3 ? attr(c->n, names[a]) : NULL;
            if (at) x = at->ints, nx = at->nints;
        } else if (a + 1 < c->n->nin && *c->n->in[a + 1]) {
            tinfo *t = iin(c, a + 1);
            if (!t) return -1;
            if (t->ndim != 1) {
                unsup(c, "Slice: %s '%s' has rank %d (1 here)", names[a], t->name, t->ndim);
                return -1;
            }
            x = t->c->i, nx = (int)t->c->n;
        }
        if (!x && a < 2) {
            unsup(c, "Slice without %s", names[a]);
            return -1;
        }
        if (x && ((*n >= 0 && nx != *n) || nx > rank)) {
            unsup(c, "Slice: %s has %d values (%d starts; at most rank %d)", names[a], nx, *n, rank);
            return -1;
        }
        if (a == 0) *n = nx;
        for (int k = 0; k < *n; k++) v[a][k] = x ? x[k] : a == 2 ? k : 1;
    }
    return 0;
}

/* Slice: per axis, start and end made positive and clamped as the spec says
 * (to [0, dim] with a positive step, [-1, dim - 1] with a negative one). */
static void fold_slice(imp *c) {
    tinfo *X = iin(c, 0);
    if (!X) return;
    int64_t v[4][GS_ONNX_MAX_RANK], lo[GS_ONNX_MAX_RANK], step[GS_ONNX_MAX_RANK], cnt[GS_ONNX_MAX_RANK];
    int n, r = X->ndim, seen[GS_ONNX_MAX_RANK] = {0};
    if (slice_args(c, r, v, &n) < 0) return;
    for (int d = 0; d < r; d++) lo[d] = 0, step[d] = 1, cnt[d] = X->dims[d];
    for (int k = 0; k < n; k++) {
        int64_t a = v[2][k] < 0 ? v[2][k] + r : v[2][k], s = v[0][k], e = v[1][k], st = v[3][k];
        if (a < 0 || a >= r || seen[a]++) {
            unsup(c, "Slice: axis %lld of rank %d is out of range or repeated", (long long)v[2][k], r);
            return;
        }
        if (st == 0) {
            unsup(c, "Slice: step 0 on axis %lld", (long long)a);
            return;
        }
        int64_t dim = X->dims[a], hi = st > 0 ? dim : dim - 1, mn = st > 0 ? 0 : -1;
        s = s < 0 ? s + dim : s;
        e = e < 0 ? e + dim : e;
        s = s < 0 ? 0 : s > hi ? hi : s;
        e = e < mn ? mn : e > hi ? hi : e;
        uint64_t us = st > 0 ? (uint64_t)st : 0 - (uint64_t)st;
        int64_t span = st > 0 ? e - s : s - e;
        lo[a] = s;
        step[a] = st;
        cnt[a] = span > 0 ? (int64_t)((uint64_t)(span - 1) / us) + 1 : 0;
    }
    otensor *t = made(c, r, cnt, X->dtype);
    if (!t) return;
    for (int64_t i = 0; i < t->n; i++) {
        int64_t rest = i, src = 0, stride = 1;
        for (int d = r - 1; d >= 0; d--) {
            src += (lo[d] + rest % cnt[d] * step[d]) * stride;
            rest /= cnt[d];
            stride *= X->dims[d];
        }
        t->i[i] = X->c->i[src];
    }
    folded(c, t);
}

/* One part of a Concat (expand_concat) of integer tensors: every part folds
 * the whole concatenation, the last one being the Concat's output. */
static void fold_concat(imp *c) {
    const onode *n = c->n;
    tinfo *X[64];
    if (n->nin > 64) {
        unsup(c, "Concat of %d inputs (64 here)", n->nin);
        return;
    }
    for (int j = 0; j < n->nin; j++)
        if (!(X[j] = iin(c, j))) return;
    int r = X[0]->ndim;
    int64_t ax = attr_i(n, "axis", 0), od[GS_ONNX_MAX_RANK];
    if (ax < -r || ax >= r) {
        unsup(c, "Concat: axis %lld of rank %d", (long long)ax, r);
        return;
    }
    ax = ax < 0 ? ax + r : ax;
    memcpy(od, X[0]->dims, sizeof od);
    od[ax] = 0;
    for (int j = 0; j < n->nin; j++) {
        int same = X[j]->ndim == r && X[j]->dtype == X[0]->dtype;
        for (int d = 0; same && d < r; d++) same = d == ax || X[j]->dims[d] == X[0]->dims[d];
        if (!same) {
            char s0[128], sj[128];
            shape_text(X[0], s0, sizeof s0);
            shape_text(X[j], sj, sizeof sj);
            unsup(c, "Concat of %s %s and %s %s along axis %lld: the types or the other dims differ",
                  dtype_name(X[0]->dtype), s0, dtype_name(X[j]->dtype), sj, (long long)ax);
            return;
        }
        od[ax] += X[j]->dims[ax];
    }
    otensor *t = made(c, r, od, X[0]->dtype);
    if (!t) return;
    int64_t outer = prod(od, 0, (int)ax), at = 0;
    for (int64_t o = 0; o < outer; o++)
        for (int j = 0; j < n->nin; j++) {
            int64_t run = prod(X[j]->dims, (int)ax, r);
            memcpy(t->i + at, X[j]->c->i + o * run, (size_t)run * sizeof *t->i);
            at += run;
        }
    folded(c, t);
}

/* The integer binary operators (with numpy's broadcasting; Max and Min of any
 * number of inputs). Div truncates toward zero and Mod takes the divisor's
 * sign (fmod=1: the dividend's), as ONNX Runtime does. */
static const char *const ibin_ops[] = {"Add", "Sub", "Mul", "Div", "Mod", "Max", "Min",
                                       "Equal", "Less", "Greater", "And", "Or"};
enum { IB_ADD, IB_SUB, IB_MUL, IB_DIV, IB_MOD, IB_MAX, IB_MIN, IB_EQ, IB_LT, IB_GT, IB_AND, IB_OR, IB_N };
_Static_assert(sizeof ibin_ops / sizeof ibin_ops[0] == IB_N, "one name per integer operator");

/* a op b into *r; -1 with *why on overflow of INT64 or a division by zero. */
static int ibin(int op, int64_t a, int64_t b, int fmod, int64_t *r, const char **why) {
    *why = "overflows INT64";
    switch (op) {
    case IB_ADD: return __builtin_add_overflow(a, b, r) ? -1 : 0;
    case IB_SUB: return __builtin_sub_overflow(a, b, r) ? -1 : 0;
    case IB_MUL: return __builtin_mul_overflow(a, b, r) ? -1 : 0;
    case IB_DIV:
    case IB_MOD:
        if (b == 0) return *why = "divides by zero", -1;
        if (b == -1) { /* INT64_MIN / -1 overflows; anything % -1 is 0 */
            if (op == IB_DIV && a == INT64_MIN) return -1;
            *r = op == IB_MOD ? 0 : -a;
            return 0;
        }
        *r = op == IB_DIV ? a / b : a % b;
        if (op == IB_MOD && !fmod && *r && (*r < 0) != (b < 0)) *r += b;
        return 0;
    case IB_MAX: *r = a > b ? a : b; return 0;
    case IB_MIN: *r = a < b ? a : b; return 0;
    case IB_EQ: *r = a == b; return 0;
    case IB_LT: *r = a < b; return 0;
    case IB_GT: *r = a > b; return 0;
    case IB_AND: *r = a && b; return 0;
    default: *r = a || b; return 0;
    }
}

/* An INT32 result outside its range: the why of a refusal, else NULL. */
static const char *int32_range(int dt, int64_t v) {
    return dt == DT_INT32 && (v < INT32_MIN || v > INT32_MAX) ? "overflows INT32" : NULL;
}

static void fold_binary(imp *c) {
    const char *ot = c->n->op_type;
    int op = 0, ni = c->n->nin, nd;
    while (op < IB_N && strcmp(ibin_ops[op], ot)) op++;
    int variadic = op == IB_MAX || op == IB_MIN;
    if (ni < 1 || (!variadic && ni != 2) || ni > 16) {
        unsup(c, "%s of %d integer inputs (%s here)", ot, ni, variadic ? "1 to 16" : "two");
        return;
    }
    tinfo *T[16];
    for (int k = 0; k < ni; k++)
        if (!(T[k] = iin(c, k))) return;
    int64_t dims[GS_ONNX_MAX_RANK];
    for (int k = 1; k < ni; k++)
        if (T[k]->dtype != T[0]->dtype) {
            unsup(c, "%s of %s and %s", ot, dtype_name(T[0]->dtype), dtype_name(T[k]->dtype));
            return;
        }
    if (bcast_dims((const tinfo *const *)T, ni, dims, &nd) < 0) {
        char s0[128], s1[128];
        shape_text(T[0], s0, sizeof s0);
        shape_text(T[1], s1, sizeof s1);
        unsup(c, "%s of %s and %s: the shapes do not broadcast", ot, s0, s1);
        return;
    }
    otensor *t = made(c, nd, dims, op >= IB_EQ ? DT_BOOL : T[0]->dtype);
    if (!t) return;
    int fmod = (int)attr_i(c->n, "fmod", 0);
    for (int64_t i = 0; i < t->n; i++) {
        int64_t acc = bcast_at(T[0], nd, dims, i), b = 0;
        const char *why = NULL;
        for (int k = 1; k < ni && !why; k++) {
            b = bcast_at(T[k], nd, dims, i);
            if (ibin(op, acc, b, fmod, &acc, &why) == 0) why = int32_range(t->dtype, acc);
        }
        if (why) {
            unsup(c, "%s of %lld and %lld %s (element %lld)", ot, (long long)bcast_at(T[0], nd, dims, i),
                  (long long)b, why, (long long)i);
            return;
        }
        t->i[i] = acc;
    }
    folded(c, t);
}

/* Neg, Abs and Not of an integer tensor. */
static void fold_unary(imp *c) {
    tinfo *X = iin(c, 0);
    if (!X) return;
    const char *ot = c->n->op_type;
    otensor *t = made(c, X->ndim, X->dims, X->dtype);
    if (!t) return;
    for (int64_t i = 0; i < t->n; i++) {
        int64_t x = X->c->i[i];
        if ((ot[0] == 'N' && ot[1] == 'e') || (ot[0] == 'A' && x < 0)) {
            if (x == INT64_MIN || int32_range(X->dtype, -x)) {
                unsup(c, "%s of %lld overflows %s", ot, (long long)x, dtype_name(X->dtype));
                return;
            }
            x = -x;
        } else if (ot[0] == 'N') {
            x = !x;
        }
        t->i[i] = x;
    }
    folded(c, t);
}

/* Where(cond, X, Y) of integer X and Y, broadcast together. */
static void fold_where(imp *c) {
    tinfo *T[3];
    for (int k = 0; k < 3; k++)
        if (!(T[k] = iin(c, k))) return;
    if (T[1]->dtype != T[2]->dtype) {
        unsup(c, "Where of %s and %s", dtype_name(T[1]->dtype), dtype_name(T[2]->dtype));
        return;
    }
    int64_t dims[GS_ONNX_MAX_RANK];
    int nd;
    if (bcast_dims((const tinfo *const *)T, 3, dims, &nd) < 0) {
        unsup(c, "Where: the shapes of its three inputs do not broadcast");
        return;
    }
    otensor *t = made(c, nd, dims, T[1]->dtype);
    if (!t) return;
    for (int64_t i = 0; i < t->n; i++) t->i[i] = bcast_at(T[bcast_at(T[0], nd, dims, i) ? 1 : 2], nd, dims, i);
    folded(c, t);
}

/* Range(start, limit, delta) of integer scalars: ceil((limit - start) / delta) values, none when that is negative. */
static void fold_range(imp *c) {
    tinfo *T[3];
    for (int k = 0; k < 3; k++)
        if (!(T[k] = iin(c, k))) return;
    for (int k = 0; k < 3; k++)
        if (T[k]->c->n != 1 || T[k]->dtype != T[0]->dtype) {
            unsup(c, "Range: input '%s' is not a scalar of the type of start (%s)", T[k]->name, dtype_name(T[0]->dtype));
            return;
        }
    int64_t s = T[0]->c->i[0], l = T[1]->c->i[0], d = T[2]->c->i[0], n = 0;
    if (d == 0) {
        unsup(c, "Range with delta 0");
        return;
    }
    if (d > 0 ? l > s : l < s) { /* the span and the step's size as unsigned: exact for any INT64 */
        uint64_t span = d > 0 ? (uint64_t)l - (uint64_t)s : (uint64_t)s - (uint64_t)l;
        uint64_t step = d > 0 ? (uint64_t)d : 0 - (uint64_t)d, cnt = (span - 1) / step + 1;
        if (cnt > (uint64_t)GS_ONNX_FILL_MAX) {
            unsup(c, "Range of %llu values (the import makes at most %lld elements)", (unsigned long long)cnt,
                  (long long)GS_ONNX_FILL_MAX);
            return;
        }
        n = (int64_t)cnt;
    }
    otensor *t = made(c, 1, &n, T[0]->dtype);
    if (!t) return;
    /* each value lies between start and limit; k * delta alone may not fit (start -2^63, delta 2^62),
     * so the sum is taken modulo 2^64 */
    for (int64_t k = 0; k < n; k++) t->i[k] = (int64_t)((uint64_t)s + (uint64_t)k * (uint64_t)d);
    folded(c, t);
}

/* Cast or CastLike of an integer tensor (to an integer type; to a floating
 * one, a constant of the import that kernels read), or of a floating
 * constant to an integer type (truncated toward zero, as ONNX Runtime). */
static void fold_cast(imp *c) {
    tinfo *X = any_in(c, 0);
    if (!X) return;
    int to = (int)attr_i(c->n, "to", 0);
    if (c->n->op_type[4] == 'L') {
        tinfo *L = c->n->nin > 1 ? tab(c->m, c->n->in[1], 0) : NULL;
        if (!L || L->ndim < 0) {
            unsup(c, "CastLike's target_type input has no known type");
            return;
        }
        to = L->dtype;
    }
    if (!dt_int(to) && !dt_float(to) && to != DT_DOUBLE) {
        unsup(c, "%s from %s to %s (INT64, INT32, BOOL and the floating types here)", c->n->op_type,
              dtype_name(X->dtype), dtype_name(to));
        return;
    }
    if (!dt_int(X->dtype) && !(X->c && X->c->f)) {
        unsup(c, "%s of the computed %s tensor '%s' to %s (a kernel's output is not known at import)", c->n->op_type,
              dtype_name(X->dtype), X->name, dtype_name(to));
        return;
    }
    if (dt_int(X->dtype) && !iin(c, 0)) return;
    otensor *t = made(c, X->ndim, X->dims, to);
    if (!t) return;
    for (int64_t i = 0; i < t->n; i++) {
        if (!dt_int(to)) { /* an integer to a float (a half one rounded to nearest even) */
            t->f[i] = dt_float(to) ? gs_dtype_round(dt_gs(to), (float)X->c->i[i]) : (float)X->c->i[i];
            continue;
        }
        double f = X->c->f ? (double)X->c->f[i] : 0;
        int64_t v = X->c->f ? (int64_t)0 : X->c->i[i];
        if (X->c->f && !(f > -9223372036854775808.0 && f < 9223372036854775808.0)) {
            unsup(c, "%s of %g to %s: out of its range", c->n->op_type, f, dtype_name(to));
            return;
        }
        if (X->c->f) v = (int64_t)f;
        if (int32_range(to, v)) {
            unsup(c, "%s of %lld to INT32 overflows", c->n->op_type, (long long)v);
            return;
        }
        t->i[i] = to == DT_BOOL ? v != 0 : v;
    }
    if (dt_int(to)) {
        folded(c, t);
        return;
    }
    set_out(c, 0, t->ndim, t->dims, to, t);
    const_view(c, isprintf(c->m, "a constant: '%s' converted from %s to %s at import (no kernel)", X->name,
                           dtype_name(X->dtype), dtype_name(to)));
}

/* Reshape, Flatten, Unsqueeze, Squeeze and Identity of an integer tensor the
 * import knows: imp_view's shape, its data folded under the output's name. */
static void fold_view(imp *c) {
    tinfo *X = iin(c, 0);
    if (!X) return;
    imp_view(c);
    tinfo *y = c->m->out[c->i].kind == GS_MODEL_VIEW ? tab(c->m, c->n->out[0], 0) : NULL;
    if (!y) return;
    otensor *t = gs_arena_alloc(&c->m->iarena, sizeof *t);
    if (!t) {
        unsup(c, "out of memory");
        return;
    }
    *t = *X->c;
    t->name = y->name;
    t->ndim = y->ndim;
    memcpy(t->dims, y->dims, sizeof t->dims);
    folded(c, t);
}

/* Expand(X, shape): the broadcast of X's dims and shape's values (either side
 * may be 1). Of an integer tensor the import knows, folded; of a floating
 * constant, a constant the import makes (expand_const); of a computed tensor,
 * a view when the shape is its own (in the probe too), else unsupported: no
 * kernel copies a broadcast. */
static void imp_expand(imp *c) {
    tinfo *X = any_in(c, 0), *S = X ? iin(c, 1) : NULL;
    if (!S) return;
    if (S->ndim != 1 || S->c->n > GS_ONNX_MAX_RANK) {
        unsup(c, "Expand's shape '%s' is not a 1-D tensor of at most %d values", S->name, GS_ONNX_MAX_RANK);
        return;
    }
    tinfo want = {.ndim = (int)S->c->n};
    for (int d = 0; d < want.ndim; d++) {
        want.dims[d] = S->c->i[d];
        if (want.dims[d] < 0 || want.dims[d] > ONNX_DIM_MAX) {
            unsup(c, "Expand to a dim of %lld", (long long)want.dims[d]);
            return;
        }
    }
    const tinfo *T[2] = {X, &want};
    int64_t dims[GS_ONNX_MAX_RANK];
    int nd;
    char sx[128], sw[128];
    shape_text(X, sx, sizeof sx);
    shape_text(&want, sw, sizeof sw);
    if (bcast_dims(T, 2, dims, &nd) < 0) {
        unsup(c, "Expand of %s to %s: the dims do not broadcast", sx, sw);
        return;
    }
    if (ivals(X)) {
        otensor *t = made(c, nd, dims, X->dtype);
        if (!t) return;
        for (int64_t i = 0; i < t->n; i++) t->i[i] = bcast_at(X, nd, dims, i);
        folded(c, t);
        return;
    }
    if (X->c && X->c->f) {
        tinfo *e = expand_const(c, X, nd, dims, "Expand");
        if (!e) return;
        set_out(c, 0, nd, dims, X->dtype, e->c);
        const_view(c, isprintf(c->m, "a constant: '%s' %s expanded to %s at import (no kernel)", X->name, sx, sw));
        return;
    }
    const tinfo *pX = probe_t(c->m, X), *pS = pX ? probe_t(c->m, S) : NULL;
    int same = nd == X->ndim && !memcmp(dims, X->dims, (size_t)nd * sizeof *dims);
    if (same && pX && ivals(pS) && pS->c->n == nd) { /* the probe's dims: a view there too? */
        tinfo pw = {.ndim = nd};
        memcpy(pw.dims, pS->c->i, (size_t)nd * sizeof *pw.dims);
        const tinfo *P[2] = {pX, &pw};
        int64_t pd[GS_ONNX_MAX_RANK];
        int pn;
        same = bcast_dims(P, 2, pd, &pn) == 0 && pn == nd && !memcmp(pd, pX->dims, (size_t)nd * sizeof *pd);
    }
    if (!same) {
        unsup(c, "Expand of the computed tensor '%s' %s to %s: no kernel copies a broadcast (an Expand of a constant "
                 "or to the tensor's own shape is mapped)", X->name, sx, sw);
        return;
    }
    view(c, X, nd, dims);
}

/* The operators folded here, and the input whose type routes a node of an
 * operator that kernels also take (Add, Cast, Reshape): an integer input
 * folds here, a floating one goes to imp_defs. -1: always here. */
typedef struct fold_def {
    const char *op_type;
    void (*fn)(imp *);
    int by;
} fold_def;
static const fold_def fold_defs[] = {
    {"Shape", fold_shape, -1},      {"Size", fold_shape, -1},        {"Gather", fold_gather, -1},
    {"Slice", fold_slice, -1},      {"Range", fold_range, -1},       {"Where", fold_where, -1},
    {"Equal", fold_binary, -1},     {"Less", fold_binary, -1},       {"Greater", fold_binary, -1},
    {"And", fold_binary, -1},       {"Or", fold_binary, -1},         {"Mod", fold_binary, -1},
    {"Not", fold_unary, -1},        {"Expand", imp_expand, -1},      {"Add", fold_binary, 0},
    {"Sub", fold_binary, 0},        {"Mul", fold_binary, 0},         {"Div", fold_binary, 0},
    {"Max", fold_binary, 0},        {"Min", fold_binary, 0},         {"Neg", fold_unary, 0},
    {"Abs", fold_unary, 0},         {"Cast", fold_cast, 0},          {"CastLike", fold_cast, 0},
    {"Concat.Part", fold_concat, 0}, {"Reshape", fold_view, 0},      {"Flatten", fold_view, 0},
    {"Unsqueeze", fold_view, 0},    {"Squeeze", fold_view, 0},       {"Identity", fold_view, 0},
};

/* The fold of node c->n when it is one (an integer input the import knows
 * where it routes, or a Cast of a floating constant to an integer type), else NULL. */
static const fold_def *fold_find(imp *c) {
    const onode *n = c->n;
    if (*n->domain && strcmp(n->domain, "ai.onnx")) return NULL;
    for (size_t k = 0; k < sizeof fold_defs / sizeof fold_defs[0]; k++) {
        const fold_def *d = &fold_defs[k];
        if (strcmp(d->op_type, n->op_type)) continue;
        if (d->by < 0) return d;
        const tinfo *t = d->by < n->nin ? tab(c->m, n->in[d->by], 0) : NULL;
        if (!t || t->ndim < 0) return NULL; /* the floating mapping names what is missing */
        if (dt_int(t->dtype)) return ivals(t) ? d : NULL; /* an integer graph input: a view there, or its reason */
        int cast = !strcmp(n->op_type, "Cast");
        return cast && t->c && t->c->f && dt_int((int)attr_i(n, "to", 0)) ? d : NULL;
    }
    return NULL;
}

typedef struct imp_def {
    const char *op_type;
    void (*fn)(imp *);
} imp_def;
static const imp_def imp_defs[] = {
    {"Conv", imp_conv},         {"Gemm", imp_gemm},        {"MatMul", imp_matmul},
    {"MaxPool", imp_pool},      {"AveragePool", imp_pool}, {"GlobalMaxPool", imp_pool},
    {"GlobalAveragePool", imp_pool}, {"Relu", imp_relu},   {"Clip", imp_clip},        {"Add", imp_binary},
    {"Mul", imp_binary},        {"Sum", imp_binary},       {"Sub", imp_binary},       {"Div", imp_binary},
    {"Max", imp_binary},        {"Min", imp_binary},       {"Mean", imp_binary},      {"Pow", imp_binary},
    {"PRelu", imp_binary},
    {"ReduceSum", imp_reduce},  {"ReduceMean", imp_reduce},
    {"ReduceMax", imp_reduce},  {"ReduceMin", imp_reduce},  {"Flatten", imp_view},     {"Reshape", imp_view},
    {"Identity", imp_view},     {"Dropout", imp_view},     {"Unsqueeze", imp_view},   {"Squeeze", imp_view},
    {"Cast", imp_cast},         {"CastLike", imp_cast},    {"Transpose", imp_transpose},     {"Constant", imp_constant},
    {"BatchNormalization", imp_bn}, {"ConstantOfShape", imp_const_shape}, {"Concat.Part", imp_concat_part},
    {"LRN.Sum", imp_lrn_sum},
};

/* A graph input's shape with its symbolic dims bound. */
static gs_status bind_input(gs_ctx *ctx, gs_model *m, const ovalue *v, tinfo *t) {
    if (!v->has_shape)
        return gs_err(ctx, GS_ERR_INVALID_ARG, "input '%s' has no shape in the model", v->name);
    for (int d = 0; d < v->ndim; d++) {
        int64_t x = v->dims[d];
        if (x <= 0 && v->param[d] && *v->param[d]) {
            for (int k = 0; k < m->ndims; k++)
                if (!strcmp(m->dim_name[k], v->param[d])) x = m->dim_val[k];
            if (x <= 0)
                return gs_err(ctx, GS_ERR_INVALID_ARG, "dim '%s' (input '%s' dim %d) is not bound: give it a size "
                              "(gs_model_bind_dim, or --dim %s=N)", v->param[d], v->name, d, v->param[d]);
        }
        if (x <= 0)
            return gs_err(ctx, GS_ERR_INVALID_ARG, "input '%s' dim %d has neither a size nor a name to bind", v->name, d);
        t->dims[d] = x;
    }
    t->ndim = v->ndim;
    t->dtype = v->elem;
    return GS_OK;
}

/* c->ft: the floating type the node's floating inputs share (FLOAT when
 * none has one). Inputs of two floating types are refused, since a kernel
 * takes one operand type: -1 with the node unsupported. Cast and CastLike
 * convert, so their inputs may differ. */
static int node_float_type(imp *c) {
    const onode *n = c->n;
    int cast = !strcmp(n->op_type, "Cast") || !strcmp(n->op_type, "CastLike"), first = -1;
    for (int k = 0; k < n->nin && !cast; k++) {
        const tinfo *t = tab(c->m, n->in[k], 0);
        if (!t || t->ndim < 0 || !dt_float(t->dtype)) continue;
        if (first < 0) {
            first = k;
            c->ft = t->dtype;
        } else if (t->dtype != c->ft) {
            unsup(c, "mixed element types: input '%s' is %s and input '%s' is %s (a kernel takes one operand type: "
                     "Cast one of them)", n->in[first], dtype_name(c->ft), n->in[k], dtype_name(t->dtype));
            return -1;
        }
    }
    return 0;
}

static gs_status import_once(gs_ctx *ctx, gs_model *m);
gs_status gs_model_import(gs_ctx *ctx, gs_model *m) {
    if (!m) return gs_err(ctx, GS_ERR_INVALID_ARG, "gs_model_import: NULL model");
    gs_arena_free(&m->parena);
    m->ptab = NULL;
    m->ptabcap = 0;
    int ones = 0;
    for (int k = 0; k < m->ndims; k++) ones |= m->dim_val[k] == 1;
    if (ones) { /* the probe first: the dims bound to 1 at GS_ONNX_PROBE_DIM */
        gs_status s;
        int64_t *saved = malloc((size_t)m->ndims * sizeof *saved);
        if (!saved) return gs_err(ctx, GS_ERR_NOMEM, "out of memory importing the model");
        for (int k = 0; k < m->ndims; k++) {
            saved[k] = m->dim_val[k];
            if (m->dim_val[k] == 1) m->dim_val[k] = GS_ONNX_PROBE_DIM;
        }
        s = import_once(NULL, m);
        for (int k = 0; k < m->ndims; k++) m->dim_val[k] = saved[k];
        free(saved);
        if (s == GS_OK) { /* keep its shapes: the real import starts a fresh arena */
            m->parena = m->iarena;
            m->ptab = m->tab;
            m->ptabcap = m->tabcap;
            memset(&m->iarena, 0, sizeof m->iarena);
        }
    }
    return import_once(ctx, m);
}
static gs_status import_once(gs_ctx *ctx, gs_model *m) {
    gs_arena_free(&m->iarena);
    gs_arena_init(&m->iarena, 1 << 16);
    m->imported = 0;
    m->filled = 0;
    size_t names = (size_t)m->ninit + (size_t)m->ninputs + 2 * (size_t)m->nnodes + 16;
    for (int i = 0; i < m->nnodes; i++) names += (size_t)m->nodes[i].nout;
    m->tabcap = 64;
    while (m->tabcap < 2 * names) m->tabcap *= 2;
    m->tab = gs_arena_alloc(&m->iarena, m->tabcap * sizeof *m->tab);
    m->out = gs_arena_alloc(&m->iarena, (size_t)(m->nnodes ? m->nnodes : 1) * sizeof *m->out);
    m->ops = gs_arena_alloc(&m->iarena, (size_t)(m->nnodes ? m->nnodes : 1) * sizeof *m->ops);
    if (!m->tab || !m->out || !m->ops) return gs_err(ctx, GS_ERR_NOMEM, "out of memory importing the model");
    /* every name first: initializers, inputs, node outputs; then who reads what */
    for (int i = 0; i < m->ninit; i++) {
        tinfo *t = tab(m, m->init[i].name, 1);
        if (!t) continue;
        t->ndim = m->init[i].ndim;
        memcpy(t->dims, m->init[i].dims, sizeof t->dims);
        t->dtype = m->init[i].dtype;
        t->c = &m->init[i];
    }
    for (int i = 0; i < m->ninputs; i++) {
        tinfo *t = tab(m, m->inputs[i].name, 1);
        if (!t || t->c) continue; /* an input with an initializer is a constant with a default */
        gs_status s = bind_input(ctx, m, &m->inputs[i], t);
        if (s != GS_OK) return s;
    }
    for (int i = 0; i < m->nnodes; i++)
        for (int k = 0; k < m->nodes[i].nout; k++) tab(m, m->nodes[i].out[k], 1);
    for (int i = 0; i < m->nnodes; i++)
        for (int k = 0; k < m->nodes[i].nin; k++) {
            tinfo *t = tab(m, m->nodes[i].in[k], 0);
            if (t) {
                t->uses++;
                t->consumer = i;
            }
        }
    for (int i = 0; i < m->noutputs; i++) {
        tinfo *t = tab(m, m->outputs[i].name, 0);
        if (t) t->uses++;
    }
    for (int i = 0; i < m->nnodes; i++) {
        m->out[i].name = m->nodes[i].name;
        m->out[i].op_type = m->nodes[i].op_type;
        m->out[i].kind = GS_MODEL_UNSUPPORTED; /* pending: no reason yet */
        m->out[i].fused_into = -1;
    }
    for (int i = 0; i < m->nnodes; i++) {
        gs_model_node *o = &m->out[i];
        if (o->kind == GS_MODEL_FUSED) continue;
        imp c = {ctx, m, i, &m->nodes[i], {0, 0}, 0, DT_FLOAT};
        const char *dom = c.n->domain;
        const imp_def *d = NULL;
        for (size_t k = 0; k < sizeof imp_defs / sizeof imp_defs[0] && (!*dom || !strcmp(dom, "ai.onnx")); k++)
            if (!strcmp(imp_defs[k].op_type, c.n->op_type)) d = &imp_defs[k];
        if (node_float_type(&c) < 0) continue; /* mixed types: unsupported with the reason */
        const fold_def *fd = fold_find(&c);
        if (fd) fd->fn(&c);
        else if (d) d->fn(&c);
        else if ((!*dom || !strcmp(dom, "ai.onnx")) && un_find(c.n->op_type)) imp_unary(&c);
        else if (*dom && strcmp(dom, "ai.onnx")) unsup(&c, "operator %s of domain '%s' (only the ONNX domain)", c.n->op_type, dom);
        else unsup(&c, "operator %s is not mapped to gensor yet", *c.n->op_type ? c.n->op_type : "(empty)");
        if (o->kind == GS_MODEL_UNSUPPORTED) {
            /* the model's own shape annotations carry its outputs on */
            for (int k = 0; k < c.n->nout; k++) {
                tinfo *t = tab(m, c.n->out[k], 0);
                for (int v = 0; t && t->ndim < 0 && v < m->nvinfo + m->noutputs; v++) {
                    const ovalue *ov = v < m->nvinfo ? &m->vinfo[v] : &m->outputs[v - m->nvinfo];
                    if (strcmp(ov->name, t->name)) continue;
                    tinfo tmp = *t;
                    if (bind_input(NULL, m, ov, &tmp) == GS_OK) *t = tmp;
                }
            }
        }
    }
    m->imported = 1;
    return GS_OK;
}

gs_status gs_model_node_get(gs_ctx *ctx, const gs_model *m, int i, gs_model_node *out) {
    if (!m || !out) return gs_err(ctx, GS_ERR_INVALID_ARG, "gs_model_node_get: NULL model or out");
    if (!m->imported) return gs_err(ctx, GS_ERR_INVALID_ARG, "gs_model_node_get: import the model first (gs_model_import)");
    if (i < 0 || i >= m->nnodes)
        return gs_err(ctx, GS_ERR_INVALID_ARG, "gs_model_node_get: node %d of %d", i, m->nnodes);
    *out = m->out[i];
    return GS_OK;
}

gs_status gs_model_constant(gs_ctx *ctx, const gs_model *m, const char *name, const float **data, int64_t *n) {
    if (!m || !name || !data || !n) return gs_err(ctx, GS_ERR_INVALID_ARG, "gs_model_constant: NULL argument");
    *data = NULL;
    *n = 0;
    if (!m->imported) return gs_err(ctx, GS_ERR_INVALID_ARG, "gs_model_constant: import the model first (gs_model_import)");
    tinfo *t = tab((gs_model *)m, name, 0);
    if (!t || !t->c) return gs_err(ctx, GS_ERR_INVALID_ARG, "'%s' is not a constant of the model", name);
    if (!t->c->f)
        return gs_err(ctx, GS_ERR_UNSUPPORTED, "constant '%s' is %s, not a floating type", name, dtype_name(t->c->dtype));
    *data = t->c->f;
    *n = t->c->n;
    return GS_OK;
}

gs_status gs_model_constant_ints(gs_ctx *ctx, const gs_model *m, const char *name, const int64_t **data, int64_t *n) {
    if (!m || !name || !data || !n) return gs_err(ctx, GS_ERR_INVALID_ARG, "gs_model_constant_ints: NULL argument");
    *data = NULL;
    *n = 0;
    if (!m->imported) return gs_err(ctx, GS_ERR_INVALID_ARG, "gs_model_constant_ints: import the model first");
    const tinfo *t = tab((gs_model *)m, name, 0);
    if (!ivals(t)) return gs_err(ctx, GS_ERR_INVALID_ARG, "'%s' is not an integer constant of the model", name);
    *data = t->c->i;
    *n = t->c->n;
    return GS_OK;
}

gs_status gs_model_tensor_dtype(gs_ctx *ctx, const gs_model *m, const char *name, gs_dtype *out) {
    if (!m || !name || !out) return gs_err(ctx, GS_ERR_INVALID_ARG, "gs_model_tensor_dtype: NULL argument");
    *out = GS_DTYPE_F32;
    if (!m->imported) return gs_err(ctx, GS_ERR_INVALID_ARG, "gs_model_tensor_dtype: import the model first (gs_model_import)");
    tinfo *t = tab((gs_model *)m, name, 0);
    if (!t || t->ndim < 0) return gs_err(ctx, GS_ERR_INVALID_ARG, "'%s' is not a tensor of the model with a known type", name);
    if (t->c && t->c->f && t->dtype == DT_DOUBLE) return GS_OK; /* read as fp32 */
    if (!dt_float(t->dtype))
        return gs_err(ctx, GS_ERR_UNSUPPORTED, "tensor '%s' is %s, not FLOAT, FLOAT16 or BFLOAT16", name,
                      dtype_name(t->dtype));
    *out = dt_gs(t->dtype);
    return GS_OK;
}
