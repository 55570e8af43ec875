/* construct.c — `gensor construct`, `gensor verify` and `gensor estimate`. */
#include "cli/cli.h"

#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <jansson.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>

typedef struct cli_opts {
    const char *spec, *hw, *emit, *out, *format, *config, *configs, *cache_dir;
    gs_construct_opts co;
    gs_cli_plan plan;    /* --plan-opts: the v1-style plan options set on every candidate */
    bool nvrtc;
    const char *backend; /* NULL (construction only), "opencl" or "cuda" */
    int refine;          /* candidates to measure (0: no refinement) */
    double refine_ms;    /* budget of the timed launches */
    bool refine_ms_set;
    bool max_ms_set;     /* --max-ms given (else exhaustive gets GS_CLI_EXHAUSTIVE_MS) */
    int sass;            /* 0: none, 1: --sass (summary), 2: --sass=full or --emit sass */
    bool sass_steady;    /* --sass=steady: the steady path's instructions too */
    bool emit_given;
    gs_cli_cmd cmd;      /* construct, verify or estimate: its name, help and options */
    bool verify;
    int64_t nonfinite;   /* verify --nonfinite N: special values among the inputs (gs_verify_opts) */
    bool given[128];     /* options given (by their short code), checked against the command */
} cli_opts;

/* --plan-opts, in the help of construct, verify and estimate */
#define PLAN_OPTS_HELP                                                                                     \
    "  --plan-opts LIST     plan every candidate (or --config) with the v1-style options, a comma list:\n" \
    "                       scalar (no vectors), predicated (no fast path), noasync (no cp.async), lb1\n"  \
    "                       (launch bounds (threads, 1)), im2col | box (a windowed input's tile), or v1\n" \
    "                       (all but im2col: the plan v1 emitted); the walk is the same, the candidates\n" \
    "                       are re-planned, re-priced and re-ranked [none: the default plan]\n"

static const char construct_help[] =
    "usage: gensor construct SPEC [options]\n"
    "\n"
    "Constructs kernels for the operator SPEC (grammar: man gensor) and prints the ranked table and\n"
    "the best candidate's kernel.\n"
    "\n"
    "  --hw NAME|FILE|auto  hardware profile: built-in name (gensor hw list) or JSON file [rtx4090];\n"
    "                       auto: the --backend device's own profile\n"
    "  --seed N             PCG32 seed; equal seeds give identical results [1]\n"
    "  --top K              candidates kept [5]\n"
    "  --chains N           independent Markov chains [8]\n"
    "  --threads N          workers for the chains, the polishes and a 1x1 conv's two forms; the\n"
    "                       result is the same for every N; 0: up to the online CPUs (at most 4),\n"
    "                       the helpers started only when the work left is worth them [0]\n"
    "  --policy P           paper | balanced | model (the benefit formulas) [model]\n"
    "  --strategy S         markov | tree (Roller-style) | exhaustive | random [markov]\n"
    "  --max-ms MS          exhaustive: stop enumerating after MS milliseconds and report the result as\n"
    "                       capped; 0: no budget [10000]\n"
    "  --form F             auto: a 1x1 conv is also constructed as the matrix product it is and the\n"
    "                       faster predicted form kept (the `form` line); direct: its own nest [auto]\n"
    "  --split-atomic       split-K blocks meet by float atomics (sums): fewer bytes, but the result is\n"
    "                       NOT deterministic (the adds' order varies); default: a fixed-order sum\n"
    PLAN_OPTS_HELP
    "  --emit E             construct: print cuda | opencl | ptx | sass | json after the table [cuda]\n"
    "  --out DIR            construct: write <kernel>.cu, .cl, .json (and .ptx, .log with NVRTC, .sass\n"
    "                       with --sass) to DIR\n"
    "  --nvrtc              construct: compile each candidate with NVRTC, re-rank them with ptxas'\n"
    "                       real register counts, and show registers/spills\n"
    "  --sass[=FORM]        construct: compile the emitted candidate to a cubin for the profile's arch and\n"
    "                       count its SASS with cuobjdump (make sass-tools), whole kernel, main loop and\n"
    "                       its steady-state iteration (FFMA or HMMA share, shared load->FFMA/HMMA\n"
    "                       distances, spills); FORM summary (the default), steady (also the steady\n"
    "                       path's instructions), full (or --emit sass: the whole listing)\n"
    "  --config CFG         skip construction and use this configuration, e.g.\n"
    "                       bm=128,bn=128,bk=32,tm=8,tn=8,vm=1,vn=2,sa=1,sb=1 (gensor help config)\n"
    "  --format text|json   output format of the table [text]\n"
    "  --cache-dir DIR      keep NVRTC's output in the kernel cache DIR and reuse it [$GS_CACHE_DIR; none]\n"
    "  --backend B          opencl | cuda: the device for --hw auto and --refine [none: construction only]\n"
    "  --refine K           construct: time the top K candidates on the --backend device (warm-up excluded,\n"
    "                       median of >= 3 runs) and emit the fastest\n"
    "  --refine-ms MS       budget of the timed launches over all K candidates [200]\n"
    "\n"
    "'gensor verify' runs the kernels on a device and checks them (gensor verify --help).\n";

static const char verify_help[] =
    "usage: gensor verify SPEC [options]\n"
    "\n"
    "Constructs kernels for the operator SPEC (grammar: man gensor) as construct does, runs the top K\n"
    "on the --backend device (OpenCL by default: PoCL on CPU-only machines, GS_CL_DEVICE picks one;\n"
    "cuda: NVRTC for the device's arch) and compares each with GSL's sgemm (gemm) or the IR\n"
    "interpreter. Prints PASS/FAIL per kernel; exits 1 on a mismatch.\n"
    "\n"
    "  --hw NAME|FILE|auto  hardware profile the kernels are constructed for: built-in name (gensor\n"
    "                       hw list) or JSON file [rtx4090]; auto: the --backend device's own profile\n"
    "  --top K              candidates verified [1]\n"
    "  --seed N             PCG32 seed; equal seeds give identical results [1]\n"
    "  --chains N           independent Markov chains [8]\n"
    "  --threads N          workers of the construction (see construct --help) [0]\n"
    "  --policy P           paper | balanced | model (benefit formulas) [model]\n"
    "  --strategy S         markov | tree (Roller-style) | exhaustive | random [markov]\n"
    "  --max-ms MS          exhaustive: stop enumerating after MS milliseconds; 0: no budget [10000]\n"
    "  --form F             auto | direct: how a 1x1 conv is constructed (see construct --help) [auto]\n"
    "  --split-atomic       split-K blocks meet by float atomics (the result is not deterministic)\n"
    PLAN_OPTS_HELP
    "  --config CFG         skip construction and verify this configuration, e.g.\n"
    "                       bm=128,bn=128,bk=32,tm=8,tn=8,vm=1,vn=2,sa=1,sb=1\n"
    "  --nonfinite N        after drawing the finite inputs, put N values NaN, +inf or -inf (drawn by\n"
    "                       the seed) at random positions of the inputs, the bias and (beta != 0) the\n"
    "                       output's old contents; with beta = 0 the old contents are all NaN. Each\n"
    "                       output's class (NaN, +inf, -inf, finite) must match the interpreter's,\n"
    "                       the finite ones within the tolerance [0: finite inputs only]\n"
    "  --nvrtc              also compile each candidate with NVRTC and re-rank by ptxas' registers\n"
    "  --cache-dir DIR      keep NVRTC's output in the kernel cache DIR [$GS_CACHE_DIR; none]\n"
    "  --backend B          opencl | cuda: the device the kernels run on, and whose profile --hw auto\n"
    "                       reads [opencl]\n"
    "  --format text|json   output format of the table [text]\n";

static const char estimate_help[] =
    "usage: gensor estimate SPEC --hw NAME|FILE (--config CFG | --configs FILE) [--plan-opts LIST]\n"
    "                       [--format text|json]\n"
    "\n"
    "Prices configurations with the model, without a walk: one (--config CFG) or one per line of\n"
    "FILE (--configs; blank lines and lines starting with # are skipped). Each must pass the\n"
    "profile's check.\n"
    "\n"
    "  --hw NAME|FILE       hardware profile: built-in name (gensor hw list) or JSON file [rtx4090]\n"
    "  --config CFG         one configuration, e.g. bm=128,bn=128,bk=32,tm=8,tn=8,vm=1,vn=2,sa=1,sb=1\n"
    "  --configs FILE       configurations, one per line\n"
    PLAN_OPTS_HELP
    "  --format text|json   output format [text]\n";

static const struct option construct_lo[] = {
    GS_CLI_OPT_HW,
    GS_CLI_OPT_SEED,
    {"top", required_argument, 0, 'k'},
    GS_CLI_OPT_CHAINS,
    GS_CLI_OPT_THREADS,
    GS_CLI_OPT_POLICY,
    GS_CLI_OPT_STRATEGY,
    {"emit", required_argument, 0, 'e'},
    {"out", required_argument, 0, 'o'},
    GS_CLI_OPT_FORMAT,
    GS_CLI_OPT_NVRTC,
    {"config", required_argument, 0, 'C'},
    {"configs", required_argument, 0, 'F'},
    {"backend", required_argument, 0, 'B'},
    {"refine", required_argument, 0, 'R'},
    {"refine-ms", required_argument, 0, 'M'},
    {"sass", optional_argument, 0, 'A'},
    GS_CLI_OPT_MAX_MS,
    GS_CLI_OPT_CACHE_DIR,
    {"split-atomic", no_argument, 0, 'Z'},
    {"form", required_argument, 0, 'P'},
    {"plan-opts", required_argument, 0, 'L'},
    {"nonfinite", required_argument, 0, 'N'},
    GS_CLI_OPT_HELP,
    GS_CLI_OPT_END,
};

