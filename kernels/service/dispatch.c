/* dispatch.c — dynamic shapes: construct per shape, compile per descriptor.
 *
 * A kernel takes its extents and tensor shapes as runtime arguments and is
 * identified by the hash of its zeroed descriptor (op structure, ETIR,
 * dialect, arch, codegen version). So a runtime that meets a new shape runs
 * the construction (milliseconds) and compiles only when the constructed
 * configuration has not been compiled before, DietCode-style.
 *
 *   gs_dispatch(op):
 *     shape seen before?            -> its configuration (no construction)
 *     else choose a configuration:  GS_WARM_MEMO (default): the shape-class
 *                                     memo (below), else gs_construct
 *                                   GS_WARM_OFF: gs_construct
 *                                   GS_WARM_CONSTRUCT: the nearest dispatched
 *                                     shape's state, fitted to op, against a
 *                                     reduced construction; faster prediction wins
 *                                   GS_WARM_REUSE: the nearest state if it fits
 *       among the ranked candidates within reuse_tol of the best, one that
 *       is already compiled is preferred (reuse_tol 0: exact ties only)
 *     descriptor compiled already?  -> hit
 *     else kernel cache (memory, disk) or compile (NVRTC cubin; CUDA source
 *       without NVRTC; OpenCL source built on the attached device)
 *
 * "Nearest" is the smallest sum over axes of |ln(extent_new / extent_old)|
 * among shapes of the same operator class: the same descriptor with the ETIR
 * zeroed (operator structure, epilogue, dialect, arch).
 *
 * The shape-class memo (GS_WARM_MEMO). A size class is an operator class
 * (above), the profile and construction options, and ceil(log2(extent)) per
 * axis. Each class seen keeps up to MEMO_STATES states, first come first
 * kept: the ranked candidates of the walks run for its shapes and the states
 * dispatched for them. A new shape whose class or a neighbouring class (every
 * axis' class within one) has states skips the walk: those states (its own
 * class's first, at most MEMO_SEEDS) are fitted to it and estimated, the
 * best MEMO_POLISH with other tiles are polished
 * (gs_polish), and the best of all is taken (preferring a compiled one within
 * reuse_tol). When this dispatcher has compiled that kernel already the
 * dispatch is done; otherwise a compile is due anyway, so the full walk runs
 * and the faster of its pick and the memo's is kept, its candidates going to
 * the memo. So a walk runs only when the memo's pick would need a compile,
 * or for a shape with no neighbouring class. The choice depends only on the
 * shapes this dispatcher has dispatched before, in order (not on the disk
 * cache, which other processes fill): the same sequence gives the same
 * kernels.
 *
 * Layering: the dispatcher calls gs_construct and gs_polish and reads the
 * result's candidates (construct/construct.h); construct/ knows nothing of it. */
#include "construct/construct.h"
#include "kernels/service/service.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- a map from 64-bit keys to indices ------------------------------------------ */
typedef struct u64map {
    uint64_t *keys;
    int32_t *vals; /* -1: empty */
    size_t cap, n;
} u64map;

static size_t mix(uint64_t k, size_t cap) {
    k ^= k >> 33;
    k *= 0xff51afd7ed558ccdull;
    k ^= k >> 33;
    return (size_t)(k & (cap - 1));
}

static int32_t map_get(const u64map *m, uint64_t k) {
    if (!m->cap) return -1;
    for (size_t i = mix(k, m->cap);; i = (i + 1) & (m->cap - 1)) {
        if (m->vals[i] < 0) return -1;
        if (m->keys[i] == k) return m->vals[i];
    }
}

static bool map_put(u64map *m, uint64_t k, int32_t v) {
    if ((m->n + 1) * 4 > m->cap * 3) {
        size_t nc = m->cap ? m->cap * 2 : 256;
        uint64_t *nk = malloc(nc * sizeof *nk);
        int32_t *nv = malloc(nc * sizeof *nv);
        if (!nk || !nv) {
            free(nk);
            free(nv);
            return false;
        }
        for (size_t i = 0; i < nc; i++) nv[i] = -1;
        for (size_t i = 0; i < m->cap; i++) {
            if (m->vals[i] < 0) continue;
            size_t j = mix(m->keys[i], nc);
            while (nv[j] >= 0) j = (j + 1) & (nc - 1);
            nk[j] = m->keys[i];
            nv[j] = m->vals[i];
        }
        free(m->keys);
        free(m->vals);
        m->keys = nk;
        m->vals = nv;
        m->cap = nc;
    }
    size_t i = mix(k, m->cap);
    while (m->vals[i] >= 0 && m->keys[i] != k) i = (i + 1) & (m->cap - 1);
    if (m->vals[i] < 0) m->n++;
    m->keys[i] = k;
    m->vals[i] = v;
    return true;
}

static void map_free(u64map *m) {
    free(m->keys);
    free(m->vals);
    memset(m, 0, sizeof *m);
}

/* Append item (size bytes) to the growable array *arr holding *n of *cap
 * (growing geometrically from first), and map key to its index in *idx. */
