#!/bin/sh
# Bad input to the CLI: one clear line on stderr, exit code 2, no crash, no
# hang, no sanitizer report. Usage: sh tests/cli_errors.sh path/to/gensor
BIN=${1:-build/gensor}
pass=0
fail=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
check() { # expected-exit description args...
    want=$1; shift
    what=$1; shift
    timeout 60 "$BIN" "$@" >"$tmp/out" 2>"$tmp/err"
    rc=$?
    lines=$(wc -l <"$tmp/err")
    if [ "$rc" -ne "$want" ] || { [ "$want" -eq 2 ] && [ "$lines" -ne 1 ]; } ||
       grep -q -e "AddressSanitizer" -e "runtime error" "$tmp/err"; then
        echo "FAIL: $what: exit $rc (want $want), $lines stderr lines:"
        sed 's/^/    /' "$tmp/err" | head -5
        fail=$((fail + 1))
    else
        pass=$((pass + 1))
    fi
}
printf '{"name": "trunc", "sm": 86, "num_sms": 8' >"$tmp/trunc.json"
printf '{"base": "rtx3090", "num_sms": 0}\n' >"$tmp/zero.json"
check 2 "M=0" construct 'gemm M=0 N=1 K=1'
check 2 "M=-3" construct 'gemm M=-3 N=1 K=1'
check 2 "M overflow" construct 'gemm M=99999999999999999999 N=1 K=1'
check 2 "missing K" construct 'gemm M=4 N=4'
check 2 "unknown op" construct 'gemn M=1 N=1 K=1'
check 2 "unknown key" construct 'gemm M=4 N=4 K=4 Q=2'
check 2 "empty spec" construct ''
check 2 "no spec" construct
check 2 "--hw nosuch" construct --hw nosuch 'gemm M=4 N=4 K=4'
check 2 "truncated JSON profile" construct --hw "$tmp/trunc.json" 'gemm M=4 N=4 K=4'
check 2 "zero SM profile" construct --hw "$tmp/zero.json" 'gemm M=4 N=4 K=4'
check 2 "missing profile file" construct --hw "$tmp/none.json" 'gemm M=4 N=4 K=4'
check 2 "bad --top" construct --top 0 'gemm M=4 N=4 K=4'
check 2 "bad --seed" construct --seed abc 'gemm M=4 N=4 K=4'
check 2 "bad --policy" construct --policy nope 'gemm M=4 N=4 K=4'
check 2 "unknown option" construct --frobnicate 'gemm M=4 N=4 K=4'
check 2 "verify bad spec" verify 'gemm M=0 N=1 K=1'
check 2 "verify unknown hw" verify --hw nosuch 'gemm M=4 N=4 K=4'
check 2 "estimate bad config" estimate --config bm=3 'gemm M=4 N=4 K=4'
check 2 "estimate unknown key" estimate --config zz=1 'gemm M=4 N=4 K=4'
check 2 "hw show nosuch" hw show nosuch
check 2 "unknown command" frobnicate
check 0 "construct ok" construct --hw t4 'gemm M=7 N=5 K=3'
check 0 "hw list" hw list
echo "cli_errors: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
