/* plan.c — the planner: one ETIR state of one operator plus the target's
 * facts become a gs_plan (hwmodel/plan/plan.h). The model prices the plan and the
 * printers print it; nothing downstream makes a decision of its own.
 *
 * Every rule below is derived from the operator's affine maps, the tiles and
 * a few profile numbers; no rule names an operator or an architecture. */
#include "hwmodel/plan/plan.h"

#include <stddef.h>
#include <stdio.h>
#include <string.h>

/* Registers the kernel needs beyond accumulators, fragments and staging:
 * indices, loop counters, pointers, extents (fitted as an upper bound of
 * ptxas' count over the NVRTC test sweeps, which the tests assert). */
#define GS_PLAN_REGS_BASE 52
/* An mma plan whose copies count one unit in flight (regs_bound) adds a
 * little for what ptxas keeps beyond its terms (the unrolled k-steps'
 * ldmatrix addresses): with it, gemm f16 on sm_90 128x128x64 with 4 warps of
 * 64x64 (8 + 8 units per thread) counts 256 and is refused; ptxas spills 216
 * bytes there. 128x256x64 with 8 such warps (4 + 8 units) counts 254, ptxas
 * 254 at 0 spills. */
#define GS_PLAN_MMA_REGS_SLACK 2
/* The accumulators per thread from which an mma plan's copies count one unit
 * in flight (a 64x64 or 128x32 warp tile of f32 accumulators) */
#define GS_PLAN_MMA_RELAX_ACC 128
/* Most copy units per thread whose offsets are kept in registers when they
 * are not evenly spaced; beyond, they are recomputed (registers for
 * instructions). */
/* A block's per-SM shared-memory reservation on Ampere and later (bytes). */
#define GS_PLAN_SMEM_RESERVED 1024

bool gs_hw_has_async_copy(const gs_hw *hw) { return hw->sm >= 80; }

/* The mma fields sit in what was padding: a plan without mma keeps its
 * bytes, so every kernel descriptor (and kernel name) of before stays. */
_Static_assert(sizeof(gs_plan) == 960 && sizeof(gs_plan_input) == 224, "gs_plan's size is part of every kernel name");

static bool spatial(const gs_op *op, int a) { return op->axes[a].kind == GS_AXIS_SPATIAL; }

/* The axis a dim's index runs along with unit step, or -1: exactly one
 * non-zero coefficient, equal to 1 (a gemm row, a channel, not a conv window). */
static int unit_axis(const gs_affine *f, int naxes) {
    int a = -1;
    for (int i = 0; i < naxes; i++) {
        if (!f->coeff[i]) continue;
        if (a >= 0 || f->coeff[i] != 1) return -1;
        a = i;
    }
    return a;
}

static int64_t floor_mod(int64_t x, int64_t m) { return ((x % m) + m) % m; }

/* Largest vector width w in {4, 2} (<= cap) dividing every value, else 1. */
static int vec_dividing(int cap, int64_t x, int64_t y, int64_t z) {
    for (int w = cap; w > 1; w /= 2)
        if (x % w == 0 && y % w == 0 && z % w == 0) return w;
    return 1;
}

/* Box extent of tensor ts along dim j over uncapped block tiles: every
 * thread's local offset needs a slot. Saturates at GS_STAGE_SAT like
 * gs_stage_layout, so absurd strides fail the check instead of overflowing. */
static int64_t box_dim(const gs_op *op, const gs_etir *e, const gs_tensor *ts, int j) {
    int64_t len = 1;
    for (int a = 0; a < op->naxes; a++) {
        int64_t c = ts->idx[j].coeff[a], term;
        if (!c) continue;
        if (c == INT64_MIN || __builtin_mul_overflow(c < 0 ? -c : c, (int64_t)e->tile[a].block - 1, &term) ||
            __builtin_add_overflow(len, term, &len) || len > GS_STAGE_SAT)
            return GS_STAGE_SAT;
    }
    return len;
}

/* The view dims of tensor t's im2col tile: the axes it uses, in its dim
 * order and within a window dim the reduce axes before the spatial one (so
 * a spatial axis of unit step can stay innermost, where its fragments are
 * read as vectors). -1 when no dim is a window (two or more axes), or when
 * an axis appears in two dims or with a negative coefficient. */
static int im2col_axes(const gs_op *op, int t, int8_t *axes) {
    const gs_tensor *ts = &op->tensors[t];
    int n = 0;
    bool window = false, used[GS_MAX_AXES] = {false};
    for (int j = 0; j < ts->ndim; j++) {
        int k = 0;
        for (int pass = 0; pass < 2; pass++)
            for (int a = 0; a < op->naxes; a++) {
                int64_t c = ts->idx[j].coeff[a];
                if (!c || spatial(op, a) != (pass == 1)) continue;
                if (c < 0 || used[a] || n >= GS_MAX_DIMS) return -1;
                used[a] = true;
                axes[n++] = (int8_t)a;
                k++;
            }
        window |= k >= 2;
    }
    return window ? n : -1;
}

const gs_tensor *gs_plan_box_tensor(const gs_op *op, const gs_plan_input *pi, int t, gs_tensor *view) {
    const gs_tensor *ts = &op->tensors[t];
    if (!pi->im2col) return ts;
    memset(view, 0, sizeof *view);
    memcpy(view->name, ts->name, sizeof view->name);
    int n = pi->view_ndim;
    view->ndim = n;
    for (int k = 0; k < n; k++) {
        int a = pi->view_axis[k];
        view->idx[k].coeff[a] = 1;
        view->shape[k] = op->axes[a].extent;
    }
    int last = ts->ndim - 1;
    if (n > 0 && unit_axis(&ts->idx[last], op->naxes) == pi->view_axis[n - 1]) {
        view->shape[n - 1] = ts->shape[last];
        view->idx[n - 1].offset = ts->idx[last].offset;
    }
    return view;
}

static int64_t sat_mul(int64_t a, int64_t b) {
    int64_t r;
    if (__builtin_mul_overflow(a, b, &r) || r > GS_STAGE_SAT) return GS_STAGE_SAT;
    return r;
}

/* Shared-memory strides for a layout: tensor dims in their order, except
 * inner, which is moved innermost with extent dims[inner] + pad. */
static int64_t layout_strides(const gs_tensor *ts, const int64_t *dims, int inner, int64_t pad, int64_t *sstride) {
    int64_t s = 1;
    sstride[inner] = 1;
    s = sat_mul(s, dims[inner] + pad);
    for (int j = ts->ndim - 1; j >= 0; j--) {
        if (j == inner) continue;
        sstride[j] = s;
        s = sat_mul(s, dims[j]);
    }
    return s; /* elements of the padded box */
}

/* Insert x into an open-addressing set of 2^lg slots (used[] marks taken
 * slots); true when x was not there yet. */
static bool set_insert(int64_t *key, uint8_t *used, int lg, int64_t x) {
    uint64_t h = (uint64_t)x * 0x9e3779b97f4a7c15ull;
    unsigned mask = (1u << lg) - 1, i = (unsigned)(h >> (64 - lg));
    for (;; i = (i + 1) & mask) {
        if (!used[i]) {
            used[i] = 1;
            key[i] = x;
            return true;
        }
        if (key[i] == x) return false;
    }
}

void gs_wf_memo_init(gs_wf_memo *m) {
    memset(m->key, 0, sizeof m->key);
    memset(m->layout_key, 0, sizeof m->layout_key);
    memset(m->mma_key, 0, sizeof m->mma_key);
    memset(m->mma_rd_key, 0, sizeof m->mma_rd_key);
    memset(m->pad_key, 0, sizeof m->pad_key);
    memset(m->fast_key, 0, sizeof m->fast_key);
    memset(m->l2_key, 0, sizeof m->l2_key);
    memset(m->loop_key, 0, sizeof m->loop_key);
    memset(m->wave_key, 0, sizeof m->wave_key);
    m->bytes_known = 0;
    m->gstep_known = 0;
    m->index_fits_max = 0;
    m->reduce_coeff_neg = 0;
    m->uses_known = 0;
    m->i2c_known = 0;
    m->mma_known = 0;
}

static void memo_mma_fill(gs_wf_memo *m, const gs_op *op) {
    if (m->mma_known) return;
    bool roles = gs_mma_roles(op, m->mma_role);
    bool axes = gs_mma_axes(op, &m->mma_axis[0], &m->mma_axis[1], &m->mma_axis[2]);
    m->mma_known = (uint8_t)(1u | (roles ? 2u : 0u) | (axes ? 4u : 0u));
}

bool gs_wf_memo_mma_roles(gs_wf_memo *m, const gs_op *op, int8_t *role) {
    if (!m) return gs_mma_roles(op, role);
    memo_mma_fill(m, op);
    memcpy(role, m->mma_role, sizeof m->mma_role);
    return m->mma_known & 2u;
}

bool gs_wf_memo_mma_axes(gs_wf_memo *m, const gs_op *op, int *am, int *an, int *ak) {
    if (!m) return gs_mma_axes(op, am, an, ak);
    memo_mma_fill(m, op);
    *am = m->mma_axis[0];
    *an = m->mma_axis[1];
    *ak = m->mma_axis[2];
    return m->mma_known & 4u;
}

/* Two words folded into h at once by a 64 x 64 -> 128-bit product (as
 * construct/markov.c's state_key): about half the instructions of a
 * multiply-xor step per word, and a shorter dependency chain. */
static inline uint64_t wf_fold(uint64_t h, uint64_t a, uint64_t b) {
#ifdef __SIZEOF_INT128__
    __extension__ unsigned __int128 p = (unsigned __int128)(a ^ 0xa0761d6478bd642full) * (b ^ 0xe7037ed1a0b428dbull ^ h);
    return (uint64_t)p ^ (uint64_t)(p >> 64);
#else
    h = (h ^ a) * 0xff51afd7ed558ccdull;
    h = (h ^ (h >> 31) ^ b) * 0xc4ceb9fe1a85ec53ull;
    return h ^ (h >> 29);
#endif
}

uint64_t gs_wf_key(const int64_t *addr, int lanes, uint64_t tag) {
    uint64_t h = 0xcbf29ce484222325ull ^ tag;
    int i = 0;
    for (; i + 1 < lanes; i += 2) h = wf_fold(h, (uint64_t)addr[i], (uint64_t)addr[i + 1]);
    if (i < lanes) h = wf_fold(h, (uint64_t)addr[i], 0x8ebc6af09c88c6e3ull);
    h ^= (uint64_t)lanes * 0x9e3779b97f4a7c15ull;
    h ^= h >> 33; /* the slots index by the top bits */
    h *= 0xff51afd7ed558ccdull;
    h ^= h >> 33;
    return h | 1; /* 0 marks an empty slot */
}

bool gs_wf_memo_get(const gs_wf_memo *m, uint64_t key, double *val) {
    if (!m) return false;
    unsigned i = (unsigned)(key >> 48) & (GS_WF_MEMO_SLOTS - 1);
    for (int probe = 0; probe < 8; probe++, i = (i + 1) & (GS_WF_MEMO_SLOTS - 1)) {
        if (m->key[i] == key) {
            *val = m->val[i];
            return true;
        }
        if (!m->key[i]) return false;
    }
    return false;
}

void gs_wf_memo_put(gs_wf_memo *m, uint64_t key, double val) {
    if (!m) return;
    unsigned i = (unsigned)(key >> 48) & (GS_WF_MEMO_SLOTS - 1);
    for (int probe = 0; probe < 8; probe++, i = (i + 1) & (GS_WF_MEMO_SLOTS - 1))
        if (!m->key[i] || m->key[i] == key) {
            m->key[i] = key;
            m->val[i] = val;
            return;
        }
    /* a full run of slots: the newest pattern replaces the home slot's (the
     * walk moves on, and a memo that stops learning stops helping) */
    i = (unsigned)(key >> 48) & (GS_WF_MEMO_SLOTS - 1);
    m->key[i] = key;
    m->val[i] = val;
}

/* Bytes of input elements (the type table's) and the widest vector, in
 * elements: 16 bytes. */
static int in_bytes(const gs_op *op) { return gs_dtype_row(op->dtype_in)->bytes; }
static int vec_max(int eb) { return 16 / eb; }

int gs_count_distinct(const int64_t *v, int n) {
    int64_t key[512];
    uint8_t used[512];
    if (n > 256) n = 256;
    memset(used, 0, sizeof used);
    int d = 0;
    for (int i = 0; i < n; i++) d += set_insert(key, used, 9, v[i]);
    return d;
}

double gs_smem_wavefronts_of(int banks, const int64_t *addr, int lanes, int w) {
    if (banks > 256) banks = 256;
    if (banks < 1) banks = 1;
    if (w < 1) w = 1;
    if (w > 8) w = 8;
    int per_phase = lanes / w > 0 ? lanes / w : 1;
    /* a power-of-two bank count (every profile's 32): the bank is the word's
     * low bits, as floor_mod gives them, without its two divisions */
    const int64_t bmask = (banks & (banks - 1)) == 0 ? banks - 1 : -1;
    double total = 0;
    for (int p0 = 0; p0 < lanes; p0 += per_phase) {
        /* distinct words of the phase (equal words broadcast), counted per bank */
        int64_t key[128];
        uint8_t used[128];
        int count[256], worst = 1;
        memset(used, 0, sizeof used);
        memset(count, 0, (size_t)banks * sizeof count[0]);
        for (int l = p0; l < p0 + per_phase && l < lanes; l++)
            for (int k = 0; k < w; k++) {
                int64_t word = (int64_t)((uint64_t)addr[l] + (uint64_t)k);
                if (!set_insert(key, used, 7, word)) continue;
                int b = (int)(bmask >= 0 ? word & bmask : floor_mod(word, banks));
                if (++count[b] > worst) worst = count[b];
            }
        total += worst;
    }
    return total;
}

/* gs_smem_wavefronts_of through memo (NULL: none). The count is the same
 * for every shift of all the words (equal words stay equal, the banks turn
 * round), so the key is the pattern relative to its first word. */
static double smem_wf_memo(gs_wf_memo *memo, int banks, const int64_t *addr, int lanes, int w) {
    if (!memo || lanes > 64) return gs_smem_wavefronts_of(banks, addr, lanes, w);
    int64_t rel[64];
    for (int l = 0; l < lanes; l++) rel[l] = addr[l] - addr[0];
    const uint64_t key = gs_wf_key(rel, lanes, 0x736d656d00000000ull ^ (uint64_t)banks ^ (uint64_t)w << 16 ^
                                                   (uint64_t)lanes << 24);
    double v;
    if (gs_wf_memo_get(memo, key, &v)) return v;
    v = gs_smem_wavefronts_of(banks, addr, lanes, w);
    gs_wf_memo_put(memo, key, v);
    return v;
}

/* A warp's lane addresses as an odometer: lane l's address is origin +
 * sum digit_i * step[i], where the digits count lane l in the bases base[i],
 * fastest first (digits of base 1 are left out: they never move). */
typedef struct lane_odometer {
    int n, lanes;
    int64_t origin;
    int64_t step[GS_MAX_AXES + GS_MAX_DIMS + 2], base[GS_MAX_AXES + GS_MAX_DIMS + 2];
} lane_odometer;

static void od_digit(lane_odometer *od, int64_t step, int64_t base) {
    if (base <= 1) return;
    od->step[od->n] = step;
    od->base[od->n++] = base;
}

/* Leave out the digits past the lanes: they never move within the warp. */
static void od_trim(lane_odometer *od) {
    int64_t span = 1;
    for (int i = 0; i < od->n; i++) {
        if (span >= od->lanes) {
            od->n = i;
            return;
        }
        span = od->base[i] >= od->lanes ? od->lanes : span * od->base[i];
    }
}

/* The lanes' addresses, kept as a running sum (the same values modulo 2^64
 * as the sums of products). */
static void od_addrs(const lane_odometer *od, int64_t *addr) {
    int64_t dig[GS_MAX_AXES + GS_MAX_DIMS + 2] = {0};
    uint64_t ad = (uint64_t)od->origin;
    for (int l = 0; l < od->lanes; l++) {
        addr[l] = (int64_t)ad;
        for (int i = 0; i < od->n; i++) { /* the next lane */
            if (++dig[i] < od->base[i]) {
                ad += (uint64_t)od->step[i];
                break;
            }
            ad -= (uint64_t)(od->base[i] - 1) * (uint64_t)od->step[i];
            dig[i] = 0;
        }
    }
}