static gs_status push_mapped(gs_ctx *ctx, void **arr, size_t *n, size_t *cap, size_t first, size_t size,
                             const void *item, u64map *map, uint64_t key, int32_t *idx) {
    if (*n == *cap) {
        size_t nc = *cap ? *cap * 2 : first;
        void *na = realloc(*arr, nc * size);
        if (!na) return gs_err(ctx, GS_ERR_NOMEM, "dispatcher: out of memory");
        *arr = na;
        *cap = nc;
    }
    memcpy((char *)*arr + *n * size, item, size);
    if (!map_put(map, key, (int32_t)*n)) return gs_err(ctx, GS_ERR_NOMEM, "dispatcher: out of memory");
    *idx = (int32_t)(*n)++;
    return GS_OK;
}

/* ---- the dispatcher ---------------------------------------------------------------- */
typedef struct shape_entry {
    uint64_t shape_key, class_key;
    int naxes;
    int64_t ext[GS_MAX_AXES];
    double lext[GS_MAX_AXES]; /* ln(extent), for the nearest-shape search */
    gs_etir etir;
    int32_t kidx;       /* kernel index, -1 until compiled (or compile == 0) */
    uint64_t kkey;
    double predicted_s;
    int warm, memo;
} shape_entry;

/* A size class of the memo: its states, for shapes of that class. */
#define MEMO_STATES 16 /* states a class keeps */
#define MEMO_SEEDS 64  /* fitted states ranked for one shape */
#define MEMO_POLISH 4  /* of which polished, ... */
#define MEMO_MOVES 8   /* ... by at most this many moves */
typedef struct memo_entry {
    uint64_t key, class_key;
    int naxes;
    int8_t cls[GS_MAX_AXES]; /* ceil(log2(extent)) per axis */
    int n;
    gs_etir st[MEMO_STATES];
} memo_entry;

typedef struct kernel_entry {
    uint64_t key;
    char name[48];
    int64_t smem_bytes;
    gs_kbackend kind;
    bool have_binary;
    const void *binary; /* owned by the kernel cache */
    size_t len;
    gs_dev_prog prog;   /* built or loaded on the attached device (prog.h NULL: none) */
} kernel_entry;

struct gs_dispatcher {
    gs_hw hw;
    gs_dispatch_opts o;
    char *cache_dir;      /* copy of o.cache_dir */
    int arch;             /* descriptor arch: sm_XX compiled for (CUDA), 0 (OpenCL) */
    bool nvrtc;           /* NVRTC usable */
    bool cubin;           /* CUDA: cubin for arch (else PTX, with an attached older device) */
    gs_kcache *cache;
    gs_device *dev;       /* the attached device, or NULL */
    gs_buffer *ws;        /* split-K's workspace on dev for gs_dispatch_run (zero between launches), or NULL */
    shape_entry *shapes;
    size_t nshapes, capshapes;
    kernel_entry *kernels;
    size_t nkernels, capkernels;
    memo_entry *memo;
    size_t nmemo, capmemo;
    uint64_t memo_salt; /* the profile and construction options, in every memo key */
    u64map shape_map, kernel_map, memo_map;
    gs_dispatch_stats st;
};

void gs_dispatch_opts_default(gs_dispatch_opts *o) {
    if (!o) return;
    memset(o, 0, sizeof *o);
    o->dialect = GS_DIALECT_CUDA;
    o->arch = 0;
    o->cache_dir = NULL;
    gs_construct_opts_default(&o->construct);
    o->construct.top_k = 8; /* room for tie reuse */
    o->warm_start = GS_WARM_MEMO;
    o->warm_chains = 4;
    o->reuse_tol = 0.0;
    o->compile = 1;
}

/* No padding in the options the salt hashes whole: a field added to gs_construct_opts
 * fails this until it is added to the sum (it is then in the salt by itself). */
#define GS_FSZ(f) sizeof(((gs_construct_opts *)0)->f)
_Static_assert(sizeof(gs_construct_opts) == GS_FSZ(seed) + GS_FSZ(top_k) + GS_FSZ(chains) + GS_FSZ(t_start) +
                                                GS_FSZ(t_threshold) + GS_FSZ(policy) + GS_FSZ(strategy) +
                                                GS_FSZ(max_ms) + GS_FSZ(conv_form) + GS_FSZ(split_atomic) +
                                                GS_FSZ(threads) + GS_FSZ(reserved),
               "gs_construct_opts has padding or a field this sum lacks");
#undef GS_FSZ

/* Every input of a construction other than the operator: the profile and the
 * construction options, each struct whole (copied into zeroed storage; the
 * profile's strings zeroed past their end), so an option or a profile field
 * added later is in the salt without being listed here. */
uint64_t gs_dispatcher_salt(const gs_hw *hw, const gs_construct_opts *co) {
    struct {
        gs_hw hw;
        gs_construct_opts co;
    } v;
    memset(&v, 0, sizeof v);
    memcpy(&v.hw, hw, sizeof v.hw);
    memcpy(&v.co, co, sizeof v.co);
    v.co.threads = 0; /* the workers change the time of a construction, not its result */
    size_t n = strnlen(v.hw.name, sizeof v.hw.name);
    memset(v.hw.name + n, 0, sizeof v.hw.name - n);
    n = strnlen(v.hw.desc, sizeof v.hw.desc);
    memset(v.hw.desc + n, 0, sizeof v.hw.desc - n);
    return gs_hash_bytes(&v, sizeof v, 0x6d656d6full);
}

