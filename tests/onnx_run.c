/* onnx_nodes.c — the ONNX backend node tests (tests/onnx/gen_nodes.py
 * writes them from the `onnx` package's generators) through gensor's public
 * API: each test's model is loaded and imported (gs_model_*), every kernel
 * node constructed (gs_construct) and its top candidate run on the OpenCL
 * device (gs_kernel_run) fed by the node's bindings, and each graph output
 * compared with ONNX's expected output at the test's own tolerance
 * (|got - want| <= atol + rtol |want|, NaN equal to NaN, as numpy's
 * assert_allclose).
 *
 *   onnx_nodes [--hw NAME] [--status FILE] [--write-status FILE] [-v] DIR...
 *
 * DIR is a test directory or a directory of them. Each test ends as
 *   pass          every output within tolerance;
 *   unsupported   a node the import does not map, an input that is not
 *                 FLOAT, FLOAT16 or BFLOAT16, data that are not tensors (the
 *                 reason says which);
 *   fail          anything else: a wrong value, a refused model, a failed run.
 * With --status, each result is checked against the expected status file
 * (lines "name pass|unsupported|fail [reason]", # comments): a test whose
 * status differs, or that the file does not list, is a mismatch and the
 * exit status is 1 (77: no OpenCL device, 2: bad usage). --write-status
 * writes the results in that form.
 *
 * The TensorProto files are read with the library's protobuf wire reader
 * (ir/onnx/onnx.h); everything else goes through include/gensor.h. */
#include "gensor.h"
#include "ir/onnx/onnx.h"

#include <dirent.h>
#include <jansson.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

enum { ST_PASS, ST_UNSUP, ST_FAIL };
static const char *const st_name[] = {"pass", "unsupported", "fail"};

/* ---- named tensors ------------------------------------------------------------- */
typedef struct ten {
    char *name;
    float *data; /* owned unless alias */
    int64_t n;
    int alias;
} ten;
typedef struct store {
    ten *t;
    int n, cap;
} store;

static ten *find(store *s, const char *name) {
    for (int i = s->n - 1; i >= 0; i--)
        if (!strcmp(s->t[i].name, name)) return &s->t[i];
    return NULL;
}
static void put(store *s, const char *name, float *data, int64_t n, int alias) {
    if (s->n == s->cap) {
        s->cap = s->cap ? 2 * s->cap : 16;
        s->t = realloc(s->t, (size_t)s->cap * sizeof *s->t);
        if (!s->t) abort();
    }
    s->t[s->n++] = (ten){strdup(name), data, n, alias};
}
static void store_free(store *s) {
    for (int i = 0; i < s->n; i++) {
        if (!s->t[i].alias) free(s->t[i].data);
        free(s->t[i].name);
    }
    free(s->t);
    memset(s, 0, sizeof *s);
}

/* ---- a TensorProto file -------------------------------------------------------- */
typedef struct tproto {
    char name[256];
    int dtype;
    int ndim;
    int64_t dims[GS_ONNX_MAX_RANK];
    float *data; /* FLOAT, FLOAT16 and BFLOAT16 (exact floats) only */
    int64_t *ints; /* INT64, INT32 and BOOL only */
    int64_t n;
} tproto;

/* INT32, INT64, BOOL: what the import folds (shapes and what is made of them). */
static int int_type(int t) { return t == 6 || t == 7 || t == 9; }

/* An integer TensorProto's values: raw_data (esz bytes each, little-endian)
 * or the typed values iv[0..ni); 0, or -1 when their count is not n. */
static int tproto_ints(tproto *t, const uint8_t *raw, size_t raw_len, const int64_t *iv, int64_t ni) {
    size_t esz = t->dtype == 7 ? 8 : t->dtype == 6 ? 4 : 1;
    if (raw ? (int64_t)raw_len != (int64_t)esz * t->n : ni != t->n) return -1;
    t->ints = malloc((size_t)(t->n ? t->n : 1) * sizeof *t->ints);
    if (!t->ints) abort();
    for (int64_t i = 0; i < t->n; i++) {
        uint64_t v = 0;
        for (size_t b = esz; raw && b-- > 0;) v = v << 8 | raw[(size_t)i * esz + b];
        int64_t x = raw ? (int64_t)v : iv[i];
        t->ints[i] = t->dtype == 6 ? (int64_t)(int32_t)(uint32_t)x : t->dtype == 9 ? x != 0 : x;
    }
    return 0;
}

static unsigned char *slurp(const char *path, size_t *n) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long len = ftell(f);
    fseek(f, 0, SEEK_SET);
    unsigned char *b = malloc(len > 0 ? (size_t)len : 1);
    if (!b || fread(b, 1, (size_t)len, f) != (size_t)len) {
        free(b);
        b = NULL;
    }
    fclose(f);
    *n = (size_t)len;
    return b;
}

