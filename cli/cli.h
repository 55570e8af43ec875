/* cli.h — shared pieces of the gensor command. */
#ifndef GS_CLI_H
#define GS_CLI_H

#include "construct/construct.h"
#include "kernels/kernels.h"

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
/* getopt_long returned ':' (a missing value) or '?' (an unknown option, in
 * UNKNOWN_FMT, default "unknown option '%s'"): the usage error (2). */
int gs_cli_getopt_error(const char *cmd, int c, char **argv, const struct option *lo, const char *unknown_fmt);
/* The one operand after the options: -1 with *out set, or a usage error
 * (WHAT when it is missing, EXTRA_FMT naming a second one). */
int gs_cli_operand(const char *cmd, int argc, char **argv, const char *what, const char *extra_fmt,
                   const char **out);
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

int gs_cli_construct(int argc, char **argv, bool verify);
int gs_cli_estimate(int argc, char **argv);
int gs_cli_suite(int argc, char **argv);
int gs_cli_analyze(int argc, char **argv);
int gs_cli_space(int argc, char **argv);

#endif