gs_status gs_dispatcher_create(gs_ctx *ctx, const gs_hw *hw, const gs_dispatch_opts *opts, gs_dispatcher **out) {
    if (!out) return gs_err(ctx, GS_ERR_INVALID_ARG, "gs_dispatcher_create: out is NULL");
    *out = NULL;
    if (!hw) return gs_err(ctx, GS_ERR_INVALID_ARG, "gs_dispatcher_create: NULL profile");
    gs_status s = gs_hw_validate(ctx, hw);
    if (s != GS_OK) return s;
    gs_dispatch_opts o;
    if (opts) o = *opts;
    else gs_dispatch_opts_default(&o);
    if (o.dialect != GS_DIALECT_CUDA && o.dialect != GS_DIALECT_OPENCL)
        return gs_err(ctx, GS_ERR_INVALID_ARG, "gs_dispatcher_create: unknown dialect %d", (int)o.dialect);
    if ((int)o.warm_start < GS_WARM_OFF || o.warm_start > GS_WARM_MEMO)
        return gs_err(ctx, GS_ERR_INVALID_ARG, "gs_dispatcher_create: unknown warm-start mode %d", (int)o.warm_start);
    if (o.warm_chains < 1 || o.warm_chains > 4096)
        return gs_err(ctx, GS_ERR_INVALID_ARG, "gs_dispatcher_create: warm_chains must be 1..4096 (got %d)",
                      o.warm_chains);
    if (!isfinite(o.reuse_tol))
        return gs_err(ctx, GS_ERR_INVALID_ARG, "gs_dispatcher_create: reuse_tol must be finite");
    /* every construction option, not at the first gs_dispatch */
    char why[GS_MSG_MAX];
    if (gs_construct_opts_check(ctx, &o.construct) != GS_OK)
        return gs_err(ctx, GS_ERR_INVALID_ARG, "gs_dispatcher_create: construct.%s",
                      gs_ctx_msg_copy(ctx, why, sizeof why));

    gs_dispatcher *d = calloc(1, sizeof *d);
    if (!d) return gs_err(ctx, GS_ERR_NOMEM, "gs_dispatcher_create: out of memory");
    d->hw = *hw;
    d->o = o;
    if (o.cache_dir) {
        d->cache_dir = strdup(o.cache_dir);
        if (!d->cache_dir) {
            free(d);
            return gs_err(ctx, GS_ERR_NOMEM, "gs_dispatcher_create: out of memory");
        }
    }
    d->o.cache_dir = d->cache_dir;
    d->memo_salt = gs_dispatcher_salt(hw, &o.construct);
    if (o.dialect == GS_DIALECT_CUDA) {
        gs_ctx quiet = {{0}}; /* NVRTC being absent is not an error here */
        d->nvrtc = gs_nvrtc_available(&quiet);
        d->cubin = true;
        if (o.arch > 0) {
            d->arch = o.arch;
            if (d->nvrtc) {
                int archs[64], n = 0;
                gs_nvrtc_supported_archs(&quiet, archs, 64, &n);
                bool ok = false;
                for (int i = 0; i < n; i++) ok = ok || archs[i] == o.arch;
                if (!ok) {
                    free(d->cache_dir);
                    free(d);
                    return gs_err(ctx, GS_ERR_ARCH_UNSUPPORTED,
                                  "dispatcher: sm_%d is not supported by the installed NVRTC (nearest: sm_%d)",
                                  o.arch, gs_nvrtc_nearest_arch(&quiet, o.arch));
                }
            }
        } else {
            d->arch = d->nvrtc ? gs_nvrtc_nearest_arch(&quiet, hw->sm) : hw->sm;
            if (!d->arch) d->arch = hw->sm;
        }
    }
    s = gs_kcache_open(ctx, d->cache_dir, &d->cache);
    if (s != GS_OK) {
        free(d->cache_dir);
        free(d);
        return s;
    }
    *out = d;
    return GS_OK;
}

void gs_dispatcher_destroy(gs_dispatcher *d) {
    if (!d) return;
    for (size_t i = 0; i < d->nkernels; i++) gs_dev_prog_free(&d->kernels[i].prog);
    gs_buffer_destroy(d->ws);
    free(d->kernels);
    free(d->shapes);
    free(d->memo);
    map_free(&d->memo_map);
    map_free(&d->shape_map);
    map_free(&d->kernel_map);
    gs_kcache_close(d->cache);
    free(d->cache_dir);
    free(d);
}

gs_kcache *gs_dispatcher_cache(gs_dispatcher *d) { return d ? d->cache : NULL; }

gs_status gs_dispatcher_attach(gs_ctx *ctx, gs_dispatcher *d, gs_device *dev) {
    if (!d) return gs_err(ctx, GS_ERR_INVALID_ARG, "gs_dispatcher_attach: NULL dispatcher");
    gs_status s = gs_device_ready(ctx, dev, "gs_dispatcher_attach");
    if (s != GS_OK) return s;
    gs_dialect dl = gs_device_dialect(dev);
    if (d->o.dialect != dl)
        return gs_err(ctx, GS_ERR_INVALID_ARG, "gs_dispatcher_attach: the dispatcher emits %s, not %s (the device %s)",
                      d->o.dialect == GS_DIALECT_CUDA ? "CUDA" : "OpenCL", dl == GS_DIALECT_CUDA ? "CUDA" : "OpenCL",
                      gs_device_name(dev));
    if (d->nkernels || d->dev)
        return gs_err(ctx, GS_ERR_INVALID_ARG, "gs_dispatcher_attach: attach a device before the first dispatch");
    if (dl == GS_DIALECT_CUDA) {
        if (!d->nvrtc)
            return gs_err(ctx, GS_ERR_NVRTC_MISSING, "gs_dispatcher_attach: loading kernels on a device needs NVRTC");
        /* the device's own arch as a cubin, else PTX of an older one */
        gs_rt_target t;
        s = gs_device_target(ctx, dev, &t);
        char why[GS_MSG_MAX];
        if (s != GS_OK) return gs_err(ctx, s, "gs_dispatcher_attach: %s", gs_ctx_msg_copy(ctx, why, sizeof why));
        d->arch = t.arch;
        d->cubin = t.cubin;
    }
    d->dev = dev;
    return GS_OK;
}