/* One option (gs_cli_opt_fn). */
static int parse_one_opt(int c, void *opts) {
    cli_opts *o = opts;
    const char *cmd = o->cmd.name;
    if (c > 0 && c < 128) o->given[c] = true;
    long v;
    switch (c) {
    case 'w': o->hw = optarg; break;
    case 's':
        if (gs_cli_int_opt(cmd, "seed", optarg, 0, LONG_MAX, &v)) return 2;
        o->co.seed = (uint64_t)v;
        break;
    case 'k':
        if (gs_cli_int_opt(cmd, "top", optarg, 1, GS_MAX_TOP, &v)) return 2;
        o->co.top_k = (int)v;
        break;
    case 'c':
        if (gs_cli_int_opt(cmd, "chains", optarg, 1, 4096, &v)) return 2;
        o->co.chains = (int)v;
        break;
    case 'j':
        if (gs_cli_int_opt(cmd, "threads", optarg, 0, 64, &v)) return 2;
        o->co.threads = (int)v;
        break;
    case 'p': return gs_cli_policy_opt(cmd, optarg, &o->co.policy) ? 2 : -1;
    case 'S': return gs_cli_strategy_opt(cmd, optarg, &o->co.strategy) ? 2 : -1;
    case 'e':
        if (strcmp(optarg, "cuda") && strcmp(optarg, "opencl") && strcmp(optarg, "ptx") && strcmp(optarg, "sass") &&
            strcmp(optarg, "json"))
            return gs_cli_usage_error(cmd, "unknown --emit '%s' (cuda, opencl, ptx, sass, json)", optarg);
        o->emit = optarg;
        o->emit_given = true;
        if (!strcmp(optarg, "sass")) o->sass = 2;
        break;
    case 'A':
        if (!optarg || !strcmp(optarg, "summary")) o->sass = o->sass > 1 ? o->sass : 1;
        else if (!strcmp(optarg, "full")) o->sass = 2;
        else if (!strcmp(optarg, "steady")) o->sass = o->sass > 1 ? o->sass : 1, o->sass_steady = true;
        else
            return gs_cli_usage_error(cmd, "unknown --sass '%s' (--sass, --sass=summary, --sass=steady, --sass=full)",
                                      optarg);
        break;
    case 'o': o->out = optarg; break;
    case 'D': o->cache_dir = optarg; break;
    case 'f': return gs_cli_format_opt(cmd, optarg, false, &o->format) ? 2 : -1;
    case 'n': o->nvrtc = true; break;
    case 'C': o->config = optarg; break;
    case 'F': o->configs = optarg; break;
    case 'B':
        if (strcmp(optarg, "opencl") && strcmp(optarg, "cuda"))
            return gs_cli_usage_error(cmd, "unknown --backend '%s' (opencl, cuda)", optarg);
        o->backend = optarg;
        break;
    case 'R':
        if (gs_cli_int_opt(cmd, "refine", optarg, 1, GS_MAX_TOP, &v)) return 2;
        o->refine = (int)v;
        break;
    case 'M': {
        char *end;
        errno = 0;
        double ms = strtod(optarg, &end);
        if (!*optarg || *end || errno || !isfinite(ms) || ms <= 0 || ms > 1e7)
            return gs_cli_usage_error(cmd, "--refine-ms expects a positive number of milliseconds, got '%s'", optarg);
        o->refine_ms = ms;
        o->refine_ms_set = true;
        break;
    }
    case 'X':
        if (!gs_cli_parse_double(optarg, 0, 1e9, &o->co.max_ms))
            return gs_cli_usage_error(cmd, "--max-ms expects a number of milliseconds in [0, 1e9], got '%s'", optarg);
        o->max_ms_set = true;
        break;
    case 'Z': o->co.split_atomic = 1; break;
    case 'N':
        if (gs_cli_int_opt(cmd, "nonfinite", optarg, 0, 1000000000, &v)) return 2;
        o->nonfinite = v;
        break;
    case 'L': return gs_cli_plan_opt(cmd, optarg, &o->plan) ? 2 : -1;
    case 'P':
        if (!strcmp(optarg, "auto")) o->co.conv_form = GS_FORM_AUTO;
        else if (!strcmp(optarg, "direct")) o->co.conv_form = GS_FORM_DIRECT;
        else return gs_cli_usage_error(cmd, "unknown --form '%s' (auto, direct)", optarg);
        break;
    }
    return -1;
}

/* The options fit together and the command: returns -1 to go on, else an
 * exit code. GIVEN marks the options present, by their short code. */
static int check_opts(int argc, char **argv, cli_opts *o) {
    const char *cmd = o->cmd.name;
    const bool verify = o->verify, *given = o->given;
    /* options another command takes would be silently ignored: refuse them */
    bool estimate = !strcmp(cmd, "estimate");
    static const struct { char code; const char *name; } only[] = {
        {'s', "--seed"}, {'k', "--top"}, {'c', "--chains"}, {'j', "--threads"}, {'p', "--policy"}, {'S', "--strategy"},
        {'e', "--emit"}, {'o', "--out"}, {'n', "--nvrtc"}, {'B', "--backend"}, {'R', "--refine"},
        {'M', "--refine-ms"}, {'F', "--configs"}, {'A', "--sass"}, {'X', "--max-ms"},
        {'D', "--cache-dir"}, {'Z', "--split-atomic"}, {'P', "--form"}, {'N', "--nonfinite"},
    };
    for (size_t i = 0; i < sizeof only / sizeof only[0]; i++) {
        char k = only[i].code;
        bool ok = estimate ? k == 'F' : verify ? (k != 'F' && k != 'e' && k != 'o' && k != 'A') : (k != 'F' && k != 'N');
        if (given[(int)k] && !ok)
            return gs_cli_usage_error(cmd, "%s is not an option of this command", only[i].name);
    }
    if (estimate && !strcmp(o->hw, "auto"))
        return gs_cli_usage_error(cmd, "--hw auto is not supported here: give a profile name or JSON file%s", "");
    int rc = gs_cli_operand(&o->cmd, argc, argv, &o->spec);
    if (rc >= 0) return rc;
    /* the device options depend on one another */
    if (!strcmp(o->hw, "auto") && !o->backend)
        return gs_cli_usage_error(cmd, "--hw auto needs --backend opencl|cuda (the device to query)%s", "");
    if (o->refine && !o->backend)
        return gs_cli_usage_error(cmd, "--refine needs --backend opencl|cuda (the device to measure on)%s", "");
    if (o->refine && verify)
        return gs_cli_usage_error(cmd, "--refine is an option of 'gensor construct'%s", "");
    if (o->refine_ms_set && !o->refine) return gs_cli_usage_error(cmd, "--refine-ms needs --refine K%s", "");
    if (!o->refine_ms_set) o->refine_ms = GS_REFINE_DEFAULT_MS;
    if (o->refine > o->co.top_k) o->co.top_k = o->refine; /* refinement measures ranked candidates */
    if (!o->max_ms_set && o->co.strategy == GS_STRATEGY_EXHAUSTIVE) o->co.max_ms = GS_CLI_EXHAUSTIVE_MS;
    if (estimate && !o->config == !o->configs)
        return gs_cli_usage_error(cmd, "give exactly one of --config CFG or --configs FILE%s", "");
    return -1;
}

/* Returns -1 to continue, else an exit code. */
static int parse_opts(const char *cmd, int argc, char **argv, cli_opts *o, bool verify) {
    /* defaults: verify checks one candidate */
    memset(o, 0, sizeof *o);
    gs_construct_opts_default(&o->co);
    o->co.conv_form = GS_FORM_AUTO; /* the CLI follows the result's form (run_candidates) */
    if (verify) o->co.top_k = 1;
    o->hw = "rtx4090";
    o->emit = "cuda";
    o->format = "text";
    const char *help = !strcmp(cmd, "estimate") ? estimate_help : verify ? verify_help : construct_help;
    o->cmd = (gs_cli_cmd){cmd, help, construct_lo, NULL, NULL, NULL};
    o->verify = verify;
    int rc = gs_cli_getopt(&o->cmd, argc, argv, parse_one_opt, o);
    if (rc >= 0) return rc;
    return check_opts(argc, argv, o);
}

/* One file of --out: its name in the directory and its bytes. */
typedef struct out_file {
    char name[128];
    const char *data;
    size_t len;
} out_file;

/* Write LEN bytes to a new file PATH and make them durable (fsync); errors
 * name SHOWN, the file the user asked for: the piece a shared
 * write-to-temp helper can take over. */
static gs_status write_durable(gs_ctx *ctx, const char *path, const char *shown, const void *data, size_t len) {
    FILE *f = fopen(path, "wbx");
    if (!f) return gs_err(ctx, GS_ERR_IO, "cannot create %s: %s", shown, strerror(errno));
    errno = 0;
    size_t w = fwrite(data, 1, len, f);
    bool bad = w != len || fflush(f) != 0 || fsync(fileno(f)) != 0;
    int err = errno;
    if (fclose(f) != 0 && !bad) {
        bad = true;
        err = errno;
    }
    return bad ? gs_err(ctx, GS_ERR_IO, "cannot write %s: %s", shown, strerror(err ? err : EIO)) : GS_OK;
}

/* Write every file into DIR, or none: each goes to DIR/.<name>.tmp.<pid>
 * first; only when all are written and synced are they renamed into place.
 * On any failure the temporaries (and what was already renamed) are removed. */
