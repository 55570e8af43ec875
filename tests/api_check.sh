#!/bin/sh
# The public API (include/gensor.h) as a user of the library sees it.
# Usage: sh tests/api_check.sh [BUILD_DIR] (default build)
#
# 1. Every function declared in include/gensor.h is defined in the library.
#    The names come from the header itself (preprocessed, so comments and
#    macros are gone: every "gs_name(" after a type), so the check cannot go
#    stale when a function is added. A generated program takes the address of
#    each one and is linked twice, against libgensor.a and libgensor.so; a
#    declared function without a definition is an undefined reference. Both
#    programs run and check that no address is NULL.
# 2. experiments/api_demo.c built as a user builds it: only include/gensor.h,
#    -L BUILD -lgensor and the libraries pkg-config gives for an installed
#    gensor; then run. It must construct a GEMM, emit CUDA and OpenCL,
#    compile the CUDA with NVRTC and print the register count. Without NVRTC
#    the demo says so and exits 77: reported as SKIPPED, or as a failure when
#    GS_REQUIRE_NVRTC=1 (CI has the toolkit). With an OpenCL device it also
#    runs and checks a split-K kernel (gs_kernel_run) and a split-K dispatcher
#    handle (gs_dispatch_run, run twice: bitwise equal); without one its run
#    step says so; a failure with GS_REQUIRE_OPENCL=1.
# Exit 0 when everything passed (or was skipped for the reason printed).
BUILD=${1:-build}
CC=${CC:-cc}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT" || exit 1
LIBS="-lgsl -lgslcblas -ljansson -lOpenCL -ldl -lm"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# ---- 1. every declared function links ----------------------------------------------
# The declared functions (tests/api_names.sh, which also makes the shared
# library's version script).
names=$(sh tests/api_names.sh "$CC") || { echo "api_symbols: FAIL: cannot preprocess include/gensor.h"; exit 1; }
count=$(echo "$names" | grep -c .)
if [ "$count" -lt 40 ]; then
    echo "api_symbols: FAIL: found only $count function names in include/gensor.h (the scan is broken)"
    exit 1
fi

{
    cat <<'END'
#include "gensor.h"
#include <stdio.h>
typedef void (*fn)(void);
static const struct {
    const char *name;
    fn f;
} table[] = {
END
    for n in $names; do printf '    {"%s", (fn)%s},\n' "$n" "$n"; done
    cat <<'END'
};
int main(void) {
    int n = (int)(sizeof table / sizeof table[0]), bad = 0;
    for (int i = 0; i < n; i++)
        if (!table[i].f) {
            printf("api_symbols: %s has no address\n", table[i].name);
            bad++;
        }
    printf("%d functions\n", n);
    return bad != 0;
}
END
} >"$tmp/all.c"

fail=0
# static: the archive, with the libraries pkg-config would add
if ! $CC -std=c11 -Wall -Wextra -Werror -I include "$tmp/all.c" "$BUILD/libgensor.a" $LIBS -o "$tmp/static" 2>"$tmp/static.err"; then
    echo "api_symbols: FAIL: linking against $BUILD/libgensor.a:"
    grep -E 'undefined reference|error' "$tmp/static.err" | sed 's/^/  /' | head -20
    fail=1
elif ! out=$("$tmp/static"); then
    echo "api_symbols: FAIL: the static program: $out"
    fail=1
fi
# shared: -L BUILD -lgensor resolves to the .so (which carries its own dependencies)
if ! $CC -std=c11 -Wall -Wextra -Werror -I include "$tmp/all.c" -L "$BUILD" -lgensor -Wl,-z,now -o "$tmp/shared" 2>"$tmp/shared.err"; then
    echo "api_symbols: FAIL: linking against $BUILD/libgensor.so:"
    grep -E 'undefined reference|error' "$tmp/shared.err" | sed 's/^/  /' | head -20
    fail=1
elif ! out=$(LD_LIBRARY_PATH="$BUILD${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" "$tmp/shared"); then
    echo "api_symbols: FAIL: the shared program: $out"
    fail=1