/* ---- keys --------------------------------------------------------------------------- */
static uint64_t class_key_of(const gs_dispatcher *d, const gs_op *op) {
    gs_etir zero;
    memset(&zero, 0, sizeof zero);
    gs_kdesc k;
    gs_kdesc_make(op, NULL, &zero, d->o.dialect, d->arch, &k);
    return gs_kdesc_hash(&k);
}

static uint64_t shape_key_of(uint64_t class_key, const gs_op *op) {
    int64_t v[GS_MAX_AXES + GS_MAX_TENSORS * GS_MAX_DIMS + 2];
    int n = 0;
    v[n++] = (int64_t)class_key;
    v[n++] = op->naxes;
    for (int a = 0; a < op->naxes; a++) v[n++] = op->axes[a].extent;
    for (int t = 0; t <= op->ninputs; t++)
        for (int j = 0; j < op->tensors[t].ndim; j++) v[n++] = op->tensors[t].shape[j];
    return gs_hash_bytes(v, (size_t)n * sizeof v[0], 0x73686170ull);
}

static uint64_t kernel_key_of(const gs_dispatcher *d, const gs_op *op, const gs_etir *e) {
    gs_kdesc k;
    gs_plan p;
    gs_plan_make(&d->hw, op, e, NULL, &p);
    gs_kdesc_make(op, &p, e, d->o.dialect, d->arch, &k);
    return gs_kdesc_hash(&k);
}

bool gs_etir_fit_shape(const gs_hw *hw, const gs_op *op, const gs_etir *from, gs_etir *out) {
    gs_etir e = *from;
    e.level = 0;
    for (int a = 0; a < op->naxes; a++) {
        int32_t mx = gs_etir_max_tile(op, a);
        if (e.tile[a].block > mx) e.tile[a].block = mx;
        if (op->axes[a].kind == GS_AXIS_SPATIAL) {
            if (e.tile[a].thread > e.tile[a].block) e.tile[a].thread = e.tile[a].block;
            if (e.V[a] > e.tile[a].thread) e.V[a] = e.tile[a].thread;
        } else {
            e.tile[a].thread = 1;
            e.V[a] = 1;
        }
    }
    /* a split-K chosen for a smaller output may not suit this one: halve it
     * until the state fits (or no split is left) */
    while (!gs_hw_check(hw, op, &e)) { /* gs_hw_check includes well-formedness */
        if (e.splitk <= 1) return false;
        e.splitk = (uint8_t)(e.splitk / 2);
    }
    *out = e;
    return true;
}

/* The shape of the same class nearest to op; -1 if none. */
static int nearest_shape(const gs_dispatcher *d, uint64_t class_key, const gs_op *op) {
    int best = -1;
    double bd = INFINITY, l[GS_MAX_AXES];
    for (int a = 0; a < op->naxes; a++) l[a] = log((double)op->axes[a].extent);
    for (size_t i = 0; i < d->nshapes; i++) {
        const shape_entry *s = &d->shapes[i];
        if (s->class_key != class_key || s->naxes != op->naxes) continue;
        double dist = 0;
        for (int a = 0; a < op->naxes; a++) dist += fabs(l[a] - s->lext[a]);
        if (dist < bd) {
            bd = dist;
            best = (int)i;
        }
    }
    return best;
}

/* ---- choosing a configuration ---------------------------------------------------------- */
static gs_kbackend kernel_kind(const gs_dispatcher *d) {
    if (d->o.dialect == GS_DIALECT_OPENCL) return GS_KB_OPENCL_SOURCE;
    if (!d->nvrtc) return GS_KB_CUDA_SOURCE;
    return d->cubin ? GS_KB_CUDA_CUBIN : GS_KB_CUDA_PTX;
}

/* Among n candidates ranked by time t (ascending), those within reuse_tol
 * of the best: the first whose kernel this dispatcher has compiled, else -1.
 * Only the dispatcher's own kernels count, not the disk cache's (which other
 * processes fill), so the choice depends on this dispatcher's history alone. */
static int pick_compiled(gs_dispatcher *d, const gs_op *op, const gs_etir *cand, const double *t, int n) {
    if (d->o.reuse_tol < 0 || !d->nkernels) return -1;
    double lim = t[0] * (1.0 + d->o.reuse_tol) * (1.0 + 1e-12);
    for (int i = 0; i < n && t[i] <= lim; i++)
        if (map_get(&d->kernel_map, kernel_key_of(d, op, &cand[i])) >= 0) return i;
    return -1;
}

/* Among r's candidates within reuse_tol of the best, the first that is
 * compiled already; else 0. */
static int pick_candidate(gs_dispatcher *d, const gs_op *op, const gs_result *r) {
    double t[GS_MAX_TOP];
    for (int i = 0; i < r->n; i++) t[i] = r->est[i].time_s;
    int i = pick_compiled(d, op, r->cand, t, r->n);
    return i < 0 ? 0 : i;
}

