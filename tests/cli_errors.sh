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
# check_msg: like check, and stderr must contain NEEDLE
check_msg() { # expected-exit needle description args...
    want=$1; shift
    needle=$1; shift
    check "$want" "$@"
    if ! grep -q -F -e "$needle" "$tmp/err"; then
        echo "FAIL: $1: stderr lacks '$needle':"
        sed 's/^/    /' "$tmp/err" | head -5
        fail=$((fail + 1))
        pass=$((pass - 1))
    fi
}
# regressions found by the adversarial review
mkdir "$tmp/adir"
printf 'bm=4,bn=4\n  \n# comment\nbm=3\n' >"$tmp/cfgs.txt"
printf '{"base": "t4", "name": "x\\ny", "num_sms": 0}\n' >"$tmp/nl.json"
printf '{"base": "t4", "clock_mhz": 1e-308}\n' >"$tmp/denorm.json"
printf '{"ops": [{"name": "ok", "spec": "gemm M=4 N=4 K=4"}, {"name": "a,\\"b", "spec": "gemm M=0 N=1 K=1"}]}\n' >"$tmp/suite_bad.json"
check_msg 2 "given twice" "estimate duplicate config key" estimate --config bm=4,bm=2 'gemm M=4 N=4 K=4'
check_msg 2 "config: empty" "estimate empty config" estimate --config '' 'gemm M=4 N=4 K=4'
check_msg 2 "bad value for 'bm'" "estimate signed config value" estimate --config bm=+4 'gemm M=4 N=4 K=4'
check_msg 2 "Is a directory" "estimate --configs directory" estimate --configs "$tmp/adir" 'gemm M=4 N=4 K=4'
check_msg 2 "cfgs.txt:4:" "estimate --configs names the bad line" estimate --configs "$tmp/cfgs.txt" 'gemm M=4 N=4 K=4'
check_msg 2 "not an option" "estimate --top" estimate --top 3 --config bm=4 'gemm M=4 N=4 K=4'
check_msg 2 "not an option" "construct --configs" construct --configs "$tmp/cfgs.txt" 'gemm M=4 N=4 K=4'
check_msg 2 "not an option" "verify --out" verify --out "$tmp/o" 'gemm M=4 N=4 K=4'
check_msg 2 "needs a value" "construct --hw without a value" construct 'gemm M=4 N=4 K=4' --hw
check_msg 2 "needs a value" "suite --hw without a value" suite "$tmp/suite_bad.json" --hw
check_msg 2 "Is a directory" "suite directory" suite "$tmp/adir"
check 1 "suite with a bad op: error row, exit 1" suite --hw t4 --format csv "$tmp/suite_bad.json"
check 2 "hw without subcommand" hw
check 2 "hw list extra" hw list extra
check 2 "hw show two names" hw show t4 a100
check 2 "hw show --format xml" hw show t4 --format xml
check 2 "hw show --format without a value" hw show t4 --format
check 2 "space: missing key" space 'gemm M=4 N=4'
check 2 "space: unknown op" space 'gemn M=1 N=1 K=1'
check 2 "space: no spec" space
check 2 "space: --hw nosuch" space --hw nosuch 'gemv M=4 N=4'
check 2 "space: --limit 0" space --limit 0 'gemv M=4 N=4'
check 2 "space: --limit abc" space --limit abc 'gemv M=4 N=4'
check 2 "space: --sample with --limit" space --sample 3 --limit 3 'gemv M=4 N=4'
check 2 "space: --hw auto" space --hw auto 'gemv M=4 N=4'
check 2 "space: unknown option" space --top 3 'gemv M=4 N=4'
check_msg 2 "control characters" "profile name with a newline" hw show "$tmp/nl.json"
check_msg 2 "clock_mhz must be finite and >= 1e-06" "denormal clock" construct --hw "$tmp/denorm.json" 'gemm M=4 N=4 K=4'
check_msg 1 "32-bit indices" "a dilation whose indices leave int32: refused, no overflow" construct --strategy random 'conv2d N=1 C=1 H=5 W=5 K=1 R=3 S=3 dilation=2147483647 pad=2147483647'
check 0 "estimate an oversized stage" estimate --config bn=1,bk=1,bp=8,bq=8,bc=4,br=4,bs=4,tp=8,tq=8,si=1,sf=1 'conv2d N=1 C=4 H=5 W=5 K=1 R=3 S=3 dilation=2147483647 pad=2147483647'
# verify opens the OpenCL device before it weighs the shape; where there is
# none (the aarch64 build under qemu has no arm64 OpenCL driver) it stops there
if timeout 60 "$BIN" verify --hw t4 'gemm M=1 N=1 K=1' >/dev/null 2>"$tmp/err"; then
    check_msg 1 "verify a smaller shape" "verify of a 2^62-iteration window refuses, no hang" verify 'avgpool2d N=1 C=1 H=1 W=1 R=2147483647 S=2147483647 pad=1073741823'
else
    echo "SKIP: verify of a 2^62-iteration window: verify has no device here: $(head -n 1 "$tmp/err")"
fi
check 0 "hw show --format json first" hw show --format json t4
check 0 "construct ok" construct --hw t4 'gemm M=7 N=5 K=3'
check_msg 2 "unknown --sass 'brief'" "--sass with a bad value" construct --sass=brief 'gemm M=4 N=4 K=4'
check_msg 2 "--sass is not an option" "verify --sass" verify --sass 'gemm M=4 N=4 K=4'
# a missing cuobjdump is one line naming the fix, exit 1
export GS_CUOBJDUMP=/nonexistent
check_msg 1 "gensor: error: cuobjdump not found: " "--sass without cuobjdump" construct --sass 'gemm M=4 N=4 K=4'
unset GS_CUOBJDUMP
check 0 "hw list" hw list
echo "cli_errors: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
