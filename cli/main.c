/* main.c — the `gensor` command.
 *
 *   gensor construct SPEC [--hw NAME|FILE] [--seed N] [--top K] [--chains N]
 *                    [--policy paper|balanced|model] [--strategy markov|exhaustive|random]
 *                    [--emit cuda|opencl|ptx|sass|json] [--out DIR] [--nvrtc] [--sass[=summary|steady|full]]
 *                    [--format text|json]
 *   gensor verify SPEC [--hw NAME|FILE] [--top K] [--seed N] ...
 *   gensor estimate SPEC --hw NAME (--config CFG | --configs FILE) [--format text|json]
 *   gensor space SPEC [--hw NAME|FILE] [--format text|json] [--limit N | --sample N] [--max-ms MS]
 *   gensor import MODEL.onnx [--dim NAME=N ...] [--hw NAME|FILE] [--out FILE]
 *   gensor hw list | gensor hw show NAME|FILE
 *
 * Exit status: 0 success, 1 a run failed (mismatch, runtime error), 2 bad input.
 */
#include "cli/cli.h"

#include <errno.h>
#include <getopt.h>
#include <gsl/gsl_errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Write S to stderr with control characters escaped (\n, \t, \r, \xNN),
 * so that a user string echoed in a message never splits its line. */
static void put_escaped(const char *s) {
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '\n') fputs("\\n", stderr);
        else if (c == '\t') fputs("\\t", stderr);
        else if (c == '\r') fputs("\\r", stderr);
        else if (c < 0x20 || c == 0x7f) fprintf(stderr, "\\x%02x", c);
        else fputc(c, stderr);
    }
}

void gs_cli_error_line(const char *prefix, const char *msg) {
    fputs(prefix, stderr);
    put_escaped(msg);
    fputc('\n', stderr);
}

/* The message of a failure: "<status>: <detail>" with the context's detail. */
static void fail_line(gs_ctx *ctx, gs_status s) {
    const char *m = gs_ctx_errmsg(ctx), *st = gs_status_str(s);
    char line[2048];
    /* a detail that already starts with the status ("unknown operator 'X'") is not repeated */
    size_t n = strlen(st);
    if (!strncmp(m, st, n) && (m[n] == ' ' || m[n] == ':')) st = "";
    snprintf(line, sizeof line, "%s%s%s", st, *m && *st ? ": " : "", m);
    gs_cli_error_line("gensor: error: ", line);
}

int gs_cli_fail(gs_ctx *ctx, gs_status s) {
    fail_line(ctx, s);
    switch (s) {
    case GS_ERR_INVALID_ARG:
    case GS_ERR_PARSE:
    case GS_ERR_UNKNOWN_OP:
    case GS_ERR_BAD_SHAPE:
    case GS_ERR_HW_UNKNOWN:
    case GS_ERR_HW_INVALID:
    case GS_ERR_JSON:
        return 2;
    case GS_ERR_IO: /* an input that cannot be read is bad input */
        return 2;
    default:
        return 1;
    }
}

int gs_cli_fail_run(gs_ctx *ctx, gs_status s) {
    fail_line(ctx, s);
    return 1;
}

int gs_cli_usage_error(const char *cmd, const char *fmt, const char *arg) {
    char msg[2048], prefix[64];
    snprintf(msg, sizeof msg, fmt, arg ? arg : "");
    snprintf(prefix, sizeof prefix, "gensor %s: error: ", cmd);
    fputs(prefix, stderr);
    put_escaped(msg);
    fprintf(stderr, " (see 'gensor %s --help')\n", cmd);
    return 2;
}

/* stdout is buffered: a full disk or a closed pipe shows only when it is
 * flushed. Report it (exit 1) rather than exit 0 with a lost report. */
static int finish_stdout(int rc) {
    errno = 0;
    bool bad = fflush(stdout) != 0 || ferror(stdout);
    int err = errno;
    if (fclose(stdout) != 0 && !bad) {
        bad = true;
        err = errno;
    }
    if (!bad) return rc;
    fprintf(stderr, "gensor: error: I/O error: cannot write standard output: %s\n", strerror(err ? err : EIO));
    return rc ? rc : 1;
}