/* ---- the shape-class memo --------------------------------------------------------------- */
static void size_class(const gs_op *op, int8_t *cls) {
    for (int a = 0; a < op->naxes; a++) {
        int l = 0;
        while (l < 62 && ((int64_t)1 << l) < op->axes[a].extent) l++;
        cls[a] = (int8_t)l;
    }
}

static uint64_t memo_key(const gs_dispatcher *d, uint64_t class_key, const gs_op *op) {
    int8_t cls[GS_MAX_AXES];
    size_class(op, cls);
    uint64_t v[2] = {class_key, d->memo_salt};
    return gs_hash_bytes(cls, (size_t)op->naxes, gs_hash_bytes(v, sizeof v, 0x636c6173ull));
}

uint64_t gs_dispatcher_memo_key(const gs_dispatcher *d, const gs_op *op) {
    return memo_key(d, class_key_of(d, op), op);
}

/* Insert e (time t) into the list ranked by time (ties keep their order),
 * unless it is there already or ranks below the cap-th. */
static int rank_add(gs_etir *l, double *lt, int n, int cap, const gs_etir *e, double t) {
    for (int i = 0; i < n; i++)
        if (!memcmp(&l[i], e, sizeof *e)) return n;
    int pos = n;
    while (pos > 0 && t < lt[pos - 1]) pos--;
    if (pos >= cap) return n;
    if (n == cap) n--;
    memmove(&l[pos + 1], &l[pos], (size_t)(n - pos) * sizeof *l);
    memmove(&lt[pos + 1], &lt[pos], (size_t)(n - pos) * sizeof *lt);
    l[pos] = *e;
    lt[pos] = t;
    return n + 1;
}

/* The memo's candidates for op, ranked by predicted time into l/lt (cap
 * MEMO_SEEDS + MEMO_POLISH): the states of its size class, then of the
 * neighbouring ones (at most MEMO_SEEDS estimates in all), fitted, and the
 * polished best few. 0 when no class near op has states. */
static int memo_candidates(const gs_dispatcher *d, uint64_t class_key, const gs_op *op, gs_etir *l, double *lt) {
    int8_t cls[GS_MAX_AXES];
    size_class(op, cls);
    int n = 0, evals = 0;
    for (int pass = 0; pass < 2; pass++) /* 0: op's own class, 1: its neighbours */
        for (size_t q = 0; q < d->nmemo; q++) {
            const memo_entry *m = &d->memo[q];
            bool near = m->class_key == class_key && m->naxes == op->naxes, same = true;
            for (int a = 0; a < op->naxes && near; a++) {
                near = abs(m->cls[a] - cls[a]) <= 1;
                same = same && m->cls[a] == cls[a];
            }
            for (int i = 0; near && same == (pass == 0) && i < m->n && evals < MEMO_SEEDS; i++) {
                gs_etir e;
                gs_estimate est;
                if (!gs_etir_fit_shape(&d->hw, op, &m->st[i], &e)) continue;
                gs_estimate_etir(&d->hw, op, &e, 0, &est);
                evals++;
                if (isfinite(est.time_s) && est.time_s > 0) n = rank_add(l, lt, n, MEMO_SEEDS, &e, est.time_s);
            }
        }
    /* polish the best with other tiles: two states that differ only in
     * whole-kernel dimensions polish to the same optimum */
    gs_etir seeds[MEMO_POLISH];
    double st[MEMO_POLISH];
    int ns = 0;
    for (int i = 0; i < n && ns < MEMO_POLISH; i++) {
        bool same = false;
        for (int j = 0; j < ns && !same; j++)
            same = !memcmp(seeds[j].tile, l[i].tile, sizeof l[i].tile) && !memcmp(seeds[j].V, l[i].V, sizeof l[i].V);
        if (!same) seeds[ns++] = l[i];
    }
    if (ns > 0 && gs_polish(&d->hw, op, seeds, ns, MEMO_MOVES, st) >= 0)
        for (int i = 0; i < ns; i++) n = rank_add(l, lt, n, MEMO_SEEDS + MEMO_POLISH, &seeds[i], st[i]);
    return n;
}

/* Add states to op's size class (made when new), up to MEMO_STATES. */
static gs_status memo_add(gs_ctx *ctx, gs_dispatcher *d, uint64_t class_key, const gs_op *op, const gs_etir *e,
                          int n) {
    uint64_t key = memo_key(d, class_key, op);
    int32_t mi = map_get(&d->memo_map, key);
    if (mi < 0) {
        memo_entry m = {.key = key, .class_key = class_key, .naxes = op->naxes};
        size_class(op, m.cls);
        gs_status s = push_mapped(ctx, (void **)&d->memo, &d->nmemo, &d->capmemo, 16, sizeof m, &m, &d->memo_map,
                                  key, &mi);
        if (s != GS_OK) return s;
    }
    memo_entry *m = &d->memo[mi];
    for (int i = 0; i < n && m->n < MEMO_STATES; i++) {
        bool dup = false;
        for (int j = 0; j < m->n && !dup; j++) dup = !memcmp(&m->st[j], &e[i], sizeof e[i]);
        if (!dup) m->st[m->n++] = e[i];
    }
    return GS_OK;
}