static gs_status write_all_or_none(gs_ctx *ctx, const char *dir, const out_file *files, int n) {
    char path[8][4096], tmp[8][4200];
    gs_status s = GS_OK;
    int written = 0, renamed = 0;
    for (int i = 0; i < n && s == GS_OK; i++) {
        int n1 = snprintf(path[i], sizeof path[i], "%s/%s", dir, files[i].name);
        int n2 = snprintf(tmp[i], sizeof tmp[i], "%s/.%s.tmp.%ld", dir, files[i].name, (long)getpid());
        /* a truncated name would write somewhere else */
        if (n1 < 0 || (size_t)n1 >= sizeof path[i] || n2 < 0 || (size_t)n2 >= sizeof tmp[i])
            return gs_err(ctx, GS_ERR_IO, "cannot write into %.60s...: %s", dir, strerror(ENAMETOOLONG));
        remove(tmp[i]); /* a stale temporary of a killed run with our pid */
        s = write_durable(ctx, tmp[i], path[i], files[i].data, files[i].len);
        if (s == GS_OK) written++;
        else remove(tmp[i]);
    }
    for (int i = 0; i < written && s == GS_OK; i++, renamed++)
        if (rename(tmp[i], path[i]))
            s = gs_err(ctx, GS_ERR_IO, "cannot rename %s to %s: %s", tmp[i], path[i], strerror(errno));
    if (s != GS_OK) {
        for (int i = 0; i < renamed; i++) remove(path[i]);
        for (int i = renamed; i < written; i++) remove(tmp[i]);
    }
    return s;
}

/* NVRTC target for a profile: its own arch, or the nearest supported one
 * with a note on stderr. Returns 0 when NVRTC is unavailable. */
static int nvrtc_arch(gs_ctx *ctx, const gs_hw *hw, bool quiet_note) {
    if (!gs_nvrtc_available(ctx)) return 0;
    int archs[64], n = 0;
    if (gs_nvrtc_supported_archs(ctx, archs, 64, &n) != GS_OK) return 0;
    for (int i = 0; i < n; i++)
        if (archs[i] == hw->sm) return hw->sm;
    int near = gs_nvrtc_nearest_arch(ctx, hw->sm);
    if (!quiet_note)
        fprintf(stderr, "gensor: note: %s is sm_%d, which the installed NVRTC does not support; compiling for the nearest supported arch sm_%d\n",
                hw->name, hw->sm, near);
    return near;
}

static json_t *candidate_json(const gs_result *r, int i, const gs_nvrtc_out *nv) {
    char cfg[256];
    gs_etir_format_config(&r->op, &r->cand[i], cfg, sizeof cfg);
    const gs_estimate *e = &r->est[i];
    json_t *j = json_pack("{s:i, s:s, s:s, s:I, s:I, s:I, s:i, s:f, s:f, s:s, s:f, s:i, s:f}", "rank", i, "etir",
                          r->desc[i], "config", cfg, "grid", (json_int_t)e->blocks, "block", (json_int_t)e->threads,
                          "smem_bytes", (json_int_t)e->smem_bytes, "regs_estimate", e->regs_per_thread,
                          "predicted_s", e->time_s, "predicted_tflops", gs_op_flops(&r->op) / e->time_s / 1e12,
                          "bound", e->bound, "waves", e->waves, "blocks_per_sm", e->blocks_per_sm, "occupancy",
                          e->occupancy);
    if (j && nv) {
        json_object_set_new(j, "ptxas_registers", json_integer(nv->stats.registers));
        json_object_set_new(j, "ptxas_spill_bytes",
                            json_integer(nv->stats.spill_store_bytes + nv->stats.spill_load_bytes));
        json_object_set_new(j, "ptxas_smem_bytes", json_integer(nv->stats.smem_bytes));
    }
    return j;
}

/* How the OpenCL kernel is launched, for external harnesses: 1-D, global =
 * grid*block work-items. "args" lists every argument in order (name, role,
 * type; a buffer's bytes and elements, a scalar's value; the workspace's
 * zero-before-the-first-launch rule). The older keys stay for the harnesses
 * that read them: the tensor shapes, the bias length, the int arguments
 * (extents, then shapes), alpha and beta, and the workspace's bytes. */
static json_t *launch_json(const gs_op *op, const gs_kernel_src *ks) {
    json_t *j = json_object(), *ints = json_array(), *shapes = json_array(), *args = json_array();
    int32_t vals[48];
    int ni = gs_kernel_int_args(op, vals, 48);
    for (int i = 0; i < ni; i++) json_array_append_new(ints, json_integer(vals[i]));
    for (int t = 0; t <= op->ninputs; t++) {
        json_t *sh = json_array();
        for (int d = 0; d < op->tensors[t].ndim; d++) json_array_append_new(sh, json_integer(op->tensors[t].shape[d]));
        json_array_append_new(shapes, sh);
    }
    gs_launch_arg la[GS_LAUNCH_MAX_ARGS];
    int na = gs_plan_launch_args(op, &ks->desc.etir, &ks->desc.plan, la, GS_LAUNCH_MAX_ARGS);
    for (int i = 0; i < na; i++) {
        const gs_launch_arg *a = &la[i];
        json_t *o = json_pack("{s:s, s:s, s:s}", "name", a->name, "role", gs_arg_role_name(a->role), "type", a->type);
        if (a->index >= 0) json_object_set_new(o, a->role == GS_ARG_EXTENT ? "axis" : "tensor", json_integer(a->index));
        if (a->dim >= 0) json_object_set_new(o, "dim", json_integer(a->dim));
        if (!strcmp(a->type, "float*")) {
            json_object_set_new(o, "bytes", json_integer(a->bytes));
            json_object_set_new(o, "elems", json_integer(a->elems));
        } else if (a->role == GS_ARG_EXTENT || a->role == GS_ARG_SHAPE) {
            json_object_set_new(o, "value", json_integer(a->ivalue));
        } else {
            json_object_set_new(o, "value", json_real(a->fvalue));
        }
        if (a->zero_first) json_object_set_new(o, "zero_before_first_launch", json_true());
        json_array_append_new(args, o);
    }
    json_object_set_new(j, "opencl_kernel", json_string(ks->name));
    json_object_set_new(j, "grid", json_integer(ks->grid));
    json_object_set_new(j, "block", json_integer(ks->block));
    json_object_set_new(j, "args", args);
    json_object_set_new(j, "tensor_shapes", shapes); /* the inputs, then the output */
    json_object_set_new(j, "bias_elems", json_integer(gs_op_bias_elems(&ks->desc.op)));
    json_object_set_new(j, "int_args", ints);
    json_object_set_new(j, "alpha", json_real(op->epi.alpha));
    json_object_set_new(j, "beta", json_real(op->epi.beta));
    json_object_set_new(j, "workspace_bytes", json_integer(ks->ws_bytes));
    return j;
}

/* ---- --backend, --hw auto and --refine ------------------------------------------------- */
static bool has_nocase(const char *hay, const char *needle) {
    size_t n = strlen(needle);
    for (; *hay; hay++) {
        size_t i = 0;
        while (i < n && hay[i] && tolower((unsigned char)hay[i]) == tolower((unsigned char)needle[i])) i++;
        if (i == n) return true;
    }
    return false;
}

/* PoCL names its CPU device "pthread-<cpu>" (or "cpu-..."). */
static bool cl_device_is_cpu(const char *name) { return has_nocase(name, "pthread") || has_nocase(name, "cpu"); }

/* Open the --backend device and, with --hw auto, read its profile into
 * *auto_hw. Returns -1 to go on, else an exit code. */
static int open_backend(gs_ctx *ctx, const cli_opts *o, gs_device **dev, gs_hw **auto_hw) {
    bool want_auto = !strcmp(o->hw, "auto");
    gs_status s;
    if (!strcmp(o->backend, "opencl")) {
        s = gs_device_open(ctx, GS_BACKEND_OPENCL, 0, dev);
        if (s != GS_OK) return gs_cli_fail(ctx, s);
    } else {
        s = gs_device_open(ctx, GS_BACKEND_CUDA, 0, dev);
        if (s == GS_ERR_CUDA_MISSING) {
            const char *m = gs_ctx_errmsg(ctx);
            if (!strncmp(m, "no CUDA device: measurement-free mode", 37)) gs_cli_error_line("gensor: error: ", m);
            else fprintf(stderr, "gensor: error: no CUDA device: measurement-free mode (%s)\n", *m ? m : "no driver");
            return 1;
        }
        if (s != GS_OK) return gs_cli_fail(ctx, s);
    }
    if (!want_auto) return -1;
    gs_hw *h = calloc(1, sizeof *h);
    if (!h) return gs_cli_fail(ctx, gs_err(ctx, GS_ERR_NOMEM, "out of memory"));
    char *notes = NULL;
    s = gs_device_query(ctx, *dev, "rtx3090", h, &notes);
    if (s != GS_OK) {
        free(h);
        free(notes);
        return gs_cli_fail(ctx, s);
    }
    if (notes && *notes) fprintf(stderr, "gensor: note: --hw auto: %s\n", notes);
    free(notes);
    *auto_hw = h;
    return -1;
}

