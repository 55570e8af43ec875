/* cli.h — shared pieces of the gensor command. */
#ifndef GS_CLI_H
#define GS_CLI_H

#include "construct/construct.h"
#include "kernels/service/service.h"

#include <getopt.h>
#include <jansson.h>
#include <stdbool.h>
#include <unistd.h>

/* Print "gensor: error: <status>: <detail>" and map the status to an exit
 * code: 2 for bad input, 1 for a failed run. */
int gs_cli_fail(gs_ctx *ctx, gs_status s);
/* The same message, exit code 1 whatever the status: a run that failed
 * (writing an output), not bad input. */
int gs_cli_fail_run(gs_ctx *ctx, gs_status s);
/* PREFIX then MSG on one stderr line, MSG's control characters escaped. */
void gs_cli_error_line(const char *prefix, const char *msg);
/* Print a usage error for a subcommand and return 2. */
int gs_cli_usage_error(const char *cmd, const char *fmt, const char *arg);

/* ---- shared option parsing and output (opts.c) ---- */
/* S as a decimal long in [lo, hi]; false when it is not one. */
bool gs_cli_parse_long(const char *s, long lo, long hi, long *out);
/* S as a decimal number in [lo, hi] (never inf or NaN); false otherwise. */
bool gs_cli_parse_double(const char *s, double lo, double hi, double *out);
/* Default --max-ms of --strategy exhaustive: an answer within 10 s. */
#define GS_CLI_EXHAUSTIVE_MS 10000.0
/* Did the --max-ms budget (rather than the state cap) cut r short? */
bool gs_cli_budget_hit(const gs_construct_opts *co, const gs_result *r);
/* --NAME's value S in [lo, hi]: 0, or a usage error (2) naming the range. */
int gs_cli_int_opt(const char *cmd, const char *name, const char *s, long lo, long hi, long *out);
/* --policy / --strategy values: 0, or a usage error (2) listing the names. */
int gs_cli_policy_opt(const char *cmd, const char *arg, gs_policy *out);
int gs_cli_strategy_opt(const char *cmd, const char *arg, gs_strategy *out);
/* --format: text or json (and csv when CSV is true): 0, or a usage error. */
int gs_cli_format_opt(const char *cmd, const char *arg, bool csv, const char **out);
/* --plan-opts LIST: the v1-style plan options (the ETIR's plan knobs, ir.h), a comma list of
 * scalar, predicated, noasync, lb1, im2col, box and v1 (scalar, predicated, noasync, lb1 and
 * box: the plan v1 emitted). set[k] is the value of knob row k where given[k]. */
typedef struct gs_cli_plan {
    bool any;
    bool given[GS_KNOB_COUNT];
    uint8_t set[GS_KNOB_COUNT];
} gs_cli_plan;
/* Parse LIST into *out (added to what it holds): 0, or CMD's usage error (2). */
int gs_cli_plan_opt(const char *cmd, const char *arg, gs_cli_plan *out);
/* Set the given plan knobs on a state. */
void gs_cli_plan_apply(const gs_cli_plan *p, gs_etir *e);
/* What a subcommand's command line needs besides its own options. */
typedef struct gs_cli_cmd {
    const char *name;        /* "space": the subcommand its usage errors name */
    const char *help;        /* printed on stdout for --help (exit 0) */
    const struct option *lo; /* its long options, ended by GS_CLI_OPT_END */
    const char *unknown_fmt; /* the unknown-option error (NULL: "unknown option '%s'") */
    const char *missing;     /* the operand's usage errors (NULL: the operator SPEC's) */
    const char *extra;
} gs_cli_cmd;
/* The long options several subcommands take, with one short code each. */
#define GS_CLI_OPT_HW {"hw", required_argument, 0, 'w'}
#define GS_CLI_OPT_FORMAT {"format", required_argument, 0, 'f'}
#define GS_CLI_OPT_SEED {"seed", required_argument, 0, 's'}
#define GS_CLI_OPT_POLICY {"policy", required_argument, 0, 'p'}
#define GS_CLI_OPT_STRATEGY {"strategy", required_argument, 0, 'S'}
#define GS_CLI_OPT_CHAINS {"chains", required_argument, 0, 'c'}
#define GS_CLI_OPT_THREADS {"threads", required_argument, 0, 'j'}
#define GS_CLI_OPT_MAX_MS {"max-ms", required_argument, 0, 'X'}
#define GS_CLI_OPT_NVRTC {"nvrtc", no_argument, 0, 'n'}
#define GS_CLI_OPT_CACHE_DIR {"cache-dir", required_argument, 0, 'D'}
#define GS_CLI_OPT_HELP {"help", no_argument, 0, 'h'}
#define GS_CLI_OPT_END {0, 0, 0, 0}
/* One option of a subcommand: its code C (its value in optarg) into OPTS.
 * Returns -1 to go on, else an exit code (2 for bad input). */