static gs_status run_construct(gs_ctx *ctx, gs_dispatcher *d, const gs_op *op, int chains, gs_result **r,
                               double *spent) {
    gs_construct_opts co = d->o.construct;
    if (chains > 0) co.chains = chains;
    /* the handles launch the operator as given (its extents are the shape
     * class's): the matmul form of a 1x1 conv (GS_FORM_AUTO) is not
     * dispatched yet */
    co.conv_form = GS_FORM_DIRECT;
    double t0 = gs_now_s(), c0 = gs_thread_cpu_s();
    gs_status s = gs_construct(ctx, op, &d->hw, &co, r);
    double dt = gs_now_s() - t0;
    d->st.construct_cpu_ms += (gs_thread_cpu_s() - c0) * 1e3;
    *spent += dt;
    d->st.constructions++;
    d->st.construct_ms += dt * 1e3;
    return s;
}

/* se gets the warm-start state w (predicted wt) when warm, else r's
 * candidate i; counted. */
static void keep(gs_dispatcher *d, shape_entry *se, bool warm, const gs_etir *w, double wt, const gs_result *r, int i) {
    if (warm) {
        se->etir = *w;
        se->predicted_s = wt;
        se->warm = 1;
        d->st.warm_kept++;
    } else {
        se->etir = r->cand[i];
        se->predicted_s = r->est[i].time_s;
        if (i > 0) d->st.tie_reused++;
    }
}

/* GS_WARM_MEMO: the memo's pick when its kernel needs no compile; else the
 * walk, against the memo's best (see the top of the file). */
static gs_status choose_memo(gs_ctx *ctx, gs_dispatcher *d, const gs_op *op, uint64_t class_key, shape_entry *se,
                             double *construct_s, int *constructed) {
    gs_etir l[MEMO_SEEDS + MEMO_POLISH];
    double lt[MEMO_SEEDS + MEMO_POLISH];
    double t0 = gs_now_s(), c0 = gs_thread_cpu_s();
    int n = memo_candidates(d, class_key, op, l, lt);
    int i = n > 0 ? pick_compiled(d, op, l, lt, n) : -1;
    double dt = gs_now_s() - t0; /* counted as construction time */
    *construct_s += dt;
    d->st.construct_ms += dt * 1e3;
    d->st.construct_cpu_ms += (gs_thread_cpu_s() - c0) * 1e3;
    if (i >= 0) {
        se->etir = l[i];
        se->predicted_s = lt[i];
        se->warm = se->memo = 1;
        d->st.memo_hits++;
        return memo_add(ctx, d, class_key, op, &l[i], 1);
    }
    gs_result *r = NULL;
    *constructed = 1;
    gs_status s = run_construct(ctx, d, op, 0, &r, construct_s);
    if (s != GS_OK) return s;
    i = pick_candidate(d, op, r);
    keep(d, se, n > 0 && lt[0] < r->est[i].time_s, &l[0], n > 0 ? lt[0] : 0, r, i);
    s = memo_add(ctx, d, class_key, op, r->cand, r->n);
    if (s == GS_OK) s = memo_add(ctx, d, class_key, op, &se->etir, 1);
    gs_result_destroy(r);
    return s;
}

static gs_status choose(gs_ctx *ctx, gs_dispatcher *d, const gs_op *op, uint64_t class_key, shape_entry *se,
                        double *construct_s, int *constructed) {
    *constructed = 0;
    if (d->o.warm_start == GS_WARM_MEMO) return choose_memo(ctx, d, op, class_key, se, construct_s, constructed);
    gs_etir fitted;
    bool have_warm = false;
    double warm_t = INFINITY;
    if (d->o.warm_start != GS_WARM_OFF) {
        int ni = nearest_shape(d, class_key, op);
        if (ni >= 0 && gs_etir_fit_shape(&d->hw, op, &d->shapes[ni].etir, &fitted)) {
            gs_estimate est;
            gs_estimate_etir(&d->hw, op, &fitted, 0, &est);
            warm_t = est.time_s;
            have_warm = isfinite(warm_t) && warm_t > 0;
        }
    }
    if (have_warm && d->o.warm_start == GS_WARM_REUSE) {
        keep(d, se, true, &fitted, warm_t, NULL, 0);
        return GS_OK;
    }
    gs_result *r = NULL;
    *constructed = 1;
    gs_status s = run_construct(ctx, d, op, have_warm ? d->o.warm_chains : 0, &r, construct_s);
    if (s != GS_OK) return s;
    int i = pick_candidate(d, op, r);
    keep(d, se, have_warm && warm_t <= r->est[i].time_s, &fitted, warm_t, r, i);
    gs_result_destroy(r);
    return GS_OK;
}

/* ---- compiling ------------------------------------------------------------------------ */
static gs_status add_kernel(gs_ctx *ctx, gs_dispatcher *d, const kernel_entry *k, int32_t *idx) {
    gs_status s = push_mapped(ctx, (void **)&d->kernels, &d->nkernels, &d->capkernels, 32, sizeof *k, k,
                              &d->kernel_map, k->key, idx);
    d->st.kernels = (int64_t)d->nkernels;
    return s;
}