/* gs_smem_wavefronts_of over the odometer's lanes, through the memo keyed by
 * the odometer itself (the lanes' addresses follow from it), so a hit
 * builds no addresses. The addresses count eb-byte elements; the banks see
 * 4-byte words, so two 16-bit elements of one word are one word (a
 * broadcast), and a w-element access spans w*eb/4 words. */
static double smem_wf_od(gs_wf_memo *memo, int banks, const lane_odometer *od, int w, int eb) {
    uint64_t key = 0;
    double v;
    if (memo) {
        int64_t kv[2 * (GS_MAX_AXES + GS_MAX_DIMS + 2) + 3];
        int nk = 0;
        kv[nk++] = od->lanes | (int64_t)banks << 8 | (int64_t)w << 24 | (int64_t)od->n << 32 |
                   (eb == 4 ? 0 : (int64_t)eb << 40);
        kv[nk++] = od->origin;
        for (int i = 0; i < od->n; i++) {
            kv[nk++] = od->step[i];
            kv[nk++] = od->base[i];
        }
        key = gs_wf_key(kv, nk, 0x6f646f6d00000000ull);
        if (gs_wf_memo_get(memo, key, &v)) return v;
    }
    int64_t addr[64];
    od_addrs(od, addr);
    if (eb != 4) {
        for (int l = 0; l < od->lanes; l++) addr[l] = addr[l] * eb / 4;
        w = w * eb / 4 < 1 ? 1 : w * eb / 4;
    }
    v = gs_smem_wavefronts_of(banks, addr, od->lanes, w);
    gs_wf_memo_put(memo, key, v);
    return v;
}

/* The odometer of a warp-wide fragment read of input t (gs_plan_frag_lanes);
 * ts is its box tensor (gs_plan_box_tensor when staged, the tensor when
 * not), which the caller builds once for all its calls. */
static void frag_odometer(const gs_op *op, const gs_etir *e, const gs_plan *p, int t, const gs_tensor *ts, int warp,
                          lane_odometer *od) {
    const gs_plan_input *pi = &p->in[t];
    od->n = 0;
    od->origin = 0;
    int ga = gs_etir_lanes_axis(op);
    if (e->lanes_log2 && ga >= 0) { /* a group's lanes are the fastest thread index */
        uint64_t st = 0;
        for (int j = 0; j < ts->ndim; j++)
            st += (uint64_t)ts->idx[j].coeff[ga] * (uint64_t)(pi->staged ? pi->sstride[j] : 1);
        od_digit(od, (int64_t)st, (int64_t)1 << e->lanes_log2);
    }
    for (int a = op->naxes - 1; a >= 0; a--) { /* last spatial axis fastest, as the kernel */
        if (!spatial(op, a)) continue;
        uint64_t st = 0;
        for (int j = 0; j < ts->ndim; j++)
            st += (uint64_t)ts->idx[j].coeff[a] * (uint64_t)(pi->staged ? pi->sstride[j] : 1);
        od_digit(od, (int64_t)(st * (uint64_t)(e->tile[a].thread / e->V[a])), gs_etir_threads_axis(e, a));
    }
    int64_t nt = p->threads;
    int lanes = (int)(nt < warp ? nt : warp);
    od->lanes = lanes > 64 ? 64 : lanes;
    od_trim(od);
}

int gs_plan_frag_lanes(const gs_op *op, const gs_etir *e, const gs_plan *p, int t, int warp, int64_t *addr) {
    lane_odometer od;
    gs_tensor view;
    const gs_plan_input *pi = &p->in[t];
    frag_odometer(op, e, p, t, pi->staged ? gs_plan_box_tensor(op, pi, t, &view) : &op->tensors[t], warp, &od);
    od_addrs(&od, addr);
    return od.lanes;
}

/* Wavefronts of one copy unit's shared stores, per warp: lane l moves unit l
 * (units are numbered row-major over the tensor dims, copy_vec elements per
 * unit along copy_dim). A unit contiguous in shared memory is one store of
 * store_vec words; a transposed one is copy_vec scalar stores. */
static double store_wavefronts(const gs_op *op, const gs_tensor *ts, const gs_plan_input *pi, int64_t threads, int banks,
                               int warp, gs_wf_memo *memo) { /* ts: pi's box tensor */
    const int eb = in_bytes(op);
    int lanes = (int)(threads < warp ? threads : warp);
    if (lanes > 64) lanes = 64;
    if (lanes > pi->units) lanes = (int)pi->units;
    if (lanes < 1) return 0;
    /* unit l's digits, fastest first: its place in the row (per_row units
     * along copy_dim), then the other dims from the innermost out */
    lane_odometer od;
    od.n = 0;
    od.origin = 0;
    od.lanes = lanes;
    od_digit(&od, pi->copy_vec * pi->sstride[pi->copy_dim], pi->dims[pi->copy_dim] / pi->copy_vec);
    for (int j = ts->ndim - 1; j >= 0; j--)
        if (j != pi->copy_dim) od_digit(&od, pi->sstride[j], pi->dims[j]);
    od_trim(&od);
    if (pi->store_group > 1) { /* lane l moves group l: G-wide stores, per unit */
        const int g = pi->store_group;
        od.n = 0;
        od.lanes = (int)(pi->units / g < lanes ? pi->units / g : lanes);
        od_digit(&od, pi->copy_vec * pi->sstride[pi->copy_dim], pi->dims[pi->copy_dim] / pi->copy_vec);
        for (int j = ts->ndim - 1; j >= 0; j--)
            if (j == pi->inner_dim) od_digit(&od, g * pi->sstride[j], pi->dims[j] / g);
            else if (j != pi->copy_dim) od_digit(&od, pi->sstride[j], pi->dims[j]);
        od_trim(&od);
        double total = 0;
        for (int k = 0; k < pi->copy_vec; k++) {
            od.origin = k * pi->sstride[pi->copy_dim];
            total += smem_wf_od(memo, banks, &od, g, eb);
        }
        return total / g;
    }
    if (pi->store_vec == pi->copy_vec) return smem_wf_od(memo, banks, &od, pi->store_vec, eb);
    double total = 0;
    for (int k = 0; k < pi->copy_vec; k++) {
        od.origin = k * pi->sstride[pi->copy_dim];
        total += smem_wf_od(memo, banks, &od, 1, eb);
    }
    return total;
}

/* The layout decisions of one staged input that need no bank simulation:
 * box, copy vector, fragment vector, which dim is innermost, how much
 * padding is reserved. */
static void plan_input_shape(const gs_hw *hw, const gs_op *op, const gs_etir *e, const gs_plan_opts *o, int t,
                             gs_plan_input *pi, int64_t *reserve_pad) {
    gs_tensor view;
    const gs_tensor *ts = gs_plan_box_tensor(op, pi, t, &view);
    const int eb = in_bytes(op), nd = ts->ndim, vmax = o->scalar ? 1 : vec_max(eb);
    pi->staged = 1;
    for (int j = 0; j < nd; j++) pi->dims[j] = box_dim(op, e, ts, j);
    /* Copy vector: the tensor's innermost dim runs along one axis with unit
     * step, its box origin (offset + a multiple of the block tile) and box
     * extent are multiples of the width, and so is the construction shape's
     * row length (the kernel re-checks the row length and the pointer at run
     * time and takes the scalar path when either is misaligned). */
    pi->copy_dim = (int8_t)(nd - 1);
    pi->copy_vec = 1;
    int ca = unit_axis(&ts->idx[nd - 1], op->naxes);
    /* an im2col tile's innermost view axis is contiguous in global memory
     * only when it is the tensor's innermost unit axis (NHWC's channels; not
     * NCHW's q, which steps the row by the stride) */
    const gs_tensor *real = &op->tensors[t];
    if (pi->im2col && unit_axis(&real->idx[real->ndim - 1], op->naxes) != ca) ca = -1;
    if (ca >= 0)
        pi->copy_vec = (uint8_t)vec_dividing(vmax, ts->idx[nd - 1].offset, pi->dims[nd - 1], ts->shape[nd - 1]);
    /* Fragment vector: a dim that runs along a spatial axis with unit step,
     * where each thread owns runs of T0 = T1/V consecutive elements, can be
     * read with T0-wide vectors when it is innermost in shared memory. The
     * widest wins; on a tie the copy dim stays innermost (no transposition). */
    pi->frag_vec = 1;
    pi->frag_axis = -1;
    pi->inner_dim = pi->copy_dim;
    /* mma: the fragments are a warp's (ldmatrix, or element reads), either
     * orientation, so the copy never transposes */
    for (int j = nd - 1; j >= 0 && vmax > 1 && !e->mma; j--) {
        int a = unit_axis(&ts->idx[j], op->naxes);
        if (a < 0 || !spatial(op, a)) continue;
        int64_t t0 = e->tile[a].thread / e->V[a];
        int w = vec_dividing(vmax, t0, pi->dims[j], 0);
        if (w > pi->frag_vec) {
            pi->frag_vec = (uint8_t)w;
            pi->frag_axis = (int8_t)a;
            pi->inner_dim = (int8_t)j;
        }
    }
    bool transposed = pi->inner_dim != pi->copy_dim;
    pi->store_vec = transposed ? 1 : pi->copy_vec;
    /* Copy mechanism: cp.async moves 4, 8 or 16 contiguous bytes, so a copy
     * that transposes goes through registers; pipelining (stages > 1) is what
     * the register hop would otherwise cost. */
    pi->copy_mode = (gs_hw_has_async_copy(hw) && e->stages > 1 && !o->no_async && !transposed &&
                     pi->copy_vec * eb >= 4) ? GS_COPY_ASYNC : GS_COPY_REG;
    /* Padding reserved: up to 4 words when rows must stay 16-byte aligned
     * (vector reads, vector or asynchronous stores), else 1 (odd pitch). */
    bool aligned = pi->frag_vec > 1 || pi->store_vec > 1 || pi->copy_mode == GS_COPY_ASYNC;
    *reserve_pad = nd > 1 && pi->dims[pi->inner_dim] > 1 ? (aligned ? vec_max(eb) : 1) : 0;
    pi->pad = (int32_t)*reserve_pad;
    int64_t dummy[GS_MAX_DIMS];
    int64_t elems = layout_strides(ts, pi->dims, pi->inner_dim, *reserve_pad, dummy);
    /* whole 16-byte granules, so the next buffer stays aligned for vectors */
    pi->stage_elems = elems >= GS_STAGE_SAT ? GS_STAGE_SAT : (elems + vec_max(eb) - 1) / vec_max(eb) * vec_max(eb);
    int64_t box = 1;
    for (int j = 0; j < nd; j++) box = sat_mul(box, pi->dims[j]);
    pi->units = box / pi->copy_vec;
}

/* Copy units are numbered row-major with copy_vec elements along the copy
 * dim, and thread tid moves units tid + i*threads. When the threads cover
 * whole rows (R = threads / units per row) and R is a multiple of the
 * extents of every row dim inside the outermost one that is not 1, unit i
 * sits R/(those extents) rows further along that outermost dim than unit
 * 0: the offsets are linear in i. (Along any inner dim the index would
 * wrap into the next one.) */
static void plan_unit_step(const gs_tensor *ts, gs_plan_input *pi, int64_t nt) { /* ts: pi's box tensor */
    pi->unit_linear = 0;
    pi->unit_dim = -1;
    int64_t per_row = pi->dims[pi->copy_dim] / pi->copy_vec;
    if (per_row <= 0 || nt % per_row) return;
    int64_t R = nt / per_row, inner = 1;
    if (pi->units_per_thread <= 1) {
        /* a single unit: nothing to step */
        pi->unit_linear = 1;
        pi->unit_dim = pi->copy_dim;
        pi->unit_rows = 0;
        return;
    }
    for (int j = ts->ndim - 1; j >= 0; j--) { /* row dims, fastest first */
        if (j == pi->copy_dim) continue;
        bool outer_rest = true; /* every slower row dim has extent 1 */
        for (int k = j - 1; k >= 0; k--)
            if (k != pi->copy_dim && pi->dims[k] > 1) outer_rest = false;
        if (outer_rest) {
            if (R % inner) return;
            pi->unit_linear = 1;
            pi->unit_dim = (int8_t)j;
            pi->unit_rows = (int32_t)(R / inner);
            return;
        }
        inner *= pi->dims[j];
    }
}

/* What the plan's decisions read of a state again and again, computed once
 * per plan (plan_facts_of): the reduce axes, their tiles' product, the
 * accumulators and each input's FFMA fragment elements. */
typedef struct plan_facts {
    bool red_neg;                 /* some input's index has a negative coefficient on a reduce axis */
    int nred;                     /* reduce axes */
    int k;                        /* the last reduce axis; -1: none */
    int64_t trip;                 /* the product of the reduce axes' block tiles */
    int64_t acc;                  /* accumulators per thread (gs_etir_acc_regs) */
    int64_t frag[GS_MAX_TENSORS]; /* gs_plan_frag_elems of each input */
} plan_facts;

/* Whether some input's index has a negative coefficient on a reduce axis
 * (the operator's: once per memo). */
static bool reduce_coeff_neg(const gs_op *op, gs_wf_memo *memo) {
    if (memo && memo->reduce_coeff_neg) return memo->reduce_coeff_neg > 0;
    bool neg = false;
    for (int t = 0; t < op->ninputs && !neg; t++)
        for (int j = 0; j < op->tensors[t].ndim; j++)
            for (int a = 0; a < op->naxes; a++)
                if (!spatial(op, a) && op->tensors[t].idx[j].coeff[a] < 0) neg = true;
    if (memo) memo->reduce_coeff_neg = neg ? 1 : -1;
    return neg;
}

static void plan_facts_of(const gs_op *op, const gs_etir *e, gs_wf_memo *memo, plan_facts *f) {
    uint8_t sp = 0;
    f->red_neg = reduce_coeff_neg(op, memo);
    f->nred = 0;
    f->k = -1;
    f->trip = 1;
    f->acc = 1;
    for (int a = 0; a < op->naxes; a++) {
        if (spatial(op, a)) {
            sp |= (uint8_t)(1u << a);
            f->acc *= e->tile[a].thread;
        } else {
            f->nred++;
            f->k = a;
            f->trip *= e->tile[a].block;
        }
    }
    for (int t = 0; t < op->ninputs; t++) {
        int64_t n = 1;
        for (unsigned m = gs_wf_uses(memo, op, t) & sp; m; m &= m - 1) n *= e->tile[__builtin_ctz(m)].thread;
        f->frag[t] = n;
    }
}

/* A transposing register copy of a convolution (several reduce axes) stores
 * each unit's copy_vec elements to copy_vec rows of shared memory, one
 * scalar store each: on the 3x3 conv picks a third of the steady loop's
 * non-FFMA work. When a thread moves G scalar units (2 or 4) that are
 * consecutive rows of the smem-innermost dim, they are one G-wide store. plan.store_group numbers them so: the groups as the units would be
 * with inner_dim's extent divided by G (they must step linearly, and every
 * thread moves the same whole groups), the row in the group slowest. The
 * padding reserved must keep rows G-aligned (0 or a vector, not an odd
 * pitch). Only the prefetched stores of a pipeline are grouped (the
 * prologue's and the edge path's stay scalar at the same addresses). */