typedef int (*gs_cli_opt_fn)(int c, void *opts);
/* The options of ARGV through getopt_long with CMD's options, from the first
 * argument again: --help prints CMD's help (0), a missing value or an
 * unknown option is CMD's usage error (2, gs_cli_getopt_error), and every
 * other option goes to ONE. Returns -1 when every option went through, else
 * the exit code. The operand is then argv[optind] (gs_cli_operand). */
int gs_cli_getopt(const gs_cli_cmd *cmd, int argc, char **argv, gs_cli_opt_fn one, void *opts);
/* getopt_long returned ':' (a missing value) or '?' (an unknown option, in
 * UNKNOWN_FMT, default "unknown option '%s'"): the usage error (2). */
int gs_cli_getopt_error(const char *cmd, int c, char **argv, const struct option *lo, const char *unknown_fmt);
/* The one operand after the options: -1 with *out set, or CMD's usage error
 * when it is missing or followed by a second one. */
int gs_cli_operand(const gs_cli_cmd *cmd, int argc, char **argv, const char **out);
/* The operator of SPEC and the profile HW (a built-in name or a JSON file). */
gs_status gs_cli_load(gs_ctx *ctx, const char *spec, const char *hw, gs_op **op, gs_hw **hwp);
/* The "op" and "hw" header lines of the text reports. */
void gs_cli_print_op_hw(const gs_op *op, const gs_hw *hw);
/* Print ROOT as JSON on stdout and release it; false (and one error line)
 * when it could not be encoded: nothing is printed then. */
bool gs_cli_put_json(json_t *root, size_t flags);

/* The kernel cache of --cache-dir DIR (NULL: $GS_CACHE_DIR); *out stays
 * NULL when neither names a directory, and the run compiles as before. */
gs_status gs_cli_cache_open(gs_ctx *ctx, const char *dir, gs_kcache **out);
/* Report the cache's hits and compiles on stderr (when it was used), close. */
void gs_cli_cache_close(gs_kcache *c);

/* ---- the subcommands ---- */
/* A subcommand: the size of its options, how they are parsed from its
 * command line (-1 to go on, else the exit code: 0 after --help, 2 for bad
 * input) and how they run with a context (the exit code). */
typedef struct gs_cli_sub {
    const char *name;
    size_t opts_size;
    int (*parse)(int argc, char **argv, void *opts);
    int (*run)(gs_ctx *ctx, const void *opts);
} gs_cli_sub;
/* Run a subcommand on its command line (argv[0] is its name): parse its
 * options, then run them with a fresh context, destroyed after. Returns the
 * exit code (1 when memory runs out). */
int gs_cli_main(const gs_cli_sub *sub, int argc, char **argv);
extern const gs_cli_sub gs_cli_construct, gs_cli_verify, gs_cli_estimate; /* construct.c */
extern const gs_cli_sub gs_cli_space, gs_cli_suite, gs_cli_analyze;       /* space.c, suite.c, analyze.c */
extern const gs_cli_sub gs_cli_import;                                    /* import.c */

#endif