/* 0 read (data only for FLOAT, FLOAT16 and BFLOAT16), -1 malformed: why says what. */
static int read_tproto(const char *path, tproto *t, char *why, size_t nwhy) {
    memset(t, 0, sizeof *t);
    size_t len;
    unsigned char *b = slurp(path, &len);
    if (!b) {
        snprintf(why, nwhy, "cannot read %.300s", path);
        return -1;
    }
    gs_pb pb;
    gs_pb_init(&pb, b, len);
    gs_pb_field f;
    const uint8_t *raw = NULL;
    size_t raw_len = 0;
    int64_t nf = 0, capf = 0, nh = 0, caph = 0;
    float *fd = NULL;
    uint16_t *hd = NULL; /* int32_data: a 16-bit type's words */
    int64_t *iv = NULL;  /* int32_data or int64_data: an integer type's values */
    int r, bad = 0;
    while (!bad && (r = gs_pb_next(&pb, &f)) == 1) {
        uint64_t v;
        gs_pb it;
        if (f.num == 1) { /* dims */
            memset(&it, 0, sizeof it);
            while ((r = gs_pb_repeated(&f, GS_PB_VARINT, &it, &v)) == 1)
                if (t->ndim < GS_ONNX_MAX_RANK) t->dims[t->ndim++] = (int64_t)v;
                else bad = 1;
            if (r < 0) bad = 1;
        } else if (f.num == 2 && f.wire == GS_PB_VARINT) {
            t->dtype = (int)f.v;
        } else if (f.num == 4) { /* float_data */
            memset(&it, 0, sizeof it);
            while ((r = gs_pb_repeated(&f, GS_PB_FIXED32, &it, &v)) == 1) {
                if (nf == capf) {
                    capf = capf ? 2 * capf : 64;
                    fd = realloc(fd, (size_t)capf * sizeof *fd);
                    if (!fd) abort();
                }
                fd[nf++] = gs_pb_f32(v);
            }
            if (r < 0) bad = 1;
        } else if (f.num == 5 || f.num == 7) { /* int32_data, int64_data */
            memset(&it, 0, sizeof it);
            while ((r = gs_pb_repeated(&f, GS_PB_VARINT, &it, &v)) == 1) {
                if (nh == caph) {
                    caph = caph ? 2 * caph : 64;
                    hd = realloc(hd, (size_t)caph * sizeof *hd);
                    iv = realloc(iv, (size_t)caph * sizeof *iv);
                    if (!hd || !iv) abort();
                }
                iv[nh] = (int64_t)v;
                hd[nh++] = (uint16_t)v; /* FLOAT16, BFLOAT16: the low 16 bits */
            }
            if (r < 0) bad = 1;
        } else if (f.num == 8 && f.wire == GS_PB_LEN) {
            snprintf(t->name, sizeof t->name, "%.*s", (int)(f.len < 255 ? f.len : 255), (const char *)f.data);
        } else if (f.num == 9 && f.wire == GS_PB_LEN) {
            raw = f.data;
            raw_len = f.len;
        }
    }
    if (r < 0 || bad) {
        snprintf(why, nwhy, "%.300s: malformed TensorProto", path);
        free(fd);
        free(hd);
        free(iv);
        free(b);
        return -1;
    }
    t->n = 1;
    for (int d = 0; d < t->ndim; d++) t->n *= t->dims[d];
    if (t->dtype == 1) {
        if (raw) {
            if ((int64_t)raw_len != 4 * t->n) bad = 1;
            else {
                t->data = malloc((size_t)(t->n ? t->n : 1) * sizeof(float));
                if (!t->data) abort();
                memcpy(t->data, raw, raw_len); /* little-endian host assumed, as onnx's own readers do */
            }
        } else if (nf == t->n) {
            t->data = fd;
            fd = NULL;
        } else
            bad = 1;
        if (bad) snprintf(why, nwhy, "%.300s: %lld elements by its dims, data of another size", path, (long long)t->n);
    } else if (t->dtype == 10 || t->dtype == 16) { /* FLOAT16, BFLOAT16: 2-byte raw or int32_data words */
        gs_dtype ht = t->dtype == 10 ? GS_DTYPE_F16 : GS_DTYPE_BF16;
        if (raw ? (int64_t)raw_len != 2 * t->n : nh != t->n) {
            bad = 1;
            snprintf(why, nwhy, "%.300s: %lld elements by its dims, data of another size", path, (long long)t->n);
        } else {
            t->data = malloc((size_t)(t->n ? t->n : 1) * sizeof(float));
            if (!t->data) abort();
            if (raw) { /* the words, aligned */
                free(hd);
                hd = malloc(raw_len ? raw_len : 2);
                if (!hd) abort();
                memcpy(hd, raw, raw_len); /* little-endian host assumed, as for FLOAT */
            }
            gs_dtype_convert(NULL, ht, hd, GS_DTYPE_F32, t->data, t->n); /* exact */
        }
    } else if (int_type(t->dtype) && tproto_ints(t, raw, raw_len, iv, nh) < 0) {
        bad = 1;
        snprintf(why, nwhy, "%.300s: %lld elements by its dims, data of another size", path, (long long)t->n);
    }
    free(fd);
    free(hd);
    free(iv);
    free(b);
    return bad ? -1 : 0;
}

/* FLOAT, FLOAT16, BFLOAT16: what a kernel reads and writes. */
static int float_type(int t) { return t == 1 || t == 10 || t == 16; }

static const char *dtype_str(int t) {
    static const char *const n[] = {"UNDEFINED", "FLOAT", "UINT8", "INT8", "UINT16", "INT16", "INT32", "INT64",
                                    "STRING", "BOOL", "FLOAT16", "DOUBLE", "UINT32", "UINT64", "COMPLEX64",
                                    "COMPLEX128", "BFLOAT16"};
    return t >= 0 && t < (int)(sizeof n / sizeof n[0]) ? n[t] : "another type";
}

/* ---- one test -------------------------------------------------------------------- */
typedef struct runner {
    gs_ctx *ctx;
    gs_device *dev;
    gs_hw *hw;
    int verbose;
    int kernels; /* kernels run over all tests */
} runner;

typedef struct outcome {
    int st;
    char why[512];
} outcome;