/* The kernel of etir on op: from the dispatcher, the cache, or compiled. */
static gs_status get_kernel(gs_ctx *ctx, gs_dispatcher *d, const gs_op *op, const gs_etir *e, int32_t *kidx,
                            int *hit, int *disk_hit, double *compile_s) {
    uint64_t key = kernel_key_of(d, op, e);
    int32_t found = map_get(&d->kernel_map, key);
    if (found >= 0) {
        *kidx = found;
        *hit = 1;
        return GS_OK;
    }
    gs_kernel_src ks;
    gs_status s = gs_lower_emit(ctx, &d->hw, op, e, d->o.dialect, d->arch, &ks);
    if (s != GS_OK) return s;
    kernel_entry k;
    memset(&k, 0, sizeof k);
    k.key = ks.hash;
    snprintf(k.name, sizeof k.name, "%s", ks.name);
    k.smem_bytes = ks.smem_bytes;
    k.kind = kernel_kind(d);
    if (d->o.compile) {
        /* the cache holds the binary under its source's key (k.key names
         * the kernel in this dispatcher; gs_kcache_src_key) */
        const uint64_t ck = gs_kcache_src_key(ks.hash, ks.src);
        gs_kcache_stats before, after;
        gs_kcache_stats_get(d->cache, &before);
        /* dispatchers sharing the cache directory build a kernel once; the
         * others wait for it (counted as compile time) and read it from the disk */
        int lk = -1;
        double waited = 0;
        bool cached = gs_kcache_get_or_lock(ctx, d->cache, ck, k.kind, &k.binary, &k.len, &lk, &waited);
        *compile_s += waited;
        if (cached) {
            gs_kcache_stats_get(d->cache, &after);
            if (after.disk_hits > before.disk_hits) {
                *disk_hit = 1;
                d->st.disk_hits++;
            }
        } else {
            const void *bytes = ks.src;
            size_t len = strlen(ks.src);
            gs_nvrtc_out nv;
            memset(&nv, 0, sizeof nv);
            if (k.kind == GS_KB_CUDA_CUBIN || k.kind == GS_KB_CUDA_PTX) {
                bool cub = k.kind == GS_KB_CUDA_CUBIN;
                double t0 = gs_now_s();
                s = gs_nvrtc_compile(ctx, ks.src, ks.name, d->arch, !cub, cub, &nv);
                double dt = gs_now_s() - t0;
                *compile_s += dt;
                d->st.compiles++;
                d->st.compile_ms += dt * 1e3;
                if (s != GS_OK) {
                    gs_kcache_unlock(d->cache, ck, k.kind, lk);
                    gs_nvrtc_out_free(&nv);
                    gs_kernel_src_free(&ks);
                    return s;
                }
                bytes = cub ? nv.cubin : (const void *)nv.ptx;
                len = cub ? nv.cubin_len : nv.ptx_len;
            }
            /* An unwritable disk directory costs only the disk level: the
             * entry stays in memory and the failure is counted. */
            s = gs_kcache_put(ctx, d->cache, ck, k.kind, bytes, len);
            gs_kcache_unlock(d->cache, ck, k.kind, lk);
            gs_nvrtc_out_free(&nv);
            if (s != GS_OK && s != GS_ERR_IO) {
                gs_kernel_src_free(&ks);
                return s;
            }
            if (!gs_kcache_get(ctx, d->cache, ck, k.kind, &k.binary, &k.len)) {
                gs_kernel_src_free(&ks);
                return gs_err(ctx, GS_ERR_NOMEM, "dispatcher: the kernel cache lost %s", k.name);
            }
        }
        k.have_binary = true;
        if (d->dev) {
            /* OpenCL builds the source here (a compile); CUDA loads the binary */
            bool build = d->o.dialect == GS_DIALECT_OPENCL;
            double t0 = gs_now_s();
            /* the total shared memory; ours is all static (no dynamic part) */
            s = gs_dev_prog_load(ctx, d->dev, k.binary, k.name, k.smem_bytes, &k.prog);
            double dt = gs_now_s() - t0;
            *compile_s += dt;
            if (build) {
                d->st.compiles++;
                d->st.compile_ms += dt * 1e3;
            }
            if (s != GS_OK) {
                gs_kernel_src_free(&ks);
                return s;
            }
        }
    }
    gs_kernel_src_free(&ks);
    s = add_kernel(ctx, d, &k, kidx);
    if (s != GS_OK) gs_dev_prog_free(&k.prog);
    return s;
}

/* ---- gs_dispatch ----------------------------------------------------------------------- */
static gs_status add_shape(gs_ctx *ctx, gs_dispatcher *d, const shape_entry *se, int32_t *idx) {
    gs_status s = push_mapped(ctx, (void **)&d->shapes, &d->nshapes, &d->capshapes, 64, sizeof *se, se,
                              &d->shape_map, se->shape_key, idx);
    d->st.shapes = (int64_t)d->nshapes;
    return s;
}

