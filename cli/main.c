/* main.c — the `gensor` command.
 *
 *   gensor construct SPEC [--hw NAME|FILE] [--seed N] [--top K] [--chains N]
 *                    [--policy paper|balanced|model] [--strategy markov|exhaustive|random]
 *                    [--emit cuda|opencl|ptx|sass|json] [--out DIR] [--nvrtc] [--sass[=full]]
 *                    [--format text|json]
 *   gensor verify SPEC [--hw NAME|FILE] [--top K] [--seed N] ...
 *   gensor estimate SPEC --hw NAME (--config CFG | --configs FILE) [--format text|json]
 *   gensor space SPEC [--hw NAME|FILE] [--format text|json] [--limit N]
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
    "  hw list          list the built-in hardware profiles\n"
    "  hw show NAME     show a profile (built-in name or JSON file)\n"
    "\n"
    "SPEC examples: 'gemm M=4096 N=4096 K=4096', 'gemv M=16384 N=1000',\n"
    "  'conv2d N=128 C=256 H=30 W=30 K=256 R=3 S=3 stride=2 pad=0 layout=nchw' (grammar: README)\n"
    "Run 'gensor <command> --help' for the options of a command.\n";

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
                                             &gs_cli_space,     &gs_cli_suite,  &gs_cli_analyze};
    for (size_t i = 0; i < sizeof subs / sizeof subs[0]; i++)
        if (!strcmp(cmd, subs[i]->name)) return finish_stdout(gs_cli_main(subs[i], argc - 1, argv + 1));
    fputs("gensor: error: unknown command '", stderr);
    put_escaped(cmd);
    fputs("' (see 'gensor --help')\n", stderr);
    return finish_stdout(2);
}