static void plan_store_group(const gs_tensor *ts, const gs_etir *e, const gs_plan *p, const plan_facts *f,
                             gs_plan_input *pi, int64_t nt) { /* ts: pi's box tensor */
    pi->store_group = 0;
    if (f->nred <= 1 || e->mma || p->opts.scalar || !p->fast_path || p->stages < 2) return;
    if (pi->copy_mode != GS_COPY_REG || pi->im2col || pi->swizzle || pi->inner_dim == pi->copy_dim) return;
    /* scalar units only: a wider unit's G loads fill G register quads and
     * its stores read the transposed quads, so ptxas moves 3/4 of the values
     * (h100 nhwc 3x3 pick, copy_vec 4: 12 STS saved a group, 12 MOV added) */
    if (pi->copy_vec != 1) return;
    if (nt <= 0 || pi->units != (int64_t)pi->units_per_thread * nt) return;
    for (int g = 4; g >= 2; g /= 2) {
        if (pi->units_per_thread % g || pi->dims[pi->inner_dim] % g || pi->pad % g) continue;
        gs_plan_input r = *pi;
        r.dims[r.inner_dim] /= g;
        r.units /= g;
        r.units_per_thread /= g;
        plan_unit_step(ts, &r, nt);
        if (!r.unit_linear) continue;
        pi->store_group = (uint8_t)g;
        pi->unit_linear = 1;
        pi->unit_dim = r.unit_dim;
        pi->unit_rows = r.unit_rows * (r.unit_dim == pi->inner_dim ? g : 1);
        return;
    }
}

/* Whether adding i*nt to a thread index tid < nt never carries between the
 * unit numbering's digits (fastest first: the copy dim's units per row, then
 * the other box dims from the innermost out). It does not when, for some
 * digit k, nt is a multiple of the digits below it (P) and digit k's extent
 * a multiple of nt/P: tid fills the lower digits and stays below nt/P in
 * digit k, while i*nt is 0 in the lower digits and a multiple of nt/P in
 * digit k. Then unit i's box coordinates are tid's plus i*nt's, and its
 * offsets unit 0's plus those of i*nt alone, which an unrolled loop folds. */
static bool unit_separable(const gs_tensor *ts, const gs_plan_input *pi, int64_t nt) { /* ts: pi's box tensor */
    int64_t P = pi->dims[pi->copy_dim] / pi->copy_vec, d = P;
    if (P <= 0 || nt <= 0) return false;
    P = 1;
    for (int j = ts->ndim; j >= 0; j--) { /* j == ndim: the copy dim's digit */
        if (j < ts->ndim) {
            if (j == pi->copy_dim) continue;
            d = pi->dims[j];
        }
        if (P > nt || d <= 0) return false;
        if (nt % P == 0 && d % (nt / P) == 0) return true;
        P *= d;
    }
    return false;
}

/* An unstaged input is read straight from global memory in the reduce loop.
 * When each of its dims is one axis with unit step, no offset and that
 * axis' extent as its shape (a gemm operand, a gemv vector, an eltwise
 * input; not a padded conv window), an interior block's reads are in range
 * and need no predicate, and the innermost dim can be read as vectors of the
 * thread's run T0. */
static void plan_unstaged(const gs_op *op, const gs_etir *e, const gs_plan_opts *o, int t, gs_plan_input *pi) {
    const gs_tensor *ts = &op->tensors[t];
    pi->frag_vec = 1;
    pi->inner_dim = pi->copy_dim = (int8_t)(ts->ndim - 1);
    if (o->predicated) return;
    for (int j = 0; j < ts->ndim; j++) {
        int a = unit_axis(&ts->idx[j], op->naxes);
        if (a < 0 || ts->idx[j].offset != 0 || ts->shape[j] != op->axes[a].extent) return;
    }
    pi->direct = 1;
    int a = unit_axis(&ts->idx[ts->ndim - 1], op->naxes);
    if (o->scalar || !spatial(op, a)) return;
    int w = vec_dividing(vec_max(in_bytes(op)), e->tile[a].thread / e->V[a], ts->shape[ts->ndim - 1], 0);
    if (w > 1) {
        pi->frag_vec = (uint8_t)w;
        pi->frag_axis = (int8_t)a;
    }
}

/* Registers one copy unit holds while it is in flight: its loaded values
 * (none for cp.async), a 64-bit global address, a shared offset, and on a
 * non-linear unit its coordinates for the edge path's predicates. */
static int unit_regs(const gs_op *op, int t, const gs_plan_input *pi) {
    int v = pi->copy_mode == GS_COPY_ASYNC ? 0 : (pi->copy_vec * in_bytes(op) + 3) / 4; /* 32-bit registers */
    return v + 3 + (pi->unit_linear || pi->unit_sep ? 0 : op->tensors[t].ndim);
}

/* Registers per thread the plan is sized for: accumulators, fragments, the
 * prefetch registers of register-path copies in a pipeline, one offset per
 * copy unit, and a base for indices and pointers. An upper bound on ptxas'
 * count over the test sweeps where it costs occupancy (tests/test_kernels.c and
 * tests/test_suites.c assert that ptxas' count costs no block per SM). */
/* mma: fragment registers of input t per k-step, the row's registers per
 * instruction tile times the warp's tiles along t's axis (A: warp_m / m,
 * B: warp_n / n). */
static int64_t mma_frag_regs(const gs_plan *p, int t) {
    const gs_mma_row *r = gs_mma_get(p->mma);
    return t == 0 ? (int64_t)r->a.regs * (p->warp_m / r->m) : (int64_t)r->b.regs * (p->warp_n / r->n);
}

/* Registers the fragment pipeline leaves under the per-thread limit where
 * the bound misses some (plan_common_memo). */
#define GS_FRAG_PIPE_REGS_SLACK 8

static void mma_ldsm_mode(const gs_op *op, const gs_etir *e, gs_plan_input *pi, int t, const gs_mma_row *r,
                          gs_wf_memo *memo);

/* The row's k-steps in a reduce tile (the reduce axes' block tiles). */
static int64_t mma_ksteps(const gs_op *op, const gs_etir *e, const gs_mma_row *r) {
    int64_t kt = 1;
    for (int a = 0; a < op->naxes; a++)
        if (!spatial(op, a)) kt *= e->tile[a].block;
    return (kt + r->k - 1) / r->k;
}

/* *plain (when given): the bound of the same plan without fragment double
 * buffering (p->frag_pipe 0), counted in the same pass: the second
 * fragment sets are the only terms that read it (pipe). */
static int regs_bound(const gs_op *op, const gs_etir *e, const gs_plan *p, const plan_facts *pf, int *plain,
                      gs_wf_memo *memo) {
    int64_t acc = pf->acc;
    int64_t regs = acc + GS_PLAN_REGS_BASE + 2 * op->naxes, slack = 0, pipe = 0;
    /* an mma tile of many accumulators on an ldmatrix row whose registers
     * feed the mma as loaded: its copies count one unit in flight (below);
     * tf32's are rounded on their way (cvt.rna), ldmatrix or element reads,
     * and keep the batch */
    const gs_mma_row *mrow = p->mma ? gs_mma_get(p->mma) : NULL;
    const bool cvt = mrow && mrow->math == GS_MATH_TF32;
    bool relax = mrow && acc >= GS_PLAN_MMA_RELAX_ACC && mrow->ldsm && !cvt;
    /* a group's combine: ptxas issues a step's shuffles for all
     * accumulators before their adds, a temporary each (a100, acc 128, g8:
     * 255 registers and spills) */
    if (p->lanes > 1) regs += acc;
    /* The multiply runs the thread tile's spatial axes as nested loops in
     * axis order; the outermost one that loops (thread tile > 1) is `outer`.
     * With double-buffered fragments (frag_pipe) an input indexed by it
     * reads each fragment in one outer iteration only, so its fragments die
     * row by row during the multiply and the next step's land in their
     * registers; an input without it reads every fragment until the last
     * FFMA, and its next set needs registers of its own. Counting both
     * inputs twice overstated ptxas by 16-24 registers on gemm 8192^3's picks
     * (64x256 8x16 on h100: bound 259, ptxas 255 at 0 spills). */
    int outer = -1;
    for (int a = 0; a < op->naxes && outer < 0; a++)
        if (spatial(op, a) && e->tile[a].thread > 1) outer = a;
    for (int t = 0; t < op->ninputs; t++) {
        int64_t f = pf->frag[t];
        if (p->mma) {
            f = mma_frag_regs(p, t); /* packed 32-bit fragment registers */
            gs_plan_input li = p->in[t]; /* ldmatrix is chosen later (finish): ask now */
            mma_ldsm_mode(op, e, &li, t, gs_mma_get(p->mma), memo);
            const gs_mma_row *r = gs_mma_get(p->mma);
            if (!li.ldsm || cvt) {
                /* element reads are plain shared loads, which ptxas hoists
                 * across the unrolled k-steps of a tile (ldmatrix and mma
                 * are volatile asm and keep their order): a set per k-step.
                 * tf32 bgemm 128x64x32 with 128x16 warp tiles: bound 238,
                 * ptxas 255 and 408 bytes spilled on h100. tf32 by ldmatrix
                 * alike (its words rounded as elements are): a100 4096^3
                 * transB=1 128x128x64, 64x32 warp tiles, counted 220 with
                 * one set, ptxas 255 and 16-496 bytes spilled */
                const int64_t steps = mma_ksteps(op, e, r);
                regs += f * (steps > 2 ? steps : 1);
                if (steps <= 2 && p->frag_pipe) pipe += f;
            } else {
                /* a relaxed count takes a k8 row's fragments of two k-steps:
                 * ptxas loads the unrolled loop's next step beside the current
                 * one (h100 f16 gemms with a bias on m16n8k8, 128x32 warp
                 * tiles: counted 252 with one step's, 12 bytes of spills);
                 * a tile of one k-step has no next step to load before its
                 * barrier (h100 f16 NHWC 3x3, c 8: counted 281, ptxas 197) */
                if (relax && r->k < 16 && mma_ksteps(op, e, r) > 1) f *= 16 / r->k;
                regs += f;
                if (p->frag_pipe) pipe += f; /* double-buffered fragments: two sets */
            }
        } else {
            bool dies = outer >= 0 && gs_tensor_uses_axis(&op->tensors[t], outer);
            regs += f;
            if (p->frag_pipe && !dies) pipe += f; /* the second set, where the first stays live */
            /* TF32 on the FFMA core: each fragment element is rounded as it
             * is read (cvt + mask), a temporary beside the f32 value (a100
             * conv2d 3x3 NCHW tf32, 8x8 thread tiles: 8 bytes spilled at 255) */
            if (op->math == GS_MATH_TF32) regs += f;
        }
        const gs_plan_input *pi = &p->in[t];
        /* 16-bit inputs: a vector read's packed words live beside the
         * converted fragment (f32: the read is the fragment) */
        if (op->dtype_in != GS_DTYPE_F32 && !p->mma) regs += (pi->frag_vec * in_bytes(op) + 3) / 4 + 1;
        if (!pi->staged) continue;
        /* the units' global and shared offsets: two, two per unit, or none
         * (recomputed where used) */
        /* (separable units: ptxas keeps each unit's folded global offset, a
         * loop invariant, in a register of its own) */
        regs += pi->unit_linear ? 3 : pi->unit_sep ? 3 + pi->units_per_thread
                                  : pi->unit_recompute ? 4 : 2 * pi->units_per_thread;
        /* the prefetch registers of a register pipeline, and the units of
         * one batch in flight */
        if (p->stages > 1 && pi->copy_mode == GS_COPY_REG) regs += (int64_t)pi->units_per_thread * pi->copy_vec;
        /* mma with cp.async and an ldmatrix row (16-bit): a unit's cp.async
         * consumes its address at once, and the edge path fills and stores
         * one unit's vector at a time, so beside the accumulators and
         * fragments ptxas keeps one unit in flight, not the batch, and half
         * a register per unit of the tile (its addresses, which ptxas keeps
         * across tiles while registers allow). Fitted to ptxas on sm_90,
         * gemm 4096^3 f16 with 64x64 warp tiles: 128x256x64 (4 + 8 units per
         * thread) 254 registers and 0 spills, counted 254, where counting
         * the batches gave 356; 128x128x64 with 4 warps (8 + 8 units) 216
         * bytes of spills, counted 256. A tf32 row keeps the batch, by
         * ldmatrix or element reads: its loads and conversions hold more
         * (128x128x32 tf32 read by elements, 64x64 warp tiles: 72 bytes of
         * spills at 255).
         * So do tiles of fewer than GS_PLAN_MMA_RELAX_ACC accumulators,
         * where ptxas keeps the units' registers rather than recompute them
         * (a100 bgemm 32x64x64, 32x32 warp tiles, 4 + 8 units: counted 160,
         * 16 bytes of spills under the 204 registers five blocks leave). */
        int64_t flight = relax && pi->copy_mode == GS_COPY_ASYNC ? 1 : pi->copy_batch;
        if (flight < pi->copy_batch) {
            slack = GS_PLAN_MMA_REGS_SLACK;
            regs += (pi->units_per_thread + 1) / 2;
        }
        regs += flight * unit_regs(op, t, pi);
        /* 16-bit inputs: the edge path's predicated loads hold an element a
         * 32-bit register each while a batch is in flight (a100 bf16 rowmax,
         * 8 units of 8 halves: 96 registers and a spill uncounted) */
        if (op->dtype_in != GS_DTYPE_F32 && pi->staged) regs += flight * pi->copy_vec;
    }
    regs += slack;
    /* ... and its epilogue's bias values, one per element of the thread
     * tile along the bias axis, live beside the accumulators (h100 f16 and
     * bf16 gemms with a bias, 64x64 warp tiles, counted 246-254 without
     * them: 12 bytes of spills each) */
    if (slack && op->has_bias && op->epi.bias_axis >= 0) regs += e->tile[op->epi.bias_axis].thread;
    if (plain) *plain = (int)(regs > 100000 ? 100000 : regs);
    regs += pipe;
    return (int)(regs > 100000 ? 100000 : regs);
}

/* Units per unrolled batch of a staged input's copy. Register prefetch in a
 * pipeline keeps every unit in its own registers (one batch); units with
 * per-unit offset arrays are one batch (the arrays are indexed by the
 * unrolled counter); the predicated plan moves GS_PLAN_SERIAL_UNROLL units at
 * a time, as v1; otherwise a batch holds about GS_PLAN_COPY_BATCH_REGS
 * registers of units in flight. */
static int32_t copy_batch(const gs_op *op, int t, const gs_plan *p, const gs_plan_input *pi) {
    int32_t upt = pi->units_per_thread, b;
    if (p->stages > 1 && pi->copy_mode == GS_COPY_REG) return upt;
    if (!pi->unit_linear && !pi->unit_sep && !pi->unit_recompute) return upt; /* <= GS_PLAN_UNIT_ARRAY_MAX */
    /* separable cp.async units: one batch, so that i is an unrolled constant
     * and each unit's digits fold (a rolled batch loop divides i at run time);
     * a cp.async unit holds no value registers while in flight */
    if (pi->unit_sep && pi->copy_mode == GS_COPY_ASYNC) return upt;
    if (p->opts.predicated) b = GS_PLAN_SERIAL_UNROLL;
    else b = GS_PLAN_COPY_BATCH_REGS / unit_regs(op, t, pi);
    if (b < 1) b = 1;
    return b < upt ? b : upt;
}

/* Warps per SM that registers allow at regs per thread: each of the
 * GS_SM_PARTITIONS schedulers owns a quarter of the register file and its
 * own warps, and a warp's registers are allocated in units of 8 per thread
 * (256 per warp). This is also the rule ptxas applies to launch bounds:
 * (16 threads, 13 blocks) on sm_75 caps a thread at 128 registers, not 157. */
int64_t gs_hw_warps_by_regs(const gs_hw *hw, int regs) {
    int64_t rpt = ((int64_t)(regs > 0 ? regs : 1) + 7) / 8 * 8;
    return hw->regs_per_sm / GS_SM_PARTITIONS / (rpt * hw->warp_size) * GS_SM_PARTITIONS;
}

int gs_hw_regs_cap(const gs_hw *hw, int64_t warps_per_sm) {
    if (warps_per_sm < 1) warps_per_sm = 1;
    int64_t per_part = (warps_per_sm + GS_SM_PARTITIONS - 1) / GS_SM_PARTITIONS;
    int64_t cap = hw->regs_per_sm / GS_SM_PARTITIONS / (per_part * hw->warp_size) / 8 * 8;
    if (cap > hw->max_regs_per_thread) cap = hw->max_regs_per_thread;
    return (int)(cap < 8 ? 8 : cap);
}

/* gs_plan_blocks_per_sm's limits that do not read the registers (the
 * block, thread and shared-memory limits); *warps the block's warps (the
 * plan allows no block when below 1). */