fi
if [ $fail = 0 ]; then
    echo "api_symbols: PASS: all $count functions of include/gensor.h link from $BUILD/libgensor.a and $BUILD/libgensor.so"
fi
# the shared library exports gensor.h's functions and nothing else (internal
# gs_* helpers stay private, so they can change without breaking the ABI)
exported=$(nm -D --defined-only "$BUILD/libgensor.so" 2>/dev/null | awk '$2 == "T" { print $3 }' | sort -u)
extra=$(printf '%s\n' "$exported" | grep -vxF -e "$(printf '%s\n' $names)" | grep . | head -5)
nexp=$(printf '%s\n' "$exported" | grep -c .)
if [ "$nexp" -ne "$count" ] || [ -n "$extra" ]; then
    echo "api_exports: FAIL: $BUILD/libgensor.so exports $nexp functions, gensor.h declares $count${extra:+; not declared: $(echo $extra)}"
    fail=1
else
    echo "api_exports: PASS: $BUILD/libgensor.so exports exactly the $count functions of include/gensor.h"
fi

# ---- 2. the demo, with the public header only ----------------------------------------
# -I include only: an internal header would not be found
if ! $CC -std=c11 -Wall -Wextra -Werror -I include experiments/api_demo.c -L "$BUILD" -lgensor $LIBS \
    -o "$tmp/api_demo" 2>"$tmp/cc.err"; then
    echo "api_demo: FAIL: cannot build experiments/api_demo.c with -I include -L $BUILD -lgensor:"
    sed 's/^/  /' "$tmp/cc.err" | head -20
    exit 1
fi
LD_LIBRARY_PATH="$BUILD${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" "$tmp/api_demo" >"$tmp/out" 2>"$tmp/err"
rc=$?
if [ $rc = 77 ]; then
    if [ "${GS_REQUIRE_NVRTC:-0}" = 1 ]; then
        echo "api_demo: FAIL: NVRTC is required (GS_REQUIRE_NVRTC=1) but missing:"
        sed 's/^/  /' "$tmp/err"
        exit 1
    fi
    echo "api_demo: SKIPPED: the CUDA kernel was not compiled: $(grep -m1 NVRTC "$tmp/err")"
    exit $fail
fi
if [ $rc != 0 ]; then
    echo "api_demo: FAIL: exit $rc"
    sed 's/^/  /' "$tmp/out" "$tmp/err" | tail -20
    exit 1
fi
for want in '^construct ' '^emit +CUDA C for sm_' '^emit +OpenCL C: gs_' '^nvrtc .*: [0-9]+ registers'; do
    if ! grep -Eq "$want" "$tmp/out"; then
        echo "api_demo: FAIL: no line matching '$want' in its output:"
        sed 's/^/  /' "$tmp/out"
        exit 1
    fi
done
if grep -q '^run .*no OpenCL device' "$tmp/out"; then
    if [ "${GS_REQUIRE_OPENCL:-0}" = 1 ]; then
        echo "api_demo: FAIL: OpenCL is required (GS_REQUIRE_OPENCL=1): $(grep '^run ' "$tmp/out")"
        exit 1
    fi
else
    # with a device: a split-K kernel (gs_kernel_run) and a split-K dispatcher
    # handle (gs_dispatch_run) ran through the public API and were checked
    for want in '^splitk .*split=[0-9]+.*: PASS$' '^dispatch .*split-K workspace [1-9][0-9]* bytes.*bitwise equal: PASS$'; do
        if ! grep -Eq "$want" "$tmp/out"; then
            echo "api_demo: FAIL: no line matching '$want' in its output:"
            sed 's/^/  /' "$tmp/out" | tail -4
            exit 1
        fi
    done
fi
echo "api_demo: PASS: $(grep -E '^nvrtc ' "$tmp/out" | sed 's/^nvrtc *//')"
grep -E '^(run|splitk|dispatch) ' "$tmp/out" | sed -E 's/^(run|splitk|dispatch) */api_demo: /'
exit $fail