static void print_refine(const gs_result *r, const gs_refine_report *rep) {
    bool ocl = !strcmp(rep->backend, "opencl");
    printf("refine    %d candidates on %s device %s; predictions for %s\n", rep->n, ocl ? "OpenCL" : "CUDA",
           rep->device, rep->target);
    printf("refine    budget %.0f ms of timed launches (%.1f ms used; %.2f s in all with builds and one "
           "excluded warm-up launch each)\n",
           rep->budget_s * 1e3, rep->measure_s * 1e3, rep->total_s);
    printf("  rank  %-44s %11s %11s %11s %11s %5s\n", "etir (axis:block/thread/vthreads)", "predicted", "median",
           "spread(IQR)", "sd", "runs");
    for (int i = 0; i < rep->n; i++) {
        const gs_refine_cand *c = &rep->c[i];
        if (c->status == GS_OK)
            printf("%s %4d  %-44s %8.4f ms %8.4f ms %8.4f ms %8.4f ms %5d\n", i == rep->pick ? "*" : " ", i,
                   r->desc[i], c->predicted_s * 1e3, c->median_s * 1e3, c->iqr_s * 1e3, c->sd_s * 1e3, c->runs);
        else
            printf("  %4d  %-44s %8.4f ms  not measured: %s\n", i, r->desc[i], c->predicted_s * 1e3, c->error);
    }
    const gs_refine_cand *p = &rep->c[rep->pick];
    printf("refine    pick: candidate %d (*), measured median %.4f ms", rep->pick, p->median_s * 1e3);
    if (rep->pick != 0 && rep->c[0].status == GS_OK)
        printf(" vs %.4f ms for the model's first choice (%.2fx)", rep->c[0].median_s * 1e3,
               rep->c[0].median_s / p->median_s);
    printf("; it is the kernel emitted\n");
    if (isnan(rep->spearman))
        printf("refine    rank correlation predicted vs measured: undefined (%d measured; needs 3 and no constant "
               "series)\n",
               rep->measured);
    else
        printf("refine    rank correlation predicted vs measured (Spearman, %d candidates): %+.3f\n", rep->measured,
               rep->spearman);
    if (ocl && cl_device_is_cpu(rep->device))
        printf("refine    caveat: measured on a CPU through OpenCL (PoCL), so the timings and this correlation "
               "describe the CPU; they say nothing about the accuracy of the GPU model for %s\n",
               rep->target);
    else if (!has_nocase(rep->device, rep->target))
        printf("refine    note: the model predicts for profile %s; the measurements are on %s\n", rep->target,
               rep->device);
}

static json_t *num_or_null(double v) { return isfinite(v) ? json_real(v) : json_null(); }

static json_t *refine_json(const gs_refine_report *rep) {
    json_t *j = json_object(), *arr = json_array();
    for (int i = 0; i < rep->n; i++) {
        const gs_refine_cand *c = &rep->c[i];
        json_t *e = json_object();
        json_object_set_new(e, "rank", json_integer(c->rank));
        json_object_set_new(e, "predicted_s", num_or_null(c->predicted_s));
        json_object_set_new(e, "median_s", num_or_null(c->median_s));
        json_object_set_new(e, "iqr_s", num_or_null(c->iqr_s));
        json_object_set_new(e, "sd_s", num_or_null(c->sd_s));
        json_object_set_new(e, "runs", json_integer(c->runs));
        json_object_set_new(e, "measured", json_boolean(c->status == GS_OK));
        if (c->status != GS_OK) json_object_set_new(e, "error", json_string(c->error));
        json_array_append_new(arr, e);
    }
    json_object_set_new(j, "backend", json_string(rep->backend));
    json_object_set_new(j, "device", json_string(rep->device));
    json_object_set_new(j, "target", json_string(rep->target));
    json_object_set_new(j, "budget_ms", json_real(rep->budget_s * 1e3));
    json_object_set_new(j, "measure_ms", json_real(rep->measure_s * 1e3));
    json_object_set_new(j, "pick", json_integer(rep->pick));
    json_object_set_new(j, "spearman", num_or_null(rep->spearman));
    json_object_set_new(j, "cpu_device",
                        json_boolean(!strcmp(rep->backend, "opencl") && cl_device_is_cpu(rep->device)));
    json_object_set_new(j, "candidates", arr);
    return j;
}

static int do_verify(gs_ctx *ctx, const cli_opts *o, const gs_result *r, gs_device *open_dev) {
    gs_device *dev = open_dev;
    gs_status s = dev ? GS_OK : gs_device_open(ctx, GS_BACKEND_OPENCL, 0, &dev);
    if (s != GS_OK) return gs_cli_fail(ctx, s);
    printf("verify    on %s device: %s\n", gs_device_backend(dev) == GS_BACKEND_CUDA ? "CUDA" : "OpenCL",
           gs_device_name(dev));
    int fails = 0, rc = 0;
    for (int i = 0; i < r->n; i++) {
        gs_diff d;
        const gs_verify_opts vo = {o->nonfinite};
        s = gs_verify_ex(ctx, dev, &r->hw, &r->op, &r->cand[i], o->co.seed, &vo, &d);
        if (s == GS_OK || s == GS_ERR_MISMATCH) {
            printf("  %d  %-44s %s  normwise %.2e  max abs %.2e  max rel %.2e  nmse %.2e  ref %s", i, r->desc[i],
                   s == GS_OK ? "PASS" : "FAIL", d.normwise, d.max_abs, d.max_rel, d.nmse, d.reference);
            if (o->nonfinite) printf("  non-finite %lld of %lld", (long long)d.ref_nonfinite,
                                     (long long)gs_tensor_elems(gs_op_out(&r->op)));
            printf("\n");
            if (s != GS_OK) {
                fails++;
                gs_cli_error_line("gensor: error: ", gs_ctx_errmsg(ctx));
            }
        } else {
            rc = gs_cli_fail(ctx, s);
            break;
        }
    }
    if (dev != open_dev) gs_device_close(dev);
    if (rc) return rc;
    printf("verify    %d passed, %d failed (tolerance: normwise error <= %.2g)\n", r->n - fails, fails,
           gs_verify_tolerance(&r->op));
    return fails ? 1 : 0;
}

/* ---- --sass ------------------------------------------------------------------------ */
/* The checkout the binary was built in (<root>/build/gensor), whose
 * build/venv holds the cuobjdump of make sass-tools; "." when unknown. */
static void exe_root(char *buf, size_t cap) {
    ssize_t n = readlink("/proc/self/exe", buf, cap - 1);
    if (n <= 0) {
        snprintf(buf, cap, ".");
        return;
    }
    buf[n] = '\0';
    for (int up = 0; up < 2; up++) {
        char *sl = strrchr(buf, '/');
        if (!sl) {
            snprintf(buf, cap, ".");
            return;
        }
        *sl = '\0';
    }
    if (!*buf) snprintf(buf, cap, "/");
}

/* Issue slots the tensor pipe allows per HMMA of the steady path: the
 * model's clocks for one m16n8k instruction on one SM partition (the
 * profile's tensor rate for the operator's types, at its mma.sync
 * efficiency); 0 without HMMA. */
static double hmma_clocks(const gs_sass_steady *st, const gs_hw *hw, const gs_op *op) {
    if (!st->mma_k || !hw || !op) return 0.0;
    return gs_model_mma_clocks(hw, (gs_dtype)op->dtype_in, (gs_math)op->math, 16, 8, st->mma_k);
}

static json_t *sass_counts_json(const int64_t *c) {
    json_t *j = json_object();
    for (int k = 0; k < GS_SASS_NCLASS; k++) json_object_set_new(j, gs_sass_class_key(k), json_integer(c[k]));
    return j;
}

static json_t *sass_json(const gs_sass_summary *sm, const char *kernel, int arch, const char *tool,
                         const char *listing, const gs_hw *hw, const gs_op *op, double model_ipm) {
    json_t *j = json_pack("{s:s, s:i, s:s, s:I, s:o}", "kernel", kernel, "arch", arch, "tool", tool,
                          "backward_branches", (json_int_t)sm->loops, "all", sass_counts_json(sm->all));
    if (sm->has_loop)
        json_object_set_new(j, "main_loop", json_pack("{s:I, s:I, s:o}", "begin", (json_int_t)sm->loop_begin, "end",
                                                      (json_int_t)sm->loop_end, "counts", sass_counts_json(sm->loop)));
    else json_object_set_new(j, "main_loop", json_null());
    const gs_sass_steady *st = &sm->steady;
    if (st->found) {
        json_t *sj = json_pack("{s:I, s:I, s:I, s:I, s:o, s:I, s:I, s:I, s:I, s:I}", "begin", (json_int_t)st->begin, "end",
                               (json_int_t)st->end, "blocks", (json_int_t)st->blocks, "ffma_inner",
                               (json_int_t)st->ffma_inner, "counts",
                               sass_counts_json(st->count), "int_addr", (json_int_t)st->intops, "global_bytes",
                               (json_int_t)st->gbytes, "lds_fed", (json_int_t)st->lds_fed, "lds_near",
                               (json_int_t)st->lds_near, "lds_min_slots", (json_int_t)st->lds_min_slots);
        json_t *near = json_array();
        for (int64_t i = 0; i < st->lds_near && i < GS_SASS_NEAR_LIST; i++)
            json_array_append_new(near, json_pack("{s:I, s:I, s:I, s:I}", "load", (json_int_t)st->near[i].load, "ffma",
                                                  (json_int_t)st->near[i].ffma, "slots", (json_int_t)st->near[i].slots,
                                                  "math_between", (json_int_t)st->near[i].math));
        json_object_set_new(sj, "lds_near_at", near);
        json_object_set_new(sj, "ffma_share",
                            json_real(st->count[GS_SASS_TOTAL] ? (double)st->count[GS_SASS_FFMA] /
                                                                     (double)st->count[GS_SASS_TOTAL]
                                                               : 0.0));
        json_object_set_new(sj, "lds_mean_slots", json_real(st->lds_mean_slots));
        json_object_set_new(sj, "near_slots", json_integer(GS_SASS_NEAR_SLOTS));
        json_object_set_new(sj, "ffma_reuse", json_integer(st->ffma_reuse));
        const int64_t hmma = st->count[GS_SASS_HMMA];
        json_object_set_new(sj, "model_issue_per_math", model_ipm > 0 ? json_real(model_ipm) : json_null());
        json_t *runs = json_array(); /* the path's runs of instructions (the first GS_SASS_SPANS) */
        for (int k = 0; k < st->nspan && k < GS_SASS_SPANS; k++)
            json_array_append_new(runs, json_pack("[I, I]", (json_int_t)st->span[k][0], (json_int_t)st->span[k][1]));
        json_object_set_new(sj, "runs", runs);
        if (hmma) {
            json_object_set_new(sj, "mma_k", json_integer(st->mma_k));
            json_object_set_new(sj, "hmma_share", json_real((double)hmma / (double)st->count[GS_SASS_TOTAL]));
            json_object_set_new(sj, "issue_per_hmma", json_real((double)st->count[GS_SASS_TOTAL] / (double)hmma));
            const double clk = hmma_clocks(st, hw, op);
            json_object_set_new(sj, "tensor_clocks_per_hmma", clk > 0 ? json_real(clk) : json_null());
        }
        json_object_set_new(j, "steady", sj);
    } else json_object_set_new(j, "steady", json_null());
    if (listing) json_object_set_new(j, "listing", json_string(listing));
    return j;
}