static const char *main_help =
    "usage: gensor <command> [options]\n"
    "\n"
    "commands:\n"
    "  construct SPEC   construct a kernel for an operator (Markov walk over ETIR states)\n"
    "  verify SPEC      construct, run the kernel(s) on the OpenCL device and compare with a reference\n"
    "  estimate SPEC    predicted time and breakdown of given configurations\n"
    "  space SPEC       list the valid configurations of an operator with their predicted times\n"
    "  suite FILE       construct every operator of a suite or model file (JSON) and tabulate\n"
    "  analyze SPEC     Markov analysis of the construction graph (value iteration, greedy vs walk)\n"
    "  import MODEL     an ONNX model's nodes as a model list for `gensor suite` (unsupported ones on stderr)\n"
    "  hw list          list the built-in hardware profiles\n"
    "  hw show NAME     show a profile (built-in name or JSON file)\n"
    "\n"
    "  help spec        the SPEC grammar: every operator and its keys\n"
    "  help config      the configuration form of --config and --configs\n"
    "\n"
    "SPEC examples: 'gemm M=4096 N=4096 K=4096', 'gemv M=16384 N=1000',\n"
    "  'conv2d N=128 C=256 H=30 W=30 K=256 R=3 S=3 stride=2 pad=0 layout=nchw'\n"
    "  (grammar: gensor help spec, or man gensor)\n"
    "Run 'gensor <command> --help' for the options of a command. The examples call 'gensor': after\n"
    "'make install' it is on PATH; in the source tree it is ./build/gensor.\n";

