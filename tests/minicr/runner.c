/* runner.c — the test runner behind tests/minicr/criterion/criterion.h.
 *
 *   runner --list            print "suite/name" of every registered test
 *   runner --run SUITE/NAME  run that one test in this process
 *
 * Exit status of --run: 0 passed, 1 failed (an assertion or expectation; the
 * reason is on stderr), 77 skipped. A crash ends the process on its signal.
 * It neither forks nor execs: the qemu-user 7.2 of Debian 12 hangs in a
 * forked child on this machine (even a five-line fork test does), so
 * tests/check_aarch64.sh starts one emulated process per test instead, which
 * also keeps each test's state apart as Criterion does. */
#define _POSIX_C_SOURCE 200809L
#include "criterion/criterion.h"

#include <stdarg.h>
#include <unistd.h>

#define MC_MAX_TESTS 1024
static const struct gs_mc_test *tests[MC_MAX_TESTS];
static int ntests;
static int expect_failed; /* in the child: a cr_expect failed */

void gs_mc_register(const struct gs_mc_test *t) {
    if (ntests < MC_MAX_TESTS) tests[ntests++] = t;
    else {
        fprintf(stderr, "minicr: more than %d tests\n", MC_MAX_TESTS);
        exit(2);
    }
}

static void report(const char *kind, const char *file, int line, const char *expr, const char *fmt,
                   va_list ap) {
    fprintf(stderr, "  %s:%d: %s: %s", file, line, kind, expr);
    if (fmt && *fmt) {
        fputs(": ", stderr);
        vfprintf(stderr, fmt, ap);
    }
    fputc('\n', stderr);
}

void gs_mc_fail(const char *file, int line, const char *expr, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    report("assertion failed", file, line, expr, fmt, ap);
    va_end(ap);
    fflush(NULL);
    _exit(1);
}

void gs_mc_efail(const char *file, int line, const char *expr, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    report("expectation failed", file, line, expr, fmt, ap);
    va_end(ap);
    expect_failed = 1;
}

void gs_mc_skip(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    fputs("  skipped: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    fflush(NULL);
    _exit(77);
}

int main(int argc, char **argv) {
    if (argc == 2 && !strcmp(argv[1], "--list")) {
        for (int i = 0; i < ntests; i++) printf("%s/%s\n", tests[i]->suite, tests[i]->name);
        return 0;
    }
    if (argc != 3 || strcmp(argv[1], "--run")) {
        fprintf(stderr, "usage: %s --list | --run SUITE/NAME\n", argv[0]);
        return 2;
    }
    char full[256];
    for (int i = 0; i < ntests; i++) {
        const struct gs_mc_test *t = tests[i];
        snprintf(full, sizeof full, "%s/%s", t->suite, t->name);
        if (strcmp(full, argv[2])) continue;
        if (t->opts.init) t->opts.init();
        t->fn();
        if (t->opts.fini) t->opts.fini();
        fflush(NULL);
        return expect_failed ? 1 : 0;
    }
    fprintf(stderr, "minicr: no test named %s\n", argv[2]);
    return 2;
}