/* The listing's lines of the steady path (--sass=steady): each instruction
 * line whose offset lies in one of the path's runs (NOPs among them, which
 * the counts leave out), its encoding comment dropped. One kernel a cubin:
 * the offsets are its. */
static void print_steady_listing(const char *text, const gs_sass_steady *st) {
    if (!st->found || !text) {
        printf("sass      steady path: none (no loop in the kernel)\n");
        return;
    }
    const int kept = st->nspan < GS_SASS_SPANS ? st->nspan : GS_SASS_SPANS;
    printf("sass      steady path: %lld instructions (NOPs not counted) in %d runs%s\n",
           (long long)st->count[GS_SASS_TOTAL], st->nspan, st->nspan > kept ? " (the first runs listed)" : "");
    for (const char *p = text; p && *p;) {
        size_t n = strcspn(p, "\n");
        const char *q = p;
        while (q < p + n && (*q == ' ' || *q == '\t')) q++;
        char *end = NULL;
        long long a = q + 2 < p + n && q[0] == '/' && q[1] == '*' && isxdigit((unsigned char)q[2]) ? strtoll(q + 2, &end, 16) : -1;
        bool on = false;
        for (int k = 0; a >= 0 && end && end[0] == '*' && k < kept && !on; k++) on = a >= st->span[k][0] && a <= st->span[k][1];
        if (on) {
            int len = (int)(p + n - q);
            for (const char *x = q + 2; x + 5 <= p + n; x++) /* the encoding comment at the line's end */
                if (!strncmp(x, "/* 0x", 5)) {
                    len = (int)(x - q);
                    break;
                }
            while (len > 0 && (q[len - 1] == ' ' || q[len - 1] == '\t')) len--;
            printf("sass        %.*s\n", len, q);
        }
        p += n;
        if (*p) p++;
    }
}

static void print_sass(const gs_sass_summary *sm, const char *kernel, int arch, const char *tool, const gs_hw *hw,
                       const gs_op *op, double model_ipm) {
    printf("sass      %s for sm_%d (cuobjdump: %s)\n", kernel, arch, tool);
    if (sm->has_loop)
        printf("sass      main loop 0x%04llx..0x%04llx: %lld instructions, the body of a backward BRA (%lld in the kernel)\n",
               (unsigned long long)sm->loop_begin, (unsigned long long)sm->loop_end,
               (long long)sm->loop[GS_SASS_TOTAL], (long long)sm->loops);
    else printf("sass      main loop: none (no backward branch)\n");
    const gs_sass_steady *st = &sm->steady;
    printf("sass      %-10s %8s %10s %8s\n", "class", "kernel", "main-loop", "steady");
    for (int k = 0; k < GS_SASS_NCLASS; k++)
        printf("sass      %-10s %8lld %10lld %8lld\n", gs_sass_class_label(k), (long long)sm->all[k],
               (long long)sm->loop[k], (long long)st->count[k]);
    if (!st->found) return;
    const int64_t *c = st->count;
    int64_t tot = c[GS_SASS_TOTAL], lds = c[GS_SASS_LDS128] + c[GS_SASS_LDS64] + c[GS_SASS_LDS],
            ldg = c[GS_SASS_LDG128] + c[GS_SASS_LDG] + c[GS_SASS_LDGSTS128] + c[GS_SASS_LDGSTS],
            sts = c[GS_SASS_STS128] + c[GS_SASS_STS];
    const bool main_loop = sm->has_loop && st->begin == sm->loop_begin && st->end == sm->loop_end;
    printf("sass      steady state: %lld instructions on the full-tile path through %s %#llx..%#llx (%lld basic blocks; "
           "cold code left out)\n",
           (long long)tot, main_loop ? "the main loop" : "the steady loop", (unsigned long long)st->begin,
           (unsigned long long)st->end, (long long)st->blocks);
    printf("sass      steady FFMA %lld (share %.3f)  LDS %lld  LDG/LDGSTS %lld (%lld B)  STS %lld  BAR %lld  "
           "int/addr %lld  other %lld\n",
           (long long)c[GS_SASS_FFMA], tot ? (double)c[GS_SASS_FFMA] / (double)tot : 0.0, (long long)lds,
           (long long)ldg, (long long)st->gbytes, (long long)sts, (long long)c[GS_SASS_BAR], (long long)st->intops,
           (long long)(tot - c[GS_SASS_FFMA] - c[GS_SASS_HMMA] - c[GS_SASS_LDSM] - lds - ldg - sts - c[GS_SASS_BAR] -
                       st->intops));
    if (st->ffma_inner)
        printf("sass      steady %lld of the FFMA lie in an inner loop, counted once (a partly unrolled k-loop)\n",
               (long long)st->ffma_inner);
    const int64_t hmma = c[GS_SASS_HMMA], nmath = hmma ? hmma : c[GS_SASS_FFMA];
    if (nmath && model_ipm > 0) /* the model's instruction count against ptxas' code */
        printf("sass      steady instructions per %s: %.2f here, %.2f in the model's count of a full tile (%.2fx)\n",
               hmma ? "HMMA" : "FFMA", (double)tot / (double)nmath, model_ipm,
               (double)tot / (double)nmath / model_ipm);
    const char *math = hmma ? "HMMA" : "FFMA", *ld = hmma ? "LDSM/LDS" : "LDS";
    if (hmma) {
        /* the tensor core's steady figures: how many issue slots each HMMA
         * takes against the clocks the tensor pipe needs for it */
        const double clk = hmma_clocks(st, hw, op);
        char shape[16] = "shape unknown";
        if (st->mma_k) snprintf(shape, sizeof shape, "m16n8k%d", st->mma_k);
        printf("sass      steady HMMA %lld (%s, share %.3f)  LDSM %lld  LDS %lld: %.2f issue slots per HMMA",
               (long long)hmma, shape, tot ? (double)hmma / (double)tot : 0.0, (long long)c[GS_SASS_LDSM], (long long)lds,
               (double)tot / (double)hmma);
        if (clk > 0)
            printf(" against the tensor pipe's %.1f clocks per HMMA on %s (%s)", clk, hw->name,
                   (double)tot / (double)hmma <= clk ? "the tensor pipe bounds the loop" : "issue bounds the loop");
        printf("\n");
    }
    if (st->lds_fed)
        printf("sass      steady %s->%s: %lld loads feed %ss, nearest %lld slots, mean %.1f, %lld under %d\n", ld, math,
               (long long)st->lds_fed, math, (long long)st->lds_min_slots, st->lds_mean_slots, (long long)st->lds_near,
               GS_SASS_NEAR_SLOTS);
    else if (hmma && (lds || c[GS_SASS_LDSM])) /* tf32's ldmatrix words are rounded too */
        printf("sass      steady %s->%s: no shared load feeds an HMMA directly (its elements go through "
               "conversions, as tf32's)\n", ld, math);
    else printf("sass      steady %s->%s: no shared load feeds an %s\n", ld, math, math);
    if (st->lds_near) { /* where to look in --sass=full's listing */
        printf("sass      steady near loads (%s -> %s, slots):", ld, math);
        int64_t shown = st->lds_near < GS_SASS_NEAR_LIST ? st->lds_near : GS_SASS_NEAR_LIST;
        for (int64_t i = 0; i < shown; i++)
            if (hmma)
                printf("%s %#llx -> %#llx (%lld; %lld HMMA between)", i ? "," : "",
                       (unsigned long long)st->near[i].load, (unsigned long long)st->near[i].ffma,
                       (long long)st->near[i].slots, (long long)st->near[i].math);
            else
                printf("%s %#llx -> %#llx (%lld)", i ? "," : "", (unsigned long long)st->near[i].load,
                       (unsigned long long)st->near[i].ffma, (long long)st->near[i].slots);
        if (st->lds_near > shown) printf(", and %lld more", (long long)(st->lds_near - shown));
        printf("\n");
    }
    if (c[GS_SASS_FFMA])
        printf("sass      steady FFMA operand reuse: %lld .reuse flags, %.2f per FFMA\n", (long long)st->ffma_reuse,
               (double)st->ffma_reuse / (double)c[GS_SASS_FFMA]);
    printf("sass      spills LDL %lld STL %lld (whole kernel)\n", (long long)sm->all[GS_SASS_LDL],
           (long long)sm->all[GS_SASS_STL]);
}

/* ---- construct and verify, step by step -------------------------------------------- */
/* Everything one construct/verify run holds. Each step below returns -1 to
 * go on or an exit code; run_free releases what the steps made. */
