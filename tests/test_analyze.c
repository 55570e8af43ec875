/* test_analyze.c — `gensor analyze`, the Markov analysis of the construction
 * graph (paper Section IV-D), run through the CLI binary named by
 * GS_GENSOR_BIN (skipped with a message when it is not set):
 *   - the transition probabilities out of the start state sum to 1;
 *   - the graph has more than one state and is connected from the start
 *     (edges >= states - 1);
 *   - value iteration converges and V(start) lies in (0, 1];
 *   - the greedy policy's path ends in a terminal (level 0) state whose
 *     payoff is in (0, 1];
 *   - bad input exits 2 with one line on stderr; --help exits 0. */
#include "tests/test_common.h"

#include <criterion/criterion.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

TestSuite(analyze);

static void check_analysis(json_t *root, const char *what) {
    json_t *g = json_object_get(root, "graph");
    cr_assert(json_is_object(g), "%s: no \"graph\"", what);
    json_int_t states = json_integer_value(json_object_get(g, "states"));
    json_int_t edges = json_integer_value(json_object_get(g, "edges"));
    json_int_t terms = json_integer_value(json_object_get(g, "terminal"));
    cr_expect_gt(states, 1, "%s: %lld states", what, (long long)states);
    cr_expect_geq(edges, states - 1, "%s: %lld edges for %lld states", what, (long long)edges, (long long)states);
    cr_expect_gt(terms, 0, "%s: no terminal state", what);

    json_t *tr = json_object_get(root, "start_transitions");
    cr_assert(json_is_array(tr) && json_array_size(tr) > 0, "%s: no transitions out of the start", what);
    double sum = 0;
    size_t i;
    json_t *e;
    json_array_foreach(tr, i, e) {
        double p = json_real_value(json_object_get(e, "probability"));
        cr_expect(p > 0 && p <= 1, "%s: start transition %zu has probability %g", what, i, p);
        sum += p;
    }
    cr_expect(fabs(sum - 1) <= 1e-9, "%s: start probabilities sum to %.15g", what, sum);

    json_t *vi = json_object_get(root, "value_iteration");
    cr_expect(json_is_true(json_object_get(vi, "converged")), "%s: value iteration did not converge", what);
    double v = json_real_value(json_object_get(vi, "v_start"));
    cr_expect(v > 0 && v <= 1, "%s: V(start) = %g, want (0, 1]", what, v);

    json_t *gr = json_object_get(root, "greedy");
    cr_expect(json_is_true(json_object_get(gr, "reached_terminal")), "%s: greedy path did not reach a terminal", what);
    json_t *term = json_object_get(gr, "terminal");
    cr_expect_eq(json_integer_value(json_object_get(term, "level")), 0, "%s: greedy path ends at level %lld", what,
                 (long long)json_integer_value(json_object_get(term, "level")));
    double pay = json_real_value(json_object_get(gr, "payoff"));
    cr_expect(pay > 0 && pay <= 1, "%s: greedy payoff %g, want (0, 1]", what, pay);
    double tp = json_real_value(json_object_get(term, "predicted_s"));
    cr_expect(tp > 0 && isfinite(tp), "%s: greedy terminal predicted %g s", what, tp);
    json_t *c = json_object_get(root, "construct");
    cr_expect(json_real_value(json_object_get(c, "predicted_s")) > 0, "%s: no construct pick", what);
}

Test(analyze, small_gemm_json, .timeout = 300) {
    const char *bin = gs_test_cli_bin("the analyze CLI checks");
    json_t *root = gs_test_cli_json(bin, "analyze --hw t4 --format json 'gemm M=64 N=64 K=64'");
    check_analysis(root, "gemm 64^3 on t4 (model policy)");
    json_decref(root);
}

Test(analyze, paper_policy_json, .timeout = 300) {
    const char *bin = gs_test_cli_bin("the analyze CLI checks");
    json_t *root = gs_test_cli_json(bin, "analyze --hw t4 --policy paper --cap 5000 --format json 'gemm M=64 N=64 K=64'");
    check_analysis(root, "gemm 64^3 on t4 (paper policy, cap 5000)");
    json_decref(root);
}

/* Exit status and the number of stderr lines of `bin args`. */
static int run_err(const char *bin, const char *args, int *lines) {
    char tmpl[] = "/tmp/gs_analyze_err_XXXXXX";
    int fd = mkstemp(tmpl);
    cr_assert(fd >= 0, "mkstemp failed");
    close(fd);
    char cmd[2048];
    snprintf(cmd, sizeof cmd, "'%s' %s </dev/null >/dev/null 2>%s", bin, args, tmpl);
    int st = system(cmd);
    FILE *f = fopen(tmpl, "r");
    cr_assert_not_null(f);
    int c;
    *lines = 0;
    while ((c = fgetc(f)) != EOF) *lines += c == '\n';
    fclose(f);
    unlink(tmpl);
    return st != -1 && WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

Test(analyze, bad_input_exits_2) {
    const char *bin = gs_test_cli_bin("the analyze CLI checks");
    static const char *bad[] = {
        "analyze 'gemm M=0 N=4 K=4'",
        "analyze 'gemn M=4 N=4 K=4'",
        "analyze 'gemm M=4 N=4 K=4 Q=2'",
        "analyze",
        "analyze --hw nosuch 'gemm M=4 N=4 K=4'",
        "analyze --policy nope 'gemm M=4 N=4 K=4'",
        "analyze --format xml 'gemm M=4 N=4 K=4'",
        "analyze --cap 0 'gemm M=4 N=4 K=4'",
        "analyze --bogus 'gemm M=4 N=4 K=4'",
        "analyze 'gemm M=4 N=4 K=4' extra",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        int lines, rc = run_err(bin, bad[i], &lines);
        cr_expect(rc == 2 && lines == 1, "gensor %s: exit %d (want 2), %d stderr lines (want 1)", bad[i], rc, lines);
    }
    int lines, rc = run_err(bin, "analyze --help", &lines);
    cr_expect(rc == 0 && lines == 0, "gensor analyze --help: exit %d, %d stderr lines", rc, lines);
}