static int64_t blocks_but_regs(const gs_hw *hw, const gs_plan *p, int64_t *warps) {
    *warps = (p->threads + hw->warp_size - 1) / hw->warp_size;
    int64_t mb = hw->max_blocks_per_sm;
    if (*warps < 1) return 0;
    int64_t by_thr = hw->max_threads_per_sm / (*warps * hw->warp_size);
    int64_t sm = p->smem_bytes + p->scratch_bytes;
    int64_t by_smem = sm ? hw->smem_per_sm / (sm + GS_PLAN_SMEM_RESERVED) : mb;
    if (by_thr < mb) mb = by_thr;
    if (by_smem < mb) mb = by_smem;
    return mb;
}

int64_t gs_plan_blocks_per_sm(const gs_hw *hw, const gs_plan *p, int regs) {
    int64_t warps, mb = blocks_but_regs(hw, p, &warps);
    if (warps < 1) return 0;
    int64_t by_reg = gs_hw_warps_by_regs(hw, regs) / warps;
    return by_reg < mb ? by_reg : mb;
}

/* The box of a staged input with a window dim: *pi holds its tensor box
 * (shaped, *pad its padding reserve); it becomes the im2col tile when that
 * takes less shared memory (a stride's gaps, or a window tile smaller than
 * its halo; both laid out with their padding). The options force either. A
 * tie keeps the tensor box: its rows are longer. */
static void choose_box(const gs_hw *hw, const gs_op *op, const gs_etir *e, const gs_plan_opts *o, int t,
                       gs_plan_input *pi, int64_t *pad, gs_wf_memo *memo) {
    int8_t axes[GS_MAX_DIMS];
    int n;
    if (memo && memo->i2c_known >> t & 1) { /* the operator's: once per memo */
        n = memo->i2c_n[t];
        memcpy(axes, memo->i2c_axes[t], sizeof axes);
    } else {
        memset(axes, -1, sizeof axes); /* the plan's bytes are hashed: no undefined ones */
        n = im2col_axes(op, t, axes);
        if (memo) {
            memo->i2c_n[t] = (int8_t)n;
            memcpy(memo->i2c_axes[t], axes, sizeof axes);
            memo->i2c_known |= (uint8_t)(1u << t);
        }
    }
    if (n <= 0 || o->im2col == GS_IM2COL_OFF) return;
    gs_plan_input tile;
    memset(&tile, 0, sizeof tile);
    tile.im2col = 1;
    tile.view_ndim = (uint8_t)n;
    memcpy(tile.view_axis, axes, sizeof axes);
    int64_t tpad;
    plan_input_shape(hw, op, e, o, t, &tile, &tpad);
    if (o->im2col != GS_IM2COL_FORCE && tile.stage_elems >= pi->stage_elems) return;
    *pi = tile;
    *pad = tpad;
}

_Static_assert(GS_MAX_AXES <= 8 && GS_MAX_TENSORS <= 8, "gs_wf_memo.uses holds a byte of axes per tensor");
uint8_t gs_wf_memo_uses_fill(gs_wf_memo *memo, const gs_op *op, int t) {
    uint8_t m = 0; /* the axes t uses, as bits, once per memo */
    for (int a = 0; a < op->naxes; a++)
        if (gs_tensor_uses_axis(&op->tensors[t], a)) m |= (uint8_t)(1u << a);
    if (memo) {
        memo->uses[t] = m;
        memo->uses_known |= (uint8_t)(1u << t);
    }
    return m;
}

/* The key of staged input t's layout decisions (plan_input_shape, then
 * choose_box, then the halo) in state e: they read the block tiles of the
 * axes t uses, the per-chunk run T1/V of its spatial axes (fragment
 * vectors), whether the state pipelines (the copy mode), whether it runs
 * on the tensor cores (no fragment vectors: no transposed layout) and the
 * plan options po it reads (the state's own: scalar, noasync, im2col; all 0
 * in a construction, so its keys are what they were); the operator and the
 * profile are the memo's own. */
static uint64_t layout_key(const gs_op *op, const gs_etir *e, const gs_plan_opts *po, int t, gs_wf_memo *memo) {
    int64_t kv[2 * GS_MAX_AXES + 2];
    int nk = 0;
    kv[nk++] = t | (int64_t)(e->stages > 1) << 8 | (int64_t)(e->mma != 0) << 9 | /* (an mma layout never transposes) */
               (int64_t)(po->scalar != 0) << 10 | (int64_t)(po->no_async != 0) << 11 | (int64_t)po->im2col << 12;
    for (unsigned m = gs_wf_memo_uses(memo, op, t); m; m &= m - 1) { /* the axes t uses, in order */
        const int a = __builtin_ctz(m);
        kv[nk++] = (int64_t)a << 40 | e->tile[a].block;
        if (spatial(op, a)) kv[nk++] = e->tile[a].thread / e->V[a];
    }
    return gs_wf_key(kv, nk, 0x6c61796f75740000ull);
}

static void plan_common_memo(const gs_hw *hw, const gs_op *op, const gs_etir *e, const gs_plan_opts *o,
                             gs_wf_memo *memo, gs_plan *p);

/* Fragment double buffering (plan.frag_pipe): where the main loop is the
 * staged pipeline and a tile's k-steps (a thread's: with reduce lanes, the
 * last reduce axis' tile over the lanes) are unrolled into straight code,
 * with an even count so that each tile starts on the same fragment set.
 * Its loads are placed a k-step ahead by the printer; a tile of more than
 * GS_PLAN_FRAG_PIPE_TRIP steps keeps the partly unrolled plain loop (32
 * fully unrolled steps spilled under tight launch bounds). */
static uint8_t frag_pipe_of(const gs_op *op, const gs_etir *e, const gs_plan *p, const plan_facts *f,
                            gs_wf_memo *memo) {
    /* a product of two inputs (gemm, bgemm, gemv, conv): the FFMA main loop;
     * a pooling or row reduction reads one fragment and is bound elsewhere */
    if (op->ninputs < 2 || op->combine != GS_COMBINE_MAC) return 0;
    if (p->stages < 2 || !p->fast_path || p->opts.no_frag_pipe) return 0;
    if (p->mma) { /* the mma core: a k-step is the row's k over the flattened reduce tile */
        int8_t role[GS_MAX_AXES];
        int64_t bk = 1;
        gs_wf_memo_mma_roles(memo, op, role);
        for (int a = 0; a < op->naxes; a++)
            if (role[a] == GS_MMA_ROLE_K) bk *= e->tile[a].block;
        int64_t steps = bk / gs_mma_get(p->mma)->k;
        return steps >= 2 && steps % 2 == 0 && steps <= GS_PLAN_FRAG_PIPE_TRIP;
    }
    int64_t body = f->acc + 8, trip = f->trip;
    const int last = f->k;
    /* reduce lanes split the last reduce axis: a thread's k-steps are 1/lanes of them */
    if (p->lanes > 1 && (last < 0 || e->tile[last].block % p->lanes)) return 0;
    trip /= p->lanes;
    if (trip < 2 || trip % 2 || trip > GS_PLAN_FRAG_PIPE_TRIP || trip * body > 4096) return 0;
    for (int t = 0; t < op->ninputs; t++)
        if (!e->staged[t]) return 0;
    return 1;
}

/* Peeling of an operator of several reduce axes (a convolution's c, r, s):
 * the full tiles of a block whose window lies inside the input run without
 * checks. Needs every staged box copied from its tensor (no im2col view),
 * no split-K, and every dim non-decreasing in each reduce axis (coefficients
 * >= 0: a stride and a dilation), so that the copies' fast-path check holds
 * for every full tile once it holds at the lowest and highest reduce
 * origins. */
static uint8_t peel_window_of(const gs_op *op, const gs_plan *p, const plan_facts *f) {
    if (p->split_axis >= 0 || p->splitk > 1 || p->mma || f->red_neg) return 0;
    for (int t = 0; t < op->ninputs; t++)
        if (!p->in[t].staged || p->in[t].im2col) return 0;
    return 1;
}

/* Peeling (plan.peel): each staged box is gemm-like along the single
 * reduce axis k, every dim indexed by spatial axes only or by k alone with
 * unit coefficient and no offset, so "tile it is full" makes the k part of
 * a copy's fast-path check true and the rest does not change with it. With
 * one reduce axis a product of two inputs (gemm, bgemm, gemv) peels in the
 * plain pipeline too (no frag_pipe; the FFMA core): its steady loop's
 * copies walk one pointer per input, as the fragment-pipelined one's. */
static uint8_t peel_of(const gs_op *op, const gs_plan *p, const plan_facts *f) {
    const int k = f->k, nred = f->nred;
    if (k < 0) return 0;
    if (!p->frag_pipe && (nred > 1 || p->mma || p->stages < 2 || !p->fast_path || p->smem_bytes <= 0 ||
                          op->ninputs < 2 || op->combine != GS_COMBINE_MAC))
        return 0;
    if (nred > 1) return peel_window_of(op, p, f);
    for (int t = 0; t < op->ninputs; t++) {
        const gs_plan_input *pi = &p->in[t];
        if (!pi->staged || pi->im2col) return 0;
        for (int j = 0; j < op->tensors[t].ndim; j++) {
            const gs_affine *f = &op->tensors[t].idx[j];
            if (!f->coeff[k]) continue;
            if (f->coeff[k] != 1 || f->offset) return 0;
            for (int a = 0; a < op->naxes; a++)
                if (a != k && f->coeff[a]) return 0;
        }
    }
    return 1;
}

/* One set of a thread's fragments on the FFMA core: each input's thread
 * tile over the spatial axes it uses. */
static int64_t frag_set_regs(const gs_op *op, const plan_facts *f) {
    int64_t set = 0;
    for (int t = 0; t < op->ninputs; t++) set += f->frag[t];
    return set;
}

/* gs_plan_blocks_per_sm at regs registers, given its other limits
 * (blocks_but_regs: mb blocks of warps >= 1 warps) */
static int64_t blocks_at(const gs_hw *hw, int64_t mb, int64_t warps, int64_t regs) {
    int64_t b = gs_hw_warps_by_regs(hw, (int)regs) / warps;
    return b < mb ? b : mb;
}

/* A conv steady loop's early turn (plan.cross_turn on frag_pipe): at
 * 00213b5 its copies of the tile stages-1 ahead, issued after the first
 * k-step's multiply, put the next k-steps' shared loads behind those global
 * loads, which waited for their registers to free, 4 slots before their
 * FFMAs (--sass, h100 NHWC 3x3 pick); turned a k-step early the next tile's
 * first fragments go to a third set, which the bound counts
 * (plan_common_memo): taken only where it fits under the per-thread limit
 * with frag_pipe's slack and keeps the plan's register blocks per SM (its
 * launch bounds hold ptxas to them). Against the bound without the third
 * set, make check-suites found spills on a100 conv2d N=128 C=256 H=30 W=30
 * K=256 3x3 stride 2 NCHW (n:64/4 k:64/8/v2 c:8 st2 r2). */
static bool conv_turn_fits(const gs_hw *hw, const gs_plan *p, int64_t set) {
    /* and a set more for ptxas' hoisting of the next loads: with the third
     * set alone, make check-suites found 12 bytes spilled on t4 conv2d
     * N=128 C=320 H=7 W=7 K=1280 1x1 NHWC (n:64/4 k:64/8/v2 c:8, lb(128,3):
     * bound 146 + 12 under the cap of 168; ptxas 138 registers without the
     * turn, 168 and spills with it). Two more, as the gemm turn's copies at
     * the turn take (cross_turn_of), would leave none of the four 3x3 picks
     * turned (h100 NHWC bound 215, a100 NCHW 220: ptxas 209 and 188 with
     * the turn) */
    const int64_t hoist = set;
    if (p->regs_bound + set + hoist > hw->max_regs_per_thread ||
        p->regs_bound + set + GS_FRAG_PIPE_REGS_SLACK > hw->max_regs_per_thread)
        return false;
    /* (gs_plan_blocks_per_sm at each count: its other limits once) */
    int64_t warps, mb = blocks_but_regs(hw, p, &warps);
    if (warps < 1) return true; /* no block at any count */
    if (blocks_at(hw, mb, warps, p->regs_bound + set + hoist) < blocks_at(hw, mb, warps, p->regs_bound)) return false;
    /* at the bound and at each count a little under it that ptxas and the
     * model take (a register allocation unit, as frag_pipe's check): the
     * model's occupancy, and so its estimate, is that of the loop without
     * the turn (checked at the bound alone, the t4 dwconv2d C=576 stride-2
     * walk found a pick 3 % slower, 7.07 -> 7.29 us) */
    for (int d = 0; d < 8; d++)
        if (blocks_at(hw, mb, warps, p->regs_bound + set - d) < blocks_at(hw, mb, warps, p->regs_bound - d)) return false;
    return true;
}

/* The plain steady loop's turn before the last k-step (plan.cross_turn):
 * the plain pipeline's peeled loop of one reduce axis on the FFMA core,
 * with a first and a last k-step apart (two or more a thread and tile). At
 * e6ace09 its first k-step's shared loads came right after the barrier,
 * 6-9 issue slots before their FFMAs (--sass on the gemm 4096^3 and 8192^3
 * picks, h100 and a100). The copies go to the turn where two more fragment
 * sets fit beside the plan's registers (the plain bound, less a reduce
 * group's combine temporaries, which the main loop does not hold): ptxas
 * then hoists each k-step's loads about two k-steps ahead. On the h100
 * 128x128x8 8x16 pick (bound 240) that took 255 registers and spilled; its
 * copies come after the second k-step's loads (230 registers, loads 25
 * slots ahead or more), where the a100 picks' came 16 slots ahead, against
 * 22 and 44 at the turn. */
/* *third: the registers of a conv loop's third fragment set where it turns
 * (0 otherwise) */
static uint8_t cross_turn_of(const gs_hw *hw, const gs_op *op, const gs_etir *e, const gs_plan *p,
                             const plan_facts *f, int64_t *third) {
    *third = 0;
    if (!p->peel || p->mma) return 0;
    const int k = f->k, nred = f->nred;
    /* A convolution's steady loop (frag_pipe over several reduce axes)
     * turns before the last k-step already; it turns a k-step earlier, the
     * next tile's first fragments into a third set, its copies after the
     * tile's last multiply (conv_turn_fits) */
    if (p->frag_pipe) {
        const int64_t set = nred > 1 ? frag_set_regs(op, f) : 0;
        if (nred <= 1 || !conv_turn_fits(hw, p, set)) return 0;
        *third = set;
        return GS_CROSS_TURN_COPY_AT_TURN;
    }
    /* (tiles are powers of two: two k-steps or more are an even count) */
    if (nred != 1 || p->lanes < 1 || e->tile[k].block % p->lanes || e->tile[k].block / p->lanes < 2 ||
        e->tile[k].block / p->lanes % 2)
        return 0;
    const int64_t set = frag_set_regs(op, f);
    int64_t regs = p->regs_bound + 2 * set - (p->lanes > 1 ? f->acc : 0);
    /* and as much again for ptxas' hoisting, within the register blocks per
     * SM of the plan's bound (its launch bounds hold ptxas to them): against
     * the 255 of a thread alone, gemm M=2048 N=1536 K=512 on a100 (bound 129,
     * lb(64,6)) and gemm M=128 N=512 K=512 on orin-nano (157, lb(128,3))
     * turned with their copies and spilled (make check-suites) */
    const bool fits = regs + 2 * set <= hw->max_regs_per_thread &&
                      gs_plan_blocks_per_sm(hw, p, (int)(regs + 2 * set)) >= gs_plan_blocks_per_sm(hw, p, p->regs_bound);
    return fits ? GS_CROSS_TURN_COPY_AT_TURN : GS_CROSS_TURN_COPY_EARLY;
}

/* Unroll the reduce loop fully while it is short and its body small;
 * a longer loop is unrolled by GS_PLAN_K_UNROLL (ptxas hoists the shared
 * loads of a fully unrolled long loop far ahead, at a register each),
 * and beyond about 4k instructions by 4 (instruction cache). With
 * fragment double buffering: fully. */