typedef struct cli_run {
    const cli_opts *o;
    const char *cmd;
    bool verify, want_json;
    gs_ctx *ctx;
    gs_op *op;
    gs_hw *hw;
    gs_result *r;
    gs_nvrtc_out nv[GS_MAX_TOP]; /* ptxas statistics (and code) per candidate */
    bool have_nv;
    gs_device *dev; /* the --backend device */
    gs_refine_report *rep;
    int pick;       /* the candidate emitted: 0, or refinement's pick */
    int arch;       /* NVRTC's target, 0 without NVRTC */
    gs_sass_summary sass;
    char *sass_text;
    char sass_tool[4096], kname[48];
    bool have_sass;
    gs_kcache *kc; /* --cache-dir / $GS_CACHE_DIR: NVRTC's output reused; NULL: none */
    char user_spec[GS_SPEC_LEN]; /* the operator as given, when construction kept another form (u->op) */
} cli_run;

static int run_fail(cli_run *u, gs_status s) { return gs_cli_fail(u->ctx, s); }

/* Step 1: parse the spec, find cuobjdump (--sass) and open the --backend
 * device before any work, and load the profile (or query it: --hw auto). */
static int run_load(cli_run *u) {
    gs_status s = gs_op_parse(u->ctx, u->o->spec, &u->op);
    if (s == GS_OK && u->o->sass) {
        char root[4096];
        exe_root(root, sizeof root);
        if (gs_sass_find_tool(u->ctx, root, u->sass_tool, sizeof u->sass_tool) != GS_OK) {
            gs_cli_error_line("gensor: error: ", gs_ctx_errmsg(u->ctx));
            return 1;
        }
    }
    if (s == GS_OK && u->o->backend) {
        int brc = open_backend(u->ctx, u->o, &u->dev, &u->hw);
        if (brc >= 0) return brc;
    }
    if (s == GS_OK && !u->hw) s = gs_hw_load(u->ctx, u->o->hw, &u->hw);
    if (s == GS_OK) s = gs_cli_cache_open(u->ctx, u->o->cache_dir, &u->kc);
    return s == GS_OK ? -1 : run_fail(u, s);
}

/* --plan-opts on a walk's candidates: each takes the options, is checked
 * and priced again, and they are ranked again, stably. The walk itself is
 * the default plan's, so the tiles compare. A pipeline the options rule out
 * (more than 2 stages without cp.async, or a register prefetch over the
 * register limit) is made shallower until the candidate passes, down to
 * the one stage of v1; a candidate that fails even then is dropped. */
static gs_status replan_candidates(gs_ctx *ctx, const gs_cli_plan *po, const gs_op *op, const gs_hw *hw, gs_result *r) {
    int n = 0;
    for (int i = 0; i < r->n; i++) {
        gs_etir e = r->cand[i];
        gs_cli_plan_apply(po, &e);
        while (!gs_hw_check(hw, op, &e) && e.stages > 1) e.stages--;
        if (!gs_hw_check(hw, op, &e)) continue;
        gs_estimate est;
        gs_estimate_etir(hw, op, &e, 0, &est);
        int j = n++;
        for (; j > 0 && r->est[j - 1].time_s > est.time_s; j--) {
            r->cand[j] = r->cand[j - 1];
            r->est[j] = r->est[j - 1];
        }
        r->cand[j] = e;
        r->est[j] = est;
    }
    r->n = n;
    if (!n)
        return gs_err(ctx, GS_ERR_INVALID_ARG, "--plan-opts: none of the %s candidates fits %s's limits under these options",
                      op->spec, hw->name);
    for (int i = 0; i < n; i++) gs_etir_format(op, &r->cand[i], r->desc[i], sizeof r->desc[i]);
    return GS_OK;
}

/* Step 2: the candidates: one exact --config (no construction), or the
 * strategy's ranked top-k, with --plan-opts set on each. */
static int run_candidates(cli_run *u) {
    gs_ctx *ctx = u->ctx;
    const cli_opts *o = u->o;
    gs_status s = GS_OK;
    if (!o->config) {
        s = gs_construct(ctx, u->op, u->hw, &o->co, &u->r);
        if (s != GS_OK) return run_fail(u, s);
        /* a 1x1 conv kept as a matrix product: every later step emits, verifies
         * and times that form; the report names both */
        if (strcmp(u->r->op.spec, u->op->spec)) {
            snprintf(u->user_spec, sizeof u->user_spec, "%s", u->op->spec);
            *u->op = u->r->op;
        }
        if (o->plan.any && (s = replan_candidates(ctx, &o->plan, u->op, u->hw, u->r)) != GS_OK) return run_fail(u, s);
        return -1;
    }
    gs_result *r = u->r = calloc(1, sizeof *r);
    if (!r) s = gs_err(ctx, GS_ERR_NOMEM, "out of memory");
    if (s == GS_OK) s = gs_etir_parse_config(ctx, u->op, o->config, &r->cand[0]);
    if (s == GS_OK) gs_cli_plan_apply(&o->plan, &r->cand[0]);
    if (s == GS_OK) s = gs_config_fits(ctx, u->hw, u->op, &r->cand[0], o->config);
    if (s != GS_OK) return run_fail(u, s);
    r->op = *u->op;
    r->hw = *u->hw;
    r->n = 1;
    gs_estimate_etir(u->hw, u->op, &r->cand[0], 0, &r->est[0]);
    gs_etir_format(u->op, &r->cand[0], r->desc[0], sizeof r->desc[0]);
    return -1;
}

/* Step 3: NVRTC's arch when a flag needs it (--out only uses it when
 * present), then with --nvrtc the ptxas-informed ranking: real register
 * counts re-rank the top-k. */
static int run_nvrtc_rank(cli_run *u) {
    const cli_opts *o = u->o;
    bool need = o->nvrtc || !strcmp(o->emit, "ptx") || o->sass;
    if (need || o->out) {
        u->arch = nvrtc_arch(u->ctx, u->hw, u->want_json);
        if (!u->arch && need) return run_fail(u, GS_ERR_NVRTC_MISSING);
    }
    if (!u->arch || !o->nvrtc) return -1;
    gs_ptxas_stats st[GS_MAX_TOP];
    gs_status s = gs_rerank_ptxas_cached(u->ctx, u->kc, u->hw, u->op, u->arch, u->r->cand, u->r->est, u->r->n, st);
    if (s != GS_OK) return run_fail(u, s);
    for (int i = 0; i < u->r->n; i++) {
        u->nv[i].stats = st[i];
        gs_etir_format(u->op, &u->r->cand[i], u->r->desc[i], sizeof u->r->desc[i]);
    }
    return -1;
}

/* Step 4: --refine measures the (final) ranking's top K on the device; the
 * fastest is the one emitted. */
static int run_refine(cli_run *u) {
    if (!u->o->refine) return -1;
    gs_status s;
    u->rep = calloc(1, sizeof *u->rep);
    if (!u->rep) s = gs_err(u->ctx, GS_ERR_NOMEM, "out of memory");
    else s = gs_refine_device(u->ctx, u->kc, u->dev, u->op, u->r, u->o->refine, u->o->refine_ms, u->rep);
    if (s != GS_OK) return run_fail(u, s);
    u->pick = u->rep->pick;
    return -1;
}

/* The model's instructions per FFMA (or mma) of a full tile of the emitted
 * candidate, beside --sass's count of ptxas' code; 0 when it has none. */
static double model_ipm(const cli_run *u) {
    if (!u->r || u->pick < 0 || u->pick >= u->r->n) return 0.0;
    gs_plan p;
    gs_plan_make(&u->r->hw, u->op, &u->r->cand[u->pick], NULL, &p);
    return gs_model_issue_per_math(&u->r->hw, u->op, &u->r->cand[u->pick], &p);
}

/* Step 5: compile the emitted candidate for --emit ptx and --sass, and
 * count its SASS (the static check of its cubin). */
static int run_compile_pick(cli_run *u) {
    const cli_opts *o = u->o;
    bool ptx = !strcmp(o->emit, "ptx");
    gs_status s = GS_OK;
    if (u->arch && (o->nvrtc || ptx || o->sass)) {
        if (ptx || o->sass) {
            gs_kernel_src ks;
            gs_nvrtc_out *nv = &u->nv[u->pick];
            gs_nvrtc_out_free(nv);
            s = gs_lower_emit(u->ctx, &u->r->hw, u->op, &u->r->cand[u->pick], GS_DIALECT_CUDA, u->arch, &ks);
            if (s == GS_OK) {
                snprintf(u->kname, sizeof u->kname, "%s", ks.name);
                s = gs_nvrtc_compile_cached(u->ctx, u->kc, ks.src, ks.name, u->arch, true, true, nv, NULL);
            }
            gs_kernel_src_free(&ks);
            if (s != GS_OK) return run_fail(u, s);
        }
        u->have_nv = true;
    }
    if (!o->sass) return -1;
    s = gs_sass_disasm(u->ctx, u->sass_tool, u->nv[u->pick].cubin, u->nv[u->pick].cubin_len, &u->sass_text);
    if (s == GS_OK) s = gs_sass_parse(u->ctx, u->sass_text, &u->sass);
    if (s == GS_OK && o->sass == 1 && !o->out && !o->sass_steady) {
        free(u->sass_text); /* the summary only: the listing is not shown */
        u->sass_text = NULL;
    }
    if (s != GS_OK) return run_fail(u, s);
    u->have_sass = true;
    return -1;
}