static const char spec_help[] =
    "SPEC := OPERATOR { KEY=VALUE }   (one argument, quoted; each key at most once; integers in\n"
    "                                  plain decimal, extents 1..2147483647)\n"
    "\n"
    "  gemm      M N K [transA=0] [transB=0] [alpha=1] [beta=0] [bias=0] [relu=0] [clip keys]\n"
    "            C[M,N] = alpha*op(A)*op(B) + beta*C, then + bias[N], max(.,0), the clip when asked;\n"
    "            A is [M,K] ([K,M] with transA=1), B is [K,N] ([N,K] with transB=1)\n"
    "  bgemm     B M N K [transA] [transB] [alpha] [beta]: gemm per batch, A[B,M,K] B[B,K,N] C[B,M,N]\n"
    "  gemv      M N [transA=0] [alpha=1] [beta=0]: y[M] = alpha*A[M,N]*x[N] + beta*y\n"
    "            (A is stored [N,M] with transA=1)\n"
    "  conv2d    N C H W K R S [window keys] [dilation=1] [dilh] [dilw] [bias=0] [relu=0] [clip keys]\n"
    "            I[N,C,H,W] * F[K,C,R,S] -> O[N,K,P,Q]; with layout=nhwc I[N,H,W,C], F[K,R,S,C],\n"
    "            O[N,P,Q,K]; groups=G (dividing C and K, [1]): F[K,C/G,R,S] (nhwc F[K,R,S,C/G]),\n"
    "            output channel g*K/G+k reads input channels g*C/G.. only (one kernel, axis g)\n"
    "  dwconv2d  N C H W R S [window keys] [dilation...] [bias=0] [relu=0] [clip keys]: depthwise,\n"
    "            F[C,R,S] (nhwc: F[R,S,C])\n"
    "  avgpool2d, maxpool2d\n"
    "            N C H W (F | R S) [window keys] [dilation...]: an RxS window (F sets both). Average\n"
    "            pooling divides by R*S, padded cells included; max pooling ignores padded cells,\n"
    "            and its padding is at most half the window\n"
    "  relu      M N: Z = max(X, 0)\n"
    "  clip      M N [clip keys]: Z = X clipped (ONNX Clip)\n"
    "  unary     M N act=F [act_p=P] [alpha=1]: Z = F(alpha*X), F one of the act functions below\n"
    "  add, sub, mul, div, max, min, pow, prelu\n"
    "            M N [bcast=0]: Z = X + Y, X - Y, X*Y, X/Y, max, min (NaN kept), X^Y, X<0 ? X*Y : X;\n"
    "            bcast=1 broadcasts Y[N] over the rows; add, max, min also [inputs=3] of X's shape\n"
    "  mean      M N [inputs=2]: Z = the mean of 2 or 3 inputs of X's shape\n"
    "  addc, subc, mulc, divc, maxc, minc, powc, preluc\n"
    "            A C B [bias=0]: Z[A,C,B] = X op Y[C] (a per-channel vector), + bias[C]\n"
    "  addm, subm, mulm, divm, maxm, minm, powm, prelum\n"
    "            A R B: Z[A,R,B] = X op Y[A,B] (Y broadcast over the middle axis)\n"
    "  place     A R B T [at=0]: Z[A,T,B] with Z[a,at+r,b] = X[a,r,b], the rest of Z kept (a concat's part)\n"
    "  transpose d0 [d1..d5] p0 [p1..p5]: Z = X[d0,..] with its dims permuted (Z's dim j is X's dim pj)\n"
    "  chansq    N C X size [alpha=1]: Y[n,c,x] = alpha * sum of X^2 over channels c-(size-1)/2..c+size/2\n"
    "  rowsum, rowmean, rowmax, rowmin\n"
    "            M K: Y[M] reduces the last axis of X[M,K]\n"
    "  midsum, midmean, midmax, midmin\n"
    "            A R B: Y[A,B] reduces the middle axis of X[A,R,B] (any run of adjacent axes)\n"
    "\n"
    "Window keys (conv2d, dwconv2d, pools): stride (or strideh, stridew) [1]; pad (or padh, padw, or\n"
    "pad_top, pad_bottom, pad_left, pad_right) [0]; layout=nchw|nhwc [nchw]. A general key (stride,\n"
    "pad, dilation, padh, padw) sets both directions and may not be given with a more specific one.\n"
    "P = (H + pad_top + pad_bottom - dilh*(R-1) - 1) / strideh + 1, and Q likewise; a window that\n"
    "does not fit its padded input is an error, as are an unknown or missing key.\n"
    "\n"
    "Clip keys (gemm, conv2d, dwconv2d, clip): clip_lo=X, clip_hi=X (finite; either or both, lo <= hi)\n"
    "bound the output after relu: out = min(max(out, clip_lo), clip_hi) (ReLU6: clip_lo=0 clip_hi=6);\n"
    "NaN stays NaN. The bounds are part of the kernel.\n"
    "\n"
    "Act keys (gemm, conv2d, dwconv2d; unary): act=F [act_p=P] applies F after the bias, before\n"
    "relu and the clip: neg abs exp log sqrt rsqrt (1/sqrt(x+P)) reciprocal tanh sigmoid erf\n"
    "softplus softsign floor ceil round sign sin cos tan asin acos atan sinh cosh asinh acosh atanh\n"
    "gelu gelu_tanh leakyrelu (P 0.01) elu (P 1) celu (P 1) thresholdedrelu (P 1) hardsigmoid\n"
    "(min(1, max(0, x+P)), P 0.5) hardswish mish swish (x*sigmoid(P*x), P 1) logp (log(x+P)).\n"
    "P is part of the kernel; NaN stays NaN.\n"
    "\n"
    "Examples: 'gemm M=1024 N=1024 K=1024 transB=1 bias=1 relu=1', 'bgemm B=12 M=128 N=128 K=64',\n"
    "  'conv2d N=1 C=64 H=56 W=56 K=64 R=3 S=3 pad=1 layout=nhwc', 'maxpool2d N=1 C=64 H=112 W=112\n"
    "  F=3 stride=2 pad=1', 'rowmax M=4096 K=1000'\n";