static int set(outcome *o, int st, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int set(outcome *o, int st, const char *fmt, ...) {
    o->st = st;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(o->why, sizeof o->why, fmt, ap);
    va_end(ap);
    for (char *p = o->why; *p; p++)
        if (*p == '\n' || *p == '\t') *p = ' ';
    return st;
}

static int file_exists(const char *p) {
    struct stat sb;
    return stat(p, &sb) == 0;
}

/* One kernel's buffers: the tensor each binds, constant or output. */
typedef struct kbind {
    const char *tensor;
    int constant, output;
} kbind;
/* A constant's data by name (NULL when there is none). */
typedef const float *(*const_fn)(void *u, const char *name, int64_t *n);

/* Run candidate 0 of r on op with the buffers b[0..nb): inputs from the
 * store, constants from cf, the output (initialised from out_init when
 * given) put into the store. The store holds floats; each buffer is made in
 * its type (gs_op_buffer_dtype: f16 and bf16 rounded to nearest even by
 * gs_dtype_convert, exact for a half model's own tensors) and the output
 * read back as floats (exact). 1 done, 0 failed (o says why). */
static int launch(runner *R, const char *who, const gs_op *op, const gs_result *r, const kbind *b, int nb,
                  const char *out_init, store *st, const_fn cf, void *cu, outcome *o) {
    gs_ctx *ctx = R->ctx;
    gs_kernel *k = NULL;
    gs_buffer *bufs[GS_MAX_TENSORS + 2] = {0};
    float *out = NULL;
    void *typed = NULL; /* a buffer's host data in its type */
    int64_t on = 0;
    int oi = -1, ok = 0;
    if (nb > (int)(sizeof bufs / sizeof bufs[0])) {
        set(o, ST_FAIL, "%s: %d bindings", who, nb);
        return 0;
    }
    if (gs_kernel_create(ctx, r, 0, GS_DIALECT_OPENCL, 0, &k) != GS_OK) {
        set(o, ST_FAIL, "%s: kernel: %s", who, gs_ctx_errmsg(ctx));
        goto done;
    }
    for (int i = 0; i < nb; i++) {
        int64_t n = gs_op_buffer_elems(op, i), have = 0;
        const float *host = NULL;
        if (b[i].output) {
            oi = i;
            on = n;
            out = calloc((size_t)(n ? n : 1), sizeof *out);
            if (!out) abort();
            if (out_init) {
                ten *t = find(st, out_init);
                const float *init = t ? t->data : cf(cu, out_init, &have);
                if (t) have = t->n;
                if (!init || have != n) {
                    set(o, ST_FAIL, "%s: the output's initial tensor '%s' is %s", who, out_init,
                        init ? "of another size" : "neither written nor a constant");
                    goto done;
                }
                memcpy(out, init, (size_t)n * sizeof *out);
            }
            host = out;
            have = n;
        } else if (b[i].constant) {
            if (!(host = cf(cu, b[i].tensor, &have))) {
                set(o, ST_FAIL, "%s: no constant '%s'", who, b[i].tensor);
                goto done;
            }
        } else {
            ten *t = find(st, b[i].tensor);
            if (!t) {
                set(o, ST_FAIL, "%s: '%s' was not written before it is read", who, b[i].tensor);
                goto done;
            }
            host = t->data;
            have = t->n;
        }
        if (have != n) {
            set(o, ST_FAIL, "%s: '%s' holds %lld elements, buffer %s takes %lld", who, b[i].tensor, (long long)have,
                gs_op_buffer_name(op, i), (long long)n);
            goto done;
        }
        gs_dtype bt = gs_op_buffer_dtype(op, i);
        size_t bytes = (size_t)(n ? n : 1) * (size_t)gs_dtype_bytes(bt);
        if (!(typed = malloc(bytes))) abort();
        gs_dtype_convert(NULL, GS_DTYPE_F32, host, bt, typed, n);
        gs_status bs = gs_buffer_create(ctx, R->dev, bytes, typed, &bufs[i]);
        free(typed);
        typed = NULL;
        if (bs != GS_OK) {
            set(o, ST_FAIL, "%s: buffer: %s", who, gs_ctx_errmsg(ctx));
            goto done;
        }
    }
    if (oi < 0) {
        set(o, ST_FAIL, "%s: no output binding", who);
        goto done;
    }
    gs_dtype ot = gs_op_buffer_dtype(op, oi);
    if (!(typed = malloc((size_t)(on ? on : 1) * (size_t)gs_dtype_bytes(ot)))) abort();
    if (gs_kernel_run(ctx, R->dev, k, op, bufs, nb, NULL) != GS_OK ||
        gs_buffer_read(ctx, bufs[oi], typed, (size_t)on * (size_t)gs_dtype_bytes(ot)) != GS_OK) {
        set(o, ST_FAIL, "%s: run %s: %s", who, gs_op_spec(op), gs_ctx_errmsg(ctx));
        goto done;
    }
    gs_dtype_convert(NULL, ot, typed, GS_DTYPE_F32, out, on);
    put(st, b[oi].tensor, out, on, 0);
    out = NULL;
    R->kernels++;
    ok = 1;
done:
    free(out);
    free(typed);
    for (int i = 0; i < nb; i++) gs_buffer_destroy(bufs[i]);
    gs_kernel_destroy(k);
    return ok;
}

static const float *model_constant(void *u, const char *name, int64_t *n) {
    const float *d = NULL;
    return gs_model_constant(NULL, (const gs_model *)u, name, &d, n) == GS_OK ? d : NULL;
}

/* Run one kernel node of an imported model: construct, then launch. */
static int run_kernel(runner *R, gs_model *m, const gs_model_node *nd, store *st, outcome *o) {
    gs_construct_opts co;
    gs_construct_opts_default(&co);
    co.top_k = 1;
    co.conv_form = GS_FORM_AUTO; /* as the CLI: a 1x1 conv may run as its matmul form */
    gs_result *r = NULL;
    if (gs_construct(R->ctx, nd->op, R->hw, &co, &r) != GS_OK)
        return set(o, ST_FAIL, "%s: construct %s: %s", nd->name, gs_op_spec(nd->op), gs_ctx_errmsg(R->ctx)), 0;
    kbind b[GS_MAX_TENSORS + 2];
    int nb = nd->nbindings < (int)(sizeof b / sizeof b[0]) ? nd->nbindings : (int)(sizeof b / sizeof b[0]);
    for (int i = 0; i < nb; i++) b[i] = (kbind){nd->bindings[i].tensor, nd->bindings[i].constant, nd->bindings[i].output};
    int ok = launch(R, nd->name, nd->op, r, b, nd->nbindings, nd->out_init, st, model_constant, m, o);
    gs_result_destroy(r);
    return ok;
}

/* ---- integer and scalar inputs become initializers -----------------------------------
 * gensor constructs kernels ahead of time, so the integer inputs that shape
 * a graph (a Reduce's axes, a Reshape's shape) and the scalars that
 * parameterise an operator (Clip's bounds) must be constants; a node test
 * feeds them as graph inputs. The model is rewritten with each such input's
 * TensorProto file appended to the graph's initializers (field 5 of
 * GraphProto, field 7 of ModelProto), as an ahead-of-time frontend freezes
 * them; the input stays listed (an input with an initializer is a constant). */
typedef struct wbuf {
    unsigned char *b;
    size_t n, cap;
} wbuf;
static void wb_put(wbuf *w, const void *p, size_t n) {
    if (w->n + n > w->cap) {
        while (w->n + n > w->cap) w->cap = w->cap ? 2 * w->cap : 4096;
        w->b = realloc(w->b, w->cap);
        if (!w->b) abort();
    }
    memcpy(w->b + w->n, p, n);
    w->n += n;
}
static void wb_varint(wbuf *w, uint64_t v) {
    unsigned char c[10];
    int k = 0;
    do {
        c[k++] = (unsigned char)((v & 0x7f) | (v > 0x7f ? 0x80 : 0));
        v >>= 7;
    } while (v);
    wb_put(w, c, (size_t)k);
}

/* model bytes mb[0..mn) with the frozen TensorProtos fz[i][0..fn[i]) added
 * to its graph; NULL when the model has no graph field or is malformed. */
static unsigned char *freeze(const unsigned char *mb, size_t mn, unsigned char **fz, size_t *fn, int nf, size_t *out_n) {
    gs_pb pb;
    gs_pb_init(&pb, mb, mn);
    gs_pb_field f;
    wbuf w = {0};
    int r, graphs = 0;
    const uint8_t *at = pb.p;
    while ((r = gs_pb_next(&pb, &f)) == 1) {
        if (f.num == 7 && f.wire == GS_PB_LEN) {
            size_t extra = 0;
            for (int i = 0; i < nf; i++) {
                wbuf t = {0};
                wb_varint(&t, fn[i]);
                extra += 1 + t.n + fn[i];
                free(t.b);
            }
            wb_varint(&w, 7u << 3 | GS_PB_LEN);
            wb_varint(&w, f.len + extra);
            wb_put(&w, f.data, f.len);
            for (int i = 0; i < nf; i++) {
                wb_varint(&w, 5u << 3 | GS_PB_LEN);
                wb_varint(&w, fn[i]);
                wb_put(&w, fz[i], fn[i]);
            }
            graphs++;
        } else
            wb_put(&w, at, (size_t)(pb.p - at));
        at = pb.p;
    }
    if (r < 0 || graphs != 1) {
        free(w.b);
        return NULL;
    }
    *out_n = w.n;
    return w.b;
}

/* Integer output w against the value the import folded for it: 1 when equal, else 0 with o set. */
static int int_output(const gs_model *m, const tproto *w, outcome *o) {
    const int64_t *v;
    int64_t n;
    if (gs_model_constant_ints(NULL, m, w->name, &v, &n) != GS_OK)
        return set(o, ST_FAIL, "output '%s' (%s) is not a value the import folded", w->name, dtype_str(w->dtype)), 0;
    if (n != w->n)
        return set(o, ST_FAIL, "output '%s' has %lld elements, ONNX's %lld", w->name, (long long)n, (long long)w->n), 0;
    for (int64_t e = 0; e < n; e++)
        if (v[e] != w->ints[e])
            return set(o, ST_FAIL, "output '%s'[%lld] is %lld, ONNX's %lld", w->name, (long long)e, (long long)v[e],
                       (long long)w->ints[e]),
                   0;
    return 1;
}

static int run_test(runner *R, const char *dir, outcome *o) {
    char p[4096];
    gs_ctx *ctx = R->ctx;
    snprintf(p, sizeof p, "%s/not_tensors", dir);
    if (file_exists(p)) return set(o, ST_UNSUP, "inputs or outputs are not tensors (sequence, map or optional)");
    double rtol = 1e-3, atol = 1e-7;
    snprintf(p, sizeof p, "%s/tol.txt", dir);
    FILE *tf = fopen(p, "r");
    if (tf) {
        if (fscanf(tf, "%lf %lf", &rtol, &atol) != 2) rtol = 1e-3, atol = 1e-7;
        fclose(tf);
    }
    store st = {0};
    tproto io[64];
    int nin = 0, nout = 0, ntp = 0;
    gs_model *m = NULL;
    /* the data first: every input_J.pb then every output_J.pb of test_data_set_0 */
    unsigned char *fz[64];
    size_t fzn[64];
    int nfz = 0;
    for (int role = 0; role < 2; role++)
        for (int j = 0; ntp < 64; j++) {
            snprintf(p, sizeof p, "%s/test_data_set_0/%s_%d.pb", dir, role ? "output" : "input", j);
            if (!file_exists(p)) break;
            char why[512];
            if (read_tproto(p, &io[ntp], why, sizeof why)) {
                set(o, ST_FAIL, "%s", why);
                goto done;
            }
            if (!role && (int_type(io[ntp].dtype) || (float_type(io[ntp].dtype) && io[ntp].ndim == 0)))
                /* INT64, INT32, BOOL and floating scalars (Clip's bounds): frozen */
                fz[nfz] = slurp(p, &fzn[nfz]), nfz++;
            ntp++;
            role ? nout++ : nin++;
        }
    if (nout == 0) {
        set(o, ST_FAIL, "no expected outputs in %.300s/test_data_set_0", dir);
        goto done;
    }
    snprintf(p, sizeof p, "%s/model.onnx", dir);
    size_t mn = 0, fmn = 0;
    unsigned char *mb = slurp(p, &mn), *fmb = NULL;
    if (mb && nfz) fmb = freeze(mb, mn, fz, fzn, nfz, &fmn);
    gs_status ls = !mb            ? gs_model_load(ctx, p, &m)
                   : nfz && fmb ? gs_model_load_buffer(ctx, fmb, fmn, dir, &m)
                                  : gs_model_load_buffer(ctx, mb, mn, dir, &m);
    free(mb);
    free(fmb);
    for (int i = 0; i < nfz; i++) free(fz[i]);
    if (ls != GS_OK) {
        set(o, ST_FAIL, "load: %s", gs_ctx_errmsg(ctx));
        goto done;
    }
    if (gs_model_import(ctx, m) != GS_OK) { /* e.g. an empty tensor: gensor's extents are >= 1 */
        set(o, ST_UNSUP, "import: %s", gs_ctx_errmsg(ctx));
        goto done;
    }
    for (int i = 0; i < gs_model_num_nodes(m); i++) {
        gs_model_node nd;
        gs_model_node_get(ctx, m, i, &nd);
        if (nd.kind == GS_MODEL_UNSUPPORTED) {
            set(o, ST_UNSUP, "%s: %s", nd.op_type, nd.reason ? nd.reason : "not mapped");
            goto done;
        }
    }
    for (int i = 0; i < nin; i++) {
        if (int_type(io[i].dtype)) continue; /* frozen into the model */
        if (!float_type(io[i].dtype)) {
            set(o, ST_UNSUP, "input '%s' is %s (the kernels take FLOAT, FLOAT16 and BFLOAT16)", io[i].name,
                dtype_str(io[i].dtype));
            goto done;
        }
        put(&st, io[i].name, io[i].data, io[i].n, 1);
    }
    for (int i = nin; i < ntp; i++)
        if (!float_type(io[i].dtype) && !int_type(io[i].dtype)) {
            set(o, ST_UNSUP, "output '%s' is %s (the kernels write FLOAT, FLOAT16 and BFLOAT16; the import folds "
                "INT64, INT32 and BOOL)", io[i].name, dtype_str(io[i].dtype));
            goto done;
        }
    for (int i = 0; i < gs_model_num_nodes(m); i++) {
        gs_model_node nd;
        gs_model_node_get(ctx, m, i, &nd);
        if (nd.kind == GS_MODEL_VIEW) {
            if (nd.nbindings == 1 && nd.bindings[0].constant) {
                const float *c;
                int64_t n;
                /* a constant without fp32 data (an INT64 axes list) parameterises the
                 * import only; a kernel that binds it fails at launch ("no constant") */
                if (gs_model_constant(ctx, m, nd.bindings[0].tensor, &c, &n) != GS_OK) continue;
                put(&st, nd.bindings[0].tensor, (float *)c, n, 1);
            } else if (nd.nbindings == 2) {
                ten *t = find(&st, nd.bindings[0].tensor);
                const float *c = NULL;
                int64_t n = 0;
                if (t) c = t->data, n = t->n;
                else if (gs_model_constant(ctx, m, nd.bindings[0].tensor, &c, &n) != GS_OK) {
                    set(o, ST_FAIL, "%s: view of '%s', not written before", nd.name, nd.bindings[0].tensor);
                    goto done;
                }
                put(&st, nd.bindings[1].tensor, (float *)c, n, 1);
            } else {
                set(o, ST_FAIL, "%s: a view with %d bindings", nd.name, nd.nbindings);
                goto done;
            }
        } else if (nd.kind == GS_MODEL_KERNEL) {
            if (!run_kernel(R, m, &nd, &st, o)) goto done;
        }
    }
    double worst_all = 0; /* max over the outputs of max|d| / max|want| */
    for (int i = nin; i < ntp; i++) {
        const tproto *w = &io[i];
        if (int_type(w->dtype)) {
            if (!int_output(m, w, o)) goto done;
            continue;
        }
        ten *t = find(&st, w->name);
        if (!t) {
            set(o, ST_FAIL, "output '%s' was not written", w->name);
            goto done;
        }
        if (t->n != w->n) {
            set(o, ST_FAIL, "output '%s' has %lld elements, ONNX's %lld", w->name, (long long)t->n, (long long)w->n);
            goto done;
        }
        int64_t bad = 0, first = -1;
        double worst = 0, dmax = 0, big = 0;
        for (int64_t e = 0; e < w->n; e++) {
            double got = t->data[e], want = w->data[e];
            if (isfinite(want)) big = fmax(big, fabs(want));
            if ((isnan(want) && isnan(got)) || got == want) continue; /* equal infinities too, as numpy's */
            double d = fabs(got - want);
            if (d > dmax) dmax = d;
            if (!(d <= atol + rtol * fabs(want))) { /* NaN on one side only fails */
                if (first < 0) first = e;
                bad++;
                if (!(d <= worst)) worst = d;
            }
        }
        if (bad) {
            set(o, ST_FAIL, "output '%s': %lld of %lld elements outside rtol %g atol %g (first [%lld] %g, want %g; worst |d| %g)",
                w->name, (long long)bad, (long long)w->n, rtol, atol, (long long)first, (double)t->data[first],
                (double)w->data[first], worst);
            goto done;
        }
        worst_all = fmax(worst_all, big > 0 ? dmax / big : dmax);
    }
    set(o, ST_PASS, "%d outputs within rtol %g atol %g (worst |d|/max|want| %.3g)", nout, rtol, atol, worst_all);
done:
    store_free(&st);
    for (int i = 0; i < ntp; i++) {
        free(io[i].data);
        free(io[i].ints);
    }
    gs_model_destroy(m);
    return o->st;
}

/* ---- a model from its manifest (gensor import --construct) ------------------------------
 * onnx_run --manifest MDIR DATA: DATA/inputs/NAME.pb are the graph inputs,
 * DATA/expected/NAME.pb the reference values of any tensors (ONNX Runtime's, by
 * experiments/onnx_ort_check.py). Each kernel node is rebuilt from its
 * manifest entry alone: its spec's config (gs_construct_config), or for a
 * 1x1 conv kept as its matmul form the same construction again, checked to
 * give the config and kernel the manifest names; then launched with the
 * manifest's bindings, the constants read from weights.bin. A tensor that no
 * node before has written (one an unsupported node makes) is taken from
 * DATA/expected ("fed"); every kernel output with a reference is compared:
 * |got - want| <= rtol |want| + atol max|want|.
 *
 * With --dim NAME=N (a symbolic dim of the manifest's "dims" bound to another
 * size, e.g. seq=13 for a manifest constructed at seq=8), the model (the
 * manifest's "model", or --model PATH) is imported again at the manifest's
 * dims with these changed, and each kernel the manifest names, rebuilt for
 * the manifest's spec as above, is launched on the operator the model's node
 * of the same index and name has at the new dims (gs_kernel_run takes another
 * shape of the kernel's operator: its extents are arguments), its buffers
 * sized for that shape. A node whose kind, name or bindings differ at the new
 * dims, a constant whose size changes with them, or an operator that is not a
 * shape of the kernel's fails the run with the reason. */
typedef struct wts {
    json_t *index;
    float *data;
    int64_t n;
} wts;
static const float *weights_constant(void *u, const char *name, int64_t *n) {
    wts *w = u;
    json_t *e = json_object_get(w->index, name);
    if (!e) return NULL;
    int64_t off = json_integer_value(json_object_get(e, "offset")), el = json_integer_value(json_object_get(e, "elems"));
    if (off < 0 || off % 4 || el < 0 || off / 4 + el > w->n) return NULL;
    *n = el;
    return w->data + off / 4;
}

static int load_dir(const char *dir, store *st) {
    DIR *d = opendir(dir);
    if (!d) return 0;
    struct dirent *e;
    char p[4096], why[512];
    int n = 0;
    while ((e = readdir(d))) {
        size_t l = strlen(e->d_name);
        if (l < 4 || strcmp(e->d_name + l - 3, ".pb")) continue;
        snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
        tproto t;
        if (read_tproto(p, &t, why, sizeof why) || !float_type(t.dtype)) {
            free(t.data);
            free(t.ints);
            continue;
        }
        put(st, t.name, t.data, t.n, 0);
        n++;
    }
    closedir(d);
    return n;
}

/* The kernel of one manifest node, rebuilt; NULL with o set on failure. */
static gs_result *manifest_result(runner *R, const char *who, const gs_op *op, json_t *k, outcome *o) {
    const char *form = json_string_value(json_object_get(k, "form")), *cfg = json_string_value(json_object_get(k, "config"));
    const char *kname = json_string_value(json_object_get(k, "kernel_cl"));
    gs_result *r = NULL;
    if (!form || !cfg || !kname) return set(o, ST_FAIL, "%s: the kernel entry lacks form, config or kernel_cl", who), NULL;
    gs_status s;
    if (!strcmp(form, gs_op_spec(op))) {
        s = gs_construct_config(R->ctx, op, R->hw, cfg, &r);
    } else { /* a matmul form: constructed again as import did */
        gs_construct_opts co;
        gs_construct_opts_default(&co);
        co.top_k = 1;
        co.conv_form = GS_FORM_AUTO;
        s = gs_construct(R->ctx, op, R->hw, &co, &r);
    }
    if (s != GS_OK) return set(o, ST_FAIL, "%s: %s", who, gs_ctx_errmsg(R->ctx)), NULL;
    char got[512] = "";
    gs_kernel *k0 = NULL;
    gs_result_config(r, 0, got, sizeof got);
    if (gs_kernel_create(R->ctx, r, 0, GS_DIALECT_OPENCL, 0, &k0) != GS_OK || strcmp(gs_result_form(r), form) ||
        strcmp(got, cfg) || strcmp(gs_kernel_name(k0), kname)) {
        set(o, ST_FAIL, "%s: rebuilt as kernel %s config %s form %s; the manifest says %s config %s form %s", who,
            k0 ? gs_kernel_name(k0) : "?", got, gs_result_form(r), kname, cfg, form);
        gs_kernel_destroy(k0);
        gs_result_destroy(r);
        return NULL;
    }
    gs_kernel_destroy(k0);
    return r;
}

/* Compare tensor t with its reference w; 1 within tolerance. */
static int compare_ref(const char *name, const ten *t, const ten *w, double rtol, double atol, double *worst_rel) {
    double big = 0, worst = 0;
    for (int64_t e = 0; e < w->n; e++) big = fmax(big, fabs(w->data[e]));
    int ok = t->n == w->n;
    for (int64_t e = 0; ok && e < w->n; e++) {
        double d = fabs((double)t->data[e] - w->data[e]);
        if (!(d <= rtol * fabs(w->data[e]) + atol * big)) ok = 0;
        if (!(d <= worst)) worst = d;
    }
    *worst_rel = big > 0 ? worst / big : worst;
    if (!ok) printf("  %-40s %lld elements: |d| up to %.3g (max |want| %.3g)  FAIL\n", name, (long long)w->n, worst, big);
    return ok;
}

/* The model of a manifest imported again at its dims with the rebinds applied
 * (rebind[i] "NAME=N"); NULL (and a message on stderr) on failure. */
static gs_model *manifest_rebind(runner *R, json_t *man, const char *model, char **rebind, int nrebind) {
    const char *path = model ? model : json_string_value(json_object_get(man, "model"));
    json_t *dims = json_object_get(man, "dims");
    gs_model *m = NULL;
    if (!path) return fprintf(stderr, "onnx_run: the manifest names no model (give --model PATH)\n"), NULL;
    if (gs_model_load(R->ctx, path, &m) != GS_OK) {
        fprintf(stderr, "onnx_run: %s\n", gs_ctx_errmsg(R->ctx));
        return NULL;
    }
    const char *k;
    json_t *v;
    json_object_foreach(dims, k, v) {
        if (gs_model_bind_dim(R->ctx, m, k, json_integer_value(v)) != GS_OK) goto bad;
    }
    for (int i = 0; i < nrebind; i++) {
        char name[128];
        const char *eq = strchr(rebind[i], '=');
        char *end = NULL;
        long long n = eq ? strtoll(eq + 1, &end, 10) : 0;
        if (!eq || eq == rebind[i] || (size_t)(eq - rebind[i]) >= sizeof name || !end || *end || eq[1] == 0) {
            fprintf(stderr, "onnx_run: --dim %s: want NAME=N\n", rebind[i]);
            gs_model_destroy(m);
            return NULL;
        }
        snprintf(name, sizeof name, "%.*s", (int)(eq - rebind[i]), rebind[i]);
        if (!json_object_get(dims, name)) {
            fprintf(stderr, "onnx_run: --dim %s: the manifest's kernels were constructed with no dim '%s'\n",
                    rebind[i], name);
            gs_model_destroy(m);
            return NULL;
        }
        if (gs_model_bind_dim(R->ctx, m, name, n) != GS_OK) goto bad;
    }
    if (gs_model_import(R->ctx, m) == GS_OK) return m;
bad:
    fprintf(stderr, "onnx_run: %s: %s\n", path, gs_ctx_errmsg(R->ctx));
    gs_model_destroy(m);
    return NULL;
}

/* The operator manifest node nd (index i, bindings bj) runs on in the rebound
 * model m: its node i, checked to be the same kernel node with the same
 * bindings and constants of the sizes weights.bin holds; NULL with o set. */
static const gs_op *rebound_op(const gs_model *m, json_t *nd, json_t *bj, const wts *w, outcome *o) {
    const char *name = json_string_value(json_object_get(nd, "name"));
    json_int_t i = json_integer_value(json_object_get(nd, "node"));
    gs_model_node mn;
    if (i < 0 || i >= gs_model_num_nodes(m) || gs_model_node_get(NULL, m, (int)i, &mn) != GS_OK ||
        mn.kind != GS_MODEL_KERNEL || strcmp(mn.name, name))
        return set(o, ST_FAIL, "%s: node %lld of the model at the new dims is not this kernel node", name, (long long)i),
               NULL;
    if (mn.nbindings != (int)json_array_size(bj))
        return set(o, ST_FAIL, "%s: %d bindings at the new dims, %d in the manifest", name, mn.nbindings,
                   (int)json_array_size(bj)),
               NULL;
    for (int j = 0; j < mn.nbindings; j++) {
        json_t *x = json_array_get(bj, (size_t)j);
        const char *t = json_string_value(json_object_get(x, "tensor")) ?: "";
        if (strcmp(mn.bindings[j].tensor, t))
            return set(o, ST_FAIL, "%s: buffer %d binds '%s' at the new dims, '%s' in the manifest", name, j,
                       mn.bindings[j].tensor, t),
                   NULL;
        int64_t have = 0, now = 0;
        const float *built = mn.bindings[j].constant ? weights_constant((void *)w, t, &have) : NULL, *at = NULL;
        if (built && have != gs_op_buffer_elems(mn.op, j))
            return set(o, ST_FAIL, "%s: the constant '%s' has %lld elements in weights.bin and %lld at the new dims "
                       "(a constant that depends on the dims)", name, t, (long long)have,
                       (long long)gs_op_buffer_elems(mn.op, j)),
                   NULL;
        /* a constant the import computed from a dim (a Cast of a shape value) keeps its size
         * and changes its values: weights.bin's would be stale */
        if (built && gs_model_constant(NULL, m, t, &at, &now) == GS_OK && now == have &&
            memcmp(at, built, (size_t)have * sizeof *at))
            return set(o, ST_FAIL, "%s: the constant '%s' has other values at the new dims than in weights.bin "
                       "(a constant that depends on the dims)", name, t),
                   NULL;
    }
    return mn.op;
}

static int run_manifest(runner *R, const char *mdir, const char *data, double rtol, double atol, const char *model,
                        char **rebind, int nrebind) {
    char p[4096];
    snprintf(p, sizeof p, "%s/manifest.json", mdir);
    json_error_t je;
    json_t *man = json_load_file(p, 0, &je);
    if (!man) return fprintf(stderr, "onnx_run: %s:%d: %s\n", p, je.line, je.text), 2;
    const char *hwn = json_string_value(json_object_get(man, "hw"));
    gs_hw *hw = NULL;
    if (!hwn || gs_hw_load(R->ctx, hwn, &hw) != GS_OK)
        return fprintf(stderr, "onnx_run: the manifest's profile: %s\n", hwn ? gs_ctx_errmsg(R->ctx) : "none"), 2;
    gs_hw_destroy(R->hw);
    R->hw = hw;
    wts w = {json_object_get(man, "constants"), NULL, 0};
    snprintf(p, sizeof p, "%s/%s", mdir, json_string_value(json_object_get(man, "weights")) ?: "weights.bin");
    size_t wn = 0;
    unsigned char *wb = slurp(p, &wn);
    if (!wb && json_object_size(w.index)) return fprintf(stderr, "onnx_run: cannot read %s\n", p), 2;
    w.data = (float *)wb;
    w.n = (int64_t)(wn / 4);
    gs_model *rm = NULL;
    if (nrebind && !(rm = manifest_rebind(R, man, model, rebind, nrebind))) {
        free(wb);
        json_decref(man);
        return 2;
    }
    store st = {0}, ref = {0};
    snprintf(p, sizeof p, "%s/inputs", data);
    int nin = load_dir(p, &st);
    snprintf(p, sizeof p, "%s/expected", data);
    int nref = load_dir(p, &ref);
    int kernels = 0, compared = 0, bad = 0, fed = 0, failed = 0;
    double worst = 0;
    size_t i;
    json_t *nd;
    json_array_foreach(json_object_get(man, "nodes"), i, nd) {
        const char *kind = json_string_value(json_object_get(nd, "kind")), *name = json_string_value(json_object_get(nd, "name"));
        outcome o = {0};
        if (!kind || !name) continue;
        if (!strcmp(kind, "constant")) {
            const char *out = json_string_value(json_object_get(nd, "out"));
            int64_t n;
            const float *c = out ? weights_constant(&w, out, &n) : NULL;
            if (c) put(&st, out, (float *)c, n, 1);
        } else if (!strcmp(kind, "view")) {
            const char *in = json_string_value(json_object_get(nd, "in")), *out = json_string_value(json_object_get(nd, "out"));
            ten *t = in ? find(&st, in) : NULL;
            int64_t n = 0;
            const float *c = t ? t->data : in ? weights_constant(&w, in, &n) : NULL;
            if (!t && !c && in && (t = find(&ref, in))) fed++;
            if (t) c = t->data, n = t->n;
            if (c && out) put(&st, out, (float *)c, n, 1);
        } else if (!strcmp(kind, "kernel")) {
            json_t *bj = json_object_get(nd, "bindings");
            kbind b[GS_MAX_TENSORS + 2];
            int nb = (int)json_array_size(bj);
            gs_op *op = NULL;
            if (nb > (int)(sizeof b / sizeof b[0]) ||
                gs_op_parse(R->ctx, json_string_value(json_object_get(nd, "spec")) ?: "", &op) != GS_OK) {
                printf("  node %s: %s\n", name, nb > 8 ? "too many bindings" : gs_ctx_errmsg(R->ctx));
                failed++;
                continue;
            }
            for (int j = 0; j < nb; j++) {
                json_t *x = json_array_get(bj, (size_t)j);
                b[j] = (kbind){json_string_value(json_object_get(x, "tensor")) ?: "",
                               json_is_true(json_object_get(x, "constant")), json_is_true(json_object_get(x, "output"))};
                ten *t;
                if (!b[j].constant && !b[j].output && !find(&st, b[j].tensor) && (t = find(&ref, b[j].tensor))) {
                    put(&st, b[j].tensor, t->data, t->n, 1);
                    fed++;
                }
            }
            /* the kernel of the manifest's shape; launched on the rebound one */
            const gs_op *run_op = rm ? rebound_op(rm, nd, bj, &w, &o) : op;
            gs_result *r = run_op ? manifest_result(R, name, op, json_object_get(nd, "kernel"), &o) : NULL;
            if (!r || !launch(R, name, run_op, r, b, nb, json_string_value(json_object_get(nd, "out_init")), &st,
                              weights_constant, &w, &o)) {
                printf("  %s\n", o.why);
                failed++;
            } else {
                kernels++;
                for (int j = 0; j < nb; j++) {
                    ten *t = b[j].output ? find(&st, b[j].tensor) : NULL, *want = t ? find(&ref, b[j].tensor) : NULL;
                    double rel;
                    if (!want) continue;
                    compared++;
                    bad += !compare_ref(b[j].tensor, t, want, rtol, atol, &rel);
                    worst = fmax(worst, rel);
                }
            }
            gs_result_destroy(r);
            gs_op_destroy(op);
        }
    }
    char at[256] = "";
    for (int i = 0, l = 0; rm && i < nrebind && l < (int)sizeof at; i++)
        l += snprintf(at + l, sizeof at - (size_t)l, "%s%s", i ? "," : " at ", rebind[i]);
    printf("onnx_run: %s%s: %d kernels run (%d failed), %d outputs compared with %d references: %d outside rtol %g + "
           "atol %g max|want| (worst |d|/max|want| %.3g); %d inputs, %d tensors fed from the references\n",
           mdir, at, kernels, failed, compared, nref, bad, rtol, atol, worst, nin, fed);
    gs_model_destroy(rm);
    store_free(&st);
    store_free(&ref);
    free(wb);
    json_decref(man);
    return failed || bad || !compared ? 1 : 0;
}

/* ---- expected status ---------------------------------------------------------------- */
typedef struct expect {
    char name[160];
    int st;
    int seen;
} expect;

static int read_status(const char *path, expect **out, int *n) {
    FILE *f = fopen(path, "r");
    if (!f) {
        fprintf(stderr, "onnx_nodes: cannot read the status file %s\n", path);
        return -1;
    }
    char line[1024], name[160], s[32];
    int cap = 0, ln = 0;
    *out = NULL;
    *n = 0;
    while (fgets(line, sizeof line, f)) {
        ln++;
        if (line[0] == '#' || line[strspn(line, " \t\r\n")] == 0) continue;
        if (sscanf(line, "%159s %31s", name, s) != 2) {
            fprintf(stderr, "onnx_nodes: %s:%d: want 'name status [reason]'\n", path, ln);
            fclose(f);
            return -1;
        }
        int st = -1;
        for (int k = 0; k < 3; k++)
            if (!strcmp(s, st_name[k])) st = k;
        if (st < 0) {
            fprintf(stderr, "onnx_nodes: %s:%d: status '%s' (pass, unsupported, fail)\n", path, ln, s);
            fclose(f);
            return -1;
        }
        if (*n == cap) {
            cap = cap ? 2 * cap : 256;
            *out = realloc(*out, (size_t)cap * sizeof **out);
            if (!*out) abort();
        }
        expect *e = &(*out)[(*n)++];
        snprintf(e->name, sizeof e->name, "%s", name);
        e->st = st;
        e->seen = 0;
    }
    fclose(f);
    return 0;
}

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* The test directories under arg: arg itself when it holds model.onnx. */
static void collect(const char *arg, char ***list, int *n, int *cap) {
    char p[4096];
    snprintf(p, sizeof p, "%s/model.onnx", arg);
    if (file_exists(p)) {
        if (*n == *cap) *list = realloc(*list, (size_t)(*cap = *cap ? 2 * *cap : 256) * sizeof **list);
        (*list)[(*n)++] = strdup(arg);
        return;
    }
    DIR *d = opendir(arg);
    if (!d) {
        fprintf(stderr, "onnx_nodes: %s is neither a test directory nor a directory of them\n", arg);
        exit(2);
    }
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.') continue;
        snprintf(p, sizeof p, "%s/%s/model.onnx", arg, e->d_name);
        if (!file_exists(p)) continue;
        if (*n == *cap) *list = realloc(*list, (size_t)(*cap = *cap ? 2 * *cap : 256) * sizeof **list);
        snprintf(p, sizeof p, "%s/%s", arg, e->d_name);
        (*list)[(*n)++] = strdup(p);
    }
    closedir(d);
}