/* Step 6a: the report as one JSON object. */
static int run_print_json(cli_run *u) {
    const cli_opts *o = u->o;
    const gs_result *r = u->r;
    json_t *root = json_pack("{s:s, s:s, s:i, s:f, s:s, s:s, s:I, s:I, s:I}", "op", u->user_spec[0] ? u->user_spec : u->op->spec, "hw", u->hw->name,
                             "sm", u->hw->sm, "construct_ms", r->construct_s * 1e3, "strategy",
                             gs_strategy_name(o->co.strategy), "policy", gs_policy_name(o->co.policy), "seed",
                             (json_int_t)o->co.seed, "steps", (json_int_t)r->steps, "states_ranked",
                             (json_int_t)r->pooled);
    if (u->user_spec[0]) json_object_set_new(root, "form", json_string(u->op->spec));
    json_object_set_new(root, "capped", json_boolean(r->capped));
    json_object_set_new(root, "states_estimated", json_integer(r->evaluated));
    json_object_set_new(root, "states_pruned", json_integer(r->pruned));
    if (r->floor_audit) json_object_set_new(root, "floor_violations", json_integer(r->floor_violations));
    json_t *arr = json_array();
    for (int i = 0; i < r->n; i++)
        json_array_append_new(arr, candidate_json(r, i, u->have_nv && (o->nvrtc || i == u->pick) ? &u->nv[i] : NULL));
    /* jansson refuses inf and NaN: a candidate it could not encode must not
     * vanish from the list silently */
    if (json_array_size(arr) != (size_t)r->n) {
        json_decref(arr);
        json_decref(root);
        return gs_cli_fail_run(u->ctx, gs_err(u->ctx, GS_ERR_UNSUPPORTED, "a candidate's estimate is not finite"));
    }
    json_object_set_new(root, "candidates", arr);
    if (u->rep) {
        json_object_set_new(root, "refine", refine_json(u->rep));
        json_object_set_new(root, "emitted", json_integer(u->pick));
    }
    if (u->have_sass)
        json_object_set_new(root, "sass", sass_json(&u->sass, u->kname, u->arch, u->sass_tool,
                                                    o->sass == 2 ? u->sass_text : NULL, u->hw, u->op, model_ipm(u)));
    struct rusage ru;
    if (!getrusage(RUSAGE_SELF, &ru)) json_object_set_new(root, "peak_rss_kb", json_integer(ru.ru_maxrss));
    return gs_cli_put_json(root, JSON_INDENT(2)) ? -1 : 1;
}

/* Step 6b: the report as a table, one line per candidate; registers are
 * ptxas' where the candidate was compiled, else the model's estimate (~). */
static void run_print_text(cli_run *u) {
    const cli_opts *o = u->o;
    const gs_result *r = u->r;
    gs_op shown = *u->op; /* the operator as given */
    if (u->user_spec[0]) snprintf(shown.spec, sizeof shown.spec, "%s", u->user_spec);
    gs_cli_print_op_hw(&shown, u->hw);
    if (u->user_spec[0]) printf("form      %s (the 1x1 conv as a matrix product: faster predicted)\n", u->op->spec);
    printf("construct %.3f ms  (%s, policy %s, %d chains, %lld steps, %lld states ranked, seed %llu)\n",
           r->construct_s * 1e3, gs_strategy_name(o->co.strategy), gs_policy_name(o->co.policy), o->co.chains,
           (long long)r->steps, (long long)r->pooled, (unsigned long long)o->co.seed);
    if (r->capped)
        printf("note      exhaustive enumeration hit its cap%s; the optimum may be missed\n",
               gs_cli_budget_hit(&o->co, r) ? " (the --max-ms time budget)" : "");
    printf("rank  %-44s %8s %6s %7s %5s %11s %8s  %s\n", "etir (axis:block/thread/vthreads)", "grid", "block", "smem",
           u->have_nv ? "regs" : "regs~", "predicted", "TFLOP/s", "bound");
    for (int i = 0; i < r->n; i++) {
        const gs_estimate *e = &r->est[i];
        const gs_nvrtc_out *nv = &u->nv[i];
        char regs[32];
        if (u->have_nv && (o->nvrtc || i == u->pick))
            snprintf(regs, sizeof regs, "%d%s", nv->stats.registers,
                     nv->stats.spill_store_bytes + nv->stats.spill_load_bytes ? "!" : "");
        else snprintf(regs, sizeof regs, "%d", e->regs_per_thread);
        printf("%4d  %-44s %8lld %6lld %6.1fK %5s %8.3f ms %8.2f  %s\n", i, r->desc[i], (long long)e->blocks,
               (long long)e->threads, e->smem_bytes / 1024.0, regs, e->time_s * 1e3,
               gs_op_flops(u->op) / e->time_s / 1e12, e->bound);
    }
    if (u->have_nv && o->nvrtc)
        for (int i = 0; i < r->n; i++)
            if (u->nv[i].stats.spill_store_bytes + u->nv[i].stats.spill_load_bytes)
                printf("note      candidate %d spills %lld bytes (ptxas)\n", i,
                       (long long)(u->nv[i].stats.spill_store_bytes + u->nv[i].stats.spill_load_bytes));
    if (u->rep) print_refine(r, u->rep);
    if (u->have_sass) print_sass(&u->sass, u->kname, u->arch, u->sass_tool, u->hw, u->op, model_ipm(u));
    if (u->have_sass && o->sass_steady) print_steady_listing(u->sass_text, &u->sass.steady);
}

/* Step 7a: --out DIR: the sources, the JSON description and, with NVRTC,
 * the PTX and ptxas' log, and the SASS listing; all of them or none. Each
 * file is named after its own kernel: the OpenCL kernel's descriptor (its
 * dialect) differs from the CUDA one's, so the .cl has its own name. */
static int run_write_out(cli_run *u, const gs_kernel_src *cu, const gs_kernel_src *ocl) {
    gs_ctx *ctx = u->ctx;
    const char *dir = u->o->out;
    if (mkdir(dir, 0777) && errno != EEXIST)
        return gs_cli_fail_run(ctx, gs_err(ctx, GS_ERR_IO, "cannot create directory %s: %s", dir, strerror(errno)));
    out_file f[8];
    int n = 0;
#define ADD_FILE(kname, ext, text)                                                   \
    do {                                                                             \
        snprintf(f[n].name, sizeof f[n].name, "%s.%s", kname, ext);                  \
        f[n].data = text;                                                            \
        f[n].len = strlen(text);                                                     \
        n++;                                                                         \
    } while (0)
    ADD_FILE(cu->name, "cu", cu->src);
    ADD_FILE(ocl->name, "cl", ocl->src);
    json_t *j = candidate_json(u->r, u->pick, u->have_nv ? &u->nv[u->pick] : NULL);
    json_object_set_new(j, "op", json_string(u->op->spec));
    if (u->user_spec[0]) json_object_set_new(j, "form_of", json_string(u->user_spec));
    json_object_set_new(j, "hw", json_string(u->hw->name));
    json_object_set_new(j, "kernel", json_string(cu->name));
    json_object_set_new(j, "launch", launch_json(u->op, ocl));
    char *txt = json_dumps(j, JSON_INDENT(2));
    json_decref(j);
    if (txt) ADD_FILE(cu->name, "json", txt);
    gs_nvrtc_out n1 = {0};
    if (u->arch && gs_nvrtc_compile_cached(ctx, u->kc, cu->src, cu->name, u->arch, true, true, &n1, NULL) == GS_OK) {
        if (n1.ptx) ADD_FILE(cu->name, "ptx", n1.ptx);
        if (n1.log) ADD_FILE(cu->name, "nvrtc.log", n1.log);
    }
    if (u->sass_text) ADD_FILE(cu->name, "sass", u->sass_text);
#undef ADD_FILE
    gs_status s = txt ? write_all_or_none(ctx, dir, f, n)
                      : gs_err(ctx, GS_ERR_UNSUPPORTED, "cannot encode %s.json (a value is not finite?)", cu->name);
    free(txt);
    gs_nvrtc_out_free(&n1);
    if (s != GS_OK) return gs_cli_fail_run(ctx, s);
    if (u->want_json) return 0;
    /* name exactly the files written: the CUDA kernel's set, then the .cl */
    printf("wrote     %s/%s.{", dir, cu->name);
    size_t base = strlen(cu->name) + 1;
    for (int i = 0, k = 0; i < n; i++)
        if (i != 1) printf("%s%s", k++ ? "," : "", f[i].name + base);
    printf("} %s/%s\n", dir, f[1].name);
    return 0;
}

/* Step 7b: the kernel on stdout in the --emit form; with --sass the summary
 * stands in for the default CUDA listing. */
static int run_print_kernel(cli_run *u, const gs_kernel_src *cu, const gs_kernel_src *ocl) {
    const cli_opts *o = u->o;
    const char *emit = o->emit_given || !o->sass ? o->emit : o->sass == 2 ? "sass" : "";
    if (*emit) printf("\n");
    if (!strcmp(emit, "cuda")) fputs(cu->src, stdout);
    else if (!strcmp(emit, "opencl")) fputs(ocl->src, stdout);
    else if (!strcmp(emit, "ptx") && u->nv[u->pick].ptx) fputs(u->nv[u->pick].ptx, stdout);
    else if (!strcmp(emit, "sass") && u->sass_text) fputs(u->sass_text, stdout);
    else if (!strcmp(emit, "json")) {
        json_t *j = candidate_json(u->r, u->pick, u->have_nv ? &u->nv[u->pick] : NULL);
        json_object_set_new(j, "cuda", json_string(cu->src));
        json_object_set_new(j, "opencl", json_string(ocl->src));
        if (!gs_cli_put_json(j, JSON_INDENT(2))) return 1;
    }
    if (o->sass == 2 && strcmp(emit, "sass") && u->sass_text) {
        printf("\n");
        fputs(u->sass_text, stdout);
    }
    return 0;
}

/* Step 7: the emitted candidate's kernel in both dialects, to --out or
 * stdout (not with --format json, whose report is the whole output). */