static const char config_help[] =
    "A configuration (--config CFG, one per line of --configs FILE) fixes a kernel without a walk:\n"
    "\n"
    "  b<axis>=N   the block tile of every axis of the operator\n"
    "  t<axis>=N   the thread tile of every spatial axis, v<axis>=N its vthreads\n"
    "  s<input>=0|1  whether that input is staged in shared memory\n"
    "\n"
    "Axis and input names are lower case: gemm has the spatial axes m, n, the reduce axis k and the\n"
    "inputs a, b, e.g. bm=128,bn=128,bk=32,tm=8,tn=8,vm=1,vn=2,sa=1,sb=1 ('gensor space SPEC' lists\n"
    "valid ones). Tiles are powers of two; a thread tile divides its block tile and the vthreads\n"
    "divide the thread tile; a block tile is at most the next power of two of its extent.\n"
    "Whole-kernel keys, each at most once, printed only when not the default:\n"
    "  stages=1..4   pipeline depth of the reduce-tile loop [1]\n"
    "  raster=1..16  blocks launched in groups of this many block rows, for L2 reuse [1]\n"
    "  group=1..32   threads sharing each output's reduction (the reduce split) [1]\n"
    "  split=1..16   split-K: blocks sharing a tile's reduction, summed in a fixed order [1]\n"
    "  atomic=0|1    with split: meet by float atomics (sums only; not deterministic) [0]\n"
    "Plan keys, the v1-style plan options (--plan-opts sets them on every candidate), each 0|1 [0]:\n"
    "  scalar=1      no vector accesses, no transposition, v1's odd-pitch layout\n"
    "  predicated=1  no fast path: every tile and store predicated\n"
    "  noasync=1     register copies even where cp.async exists\n"
    "  lb1=1         launch bounds (threads, 1), as v1\n"
    "  im2col=0..2   a windowed input's tile: 0 the smaller, 1 the im2col tile, 2 the tensor box [0]\n"
    "The profile's resource check (shared memory, threads, registers) must pass.\n";

static const char hw_help[] =
    "usage: gensor hw list\n"
    "       gensor hw show NAME|FILE [--format text|json]\n"
    "\n"
    "list: the built-in profiles. show: one profile, built-in or a JSON file whose keys are the\n"
    "field names 'hw show --format json' prints. A file may start from a built-in with\n"
    "\"base\": \"NAME\" and override some fields; such a profile is named by its \"name\" key, or\n"
    "else NAME+custom (e.g. t4+custom).\n";

