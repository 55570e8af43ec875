/* cli.h — shared pieces of the gensor command. */
#ifndef GS_CLI_H
#define GS_CLI_H

#include "construct/construct.h"
#include "kernels/kernels.h"

#include <stdbool.h>
#include <unistd.h>

/* Print "gensor: error: <status>: <detail>" and map the status to an exit
 * code: 2 for bad input, 1 for a failed run. */
int gs_cli_fail(gs_ctx *ctx, gs_status s);
/* Print a usage error for a subcommand and return 2. */
int gs_cli_usage_error(const char *cmd, const char *fmt, const char *arg);

int gs_cli_construct(int argc, char **argv, bool verify);
int gs_cli_estimate(int argc, char **argv);
int gs_cli_suite(int argc, char **argv);
int gs_cli_analyze(int argc, char **argv);
int gs_cli_space(int argc, char **argv);

#endif
