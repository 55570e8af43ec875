/* fuzz_suite.c — the suite / model-list loader: `gensor suite FILE` (cli/suite.c,
 * gs_cli_suite) on the input as FILE, one chain per construction, JSON out
 * (run with -close_fd_mask=3: stdout and stderr go to /dev/null; libFuzzer keeps its own). Any input gives exit 0, 1 or 2 and no
 * sanitizer report; a run that prints must print valid JSON (checked by
 * reading the output back). */
#include "cli/cli.h"
#include "fuzz_common.h"

#include <fcntl.h>
#include <gsl/gsl_errno.h>
#include <jansson.h>
#include <unistd.h>

static char in_path[64], out_path[64];

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerInitialize(int *argc, char ***argv) {
    (void)argc;
    (void)argv;
    gsl_set_error_handler_off(); /* as the CLI's main does */
    snprintf(in_path, sizeof in_path, "/tmp/gs_fuzz_suite.%d.json", (int)getpid());
    snprintf(out_path, sizeof out_path, "/tmp/gs_fuzz_suite.%d.out", (int)getpid());
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size > 4096) return 0; /* every op is constructed: keep files small */
    FILE *f = fopen(in_path, "wb");
    if (!f || fwrite(data, 1, size, f) != size || fclose(f) != 0) abort();
    fflush(stdout);
    int saved = dup(1);
    int out = open(out_path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (saved < 0 || out < 0 || dup2(out, 1) < 0) abort();
    close(out);
    char *argv[] = {"suite", in_path, "--hw", "t4", "--chains", "1", "--format", "json", NULL};
    optind = 0; /* glibc: a full getopt reset */
    int rc = gs_cli_main(&gs_cli_suite, 8, argv);
    fflush(stdout);
    if (dup2(saved, 1) < 0) abort();
    close(saved);
    FUZZ_CHECK(rc == 0 || rc == 1 || rc == 2, "exit %d", rc);
    json_error_t je;
    json_t *j = json_load_file(out_path, 0, &je);
    FILE *o = fopen(out_path, "rb");
    int empty = !o || fgetc(o) == EOF;
    if (o) fclose(o);
    FUZZ_CHECK(empty || j != NULL, "exit %d with output that is not JSON: %s", rc, je.text);
    json_decref(j);
    return 0;
}
