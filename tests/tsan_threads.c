/* tsan_threads.c — the threading rule, under ThreadSanitizer (make check-tsan,
 * part of make test).
 *
 * The rule (include/gensor.h): one gs_ctx per thread; gs_hw, gs_op and
 * gs_result handles may be shared read-only; a gs_dispatcher belongs to one
 * thread at a time (or sits behind the caller's lock), and dispatchers may
 * share a disk cache directory.
 *
 * 8 threads start together. Each has its own context and dispatcher; all
 * share one profile, the operators and one disk cache directory. Each
 * constructs every operator (markov, and tree for one; the first again on 4
 * workers from its first job, which share one price table and must agree
 * with the default threads' result) and dispatches four
 * gemm shapes twice in each of two dispatchers, the default one (the
 * shape-class memo) and one with GS_WARM_OFF (CUDA dialect: NVRTC, loaded
 * lazily by whichever thread comes first, or the CUDA source where NVRTC is
 * missing), and every thread's results must equal the ones the main thread
 * computes afterwards. Then the main thread constructs a large conv, whose
 * price table grows before the polish, on 4 workers and on one: the same
 * result.
 * A data race makes TSan report and the process exit 66. */
#include "include/gensor.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define NTHREADS 8
static const char *const specs[] = {
    "gemm M=512 N=512 K=512",
    "conv2d N=1 C=32 H=28 W=28 K=32 R=3 S=3 pad=1",
    "gemv M=4096 N=1024",
    "rowmax M=256 K=1000",
    "dwconv2d N=1 C=32 H=56 W=56 R=3 S=3 stride=2 pad=1",
    "conv2d N=1 C=64 H=14 W=14 K=64 R=1 S=1", /* two forms at once, each with its own helpers */
};
enum { NSPECS = (int)(sizeof specs / sizeof specs[0]) };
/* the last is in the first one's size class: the default dispatcher may serve it from its memo */
static const char *const shapes[] = {"gemm M=128 N=128 K=64", "gemm M=200 N=96 K=64", "gemm M=128 N=130 K=64",
                                     "gemm M=100 N=120 K=64"};
enum { NSHAPES = (int)(sizeof shapes / sizeof shapes[0]) };

/* constructions: every spec with the default threads, the first with the
 * tree strategy, and the first on 4 workers from its first job (their one
 * price table filled at once) */
enum { NCONS = NSPECS + 2 };
typedef struct {
    char desc[NCONS][160];
    double pred[NCONS];
    uint64_t key[2][NSHAPES]; /* [0]: the default dispatcher, [1]: GS_WARM_OFF */
    char config[2][NSHAPES][200];
} outcome;

static gs_hw *hw;                 /* shared, read-only */
static gs_op *ops[NSPECS];        /* shared, read-only */
static gs_op *shape_ops[NSHAPES]; /* shared, read-only */
static char cache_dir[128];
static pthread_barrier_t start;
static outcome want;
static int failures;
static pthread_mutex_t fail_mu = PTHREAD_MUTEX_INITIALIZER;

static void fail(const char *fmt, const char *a, const char *b) {
    pthread_mutex_lock(&fail_mu);
    failures++;
    fprintf(stderr, "tsan_threads: ");
    fprintf(stderr, fmt, a, b);
    fputc('\n', stderr);
    pthread_mutex_unlock(&fail_mu);
}

/* Every shape twice in a fresh dispatcher (mode 0: the defaults, 1:
 * GS_WARM_OFF); returns 0 or the first failing status. */
static int dispatch_all(gs_ctx *ctx, int mode, outcome *o) {
    gs_dispatch_opts dop;
    gs_dispatch_opts_default(&dop);
    dop.cache_dir = cache_dir;
    dop.construct.top_k = 3;
    if (mode == 1) dop.warm_start = GS_WARM_OFF;
    gs_dispatcher *d = NULL;
    int rc = gs_dispatcher_create(ctx, hw, &dop, &d);
    for (int round = 0; round < 2 && !rc; round++)
        for (int i = 0; i < NSHAPES && !rc; i++) {
            gs_kernel_handle h;
            rc = gs_dispatch(ctx, d, shape_ops[i], &h);
            if (rc) {
                fail("dispatch: %s: %s", shapes[i], gs_ctx_errmsg(ctx));
                break;
            }
            if (round == 1 && !h.hit) fail("dispatch: %s%s: second round is not a hit", shapes[i], "");
            o->key[mode][i] = h.key;
            snprintf(o->config[mode][i], sizeof o->config[mode][i], "%s", h.config);
        }
    gs_dispatcher_destroy(d);
    return rc;
}

/* Everything one thread does; returns 0 or the first failing status. */
static int work(outcome *o) {
    gs_ctx *ctx = gs_ctx_create();
    if (!ctx) return GS_ERR_NOMEM;
    gs_construct_opts co;
    gs_construct_opts_default(&co);
    co.top_k = 3;
    int rc = 0;
    for (int i = 0; i < NCONS && !rc; i++) {
        gs_construct_opts c = co;
        if (i == NSPECS) c.strategy = GS_STRATEGY_TREE;
        if (i == NSPECS + 1) c.threads = 4;
        gs_result *r = NULL;
        rc = gs_construct(ctx, ops[i < NSPECS ? i : 0], hw, &c, &r);
        if (!rc) {
            snprintf(o->desc[i], sizeof o->desc[i], "%s", gs_result_describe(r, 0));
            o->pred[i] = gs_result_predicted_s(r, 0);
        } else fail("construct: %s: %s", specs[i < NSPECS ? i : 0], gs_ctx_errmsg(ctx));
        gs_result_destroy(r);
    }
    for (int mode = 0; mode < 2 && !rc; mode++) rc = dispatch_all(ctx, mode, o);
    gs_ctx_destroy(ctx);
    return rc;
}