static uint8_t k_unroll_of(const gs_plan *p, const plan_facts *f) {
    if (p->frag_pipe) return 0;
    const int64_t body = f->acc + 8, trip = f->trip;
    return (uint8_t)(trip * body > 4096 ? 4 : trip > GS_PLAN_K_UNROLL ? GS_PLAN_K_UNROLL : 0);
}

/* plan.in[t].kmask of an mma plan: the reduce axes beyond whose extent
 * input t's copy does not read zeros. Only a dim indexed by the axis alone,
 * at unit step, no offset and the axis' extent as its shape, turns a
 * coordinate past the extent into one past the tensor's edge (zero-filled):
 * a window's r and s (h = p*stride + r*dil - pad) and a grouped conv's
 * channels (g*C/G + c) reach real elements there. Structural: the extents
 * are run-time arguments, so the mask is there for every shape whose tile
 * along the axis is above one; the printer applies it where a tile is
 * partial along such an axis. */
static uint8_t mma_kmask(const gs_op *op, const gs_etir *e, const gs_plan *p, int t) {
    if (!p->mma) return 0;
    const gs_tensor *ts = &op->tensors[t];
    uint8_t km = 0;
    for (int a = 0; a < op->naxes; a++) {
        /* (a tile of one is never partial) */
        if (op->axes[a].kind != GS_AXIS_REDUCE || e->tile[a].block <= 1) continue;
        bool fills = false;
        for (int j = 0; j < ts->ndim && !fills; j++) {
            const gs_affine *x = &ts->idx[j];
            if (x->coeff[a] != 1 || x->offset || ts->shape[j] != op->axes[a].extent) continue;
            fills = true;
            for (int b = 0; b < op->naxes; b++)
                if (b != a && x->coeff[b]) fills = false;
        }
        if (!fills) km = (uint8_t)(km | 1u << a);
    }
    return km;
}

/* Staged input t's part of plan_common_memo (nt threads): its layout (through
 * the memo, without the caller's options only: o NULL; the state's own are
 * in the key), then what the threads do
 * with it (units per thread, store group, unit step, separable units, copy
 * batch) and its shared memory. */
static void plan_staged_input(const gs_hw *hw, const gs_op *op, const gs_etir *e, const gs_plan_opts *o,
                              gs_wf_memo *memo, const plan_facts *pf, int t, int64_t nt, gs_plan *p) {
    gs_plan_input *pi = &p->in[t];
    int64_t pad;
    uint64_t lk = memo && !o ? layout_key(op, e, &p->opts, t, memo) : 0;
    unsigned slot = (unsigned)(lk >> 40) & (GS_WF_MEMO_LAYOUTS - 1);
    if (lk && memo->layout_key[slot] == lk) {
        *pi = memo->layout[slot]; /* (every byte: the plan is hashed) */
        pad = memo->layout_pad[slot];
    } else {
        memset(pi, 0, sizeof *pi);
        pi->frag_axis = -1;
        plan_input_shape(hw, op, e, &p->opts, t, pi, &pad);
        choose_box(hw, op, e, &p->opts, t, pi, &pad, memo);
        for (int j = 0; j < op->tensors[t].ndim; j++) /* the tensor box, for the fast path's check */
            pi->halo[j] = pi->im2col ? box_dim(op, e, &op->tensors[t], j) : pi->dims[j];
        if (lk) {
            memo->layout_key[slot] = lk;
            memo->layout_pad[slot] = pad;
            memo->layout[slot] = *pi;
        }
    }
    pi->kmask = mma_kmask(op, e, p, t);
    int64_t upt = (pi->units + nt - 1) / (nt > 0 ? nt : 1);
    pi->units_per_thread = (int32_t)(upt > INT32_MAX ? INT32_MAX : upt);
    gs_tensor view; /* the box tensor, built once for all three */
    const gs_tensor *ts = gs_plan_box_tensor(op, pi, t, &view);
    plan_store_group(ts, e, p, pf, pi, nt);
    if (!pi->store_group) plan_unit_step(ts, pi, nt);
    pi->unit_sep = !pi->unit_linear && pi->units_per_thread > GS_PLAN_UNIT_ARRAY_MAX &&
                   pi->units_per_thread <= GS_PLAN_UNIT_SEP_MAX && pf->nred > 1 && unit_separable(ts, pi, nt);
    pi->unit_recompute = !pi->unit_linear && !pi->unit_sep && pi->units_per_thread > GS_PLAN_UNIT_ARRAY_MAX;
    pi->copy_batch = copy_batch(op, t, p, pi);
    if (pi->copy_mode == GS_COPY_ASYNC) p->any_async = 1;
    int64_t b = sat_mul(sat_mul(pi->stage_elems, p->stages), in_bytes(op));
    p->smem_bytes = p->smem_bytes + b > GS_STAGE_SAT ? GS_STAGE_SAT : p->smem_bytes + b;
}

/* Whether fragment double buffering costs the plan: the second fragment
 * set must stay within the thread's register limit, for an operator of
 * several reduce axes (a convolution) a register allocation unit (8) under
 * it: its per-axis reduce counters and halo tests are not in the bound (conv
 * picks at bounds 250 and 253 spilled 8 and 60 bytes at ptxas's 255 on
 * rtx3090 and v100, where gemm 8192^3's pick compiles in 232 under a bound
 * of 255), and cost no block per SM (the model prices occupancy above the
 * shorter latency window), whatever the count a little under the bound that
 * ptxas and the model take (a register allocation unit, 8, of slack); plain
 * is the bound without it. */
static bool frag_pipe_loses(const gs_hw *hw, const gs_plan *p, const plan_facts *pf, int plain) {
    bool lose = p->regs_bound + (pf->nred > 1 ? GS_FRAG_PIPE_REGS_SLACK : 0) > hw->max_regs_per_thread;
    /* (gs_plan_blocks_per_sm at each count: its other limits once) */
    int64_t warps, mb = blocks_but_regs(hw, p, &warps);
    for (int d = 0; d < 8 && !lose && warps >= 1; d++) {
        int64_t with = gs_hw_warps_by_regs(hw, p->regs_bound - d) / warps,
                without = gs_hw_warps_by_regs(hw, plain - d) / warps;
        lose = (with < mb ? with : mb) < (without < mb ? without : mb);
    }
    return lose;
}

static void plan_common(const gs_hw *hw, const gs_op *op, const gs_etir *e, const gs_plan_opts *o, gs_plan *p) {
    plan_common_memo(hw, op, e, o, NULL, p);
}

static void plan_common_memo(const gs_hw *hw, const gs_op *op, const gs_etir *e, const gs_plan_opts *o,
                             gs_wf_memo *memo, gs_plan *p) {
    /* every byte zero (the plan is hashed), the inputs' each by its own path
     * below: a layout from the memo overwrites its input whole */
    memset(p, 0, offsetof(gs_plan, in));
    memset(&p->in[op->ninputs], 0, sizeof *p - offsetof(gs_plan, in) - (size_t)op->ninputs * sizeof p->in[0]);
    if (o) p->opts = *o;
    /* the state's plan options (the user's: config keys, CLI) on top */
    p->opts.scalar |= e->plan_scalar;
    p->opts.predicated |= e->plan_predicated;
    p->opts.no_async |= e->plan_no_async;
    p->opts.min_blocks1 |= e->plan_lb1;
    if (e->plan_im2col) p->opts.im2col = e->plan_im2col;
    p->arch = hw->sm;
    int64_t nt = gs_etir_threads(op, e);
    p->threads = (int32_t)(nt > INT32_MAX ? INT32_MAX : nt);
    p->stages = e->stages;
    p->raster = e->raster;
    p->fast_path = !p->opts.predicated;
    p->lanes = (uint16_t)(1 << (e->lanes_log2 <= GS_MAX_LANES ? e->lanes_log2 : 0));
    p->lanes_wide = p->lanes > GS_LANES_WARP;
    p->splitk = e->splitk > 1 ? e->splitk : 1;
    p->split_axis = (int8_t)(p->splitk > 1 ? gs_etir_splitk_axis(op) : -1);
    /* atomics where the user allowed them (the options, or the state's flag
     * from gs_construct_opts.split_atomic), for sums: there is no float
     * atomic max */
    bool atomic = (p->opts.split_atomic || e->splitk_atomic) && op->combine != GS_COMBINE_MAX &&
                  op->combine != GS_COMBINE_MIN;
    p->split_mode = p->splitk <= 1 ? GS_SPLIT_NONE : atomic ? GS_SPLIT_ATOMIC : GS_SPLIT_ORDERED;
    int8_t role[GS_MAX_AXES];
    if (e->mma && gs_mma_get(e->mma) && gs_wf_memo_mma_roles(memo, op, role)) {
        /* a warp's lanes are 8 x 4 threads (m x n) of TM x TN outputs each,
         * TM the product of the m axes' thread tiles (TN: n's) */
        int64_t tm = 1, tn = 1;
        for (int a = 0; a < op->naxes; a++) {
            if (role[a] == GS_MMA_ROLE_M) tm *= e->tile[a].thread;
            if (role[a] == GS_MMA_ROLE_N) tn *= e->tile[a].thread;
        }
        p->mma = e->mma;
        p->warp_m = (uint16_t)(8 * tm > UINT16_MAX ? UINT16_MAX : 8 * tm);
        p->warp_n = (uint16_t)(4 * tn > UINT16_MAX ? UINT16_MAX : 4 * tn);
    }
    plan_facts pf;
    plan_facts_of(op, e, memo, &pf);
    p->raster_x = p->raster_y = -1;
    for (int a = op->naxes - 1; a >= 0; a--) { /* the last two spatial axes */
        if (!spatial(op, a)) continue;
        if (p->raster_y < 0) p->raster_y = (int8_t)a;
        else if (p->raster_x < 0) p->raster_x = (int8_t)a;
    }
    for (int t = 0; t < op->ninputs; t++) {
        gs_plan_input *pi = &p->in[t];
        if (!e->staged[t]) {
            memset(pi, 0, sizeof *pi);
            pi->frag_axis = -1;
            plan_unstaged(op, e, &p->opts, t, pi);
            continue;
        }
        plan_staged_input(hw, op, e, o, memo, &pf, t, nt, p);
    }
    p->frag_pipe = frag_pipe_of(op, e, p, &pf, memo);
    int64_t scratch = (p->split_mode != GS_SPLIT_NONE ? 4 : 0) + (p->lanes_wide ? p->threads / GS_LANES_WARP * 4 : 0);
    p->scratch_bytes = (int32_t)((scratch + 15) / 16 * 16);
    /* static shared memory is limited as a whole, scratch included */
    p->smem_dynamic = p->smem_bytes + p->scratch_bytes > hw->smem_per_block;
    int plain;
    p->regs_bound = regs_bound(op, e, p, &pf, &plain, memo);
    if (p->frag_pipe && frag_pipe_loses(hw, p, &pf, plain)) {
        p->frag_pipe = 0;
        p->regs_bound = plain;
    }
    p->k_unroll = k_unroll_of(p, &pf);
    p->peel = peel_of(op, p, &pf);
    int64_t third;
    p->cross_turn = cross_turn_of(hw, op, e, p, &pf, &third);
    p->regs_bound += (int32_t)third; /* a conv steady loop's early turn: its third fragment set */
}

void gs_plan_shape(const gs_hw *hw, const gs_op *op, const gs_etir *e, const gs_plan_opts *opts, gs_plan *p) {
    plan_common(hw, op, e, opts, p);
}

void gs_plan_shape_memo(const gs_hw *hw, const gs_op *op, const gs_etir *e, const gs_plan_opts *opts, gs_wf_memo *memo,
                        gs_plan *p) {
    plan_common_memo(hw, op, e, opts, memo, p);
}

void gs_plan_resources(const gs_hw *hw, const gs_op *op, const gs_etir *e, const gs_plan_opts *opts,
                       int64_t *smem_bytes, int *regs) {
    gs_plan p;
    plan_common(hw, op, e, opts, &p);
    *smem_bytes = p.smem_bytes + p.scratch_bytes;
    *regs = p.regs_bound;
}

/* Padding that minimises shared-memory wavefronts per reduce tile, over the
 * candidates that keep the alignment the plan's vectors need: 0 or 4 words
 * for aligned layouts, 0 or 1 (an odd pitch) for scalar ones. The v1 style
 * pads an even innermost extent to odd, as codegen v1 did. */
static void choose_pad(const gs_hw *hw, const gs_op *op, const gs_etir *e, gs_plan *p, int t, gs_wf_memo *memo) {
    gs_plan_input *pi = &p->in[t];
    gs_tensor view;
    const gs_tensor *ts = gs_plan_box_tensor(op, pi, t, &view);
    int64_t reserve = pi->pad, best_pad = 0;
    double best = -1;
    double reads_per_tile = 1, frag = 1;
    for (int a = 0; a < op->naxes; a++) {
        if (!spatial(op, a)) reads_per_tile *= e->tile[a].block;
        else if (gs_tensor_uses_axis(ts, a)) frag *= e->tile[a].thread;
    }
    reads_per_tile *= frag / pi->frag_vec;
    /* memoised by everything the choice depends on: the box and its layout
     * decisions, the thread mapping, the profile's banks and warp (the walk
     * meets the same input box under many states) */
    int64_t kv[24 + 2 * GS_MAX_AXES];
    int nk = 0;
    uint64_t key = 0;
    if (memo) {
        kv[nk++] = t | (int64_t)pi->im2col << 8;
        kv[nk++] = ts->ndim;
        for (int j = 0; j < ts->ndim && j < GS_MAX_DIMS; j++) kv[nk++] = pi->dims[j];
        kv[nk++] = pi->inner_dim | pi->copy_dim << 8 | pi->copy_vec << 16 | pi->store_vec << 24 |
                   (int64_t)pi->frag_vec << 32 | (int64_t)p->opts.scalar << 40 | (int64_t)e->lanes_log2 << 48 |
                   (int64_t)pi->store_group << 56;
        kv[nk++] = reserve;
        kv[nk++] = pi->units;
        /* the threads as the simulations see them (a warp's lanes) and as
         * the weighing does (units per thread), not their count */
        int64_t lanes = p->threads < hw->warp_size ? p->threads : hw->warp_size;
        if (lanes > 64) lanes = 64;
        kv[nk++] = lanes | (int64_t)pi->units_per_thread << 8;
        kv[nk++] = (int64_t)hw->smem_banks << 32 | hw->warp_size;
        kv[nk++] = (int64_t)reads_per_tile;
        /* the fragment odometer's digits (frag_odometer, od_trim): the
         * spatial axes that move within a warp, fastest first, each with
         * its thread count and, where the box reads it, its run T1/V (an
         * axis the box does not read steps the address by 0) */
        int64_t span = e->lanes_log2 && gs_etir_lanes_axis(op) >= 0 ? (int64_t)1 << e->lanes_log2 : 1;
        if (span >= lanes) span = lanes;
        for (int a = op->naxes - 1; a >= 0 && span < lanes; a--) {
            int64_t base = spatial(op, a) ? gs_etir_threads_axis(e, a) : 1;
            if (base <= 1) continue;
            kv[nk++] = (int64_t)(a + 1) << 48 | base;
            bool reads = false;
            for (int j = 0; j < ts->ndim; j++) reads |= ts->idx[j].coeff[a] != 0;
            if (reads) kv[nk++] = e->tile[a].thread / e->V[a];
            span = base >= lanes ? lanes : span * base;
        }
        key = gs_wf_key(kv, nk, 0x7061640000000000ull);
        unsigned slot = (unsigned)(key >> 40) & (GS_WF_MEMO_PADS - 1);
        if (memo->pad_key[slot] == key) {
            pi->pad = memo->pad_val[slot].pad;
            pi->read_wf = memo->pad_val[slot].read_wf;
            pi->store_wf = memo->pad_val[slot].store_wf;
            layout_strides(ts, pi->dims, pi->inner_dim, pi->pad, pi->sstride);
            return;
        }
    }
    for (int64_t pad = 0; pad <= reserve; pad += (reserve > 1 ? vec_max(in_bytes(op)) : 1)) {
        if (p->opts.scalar) pad = (ts->ndim > 1 && pi->dims[pi->inner_dim] > 1 && pi->dims[pi->inner_dim] % 2 == 0);
        layout_strides(ts, pi->dims, pi->inner_dim, pad, pi->sstride);
        lane_odometer od;
        frag_odometer(op, e, p, t, ts, hw->warp_size, &od);
        double rw = smem_wf_od(memo, hw->smem_banks, &od, pi->frag_vec, in_bytes(op));
        double sw = store_wavefronts(op, ts, pi, p->threads, hw->smem_banks, hw->warp_size, memo);
        double cost = reads_per_tile * rw + pi->units_per_thread * sw;
        if (best < 0 || cost < best) {
            best = cost;
            best_pad = pad;
            pi->read_wf = (float)rw;
            pi->store_wf = (float)sw;
        }
        if (p->opts.scalar) break;
    }
    pi->pad = (int32_t)best_pad;
    layout_strides(ts, pi->dims, pi->inner_dim, best_pad, pi->sstride);
    if (memo) {
        unsigned slot = (unsigned)(key >> 40) & (GS_WF_MEMO_PADS - 1);
        memo->pad_key[slot] = key;
        memo->pad_val[slot].pad = pi->pad;
        memo->pad_val[slot].read_wf = pi->read_wf;
        memo->pad_val[slot].store_wf = pi->store_wf;
    }
}

