/* criterion.h — a minimal stand-in for Criterion's test macros, used only by
 * `make check-aarch64` (tests/minicr/runner.c).
 *
 * Why: Criterion's runner never finished a test under Debian 12's qemu-user
 * here (it spun until killed, even for one trivial test), and neither did a
 * five-line program that forks: Criterion runs each test in a child
 * process, which this qemu cannot do. And Debian's arm64 libcriterion cannot
 * be installed beside the amd64 one (libnanomsg5 and libcriterion-dev are
 * not co-installable). This header gives the subset of the macros that
 * tests/test_{ir,hw,construct,common}.c use; tests/check_aarch64.sh starts
 * one emulated process per test instead. Test bodies compile unchanged.
 */
#ifndef GS_MINICR_CRITERION_H
#define GS_MINICR_CRITERION_H

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct gs_mc_opts {
    int disabled_;        /* first member: never set by a test, so no override */
    double timeout;       /* seconds, scaled by the runner for emulation */
    void (*init)(void);
    void (*fini)(void);
    const char *description;
};

struct gs_mc_test {
    const char *suite, *name;
    void (*fn)(void);
    struct gs_mc_opts opts;
};

void gs_mc_register(const struct gs_mc_test *t);
/* A failed assertion: print and end the test (exit 1). */
_Noreturn void gs_mc_fail(const char *file, int line, const char *expr, const char *fmt, ...);
/* A failed expectation: print, mark the test failed, and go on. */
void gs_mc_efail(const char *file, int line, const char *expr, const char *fmt, ...);
/* Skip: print why and end the test (exit 77). */
_Noreturn void gs_mc_skip(const char *fmt, ...);

#define TestSuite(...) struct gs_mc_unused_suite_

#define Test(suite, name, ...)                                                        \
    static void gs_mc_fn_##suite##_##name(void);                                      \
    __attribute__((constructor)) static void gs_mc_reg_##suite##_##name(void) {       \
        static const struct gs_mc_test t_ = {#suite, #name, gs_mc_fn_##suite##_##name, \
                                             {.disabled_ = 0, __VA_ARGS__}};          \
        gs_mc_register(&t_);                                                          \
    }                                                                                 \
    static void gs_mc_fn_##suite##_##name(void)

/* "" __VA_ARGS__ turns an optional ("fmt", args...) message into a format,
 * and no message into "". */
#define cr_assert(cond, ...)                                                          \
    do {                                                                              \
        if (!(cond)) gs_mc_fail(__FILE__, __LINE__, #cond, "" __VA_ARGS__);           \
    } while (0)
#define cr_expect(cond, ...)                                                          \
    do {                                                                              \
        if (!(cond)) gs_mc_efail(__FILE__, __LINE__, #cond, "" __VA_ARGS__);          \
    } while (0)
#define cr_assert_not(c, ...) cr_assert(!(c), __VA_ARGS__)
#define cr_assert_eq(a, b, ...) cr_assert((a) == (b), __VA_ARGS__)
#define cr_assert_neq(a, b, ...) cr_assert((a) != (b), __VA_ARGS__)
#define cr_assert_lt(a, b, ...) cr_assert((a) < (b), __VA_ARGS__)
#define cr_assert_leq(a, b, ...) cr_assert((a) <= (b), __VA_ARGS__)
#define cr_assert_gt(a, b, ...) cr_assert((a) > (b), __VA_ARGS__)
#define cr_assert_geq(a, b, ...) cr_assert((a) >= (b), __VA_ARGS__)
#define cr_assert_null(p, ...) cr_assert((p) == NULL, __VA_ARGS__)
#define cr_assert_not_null(p, ...) cr_assert((p) != NULL, __VA_ARGS__)
#define cr_assert_str_eq(a, b, ...) cr_assert(strcmp((a), (b)) == 0, __VA_ARGS__)
#define cr_assert_str_neq(a, b, ...) cr_assert(strcmp((a), (b)) != 0, __VA_ARGS__)
#define cr_assert_float_eq(a, b, eps, ...) cr_assert(fabs((double)(a) - (double)(b)) <= (eps), __VA_ARGS__)
/* the expect family, each as its assert above (a test may use any of them:
 * make test builds this runner natively, so a missing one fails there) */
#define cr_expect_not(c, ...) cr_expect(!(c), __VA_ARGS__)
#define cr_expect_eq(a, b, ...) cr_expect((a) == (b), __VA_ARGS__)
#define cr_expect_neq(a, b, ...) cr_expect((a) != (b), __VA_ARGS__)
#define cr_expect_lt(a, b, ...) cr_expect((a) < (b), __VA_ARGS__)
#define cr_expect_leq(a, b, ...) cr_expect((a) <= (b), __VA_ARGS__)
#define cr_expect_gt(a, b, ...) cr_expect((a) > (b), __VA_ARGS__)
#define cr_expect_geq(a, b, ...) cr_expect((a) >= (b), __VA_ARGS__)
#define cr_expect_null(p, ...) cr_expect((p) == NULL, __VA_ARGS__)
#define cr_expect_not_null(p, ...) cr_expect((p) != NULL, __VA_ARGS__)
#define cr_expect_str_eq(a, b, ...) cr_expect(strcmp((a), (b)) == 0, __VA_ARGS__)
#define cr_expect_str_neq(a, b, ...) cr_expect(strcmp((a), (b)) != 0, __VA_ARGS__)
#define cr_expect_float_eq(a, b, eps, ...) cr_expect(fabs((double)(a) - (double)(b)) <= (eps), __VA_ARGS__)
#define cr_assert_fail(...) gs_mc_fail(__FILE__, __LINE__, "cr_assert_fail", "" __VA_ARGS__)
#define cr_skip_test(...) gs_mc_skip("" __VA_ARGS__)

#endif /* GS_MINICR_CRITERION_H */