static void *thread_main(void *arg) {
    pthread_barrier_wait(&start);
    work(arg);
    return NULL;
}

/* Compare a thread's outcome with the main thread's. */
static void compare(const outcome *o) {
    for (int i = 0; i < NCONS; i++)
        if (strcmp(o->desc[i], want.desc[i]) || o->pred[i] != want.pred[i])
            fail("construct differs from the main thread's: %s vs %s", o->desc[i], want.desc[i]);
    if (strcmp(o->desc[NSPECS + 1], o->desc[0]) || o->pred[NSPECS + 1] != o->pred[0])
        fail("construct on 4 workers differs from the default threads': %s vs %s", o->desc[NSPECS + 1], o->desc[0]);
    for (int m = 0; m < 2; m++)
        for (int i = 0; i < NSHAPES; i++)
            if (o->key[m][i] != want.key[m][i] || strcmp(o->config[m][i], want.config[m][i]))
                fail("dispatch differs from the main thread's: %s vs %s", o->config[m][i], want.config[m][i]);
}

/* A large conv, whose prices' table grows before the polish (construct/
 * markov.c, memo_grow), on 4 workers from the first job against one: the
 * polish's workers share the grown table. The checks made. */
static int grown_table_same_result(gs_ctx *ctx) {
    gs_hw *big_hw = NULL;
    gs_op *op = NULL;
    if (gs_hw_load(ctx, "rtx3090", &big_hw) != GS_OK ||
        gs_op_parse(ctx, "conv2d N=1 C=3 H=224 W=224 K=64 R=7 S=7 stride=2 pad=3 layout=nchw bias=1 relu=1", &op) != GS_OK) {
        fail("grown table: setup: %s%s", gs_ctx_errmsg(ctx), "");
        gs_hw_destroy(big_hw);
        return 1;
    }
    gs_construct_opts c;
    gs_construct_opts_default(&c);
    c.top_k = 3;
    gs_result *r[2] = {NULL, NULL};
    for (int i = 0; i < 2; i++) {
        c.threads = i ? 4 : 1;
        if (gs_construct(ctx, op, big_hw, &c, &r[i]) != GS_OK) fail("grown table: construct: %s%s", gs_ctx_errmsg(ctx), "");
    }
    if (r[0] && r[1] &&
        (strcmp(gs_result_describe(r[0], 0), gs_result_describe(r[1], 0)) ||
         gs_result_predicted_s(r[0], 0) != gs_result_predicted_s(r[1], 0)))
        fail("grown table: 4 workers differ from one: %s vs %s", gs_result_describe(r[1], 0), gs_result_describe(r[0], 0));
    for (int i = 0; i < 2; i++) gs_result_destroy(r[i]);
    gs_op_destroy(op);
    gs_hw_destroy(big_hw);
    return 1;
}

int main(void) {
    gs_ctx *ctx = gs_ctx_create();
    gs_status s = gs_hw_load(ctx, "orin-nano", &hw);
    for (int i = 0; i < NSPECS && s == GS_OK; i++) s = gs_op_parse(ctx, specs[i], &ops[i]);
    for (int i = 0; i < NSHAPES && s == GS_OK; i++) s = gs_op_parse(ctx, shapes[i], &shape_ops[i]);
    if (s != GS_OK) {
        fprintf(stderr, "tsan_threads: setup: %s\n", gs_ctx_errmsg(ctx));
        return 1;
    }
    /* the threads first, so that they race for the lazy NVRTC load; then the
     * reference, on the main thread with a cache directory of its own */
    snprintf(cache_dir, sizeof cache_dir, "/tmp/gs_tsan_cache.%d", (int)getpid());
    static outcome got[NTHREADS];
    pthread_t th[NTHREADS];
    pthread_barrier_init(&start, NULL, NTHREADS);
    for (int i = 0; i < NTHREADS; i++)
        if (pthread_create(&th[i], NULL, thread_main, &got[i])) {
            fprintf(stderr, "tsan_threads: pthread_create failed\n");
            return 1;
        }
    for (int i = 0; i < NTHREADS; i++) pthread_join(th[i], NULL);
    pthread_barrier_destroy(&start);
    snprintf(cache_dir, sizeof cache_dir, "/tmp/gs_tsan_cache.%d.main", (int)getpid());
    if (work(&want)) return 1;
    for (int i = 0; i < NTHREADS; i++) compare(&got[i]);
    int grown = grown_table_same_result(ctx);
    snprintf(cache_dir, sizeof cache_dir, "/tmp/gs_tsan_cache.%d", (int)getpid());

    char cmd[512];
    snprintf(cmd, sizeof cmd, "rm -rf '%s' '%s.main'", cache_dir, cache_dir);
    if (system(cmd) != 0) fprintf(stderr, "tsan_threads: could not remove %s\n", cache_dir);
    for (int i = 0; i < NSPECS; i++) gs_op_destroy(ops[i]);
    for (int i = 0; i < NSHAPES; i++) gs_op_destroy(shape_ops[i]);
    gs_hw_destroy(hw);
    gs_ctx_destroy(ctx);
    int checks = NTHREADS * (NCONS + 1 + 2 * NSHAPES) + grown;
    printf("tsan_threads: %d threads x (%d constructions + %d dispatches), results against the main thread's: "
           "%d passed, %d failed\n", NTHREADS, NCONS, 4 * NSHAPES, checks - failures, failures);
    return failures ? 1 : 0;
}