/* ---- tensor cores -------------------------------------------------------------------
 * A fragment element's shared-memory offset (the im2col view's dims, or the
 * tensor's; the constant shift of a negative reach left out) is linear in
 * the local coordinates, so it is the sum of one weight per axis times the
 * axis' coordinate (mma_weights). The coordinates of row x (of t's own role:
 * m for A, n for B) and of k index kk come from splitting each flattened
 * index over its role's block tiles, the last axis fastest; the two roles
 * use disjoint axes, so the offset is the row's part plus the k index's
 * (mma_offs). */
static void mma_weights(const gs_op *op, const gs_plan_input *pi, int t, int64_t *w) {
    for (int a = 0; a < op->naxes; a++) w[a] = 0;
    if (pi->im2col) {
        for (int k = 0; k < pi->view_ndim; k++) w[pi->view_axis[k]] += pi->sstride[k];
        return;
    }
    const gs_tensor *ts = &op->tensors[t];
    for (int j = 0; j < ts->ndim; j++)
        for (int a = 0; a < op->naxes; a++) w[a] += ts->idx[j].coeff[a] * pi->sstride[j];
}

/* The offset part of flattened index x split over the axes of role want. */
static int64_t mma_role_off(const gs_op *op, const gs_etir *e, const int8_t *role, int want, int64_t x,
                            const int64_t *w) {
    int64_t o = 0;
    for (int a = op->naxes - 1; a >= 0; a--)
        if (role[a] == want) {
            o += x % e->tile[a].block * w[a];
            x /= e->tile[a].block;
        }
    return o;
}

/* The offsets of row x and k index kk, each part computed once per index
 * below MMA_OFFS (rows and k indices of one instruction tile are small). */
enum { MMA_OFFS = 64 };
typedef struct mma_offs {
    const gs_op *op;
    const gs_etir *e;
    const int8_t *role;
    int xr;
    int64_t w[GS_MAX_AXES];
    int64_t part[2][MMA_OFFS];
    uint8_t have[2][MMA_OFFS];
} mma_offs;

static int64_t mma_offs_part(mma_offs *m, int i, int64_t x) {
    const int want = i == 0 ? m->xr : GS_MMA_ROLE_K;
    if (x < 0 || x >= MMA_OFFS) return mma_role_off(m->op, m->e, m->role, want, x, m->w);
    if (!m->have[i][x]) {
        m->part[i][x] = mma_role_off(m->op, m->e, m->role, want, x, m->w);
        m->have[i][x] = 1;
    }
    return m->part[i][x];
}

static int64_t mma_offs_at(mma_offs *m, int64_t x, int64_t kk) {
    return mma_offs_part(m, 0, x) + mma_offs_part(m, 1, kk);
}

/* One operand's fragment reads as the kernel walks them: warps along t's
 * role (nw), instruction tiles a warp (nit), k-steps a reduce tile (nks),
 * and the offsets (mo, reading role). ldsm: the walk of t's ldmatrix rows
 * (false where the plan does not read t by ldmatrix), else of its element
 * reads (false under ldmatrix or a swizzle, whose XOR the offsets do not
 * carry). Also false where the walk of `per` offsets a lane and case is
 * too long to enumerate (2^18 offsets: a few ms in the printer). */
typedef struct frag_walk {
    mma_offs mo;
    int8_t role[GS_MAX_AXES];
    int tx, wx;
    int64_t nw, nit, nks;
} frag_walk;

static bool frag_walk_init(const gs_op *op, const gs_etir *e, const gs_plan *p, int t, bool ldsm, int per,
                           frag_walk *s) {
    const gs_mma_row *r = gs_mma_get(p->mma);
    if (!r || t < 0 || t > 1 || !gs_mma_roles(op, s->role)) return false;
    const gs_plan_input *pi = &p->in[t];
    if (ldsm ? !pi->ldsm : (pi->ldsm || pi->swizzle)) return false;
    s->tx = t == 0 ? r->m : r->n;
    s->wx = t == 0 ? p->warp_m : p->warp_n;
    const int xr = t == 0 ? GS_MMA_ROLE_M : GS_MMA_ROLE_N;
    int64_t xb = 1, kb = 1;
    for (int a = 0; a < op->naxes; a++) {
        if (s->role[a] == xr) xb *= e->tile[a].block;
        if (s->role[a] == GS_MMA_ROLE_K) kb *= e->tile[a].block;
    }
    if (s->wx <= 0 || r->k <= 0) return false;
    s->nw = xb / s->wx;
    s->nit = s->wx / s->tx;
    s->nks = kb / r->k;
    if (s->nw < 1 || s->nit < 1 || s->nks < 1 || s->nw * s->nit * s->nks * 32 * per > ((int64_t)1 << 18)) return false;
    s->mo.op = op;
    s->mo.e = e;
    s->mo.role = s->role;
    s->mo.xr = xr;
    memset(s->mo.have, 0, sizeof s->mo.have);
    mma_weights(op, pi, t, s->mo.w);
    return true;
}

/* The offset of element i of input t's fragment (row r's layout) of warp
 * w's lane l at instruction tile it and k-step ks (element reads). */
static int64_t elem_off(frag_walk *s, const gs_mma_row *r, int t, int64_t w, int l, int64_t it, int64_t ks, int i) {
    int row, col;
    gs_mma_elem(t == 0 ? &r->a : &r->b, l, i, &row, &col);
    return mma_offs_at(&s->mo, w * s->wx + it * s->tx + (t == 0 ? row : col), ks * r->k + (t == 0 ? col : row));
}

/* Whether input t's fragment element reads (no ldmatrix, no swizzle) sit at
 * one lane base plus constants (gs_plan.h): for every warp w along t's
 * role, lane l, instruction tile it, k-step ks and element i, the offset is
 * base(w, l) + it * dx + ks * dk + ei[i] (base: element 0 of tile 0 at
 * k-step 0). The row and k splits are mixed-radix over power-of-two block
 * tiles, so the parts' bits do not carry into each other and this holds;
 * it is checked over every case, not assumed. */
bool gs_plan_mma_frag_affine(const gs_op *op, const gs_etir *e, const gs_plan *p, int t, gs_mma_frag_fold *ff) {
    const gs_mma_row *r = gs_mma_get(p->mma);
    frag_walk s;
    const int elems = r ? (t == 0 ? r->a : r->b).elems : 0;
    if (!r || !frag_walk_init(op, e, p, t, false, elems, &s)) return false;
    const int64_t b0 = elem_off(&s, r, t, 0, 0, 0, 0, 0);
    ff->base0 = b0;
    ff->dx = s.nit > 1 ? elem_off(&s, r, t, 0, 0, 1, 0, 0) - b0 : 0;
    ff->dk = s.nks > 1 ? elem_off(&s, r, t, 0, 0, 0, 1, 0) - b0 : 0;
    for (int i = 0; i < elems; i++) ff->ei[i] = elem_off(&s, r, t, 0, 0, 0, 0, i) - b0;
    ff->pairs = r->per_reg == 2;
    for (int64_t w = 0; w < s.nw; w++)
        for (int l = 0; l < 32; l++) {
            const int64_t base = elem_off(&s, r, t, w, l, 0, 0, 0);
            for (int64_t it = 0; it < s.nit; it++)
                for (int64_t ks = 0; ks < s.nks; ks++)
                    for (int i = 0; i < elems; i++) {
                        const int64_t o = base + it * ff->dx + ks * ff->dk + ff->ei[i];
                        if (elem_off(&s, r, t, w, l, it, ks, i) != o) return false;
                        /* a register's first element at base0's parity, its second next to it */
                        if (ff->pairs && i % 2 == 0 && ((o - b0) % 2 != 0 || ff->ei[i + 1] != ff->ei[i] + 1))
                            ff->pairs = false;
                    }
        }
    return true;
}

int64_t gs_plan_neg_reach(const gs_op *op, const gs_etir *e, const gs_affine *f) {
    int64_t neg = 0;
    for (int a = 0; a < op->naxes; a++)
        if (f->coeff[a] < 0) neg += f->coeff[a] * (e->tile[a].block - 1);
    return neg;
}

uint8_t gs_plan_mma_frag_pairs(const gs_op *op, const gs_etir *e, const gs_plan *p, const int8_t *role, int t) {
    const gs_mma_row *r = gs_mma_get(p->mma);
    const gs_plan_input *pi = &p->in[t];
    if (!r || r->per_reg != 2 || t < 0 || t > 1 || !pi->staged || pi->ldsm || pi->swizzle) return 0;
    int64_t w[GS_MAX_AXES];
    mma_weights(op, pi, t, w);
    int kf = -1;
    for (int a = op->naxes - 1; a >= 0 && kf < 0; a--) /* the split's order: the last axis fastest */
        if (role[a] == GS_MMA_ROLE_K && e->tile[a].block > 1) kf = a;
    if (kf < 0 || w[kf] != 1) return 0;
    for (int a = 0; a < op->naxes; a++)
        if (a != kf && e->tile[a].block > 1 && w[a] % 2) return 0;
    int64_t shift = 0;
    if (!pi->im2col) {
        const gs_tensor *ts = &op->tensors[t];
        for (int j = 0; j < ts->ndim; j++)
            shift += -gs_plan_neg_reach(op, e, &ts->idx[j]) * pi->sstride[j]; /* (the offset cancels) */
    }
    return shift % 2 == 0 && pi->stage_elems % 2 == 0;
}

/* The offset of element i of the 16-byte row that lane l names in input
 * t's ldmatrix at warp w, instruction tile it and k-step ks: lane l names
 * row l & 7 of matrix (l >> 3) mod ldsm (as the printer's lj; ldmatrix
 * reads the addresses of lanes below 8 ldsm) from that matrix's origin
 * (ldsm_a, ldsm_b). Without .trans the row is an m (A) or n (B) index and
 * its elements run along k; with .trans it is a k index and they run
 * along m or n. mma_read_wf's lanes are these at warp, tile and k-step 0. */
static int64_t ldsm_off(frag_walk *s, const gs_mma_row *r, const gs_plan_input *pi, int t, int64_t w, int l,
                        int64_t it, int64_t ks, int i) {
    const int8_t *org = t == 0 ? r->ldsm_a[(l >> 3) % pi->ldsm] : r->ldsm_b[(l >> 3) % pi->ldsm];
    int64_t x = w * s->wx + it * s->tx + (t == 0 ? org[0] : org[1]);
    int64_t kk = ks * r->k + (t == 0 ? org[1] : org[0]);
    if (pi->ldsm_trans) {
        kk += l & 7;
        x += i;
    } else {
        x += l & 7;
        kk += i;
    }
    return mma_offs_at(&s->mo, x, kk);
}

/* Whether every row that input t's ldmatrix reads is one: its
 * gs_mma_ldsm_row_elems elements at consecutive shared offsets from a
 * multiple of that count (16 bytes, the stage buffers' offsets too), for
 * every warp, lane, instruction tile and k-step, by enumeration (the
 * swizzle moves whole 16-byte vectors, so the unswizzled offsets decide).
 * A warp's batch coordinates (a group's) add their weights to every row
 * alike, so each such weight must be whole rows. gs_plan.h. */
bool gs_plan_mma_ldsm_rows(const gs_op *op, const gs_etir *e, const gs_plan *p, int t) {
    const gs_mma_row *r = gs_mma_get(p->mma);
    frag_walk s;
    if (!r || !frag_walk_init(op, e, p, t, true, gs_mma_ldsm_row_elems(r), &s)) return false;
    const gs_plan_input *pi = &p->in[t];
    const int R = gs_mma_ldsm_row_elems(r);
    if (p->stages > 1 && pi->stage_elems % R) return false;
    for (int a = 0; a < op->naxes; a++)
        if (s.role[a] == GS_MMA_ROLE_BATCH && e->tile[a].block > 1 && floor_mod(s.mo.w[a], R)) return false;
    for (int64_t w = 0; w < s.nw; w++)
        for (int64_t it = 0; it < s.nit; it++)
            for (int64_t ks = 0; ks < s.nks; ks++)
                for (int l = 0; l < 32; l++) {
                    const int64_t o = ldsm_off(&s, r, pi, t, w, l, it, ks, 0);
                    if (floor_mod(o, R)) return false;
                    for (int i = 1; i < R; i++)
                        if (ldsm_off(&s, r, pi, t, w, l, it, ks, i) != o + i) return false;
                }
    return true;
}

/* Whether input t's ldmatrix row addresses sit at one lane base plus
 * constants: offset(warp, lane, tile it, k-step ks) = base(warp, lane) +
 * it * dx + ks * dk in every case, by enumeration (as
 * gs_plan_mma_frag_affine; the offsets before any swizzle, which the
 * printers apply to the sum). gs_plan.h. */
bool gs_plan_mma_ldsm_affine(const gs_op *op, const gs_etir *e, const gs_plan *p, int t, int64_t *dx, int64_t *dk) {
    const gs_mma_row *r = gs_mma_get(p->mma);
    frag_walk s;
    if (!r || !frag_walk_init(op, e, p, t, true, 1, &s)) return false;
    const gs_plan_input *pi = &p->in[t];
    const int64_t b0 = ldsm_off(&s, r, pi, t, 0, 0, 0, 0, 0);
    *dx = s.nit > 1 ? ldsm_off(&s, r, pi, t, 0, 0, 1, 0, 0) - b0 : 0;
    *dk = s.nks > 1 ? ldsm_off(&s, r, pi, t, 0, 0, 0, 1, 0) - b0 : 0;
    for (int64_t w = 0; w < s.nw; w++)
        for (int l = 0; l < 32; l++) {
            const int64_t base = ldsm_off(&s, r, pi, t, w, l, 0, 0, 0);
            for (int64_t it = 0; it < s.nit; it++)
                for (int64_t ks = 0; ks < s.nks; ks++)
                    if (ldsm_off(&s, r, pi, t, w, l, it, ks, 0) != base + it * *dx + ks * *dk) return false;
        }
    return true;
}

/* The XOR swizzle of a staged input's smem element offset o (pi->swizzle =
 * log2 P > 0): in each row of pitch elements (the padded innermost extent),
 * the 16-byte vector index is XORed with the row's index mod P, so the
 * vectors of P consecutive rows fall in different banks; a vector stays
 * whole and in its row (the pitch is a multiple of P vectors). gs_plan.h. */
int64_t gs_plan_swizzle(const gs_plan_input *pi, int eb, int64_t o) {
    if (!pi->swizzle) return o;
    const int64_t pitch = pi->dims[pi->inner_dim] + pi->pad, vec = 16 / eb;
    return o ^ (((o / pitch) & ((1 << pi->swizzle) - 1)) * vec);
}