static int run_emit(cli_run *u) {
    gs_kernel_src cu, ocl;
    const gs_etir *e = &u->r->cand[u->pick];
    gs_status s = gs_lower_emit(u->ctx, &u->r->hw, u->op, e, GS_DIALECT_CUDA, u->arch ? u->arch : u->hw->sm, &cu);
    if (s != GS_OK) return run_fail(u, s);
    s = gs_lower_emit(u->ctx, &u->r->hw, u->op, e, GS_DIALECT_OPENCL, 0, &ocl);
    if (s != GS_OK) {
        gs_kernel_src_free(&cu);
        return run_fail(u, s);
    }
    int rc = 0;
    if (u->o->out) {
        rc = run_write_out(u, &cu, &ocl);
    } else if (!u->want_json) {
        rc = run_print_kernel(u, &cu, &ocl);
    }
    gs_kernel_src_free(&cu);
    gs_kernel_src_free(&ocl);
    return rc;
}

static void run_free(cli_run *u) {
    gs_cli_cache_close(u->kc);
    free(u->sass_text);
    for (int i = 0; i < GS_MAX_TOP; i++) gs_nvrtc_out_free(&u->nv[i]);
    free(u->rep);
    gs_device_close(u->dev);
    gs_result_destroy(u->r);
    gs_hw_destroy(u->hw);
    gs_op_destroy(u->op);
}

/* construct or verify: the steps in order; the first that ends the run
 * gives the exit code. */
static int construct_run(gs_ctx *ctx, const void *opts) {
    const cli_opts *o = opts;
    cli_run *u = calloc(1, sizeof *u);
    if (!u) return 1;
    u->o = o;
    u->cmd = o->cmd.name;
    u->verify = o->verify;
    u->want_json = !strcmp(o->format, "json");
    u->ctx = ctx;
    int rc;
    if ((rc = run_load(u)) < 0 && (rc = run_candidates(u)) < 0 && (rc = run_nvrtc_rank(u)) < 0 &&
        (rc = run_refine(u)) < 0 && (rc = run_compile_pick(u)) < 0) {
        if (u->want_json) rc = run_print_json(u);
        else run_print_text(u);
        /* verify runs the candidates on the --backend device (OpenCL without
         * one); construct emits one */
        if (rc < 0) rc = u->verify ? do_verify(ctx, o, u->r, u->dev) : run_emit(u);
    }
    run_free(u);
    free(u);
    return rc;
}

static int construct_parse(int argc, char **argv, void *o) { return parse_opts("construct", argc, argv, o, false); }
static int verify_parse(int argc, char **argv, void *o) { return parse_opts("verify", argc, argv, o, true); }
const gs_cli_sub gs_cli_construct = {"construct", sizeof(cli_opts), construct_parse, construct_run};
const gs_cli_sub gs_cli_verify = {"verify", sizeof(cli_opts), verify_parse, construct_run};

/* ---- estimate ---------------------------------------------------------------------- */
static int estimate_one(gs_ctx *ctx, const gs_op *op, const gs_hw *hw, const gs_cli_plan *po, const char *cfg, bool json,
                        json_t *arr, const char *file, int lineno) {
    gs_etir e;
    gs_status s = gs_etir_parse_config(ctx, op, cfg, &e);
    if (s == GS_OK) gs_cli_plan_apply(po, &e);
    if (s != GS_OK && file) {
        /* name the line of --configs FILE that failed */
        char msg[512];
        snprintf(msg, sizeof msg, "%s", gs_ctx_errmsg(ctx));
        s = gs_err(ctx, s, "%s:%d: %s", file, lineno, msg);
    }
    if (s != GS_OK) return gs_cli_fail(ctx, s);
    const char *why = gs_hw_check_why(hw, op, &e); /* NULL: it fits */
    bool fits = !why;
    gs_estimate est;
    gs_estimate_etir(hw, op, &e, 0, &est);
    if (json) {
        json_t *j = json_pack("{s:s, s:b, s:f, s:s, s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:i, s:f, s:I, s:I, s:i, s:I}",
                                             "config", cfg, "fits", fits, "predicted_s", est.time_s, "bound", est.bound,
                                             "t_compute", est.t_compute, "t_dram", est.t_dram, "t_l2", est.t_l2,
                                             "t_smem", est.t_smem, "t_sync", est.t_sync, "t_launch", est.t_launch,
                                             "occupancy", est.occupancy, "blocks_per_sm", est.blocks_per_sm, "waves",
                                             est.waves, "grid", (json_int_t)est.blocks, "block", (json_int_t)est.threads,
                                             "regs_estimate", est.regs_per_thread, "smem_bytes", (json_int_t)est.smem_bytes);
        if (j && why) json_object_set_new(j, "why", json_string(why));
        /* jansson refuses inf and NaN: never a silently shorter list */
        if (json_array_append_new(arr, j))
            return gs_cli_fail_run(ctx, gs_err(ctx, GS_ERR_UNSUPPORTED, "config %s: an estimate is not finite", cfg));
    } else {
        char verdict[160];
        snprintf(verdict, sizeof verdict, fits ? "fits" : "EXCEEDS-LIMITS (%s)", why);
        printf("%s  %s  predicted %.4f ms (%.2f TFLOP/s)  bound %s  | compute %.4f dram %.4f l2 %.4f smem %.4f sync %.4f launch %.4f ms"
               "  | occupancy %.2f (%d blocks/SM) waves %.0f grid %lld block %lld regs~%d smem %lld B\n",
               cfg, verdict, est.time_s * 1e3, gs_op_flops(op) / est.time_s / 1e12, est.bound,
               est.t_compute * 1e3, est.t_dram * 1e3, est.t_l2 * 1e3, est.t_smem * 1e3, est.t_sync * 1e3,
               est.t_launch * 1e3, est.occupancy, est.blocks_per_sm, est.waves, (long long)est.blocks,
               (long long)est.threads, est.regs_per_thread, (long long)est.smem_bytes);
    }
    return 0;
}

/* Longest --configs line: a config string is at most a few hundred bytes. */
#define CONFIGS_MAX_LINE 4096

/* Read one line of F into buf (without its newline): 1 for a line, 0 at the
 * end, -1 for a line longer than CONFIGS_MAX_LINE - 1 bytes, -2 for a NUL
 * byte in the line (so /dev/zero ends at once instead of looping). */
static int read_config_line(FILE *f, char *buf) {
    size_t n = 0;
    int c;
    while ((c = getc(f)) != EOF && c != '\n') {
        if (c == '\0') return -2;
        if (n + 1 >= CONFIGS_MAX_LINE) return -1;
        buf[n++] = (char)c;
    }
    buf[n] = '\0';
    return c == EOF && n == 0 ? 0 : 1;
}

/* Every configuration of --configs FILE, one per line; blank lines and
 * '#' comments are skipped, and a file with none is bad input. */
static int estimate_file(gs_ctx *ctx, const gs_op *op, const gs_hw *hw, const gs_cli_plan *po, const char *path, bool json,
                         json_t *arr) {
    FILE *f = fopen(path, "r");
    if (!f) return gs_cli_fail(ctx, gs_err(ctx, GS_ERR_IO, "cannot open %s: %s", path, strerror(errno)));
    char *line = malloc(CONFIGS_MAX_LINE);
    int rc = line ? 0 : gs_cli_fail(ctx, gs_err(ctx, GS_ERR_NOMEM, "out of memory"));
    int lineno = 0, got, configs = 0;
    while (!rc && (got = read_config_line(f, line)) != 0) {
        lineno++;
        if (got == -1)
            rc = gs_cli_fail(ctx, gs_err(ctx, GS_ERR_PARSE, "%s:%d: line longer than %d bytes", path, lineno,
                                         CONFIGS_MAX_LINE - 1));
        else if (got == -2)
            rc = gs_cli_fail(ctx, gs_err(ctx, GS_ERR_PARSE, "%s:%d: NUL byte in the line", path, lineno));
        if (rc) break;
        line[strcspn(line, "\r")] = 0;
        const char *p = line + strspn(line, " \t");
        if (!*p || *p == '#') continue; /* blank lines and comments */
        configs++;
        rc = estimate_one(ctx, op, hw, po, line, json, arr, path, lineno);
    }
    /* a directory opens but does not read (EISDIR) */
    if (!rc && ferror(f)) rc = gs_cli_fail(ctx, gs_err(ctx, GS_ERR_IO, "cannot read %s: %s", path, strerror(errno)));
    if (!rc && !configs)
        rc = gs_cli_fail(ctx, gs_err(ctx, GS_ERR_PARSE, "%s holds no configuration (only blank lines or comments)", path));
    free(line);
    fclose(f);
    return rc;
}

/* The configurations of --config or --configs, estimated and printed. */
static int estimate_run(gs_ctx *ctx, const void *opts) {
    const cli_opts *o = opts;
    gs_op *op = NULL;
    gs_hw *hw = NULL;
    gs_status s = gs_cli_load(ctx, o->spec, o->hw, &op, &hw);
    bool json = !strcmp(o->format, "json");
    json_t *arr = json_array();
    int rc;
    if (s != GS_OK) rc = gs_cli_fail(ctx, s);
    else if (o->config) rc = estimate_one(ctx, op, hw, &o->plan, o->config, json, arr, NULL, 0);
    else rc = estimate_file(ctx, op, hw, &o->plan, o->configs, json, arr);
    if (!rc && json) {
        if (!gs_cli_put_json(json_pack("{s:s, s:s, s:o}", "op", op->spec, "hw", hw->name, "configs", arr), JSON_INDENT(2)))
            rc = 1;
    } else {
        json_decref(arr);
    }
    gs_hw_destroy(hw);
    gs_op_destroy(op);
    return rc;
}

static int estimate_parse(int argc, char **argv, void *o) { return parse_opts("estimate", argc, argv, o, false); }
const gs_cli_sub gs_cli_estimate = {"estimate", sizeof(cli_opts), estimate_parse, estimate_run};