int main(int argc, char **argv) {
    const char *hwname = "rtx3090", *status = NULL, *write = NULL, *mdir = NULL, *mdata = NULL, *model = NULL;
    char *rebind[16];
    int nrebind = 0;
    double rtol = 1e-3, atol = 1e-4;
    int verbose = 0, a = 1;
    for (; a < argc && argv[a][0] == '-'; a++) {
        if (!strcmp(argv[a], "--hw") && a + 1 < argc) hwname = argv[++a];
        else if (!strcmp(argv[a], "--status") && a + 1 < argc) status = argv[++a];
        else if (!strcmp(argv[a], "--write-status") && a + 1 < argc) write = argv[++a];
        else if (!strcmp(argv[a], "-v")) verbose = 1;
        else if (!strcmp(argv[a], "--manifest") && a + 2 < argc) mdir = argv[++a], mdata = argv[++a];
        else if (!strcmp(argv[a], "--dim") && a + 1 < argc && nrebind < 16) rebind[nrebind++] = argv[++a];
        else if (!strcmp(argv[a], "--model") && a + 1 < argc) model = argv[++a];
        else if (!strcmp(argv[a], "--rtol") && a + 1 < argc) rtol = atof(argv[++a]);
        else if (!strcmp(argv[a], "--atol") && a + 1 < argc) atol = atof(argv[++a]);
        else {
            fprintf(stderr, "usage: onnx_run [--hw NAME] [--status FILE] [--write-status FILE] [-v] DIR...\n"
                            "       onnx_run [--hw NAME] [--rtol R] [--atol A] [--dim NAME=N ...] [--model PATH] "
                            "--manifest MDIR DATA\n");
            return 2;
        }
    }
    if (a == argc && !mdir) {
        fprintf(stderr, "onnx_nodes: no test directory given\n");
        return 2;
    }
    char **list = NULL;
    int n = 0, cap = 0;
    for (; a < argc; a++) collect(argv[a], &list, &n, &cap);
    if (n) qsort(list, (size_t)n, sizeof *list, cmp_str);
    expect *ex = NULL;
    int nex = 0;
    if (status && read_status(status, &ex, &nex)) return 2;
    runner R = {.ctx = gs_ctx_create(), .verbose = verbose};
    if (gs_hw_load(R.ctx, hwname, &R.hw) != GS_OK) {
        fprintf(stderr, "onnx_nodes: %s\n", gs_ctx_errmsg(R.ctx));
        return 2;
    }
    gs_status ds = gs_device_open(R.ctx, GS_BACKEND_OPENCL, 0, &R.dev);
    if (ds != GS_OK) { /* 77: no OpenCL device (tests/onnx_nodes.sh skips unless GS_REQUIRE_OPENCL=1) */
        fprintf(stderr, "onnx_nodes: %s\n", gs_ctx_errmsg(R.ctx));
        return ds == GS_ERR_OPENCL_MISSING ? 77 : 2;
    }
    if (mdir) {
        int rc = run_manifest(&R, mdir, mdata, rtol, atol, model, rebind, nrebind);
        gs_device_close(R.dev);
        gs_hw_destroy(R.hw);
        gs_ctx_destroy(R.ctx);
        return rc;
    }
    FILE *wf = write ? fopen(write, "w") : NULL;
    if (write && !wf) {
        fprintf(stderr, "onnx_nodes: cannot write %s\n", write);
        return 2;
    }
    if (wf)
        fprintf(wf, "# ONNX backend node tests through gensor (tests/onnx_nodes.c): name status [reason]\n"
                    "# status: pass | unsupported (reason) | fail (a known failure, reason)\n");
    int count[3] = {0}, mismatch = 0;
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (int i = 0; i < n; i++) {
        const char *name = strrchr(list[i], '/') ? strrchr(list[i], '/') + 1 : list[i];
        outcome o = {0};
        run_test(&R, list[i], &o);
        count[o.st]++;
        const char *mark = "";
        if (status) {
            expect *e = NULL;
            for (int k = 0; k < nex && !e; k++)
                if (!strcmp(ex[k].name, name)) e = &ex[k];
            if (!e) mark = "  <-- MISMATCH: not in the status file", mismatch++;
            else {
                e->seen = 1;
                if (e->st != o.st) {
                    mismatch++;
                    mark = o.st == ST_PASS ? "  <-- MISMATCH: passes now (update the status file)"
                                           : "  <-- MISMATCH: expected to pass";
                    if (e->st != ST_PASS && o.st != ST_PASS) mark = "  <-- MISMATCH: another status";
                    fprintf(stderr, "onnx_nodes: %s: expected %s, got %s: %s\n", name, st_name[e->st],
                            st_name[o.st], o.why);
                }
            }
        }
        if (verbose || *mark) printf("%-60s %-11s %s%s\n", name, st_name[o.st], o.why, mark);
        if (wf) fprintf(wf, "%s %s%s%s\n", name, st_name[o.st], o.st == ST_PASS ? "" : " ", o.st == ST_PASS ? "" : o.why);
        fflush(stdout);
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    if (wf) fclose(wf);
    printf("onnx_nodes: %d node tests: %d pass, %d unsupported, %d fail; %d kernels run on %s (%s profile), %.1f s\n", n,
           count[ST_PASS], count[ST_UNSUP], count[ST_FAIL], R.kernels, gs_device_name(R.dev), hwname,
           (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec));
    if (status) printf("onnx_nodes: %d differ from %s\n", mismatch, status);
    for (int i = 0; i < n; i++) free(list[i]);
    free(list);
    free(ex);
    gs_device_close(R.dev);
    gs_hw_destroy(R.hw);
    gs_ctx_destroy(R.ctx);
    return mismatch ? 1 : 0;
}