/* ldmatrix without .trans where t's role or k spans several axes (a conv's
 * m = (n, p, q), k = (c, r, s)): ldmatrix takes any 16-byte aligned row
 * address per lane, so what it needs is that the 8 halves (4 tf32
 * elements) a row holds, k indices kk0 .. kk0 + R - 1 (kk0 a multiple of
 * R: every k-step and matrix origin is), lie contiguous in shared memory
 * at an offset that is a multiple of R, for every row (m or n index)
 * whatever its decomposition. The offset of (x, kk) is the sum over axes of
 * the local coordinate times the axis' weight (mma_weights: coefficient
 * times shared stride, summed over dims), the tensor's affine offsets left
 * out (the copy stores global index g at g - lo, lo the box origin with its
 * offset: smem_offset in the printer cancels it alike). So:
 *   - k splits last axis fastest: the K-role axes after some axis c all
 *     have block tile 1 (coordinate 0), c's block is a multiple of R, and c
 *     has weight exactly 1: coefficient 1 in the innermost smem dim and
 *     none in any other; then kk0 .. kk0 + R - 1 are c's coordinates
 *     c0 .. c0 + R - 1 with c0 a multiple of R, no carry;
 *   - the row's start: every other axis that moves (block > 1) weighs a
 *     multiple of R: its coefficient in the innermost dim must be one (a
 *     group's channel offset C/G, 16 yes, 12 no); the other dims' strides
 *     are whole numbers of rows (the innermost extent a multiple of R here,
 *     the pad 0 or one 16-byte vector; mma_pad_apply checks the strides it
 *     sets), so any coefficient there is;
 *   - no negative coefficient (its reach would shift the box by a constant
 *     the weights leave out).
 * The box is the im2col view where the input has one (gs_plan_box_tensor:
 * a dim per axis, coefficient 1, as mma_weights and the printers weigh
 * it). An NHWC conv's input ([n][h][w][c]: h, w move the row start only;
 * its im2col view [n][r][p][s][q][c]) and filter ([k][r][s][c]) meet this
 * with r and s blocks of 1 and c's a multiple of R; an NCHW filter's
 * innermost s does not (its block would be a multiple of 8).
 * gs_plan_mma_ldsm_rows checks the result by enumeration
 * (tests/test_mma.c). */
static bool ldsm_rows_along_k(const gs_op *op, const gs_etir *e, const gs_plan_input *pi, int t,
                              const gs_mma_row *r, const int8_t *role) {
    gs_tensor view;
    const gs_tensor *ts = gs_plan_box_tensor(op, pi, t, &view);
    const int R = gs_mma_ldsm_row_elems(r), in = pi->inner_dim;
    if (pi->dims[in] % R) return false;
    int c = -1;
    for (int a = op->naxes - 1; a >= 0 && c < 0; a--) {
        if (role[a] != GS_MMA_ROLE_K) continue;
        if (e->tile[a].block > 1) c = a; /* the fastest K-role axis that moves */
    }
    if (c < 0 || ts->idx[in].coeff[c] != 1 || e->tile[c].block % R) return false;
    for (int j = 0; j < ts->ndim; j++)
        for (int a = 0; a < op->naxes; a++) {
            const int64_t co = ts->idx[j].coeff[a];
            if (co < 0 || (a == c && j != in && co)) return false;
            if (j == in && a != c && e->tile[a].block > 1 && co % R) return false;
        }
    return true;
}

/* ldmatrix for input t (0: A, 1: B) of row r: where the row has it, t's
 * role (m or n) and k are one axis each, the box is the tensor's with no
 * offset or negative coefficient, and its innermost smem dim runs along k
 * (no .trans) or, where the row may transpose (16-bit elements), along t's
 * axis xa (.trans), with unit step and whole 16-byte rows
 * (gs_mma_ldsm_row_elems: 8 halves, 4 tf32 elements); otherwise, rows
 * along k without .trans where ldsm_rows_along_k finds them (several axes
 * a role, an affine offset, an im2col view). Anything else (a tf32 operand
 * whose rows run along m or n, .trans over several axes) reads elements.
 * The 16-byte alignment of every row start also needs the pad (0 or one
 * 16-byte vector) chosen below. */
static void mma_ldsm_mode(const gs_op *op, const gs_etir *e, gs_plan_input *pi, int t, const gs_mma_row *r,
                          gs_wf_memo *memo) {
    pi->ldsm = pi->ldsm_trans = 0;
    int m, n, k;
    int8_t role[GS_MAX_AXES];
    if (!r->ldsm) return;
    if (!pi->im2col && gs_wf_memo_mma_axes(memo, op, &m, &n, &k)) {
        const int xa = t == 0 ? m : n;
        const gs_tensor *ts = &op->tensors[t];
        bool plain = true;
        for (int j = 0; j < ts->ndim; j++) {
            if (ts->idx[j].offset) plain = false;
            for (int a = 0; a < op->naxes; a++)
                if (ts->idx[j].coeff[a] < 0) plain = false;
        }
        int ax = unit_axis(&ts->idx[pi->inner_dim], op->naxes);
        if (plain && pi->dims[pi->inner_dim] % gs_mma_ldsm_row_elems(r) == 0 &&
            (ax == k || (ax == xa && gs_mma_ldsm_trans(r)))) {
            pi->ldsm = (uint8_t)(t == 0 ? r->a.regs : r->b.regs);
            pi->ldsm_trans = ax != k;
            return;
        }
    }
    if (gs_wf_memo_mma_roles(memo, op, role) && ldsm_rows_along_k(op, e, pi, t, r, role))
        pi->ldsm = (uint8_t)(t == 0 ? r->a.regs : r->b.regs);
}

/* Wavefronts of one instruction tile's fragment of input t at the warp's
 * origin: the ldmatrix's lanes (8 a matrix, 16 bytes each: the bank
 * simulator serves them in 8-lane phases) or one element read per register
 * element. */
static double mma_read_wf(const gs_hw *hw, const gs_op *op, const gs_etir *e, const gs_plan *p, const int8_t *role,
                          int t, gs_wf_memo *memo) {
    const gs_mma_row *r = gs_mma_get(p->mma);
    const gs_plan_input *pi = &p->in[t];
    const gs_mma_frag *f = t == 0 ? &r->a : &r->b;
    const int eb = in_bytes(op);
    int64_t addr[32];
    mma_offs mo;
    mo.op = op;
    mo.e = e;
    mo.role = role;
    mo.xr = t == 0 ? GS_MMA_ROLE_M : GS_MMA_ROLE_N;
    memset(mo.have, 0, sizeof mo.have);
    mma_weights(op, pi, t, mo.w);
    if (pi->ldsm) {
        const int lanes = 8 * pi->ldsm;
        for (int l = 0; l < lanes; l++) {
            const int8_t *org = t == 0 ? r->ldsm_a[l >> 3] : r->ldsm_b[l >> 3];
            /* lane l names row l & 7 of matrix l >> 3: without .trans the rows
             * step along t's axis (each runs along k), with .trans along k */
            int64_t x = (t == 0 ? org[0] : org[1]) + (pi->ldsm_trans ? 0 : l & 7);
            int64_t kk = (t == 0 ? org[1] : org[0]) + (pi->ldsm_trans ? l & 7 : 0);
            addr[l] = gs_plan_swizzle(pi, eb, mma_offs_at(&mo, x, kk)) * eb / 4;
        }
        /* ldmatrix serves 8 lanes (one 8x8 matrix, 16 bytes a lane) a phase
         * whatever the count; gs_smem_wavefronts_of forms phases of lanes/4
         * lanes, so the .x1/.x2 lanes are repeated to a warp's 32 and the
         * sum scaled back (each phase is counted lanes/32 times over) */
        int64_t a32[32];
        for (int l = 0; l < 32; l++) a32[l] = addr[l % lanes];
        return smem_wf_memo(memo, hw->smem_banks, a32, 32, 4) * lanes / 32.0;
    }
    double wf = 0;
    for (int i = 0; i < f->elems; i += pi->frag_pairs ? 2 : 1) { /* pairs: a 32-bit read a register */
        for (int l = 0; l < 32; l++) {
            int row, col;
            gs_mma_elem(f, l, i, &row, &col);
            addr[l] = gs_plan_swizzle(pi, eb, mma_offs_at(&mo, t == 0 ? row : col, t == 0 ? col : row)) * eb / 4;
        }
        wf += smem_wf_memo(memo, hw->smem_banks, addr, 32, 1);
    }
    return wf;
}

/* mma_read_wf through memo: its key is everything mma_read_wf reads
 * besides the operator and the profile (one memo serves one of each): the
 * operand and row, the ldmatrix mode, the swizzle and the pitch it folds by,
 * the im2col view's axes, the shared strides the offsets sum, and the block
 * tiles the fragment's coordinates split over (t's own role's and k's). */
static double mma_read_wf_memo(const gs_hw *hw, const gs_op *op, const gs_etir *e, const gs_plan *p,
                               const int8_t *role, int t, gs_wf_memo *memo) {
    if (!memo) return mma_read_wf(hw, op, e, p, role, t, memo);
    const gs_plan_input *pi = &p->in[t];
    const int n = pi->im2col ? pi->view_ndim : op->tensors[t].ndim;
    uint64_t h = 0x84222325cbf29ce4ull;
#define MIX(v) (h = (h ^ (uint64_t)(v)) * 0x100000001b3ull)
    MIX(t);
    MIX(p->mma);
    MIX(pi->ldsm);
    MIX(pi->ldsm_trans);
    MIX(pi->frag_pairs);
    MIX(pi->swizzle);
    MIX(pi->swizzle ? pi->dims[pi->inner_dim] + pi->pad : 0);
    MIX(pi->im2col);
    MIX(n);
    for (int k = 0; k < n; k++) {
        MIX(pi->sstride[k]);
        MIX(pi->im2col ? pi->view_axis[k] : 0);
    }
    const int xr = t == 0 ? GS_MMA_ROLE_M : GS_MMA_ROLE_N;
    for (int a = 0; a < op->naxes; a++)
        if (role[a] == xr || role[a] == GS_MMA_ROLE_K) MIX(e->tile[a].block);
#undef MIX
    h = (h ^ h >> 31) | 1;
    const size_t slot = (size_t)(h >> 40) & (GS_WF_MEMO_MMA_READS - 1);
    if (memo->mma_rd_key[slot] == h) return memo->mma_rd_val[slot];
    const double rw = mma_read_wf(hw, op, e, p, role, t, memo);
    memo->mma_rd_key[slot] = h;
    memo->mma_rd_val[slot] = rw;
    return rw;
}

/* Wavefronts of one copy unit's shared stores per warp under a swizzle
 * (store_wavefronts' lanes: unit l of the row-major numbering, copy_vec
 * along copy_dim; the layout keeps the copy dim innermost, one store each). */
static double mma_store_wf_swz(const gs_op *op, int t, const gs_plan_input *pi, int64_t threads, int banks,
                               gs_wf_memo *memo) {
    const int eb = in_bytes(op);
    gs_tensor view;
    const gs_tensor *ts = gs_plan_box_tensor(op, pi, t, &view);
    int lanes = (int)(threads < 32 ? threads : 32);
    if (lanes > pi->units) lanes = (int)pi->units;
    if (lanes < 1) return 0;
    int64_t addr[32];
    for (int l = 0; l < lanes; l++) {
        int64_t u = l, per_row = pi->dims[pi->copy_dim] / pi->copy_vec;
        int64_t o = (u % per_row) * pi->copy_vec * pi->sstride[pi->copy_dim];
        u /= per_row;
        for (int j = ts->ndim - 1; j >= 0; j--) {
            if (j == pi->copy_dim) continue;
            o += (u % pi->dims[j]) * pi->sstride[j];
            u /= pi->dims[j];
        }
        addr[l] = gs_plan_swizzle(pi, eb, o) * eb / 4;
    }
    int w = pi->store_vec * eb / 4;
    return smem_wf_memo(memo, banks, addr, lanes, w < 1 ? 1 : w);
}

/* mma's layout: padding of 0 or one 16-byte vector, or no padding and an
 * XOR swizzle over 2, 4 or 8 rows (where the row holds that many vectors
 * and the stage buffer whole rows), whichever costs fewest wavefronts per
 * reduce tile (the fragment reads of the warp's instruction tiles and the
 * copy's stores; a tie keeps the earlier: plain, then padded); the ldmatrix
 * mode first (it reads the layout's orientation, not its pitch).
 * The wavefronts of each candidate (mma_pad_cands) read neither the warp
 * tile nor the thread count beyond the store's lanes, so the candidates are
 * simulated once per input layout and block tile and the warp tiles of one
 * block tile (complete_mma) only weigh them (mma_pad_apply). */
enum { MMA_PAD_CANDS = 5 };

/* candidate c: (pad, swizzle) = (0, 0), (vec, 0) where reserved, (0, 1..3) */
static bool mma_pad_cand(const gs_plan_input *pi, const gs_tensor *ts, int64_t vec, int c, int64_t *pad, int *swz) {
    *pad = c == 1 ? vec : 0;
    *swz = c >= 2 ? c - 1 : 0;
    const int64_t pitch = pi->dims[pi->inner_dim] + *pad;
    return !(*pad > pi->pad || (*swz && (ts->ndim < 2 || pitch % (vec << *swz) || pi->stage_elems % pitch)));
}

/* Each candidate's wavefronts into pc (valid: bit c), and the ldmatrix mode
 * (pi->ldsm, ldsm_trans: set here, as the reads were simulated with it);
 * pi's layout is left as it was. */
static void mma_pad_cands(const gs_hw *hw, const gs_op *op, const gs_etir *e, gs_plan *p, int t, const int8_t *role,
                          gs_wf_memo *memo, gs_mma_pad_cands *pc) {
    gs_plan_input *pi = &p->in[t];
    const gs_plan_input keep = *pi;
    mma_ldsm_mode(op, e, pi, t, gs_mma_get(p->mma), memo);
    gs_tensor view;
    const gs_tensor *ts = gs_plan_box_tensor(op, pi, t, &view);
    const int64_t vec = vec_max(in_bytes(op));
    pc->valid = 0;
    pc->ldsm = pi->ldsm;
    pc->ldsm_trans = pi->ldsm_trans;
    for (int c = 0; c < MMA_PAD_CANDS; c++) {
        int64_t pad;
        int swz;
        pc->rw[c] = pc->sw[c] = 0;
        if (!mma_pad_cand(&keep, ts, vec, c, &pad, &swz)) continue;
        pi->pad = (int32_t)pad;
        pi->swizzle = (uint8_t)swz;
        layout_strides(ts, pi->dims, pi->inner_dim, pad, pi->sstride);
        pi->frag_pairs = gs_plan_mma_frag_pairs(op, e, p, role, t);
        pc->rw[c] = mma_read_wf_memo(hw, op, e, p, role, t, memo);
        pc->sw[c] = swz ? mma_store_wf_swz(op, t, pi, p->threads, hw->smem_banks, memo)
                        : store_wavefronts(op, ts, pi, p->threads, hw->smem_banks, hw->warp_size, memo);
        pc->valid |= (uint8_t)(1u << c);
    }
    const uint8_t ldsm = pi->ldsm, trans = pi->ldsm_trans;
    *pi = keep;
    pi->ldsm = ldsm;
    pi->ldsm_trans = trans;
}

/* The cheapest candidate of pc for p's warp tile: pi's ldmatrix mode,
 * padding, swizzle, strides and wavefronts. */
static void mma_pad_apply(const gs_op *op, const gs_etir *e, gs_plan *p, int t, const int8_t *role,
                          const gs_mma_pad_cands *pc) {
    gs_plan_input *pi = &p->in[t];
    const gs_mma_row *r = gs_mma_get(p->mma);
    pi->ldsm = pc->ldsm;
    pi->ldsm_trans = pc->ldsm_trans;
    gs_tensor view;
    const gs_tensor *ts = gs_plan_box_tensor(op, pi, t, &view);
    const int64_t vec = vec_max(in_bytes(op));
    int64_t bk = 1;
    for (int a = 0; a < op->naxes; a++)
        if (role[a] == GS_MMA_ROLE_K) bk *= e->tile[a].block;
    /* instruction tiles a warp reads per reduce tile */
    const double reads = (double)(bk / r->k) * (t == 0 ? p->warp_m / r->m : p->warp_n / r->n);
    double best = -1;
    int64_t best_pad = 0;
    int best_swz = 0;
    for (int c = 0; c < MMA_PAD_CANDS; c++) {
        int64_t pad;
        int swz;
        if (!(pc->valid >> c & 1) || !mma_pad_cand(pi, ts, vec, c, &pad, &swz)) continue;
        double cost = reads * pc->rw[c] + pi->units_per_thread * pc->sw[c];
        if (best < 0 || cost < best) {
            best = cost;
            best_pad = pad;
            best_swz = swz;
            pi->read_wf = (float)pc->rw[c];
            pi->store_wf = (float)pc->sw[c];
        }
    }
    pi->pad = (int32_t)best_pad;
    pi->swizzle = (uint8_t)best_swz;
    layout_strides(ts, pi->dims, pi->inner_dim, best_pad, pi->sstride);
    /* ldmatrix rows start on 16 bytes: every outer stride a whole number of
     * 16-byte rows (8 halves, 4 tf32 elements) */
    for (int j = 0; j < ts->ndim && pi->ldsm; j++)
        if (j != pi->inner_dim && pi->sstride[j] % gs_mma_ldsm_row_elems(r)) pi->ldsm = pi->ldsm_trans = 0;
    pi->frag_pairs = gs_plan_mma_frag_pairs(op, e, p, role, t);
}