static int hw_cmd(int argc, char **argv) {
    /* --help anywhere: 'gensor hw --help', 'hw list --help', 'hw show -h' */
    for (int i = 1; i < argc; i++)
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            fputs(hw_help, stdout);
            return 0;
        }
    if (argc < 2) return gs_cli_usage_error("hw", "missing subcommand: 'list' or 'show NAME|FILE'%s", "");
    if (!strcmp(argv[1], "list")) {
        if (argc > 2) return gs_cli_usage_error("hw", "unexpected argument '%s' after 'list'", argv[2]);
        printf("%-10s %-6s %5s %9s %9s  %s\n", "name", "arch", "SMs", "TFLOP/s", "GB/s", "description");
        for (int i = 0; i < gs_hw_builtin_count(); i++) {
            const gs_hw *h = gs_hw_builtin(i);
            printf("%-10s sm_%-3d %5d %9.1f %9.0f  %s\n", h->name, h->sm, h->num_sms, gs_hw_peak_flops(h) / 1e12,
                   h->dram_gbs, h->desc);
        }
        return 0;
    }
    if (strcmp(argv[1], "show")) return gs_cli_usage_error("hw", "unknown subcommand '%s'", argv[1]);
    /* show NAME|FILE [--format text|json], the option before or after the name */
    const char *name = NULL, *format = "text";
    for (int i = 2; i < argc; i++) {
        if (!strcmp(argv[i], "--format") || !strncmp(argv[i], "--format=", 9)) {
            const char *v = argv[i][8] == '=' ? argv[i] + 9 : (i + 1 < argc ? argv[++i] : NULL);
            if (!v) return gs_cli_usage_error("hw", "--format needs a value (text, json)%s", "");
            if (strcmp(v, "text") && strcmp(v, "json"))
                return gs_cli_usage_error("hw", "unknown --format '%s' (text, json)", v);
            format = v;
        } else if (argv[i][0] == '-' && argv[i][1]) {
            return gs_cli_usage_error("hw", "unknown option '%s'", argv[i]);
        } else if (name) {
            return gs_cli_usage_error("hw", "unexpected argument '%s' (one profile at a time)", argv[i]);
        } else {
            name = argv[i];
        }
    }
    if (!name) return gs_cli_usage_error("hw", "'show' needs a profile name or file%s", "");
    gs_ctx *ctx = gs_ctx_create();
    if (!ctx) return 1;
    int rc = 0;
    gs_hw *hw = NULL;
    gs_status s = gs_hw_load(ctx, name, &hw);
    if (s != GS_OK) rc = gs_cli_fail(ctx, s);
    else if (!strcmp(format, "json")) {
        char tmpl[] = "/tmp/gensor-hw-XXXXXX";
        int fd = mkstemp(tmpl);
        if (fd < 0) rc = gs_cli_usage_error("hw", "cannot create a temporary file%s", "");
        else {
            close(fd);
            s = gs_hw_save(ctx, hw, tmpl);
            if (s != GS_OK) rc = gs_cli_fail(ctx, s);
            else {
                FILE *f = fopen(tmpl, "r");
                int c;
                while (f && (c = fgetc(f)) != EOF) putchar(c);
                if (f) fclose(f);
            }
            remove(tmpl);
        }
    } else {
        char *d = gs_hw_describe(hw);
        if (d) fputs(d, stdout);
        free(d);
    }
    gs_hw_destroy(hw);
    gs_ctx_destroy(ctx);
    return rc;
}

int main(int argc, char **argv) {
    /* GSL aborts on error by default; the library never changes that, the
     * program does. */
    gsl_set_error_handler_off();
    if (argc < 2) {
        fputs(main_help, stderr);
        return 2;
    }
    const char *cmd = argv[1];
    if (!strcmp(cmd, "help") && argc > 2) {
        if (argc > 3) return finish_stdout(gs_cli_usage_error("help", "unexpected argument '%s'", argv[3]));
        if (!strcmp(argv[2], "spec")) fputs(spec_help, stdout);
        else if (!strcmp(argv[2], "config")) fputs(config_help, stdout);
        else if (!strcmp(argv[2], "--help") || !strcmp(argv[2], "-h")) fputs(main_help, stdout);
        else return finish_stdout(gs_cli_usage_error("help", "unknown topic '%s' (spec, config)", argv[2]));
        return finish_stdout(0);
    }
    if (!strcmp(cmd, "--help") || !strcmp(cmd, "-h") || !strcmp(cmd, "help")) {
        fputs(main_help, stdout);
        return finish_stdout(0);
    }
    if (!strcmp(cmd, "--version")) {
        printf("gensor %s\n", GS_VERSION_STRING);
        return finish_stdout(0);
    }
    if (!strcmp(cmd, "hw")) return finish_stdout(hw_cmd(argc - 1, argv + 1));
    static const gs_cli_sub *const subs[] = {&gs_cli_construct, &gs_cli_verify, &gs_cli_estimate,
                                             &gs_cli_space,     &gs_cli_suite,  &gs_cli_analyze,
                                             &gs_cli_import};
    for (size_t i = 0; i < sizeof subs / sizeof subs[0]; i++)
        if (!strcmp(cmd, subs[i]->name)) return finish_stdout(gs_cli_main(subs[i], argc - 1, argv + 1));
    fputs("gensor: error: unknown command '", stderr);
    put_escaped(cmd);
    fputs("' (see 'gensor --help')\n", stderr);
    return finish_stdout(2);
}