gs_status gs_dispatch(gs_ctx *ctx, gs_dispatcher *d, const gs_op *op, gs_kernel_handle *out) {
    if (!out) return gs_err(ctx, GS_ERR_INVALID_ARG, "gs_dispatch: out is NULL");
    memset(out, 0, sizeof *out);
    if (!d || !op) return gs_err(ctx, GS_ERR_INVALID_ARG, "gs_dispatch: NULL dispatcher or operator");
    double t0 = gs_now_s();
    gs_status s = gs_op_validate(ctx, op);
    if (s != GS_OK) return s;
    uint64_t ck = class_key_of(d, op), sk = shape_key_of(ck, op);
    int32_t si = map_get(&d->shape_map, sk);
    if (si < 0) {
        shape_entry se;
        memset(&se, 0, sizeof se);
        se.shape_key = sk;
        se.class_key = ck;
        se.naxes = op->naxes;
        for (int a = 0; a < op->naxes; a++) {
            se.ext[a] = op->axes[a].extent;
            se.lext[a] = log((double)op->axes[a].extent);
        }
        se.kidx = -1;
        out->new_shape = 1;
        s = choose(ctx, d, op, ck, &se, &out->construct_s, &out->constructed);
        if (s != GS_OK) return s;
        se.kkey = kernel_key_of(d, op, &se.etir);
        s = add_shape(ctx, d, &se, &si);
        if (s != GS_OK) return s;
    }
    shape_entry *se = &d->shapes[si];
    int32_t ki = map_get(&d->kernel_map, se->kkey);
    if (ki >= 0) {
        out->hit = 1;
    } else {
        s = get_kernel(ctx, d, op, &se->etir, &ki, &out->hit, &out->disk_hit, &out->compile_s);
        if (s != GS_OK) return s;
        se = &d->shapes[si];
    }
    se->kidx = ki;
    const kernel_entry *k = &d->kernels[ki];
    snprintf(out->name, sizeof out->name, "%s", k->name);
    out->key = k->key;
    out->grid = gs_etir_blocks(op, &se->etir);
    out->block = gs_etir_threads(op, &se->etir);
    out->smem_bytes = k->smem_bytes;
    out->nint = gs_kernel_int_args(op, out->int_args, GS_HANDLE_MAX_INTS);
    out->alpha = op->epi.alpha;
    out->beta = op->epi.beta;
    out->has_bias = op->has_bias && op->epi.bias_axis >= 0;
    out->warm = se->warm;
    out->memo = se->memo;
    out->predicted_s = se->predicted_s;
    out->binary_kind = k->have_binary ? gs_kbackend_name(k->kind) : NULL;
    out->binary = k->have_binary ? k->binary : NULL;
    out->binary_len = k->have_binary ? k->len : 0;
    out->program = k->prog.h;
    gs_etir_format_config(op, &se->etir, out->config, sizeof out->config);
    out->workspace_bytes = gs_split_workspace_bytes(op, &se->etir, GS_SPLIT_ORDERED);
    if (out->hit) d->st.hits++;
    d->st.dispatches++;
    out->dispatch_s = gs_now_s() - t0;
    d->st.dispatch_ms += out->dispatch_s * 1e3;
    return GS_OK;
}

void gs_dispatch_stats_get(const gs_dispatcher *d, gs_dispatch_stats *out) {
    if (!out) return;
    memset(out, 0, sizeof *out);
    if (!d) return;
    *out = d->st;
    gs_kcache_stats cs;
    gs_kcache_stats_get(d->cache, &cs);
    out->cache_corrupt = cs.corrupt;
    out->cache_write_errors = cs.write_errors;
}


/* ---- gs_dispatch_run --------------------------------------------------------------- */
gs_status gs_dispatch_run(gs_ctx *ctx, gs_dispatcher *d, const gs_op *op, const gs_kernel_handle *h,
                          gs_buffer *const *bufs, int nbufs, double *elapsed_s) {
    if (elapsed_s) *elapsed_s = 0;
    if (!d || !op || !h) return gs_err(ctx, GS_ERR_INVALID_ARG, "gs_dispatch_run: NULL dispatcher, operator or handle");
    if (!d->dev)
        return gs_err(ctx, GS_ERR_INVALID_ARG,
                      "gs_dispatch_run: no device attached (gs_dispatcher_attach before the first dispatch)");
    gs_status s = gs_op_validate(ctx, op);
    if (s != GS_OK) return s;
    /* the handle must be the one d dispatched for this shape */
    int32_t si = map_get(&d->shape_map, shape_key_of(class_key_of(d, op), op));
    if (si < 0)
        return gs_err(ctx, GS_ERR_INVALID_ARG, "gs_dispatch_run: %s was not dispatched by this dispatcher (gs_dispatch it first)",
                      op->spec);
    const shape_entry *se = &d->shapes[si];
    if (se->kidx < 0 || se->kkey != h->key)
        return gs_err(ctx, GS_ERR_INVALID_ARG, "gs_dispatch_run: the handle (%s) is not the kernel dispatched for %s",
                      h->name, op->spec);
    const kernel_entry *k = &d->kernels[se->kidx];
    if (!k->prog.h)
        return gs_err(ctx, GS_ERR_INVALID_ARG, "gs_dispatch_run: %s was not built on the device (compile is 0?)",
                      k->name);
    /* split-K meets in a workspace sized by the extents: kept by d, grown
     * (a fresh buffer is zeroed) when a larger shape needs more */
    int64_t ws = gs_split_workspace_bytes(op, &se->etir, GS_SPLIT_ORDERED);
    if (ws > 0 && (!d->ws || d->ws->bytes < (size_t)ws)) {
        gs_buffer_destroy(d->ws);
        d->ws = NULL;
        s = gs_buffer_create(ctx, d->dev, (size_t)ws, NULL, &d->ws);
        if (s != GS_OK) return s;
    }
    return gs_dev_prog_launch(ctx, &k->prog, op, bufs, nbufs, ws > 0 ? d->ws : NULL,
                              (size_t)gs_etir_blocks(op, &se->etir), (size_t)gs_etir_threads(op, &se->etir), elapsed_s);
}