/* Key of mma_pad_cands' inputs besides the operator and the profile (one
 * memo serves one of each): the input's layout as planned so far (its
 * bytes, plans start zeroed) less the fields the thread count sets for the
 * copy loop (units per thread, batch, unit stepping), which the simulation
 * does not read; the store's lanes (the thread count up to 64: a warp's, or
 * fewer); the row; the block tiles of t's own role and of k (the fragment's
 * coordinates; the other axes reach the layout only through the box). */
static uint64_t mma_pad_key(const gs_op *op, const gs_etir *e, const gs_plan *p, int t, const int8_t *role) {
    _Static_assert(sizeof(gs_plan_input) % 8 == 0, "mma_pad_key reads the input a word at a time");
    gs_plan_input in;
    memcpy(&in, &p->in[t], sizeof in);
    in.units_per_thread = 0;
    in.copy_batch = 0;
    in.unit_dim = 0;
    in.unit_linear = 0;
    in.unit_rows = 0;
    in.unit_recompute = 0;
    uint64_t w[sizeof in / 8], h = 0x9e3779b97f4a7c15ull;
    memcpy(w, &in, sizeof w);
    for (size_t i = 0; i < sizeof w / sizeof w[0]; i++) {
        h = (h ^ w[i]) * 0xff51afd7ed558ccdull;
        h ^= h >> 31;
    }
    const int xr = t == 0 ? GS_MMA_ROLE_M : GS_MMA_ROLE_N;
    h = (h ^ ((uint64_t)t << 32 | (uint64_t)p->mma << 8 | (uint64_t)(p->threads < 64 ? p->threads : 64))) *
        0xc4ceb9fe1a85ec53ull;
    for (int a = 0; a < op->naxes; a++)
        if (role[a] == xr || role[a] == GS_MMA_ROLE_K) {
            h = (h ^ ((uint64_t)a << 56 ^ (uint64_t)e->tile[a].block)) * 0xff51afd7ed558ccdull;
            h ^= h >> 29;
        }
    h ^= h >> 33;
    return h | 1;
}

/* The choice, its candidates' simulations remembered in memo (the bank
 * simulator over up to five layouts was most of an mma state's price: gemm
 * M=2048 N=768 K=768 f16 on h100, 72 % of the construction's instructions
 * before the first memo). */
static void choose_pad_mma(const gs_hw *hw, const gs_op *op, const gs_etir *e, gs_plan *p, int t, gs_wf_memo *memo) {
    gs_mma_pad_cands pc;
    int8_t role[GS_MAX_AXES];
    gs_wf_memo_mma_roles(memo, op, role);
    if (!memo) {
        mma_pad_cands(hw, op, e, p, t, role, NULL, &pc);
        mma_pad_apply(op, e, p, t, role, &pc);
        return;
    }
    const uint64_t key = mma_pad_key(op, e, p, t, role);
    const size_t slot = (size_t)(key >> 40) & (GS_WF_MEMO_MMA - 1);
    if (memo->mma_key[slot] != key) {
        mma_pad_cands(hw, op, e, p, t, role, memo, &memo->mma_cands[slot]);
        memo->mma_key[slot] = key;
    }
    mma_pad_apply(op, e, p, t, role, &memo->mma_cands[slot]);
}

void gs_plan_make(const gs_hw *hw, const gs_op *op, const gs_etir *e, const gs_plan_opts *opts, gs_plan *p) {
    gs_plan_make_memo(hw, op, e, opts, NULL, p);
}

void gs_plan_make_memo(const gs_hw *hw, const gs_op *op, const gs_etir *e, const gs_plan_opts *opts, gs_wf_memo *memo,
                       gs_plan *p) {
    plan_common_memo(hw, op, e, opts, memo, p);
    gs_plan_finish_memo(hw, op, e, memo, p);
}

/* Whether the row's C elements pair up as (0, 1), (2, 3), ...: the same row
 * and neighbouring columns (n), each pair starting at an even column, so a
 * pair is one 2-vector of the output where n is its innermost axis. */
static bool mma_c_pairs(const gs_mma_row *r) {
    if (!r || r->c.elems % 2) return false;
    for (int i = 0; i < r->c.elems; i += 2)
        if (r->c.row_off[i] != r->c.row_off[i + 1] || r->c.col_off[i + 1] != r->c.col_off[i] + 1 ||
            r->c.col_off[i] % 2 || r->c.ct % 2 || r->c.cg % 2)
            return false;
    return true;
}

void gs_plan_finish_memo(const gs_hw *hw, const gs_op *op, const gs_etir *e, gs_wf_memo *memo, gs_plan *p) {
    for (int t = 0; t < op->ninputs; t++)
        if (p->in[t].staged && p->mma) choose_pad_mma(hw, op, e, p, t, memo);
        else if (p->in[t].staged) choose_pad(hw, op, e, p, t, memo);
    /* Output vector: the output's innermost dim runs along a spatial axis
     * with unit step and each thread owns runs of T0 consecutive outputs. */
    const gs_tensor *ot = gs_op_out(op);
    int oa = unit_axis(&ot->idx[ot->ndim - 1], op->naxes);
    p->out_axis = -1;
    p->out_vec = 1;
    if (oa >= 0 && !p->opts.scalar && !p->opts.predicated && !p->mma) { /* mma: its pairs, below */
        int w = vec_dividing(vec_max(gs_dtype_row(op->dtype_out)->bytes), e->tile[oa].thread / e->V[oa],
                             ot->idx[ot->ndim - 1].offset, 0);
        if (w > 1) {
            p->out_axis = (int8_t)oa;
            p->out_vec = (uint8_t)w;
        }
    }
    /* mma: the C layout's register pairs (c0, c1), (c2, c3) are neighbours
     * along n (mma_c_pairs reads that from the row), so a single n axis that is the output's innermost unit axis
     * stores them as 2-vectors (at an even offset) */
    int mm, mn, mk;
    if (p->mma && mma_c_pairs(gs_mma_get(p->mma)) && oa >= 0 && !p->opts.scalar && !p->opts.predicated && gs_wf_memo_mma_axes(memo, op, &mm, &mn, &mk) && oa == mn &&
        ot->idx[ot->ndim - 1].offset % 2 == 0) {
        p->out_axis = (int8_t)oa;
        p->out_vec = 2;
    }
    /* (a bias of another width than the output's, or a grouped one, is read as scalars) */
    p->bias_vec = op->has_bias && op->epi.bias_axis >= 0 && !op->bias_group && op->epi.bias_axis == p->out_axis &&
                          op->dtype_in == op->dtype_out ? p->out_vec : 1;
    /* Launch bounds: as many blocks per SM as the register bound, threads,
     * shared memory and the block limit allow, so that ptxas keeps to the
     * plan's register budget and blocks can share an SM. */
    int64_t mb = gs_plan_blocks_per_sm(hw, p, p->regs_bound);
    p->min_blocks = p->opts.min_blocks1 || mb < 1 ? 1 : (int32_t)mb;
}

void gs_plan_format(const gs_op *op, const gs_plan *p, char *buf, size_t n) {
    size_t off = 0;
    buf[0] = 0;
    for (int t = 0; t < op->ninputs && off < n; t++) {
        const gs_plan_input *pi = &p->in[t];
        if (!pi->staged) {
            off += (size_t)snprintf(buf + off, n - off, "%s%s:global%s fv%d", off ? " " : "", op->tensors[t].name,
                                    pi->direct ? " direct" : "", pi->frag_vec);
            continue;
        }
        off += (size_t)snprintf(buf + off, n - off, "%s%s:%s%s v%d%s pad%d fv%d%s", off ? " " : "", op->tensors[t].name,
                                pi->im2col ? "im2col " : "", pi->copy_mode == GS_COPY_ASYNC ? "async" : "reg", pi->copy_vec,
                                pi->inner_dim != pi->copy_dim ? " T" : "", (int)pi->pad, pi->frag_vec,
                                pi->unit_sep ? " sep" : "");
        if (pi->store_group > 1 && off < n) off += (size_t)snprintf(buf + off, n - off, " sg%d", pi->store_group);
    }
    if (off < n)
        off += (size_t)snprintf(buf + off, n - off, " | st%d%s ov%d lb(%d,%d)%s", p->stages,
                                p->fast_path ? " fast" : " predicated", p->out_vec, (int)p->threads,
                                (int)p->min_blocks, p->smem_dynamic ? " dyn-smem" : "");
    if (off < n && p->frag_pipe)
        off += (size_t)snprintf(buf + off, n - off, " fragpipe%s%s", p->peel ? " peel" : "", p->cross_turn ? " xturn" : "");
    else if (off < n && p->peel) /* the plain pipeline's */
        off += (size_t)snprintf(buf + off, n - off, " peel%s", p->cross_turn == GS_CROSS_TURN_COPY_AT_TURN ? " xturn"
                                                         : p->cross_turn ? " xturn early" : "");
    if (off < n && p->mma) {
        off += (size_t)snprintf(buf + off, n - off, " mma %s w%dx%d", gs_mma_get(p->mma)->name, p->warp_m, p->warp_n);
        for (int t = 0; t < op->ninputs && off < n; t++) {
            char swz[16] = "";
            if (p->in[t].swizzle) snprintf(swz, sizeof swz, " swz%d", 1 << p->in[t].swizzle);
            /* (lds0p: element reads, a register's two halves in one read) */
            off += (size_t)snprintf(buf + off, n - off, " %s:%s%d%s%s%s%s", op->tensors[t].name,
                                    p->in[t].ldsm ? "ldsm" : "lds", p->in[t].ldsm, p->in[t].ldsm_trans ? "t" : "",
                                    p->in[t].frag_pairs ? "p" : "", swz, p->in[t].kmask ? " kmask" : "");
        }
    }
    if (off < n && p->raster) off += (size_t)snprintf(buf + off, n - off, " raster%d", 1 << p->raster);
    if (off < n && p->lanes > 1) off += (size_t)snprintf(buf + off, n - off, " split%d", p->lanes);
    if (off < n && p->splitk > 1)
        snprintf(buf + off, n - off, " splitk%d %s", p->splitk, p->split_mode == GS_SPLIT_ATOMIC ? "atomic" : "ordered");
}

int64_t gs_split_counter_bytes(const gs_op *op, const gs_etir *e) {
    return e->splitk > 1 ? 4 * ((gs_etir_tile_blocks(op, e) + 3) / 4 * 4) : 0;
}

int64_t gs_split_workspace_bytes(const gs_op *op, const gs_etir *e, int mode) {
    if (mode == GS_SPLIT_NONE || e->splitk <= 1) return 0;
    int64_t slices = mode == GS_SPLIT_ATOMIC ? 1 : e->splitk;
    return gs_split_counter_bytes(op, e) + 4 * slices * gs_op_out_points(op);
}

int64_t gs_plan_workspace_bytes(const gs_op *op, const gs_etir *e, const gs_plan *p) {
    return gs_split_workspace_bytes(op, e, p->split_mode);
}

/* ---- the kernel's arguments -------------------------------------------------------- */
_Static_assert(GS_MAX_TENSORS + 1 + GS_MAX_AXES + GS_MAX_TENSORS * GS_MAX_DIMS + 3 <= GS_LAUNCH_MAX_ARGS,
               "every argument of the largest operator fits GS_LAUNCH_MAX_ARGS");
const char *gs_arg_role_name(gs_arg_role r) {
    static const char *names[] = {"input", "output", "bias", "extent", "shape", "alpha", "beta", "workspace"};
    return (unsigned)r < sizeof names / sizeof names[0] ? names[r] : "?";
}

static gs_launch_arg *add_arg(gs_launch_arg *args, int *n, int cap, gs_arg_role role, int index, int dim) {
    if (*n >= cap) {
        *n = cap + 1;
        return NULL;
    }
    gs_launch_arg *a = &args[(*n)++];
    memset(a, 0, sizeof *a);
    a->role = role;
    a->index = index;
    a->dim = dim;
    a->type = role <= GS_ARG_BIAS || role == GS_ARG_WORKSPACE ? "float*" : role <= GS_ARG_SHAPE ? "int" : "float";
    a->bytes = 4;
    a->elems = 1;
    return a;
}

static void buffer_size(gs_launch_arg *a, int64_t elems) {
    a->elems = elems;
    a->bytes = 4 * elems;
}
/* A buffer of type t: its bytes by the type table, and its C type. */
static void buffer_size_typed(gs_launch_arg *a, int64_t elems, int t) {
    buffer_size(a, elems);
    a->bytes = gs_dtype_row(t)->bytes * elems;
    if (t != GS_DTYPE_F32) a->type = "uint16_t*";
}

int gs_plan_launch_args(const gs_op *op, const gs_etir *e, const gs_plan *p, gs_launch_arg *args, int cap) {
    int n = 0;
    gs_launch_arg *a;
    for (int t = 0; t < op->ninputs; t++)
        if ((a = add_arg(args, &n, cap, GS_ARG_INPUT, t, -1))) {
            snprintf(a->name, sizeof a->name, "in%d", t);
            buffer_size_typed(a, gs_tensor_elems(&op->tensors[t]), op->dtype_in);
        }
    if ((a = add_arg(args, &n, cap, GS_ARG_OUTPUT, op->ninputs, -1))) {
        snprintf(a->name, sizeof a->name, "out");
        buffer_size_typed(a, gs_tensor_elems(gs_op_out(op)), op->dtype_out);
    }
    int bias_axis;
    if (gs_epi_has(op, GS_EPI_ADD_BIAS, &bias_axis) && (a = add_arg(args, &n, cap, GS_ARG_BIAS, -1, -1))) {
        snprintf(a->name, sizeof a->name, "bias");
        buffer_size_typed(a, gs_op_bias_elems(op), op->dtype_in);
    }
    for (int x = 0; x < op->naxes; x++)
        if ((a = add_arg(args, &n, cap, GS_ARG_EXTENT, x, -1))) {
            snprintf(a->name, sizeof a->name, "E%d", x);
            a->ivalue = op->axes[x].extent;
        }
    for (int t = 0; t <= op->ninputs; t++)
        for (int j = 0; j < op->tensors[t].ndim; j++)
            if ((a = add_arg(args, &n, cap, GS_ARG_SHAPE, t, j))) {
                snprintf(a->name, sizeof a->name, "S%u_%u", (unsigned)t & 0xffu, (unsigned)j & 0xffu); /* t, j < 16 */
                a->ivalue = op->tensors[t].shape[j];
            }
    if ((a = add_arg(args, &n, cap, GS_ARG_ALPHA, -1, -1))) {
        snprintf(a->name, sizeof a->name, "alpha");
        a->fvalue = op->epi.alpha;
    }
    if ((a = add_arg(args, &n, cap, GS_ARG_BETA, -1, -1))) {
        snprintf(a->name, sizeof a->name, "beta");
        a->fvalue = op->epi.beta;
    }
    if (p->split_mode != GS_SPLIT_NONE && (a = add_arg(args, &n, cap, GS_ARG_WORKSPACE, -1, -1))) {
        snprintf(a->name, sizeof a->name, "ws");
        buffer_size(a, gs_plan_workspace_bytes(op, e, p) / 4);
        a->zero_first = 1;
    }
    return n > cap ? -1 : n;
}
