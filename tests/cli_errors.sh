#!/bin/sh
# Bad input to the CLI: one clear line on stderr, exit code 2, no crash, no
# hang, no sanitizer report. Usage: sh tests/cli_errors.sh path/to/gensor
BIN=${1:-build/gensor}
# Under ASan, PoCL's and LLVM's process-lifetime allocations (verify's first
# OpenCL build with a cold PoCL cache) are leaks to LeakSanitizer: suppressed
# (tests/lsan.supp), gensor's own leaks still fail. A caller's LSAN_OPTIONS wins.
: "${LSAN_OPTIONS=suppressions=$(cd "$(dirname "$0")" && pwd)/lsan.supp:print_suppressions=0}"
export LSAN_OPTIONS
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
       grep -q -e "AddressSanitizer" -e "LeakSanitizer" -e "runtime error" "$tmp/err"; then
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
check 2 "bad --threads" construct --threads 65 'gemm M=4 N=4 K=4'
check 2 "negative --threads" construct --threads -1 'gemm M=4 N=4 K=4'
check 2 "estimate --threads" estimate --threads 2 --config bm=4 'gemm M=4 N=4 K=4'
check 2 "bad --policy" construct --policy nope 'gemm M=4 N=4 K=4'
check 2 "unknown option" construct --frobnicate 'gemm M=4 N=4 K=4'
check 2 "verify bad spec" verify 'gemm M=0 N=1 K=1'
check 2 "verify unknown hw" verify --hw nosuch 'gemm M=4 N=4 K=4'
check 2 "estimate bad config" estimate --config bm=3 'gemm M=4 N=4 K=4'
check 2 "estimate unknown key" estimate --config zz=1 'gemm M=4 N=4 K=4'
check 2 "hw show nosuch" hw show nosuch
check 2 "unknown command" frobnicate
# check_in: like check, and the command's stderr (err) or stdout (out) must contain NEEDLE
check_in() { # err|out expected-exit needle description args...
    stream=$1; shift
    want=$1; shift
    needle=$1; shift
    check "$want" "$@"
    if ! grep -q -F -e "$needle" "$tmp/$stream"; then
        echo "FAIL: $1: std$stream lacks '$needle':"
        sed 's/^/    /' "$tmp/$stream" | head -5
        fail=$((fail + 1))
        pass=$((pass - 1))
    fi
}
check_msg() { check_in err "$@"; }
check_out() { check_in out "$@"; }
# regressions found by the adversarial review
mkdir "$tmp/adir"
printf 'bm=4,bn=4\n  \n# comment\nbm=3\n' >"$tmp/cfgs.txt"
printf '{"base": "t4", "name": "x\\ny", "num_sms": 0}\n' >"$tmp/nl.json"
printf '{"base": "t4", "clock_mhz": 1e-308}\n' >"$tmp/denorm.json"
printf '{"ops": [{"name": "ok", "spec": "gemm M=4 N=4 K=4"}, {"name": "a,\\"b", "spec": "gemm M=0 N=1 K=1"}]}\n' >"$tmp/suite_bad.json"
check_msg 2 "given twice" "estimate duplicate config key" estimate --config bm=4,bm=2 'gemm M=4 N=4 K=4'
check_msg 2 "config: empty" "estimate empty config" estimate --config '' 'gemm M=4 N=4 K=4'
check_msg 2 "bad value for 'bm'" "estimate signed config value" estimate --config bm=+4 'gemm M=4 N=4 K=4'
check_msg 2 "takes f16 inputs" "mma row on f32 inputs" estimate --config bm=16,bn=8,bk=16,tm=2,tn=2,mma=1 'gemm M=4 N=4 K=4'
check_msg 2 "even thread tiles" "mma on odd thread tiles" estimate --config bm=16,bn=8,bk=16,tm=1,tn=2,mma=1 'gemm M=4 N=4 K=4 dtype=f16'
check_msg 2 "mma must be 0..5" "mma out of the table" estimate --config bm=16,bn=8,bk=16,tm=2,tn=2,mma=9 'gemm M=4 N=4 K=4 dtype=f16'
check_msg 2 "stages exceeds the reduce loop's tiles" "stages over the k tiles" verify --hw a100 --config bm=64,bn=32,bk=32,tm=2,tn=2,sa=1,sb=1,stages=2,mma=1 'gemm M=33 N=64 K=17 dtype=f16'
check_msg 2 "too many threads per block" "threads over the limit" construct --hw a100 --config bm=128,bn=128,bk=8,tm=1,tn=1 'gemm M=256 N=256 K=64'
check_msg 2 "no such mma instruction" "mma row above the arch" construct --hw t4 --config bm=64,bn=32,bk=32,tm=2,tn=2,sa=1,sb=1,mma=1 'gemm M=64 N=64 K=64 dtype=f16'
check_msg 2 "(mma=5, m16n8k8.bf16, needs sm_80; t4 is sm_75)" "bf16's m16n8k8 row on sm_75, where f16's exists" verify --hw t4 --config bm=64,bn=32,bk=8,tm=2,tn=2,sa=1,sb=1,mma=5 'gemm M=64 N=64 K=64 dtype=bf16'
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
# none (the aarch64 build under qemu has no arm64 OpenCL driver) it stops
# there. Only that is a skip, and it says why; any other failure (a crash, a
# sanitizer report) fails, and so does the skip under GS_REQUIRE_OPENCL=1.
timeout 60 "$BIN" verify --hw t4 'gemm M=1 N=1 K=1' >/dev/null 2>"$tmp/err"
rc=$?
if [ "$rc" -eq 0 ]; then
    check_msg 1 "verify a smaller shape" "verify of a 2^62-iteration window refuses, no hang" verify 'avgpool2d N=1 C=1 H=1 W=1 R=2147483647 S=2147483647 pad=1073741823'
elif [ "$rc" -eq 1 ] && [ "$(wc -l <"$tmp/err")" -eq 1 ] && grep -q "^gensor: error: no OpenCL platform or device: ." "$tmp/err"; then
    echo "SKIP: verify of a 2^62-iteration window: verify has no device here: $(cat "$tmp/err")"
    if [ -n "$GS_REQUIRE_OPENCL" ] && [ "$GS_REQUIRE_OPENCL" != 0 ]; then
        echo "FAIL: GS_REQUIRE_OPENCL=$GS_REQUIRE_OPENCL but verify found no OpenCL device"
        fail=$((fail + 1))
    fi
else
    echo "FAIL: verify --hw t4 'gemm M=1 N=1 K=1' (the device probe): exit $rc, $(wc -l <"$tmp/err") stderr lines:"
    grep -v '^$' "$tmp/err" | head -5 | sed 's/^/    /'
    fail=$((fail + 1))
fi
check 0 "hw show --format json first" hw show --format json t4
check 0 "construct ok" construct --hw t4 'gemm M=7 N=5 K=3'
check_msg 2 "unknown --sass 'brief'" "--sass with a bad value" construct --sass=brief 'gemm M=4 N=4 K=4'
check_msg 2 "(--sass, --sass=summary, --sass=steady, --sass=full)" "--sass's bad value lists the forms" construct --sass=brief 'gemm M=4 N=4 K=4'
check_msg 2 "--sass is not an option" "verify --sass" verify --sass 'gemm M=4 N=4 K=4'
# a missing cuobjdump is one line naming the fix, exit 1
export GS_CUOBJDUMP=/nonexistent
check_msg 1 "gensor: error: cuobjdump not found: " "--sass without cuobjdump" construct --sass 'gemm M=4 N=4 K=4'
unset GS_CUOBJDUMP
check 0 "hw list" hw list
# ---- issue 11: the defects found adversarially --------------------------------------
# 1, 3: huge profile fields are refused (UBSan overflow, inf estimates, empty JSON)
printf '{"base": "t4", "bank_bytes": 2147483647}\n' >"$tmp/banks.json"
printf '{"base": "t4", "l2_latency_ns": 1e308}\n' >"$tmp/l2lat.json"
printf '{"base": "t4", "dram_gbs": 1e300, "l2_gbs": 1e300, "clock_mhz": 1e300}\n' >"$tmp/rates.json"
printf '{"ops": [{"name": "g", "spec": "gemm M=64 N=64 K=64"}]}\n' >"$tmp/suite_ok.json"
check_msg 2 "bank_bytes (2147483647) must be <= 1024" "bank_bytes 2^31-1 (balanced)" construct --policy balanced --hw "$tmp/banks.json" 'gemm M=64 N=64 K=64'
check_msg 2 "bank_bytes (2147483647) must be <= 1024" "bank_bytes 2^31-1 (paper)" construct --policy paper --hw "$tmp/banks.json" 'gemm M=64 N=64 K=64'
check_msg 2 "l2_latency_ns must be finite and >= 0 and <= 1e+09" "l2_latency_ns 1e308" construct --format json --hw "$tmp/l2lat.json" 'gemm M=64 N=64 K=64'
check_msg 2 "must be finite and >= 1e-06 and <= 1e+09" "rates 1e300" construct --format json --hw "$tmp/rates.json" 'gemm M=64 N=64 K=64'
check_msg 2 "l2_latency_ns must be" "suite json with l2_latency_ns 1e308" suite --format json --hw "$tmp/l2lat.json" "$tmp/suite_ok.json"
check_out 0 '"total_predicted_s"' "suite --format json prints its report" suite --format json --hw t4 "$tmp/suite_ok.json"
# 2, 5: --configs files that hold no configuration, NUL bytes, /dev/zero (hung)
printf '# only a comment\n\n   \n' >"$tmp/comments.txt"
: >"$tmp/empty.txt"
printf 'bm=4,bn=4\0,bk=4\n' >"$tmp/nul.txt"
check_msg 2 "NUL byte" "estimate --configs /dev/zero ends" estimate --configs /dev/zero 'gemm M=4 N=4 K=4'
check_msg 2 "holds no configuration" "estimate --configs /dev/null" estimate --configs /dev/null 'gemm M=4 N=4 K=4'
check_msg 2 "holds no configuration" "estimate --configs empty file" estimate --configs "$tmp/empty.txt" 'gemm M=4 N=4 K=4'
check_msg 2 "holds no configuration" "estimate --configs only comments" estimate --configs "$tmp/comments.txt" 'gemm M=4 N=4 K=4'
check_msg 2 "nul.txt:1: NUL byte" "estimate --configs with a NUL in a line" estimate --configs "$tmp/nul.txt" 'gemm M=4 N=4 K=4'
printf '{"ops": [{"name": "a", "spec": "gemm M=4 N=4 K=4", "spec": "gemm M=8 N=8 K=8"}]}\n' >"$tmp/dupkey.json"
check_msg 2 "duplicate object key" "suite JSON with a duplicate key" suite "$tmp/dupkey.json"
# 6: messages stay on one line; short-option clusters; long --configs lines
nl='
'
check_msg 2 "unknown policy 'a\\nb'" "a newline in an echoed option value" construct --policy "a${nl}b" 'gemm M=4 N=4 K=4'
check_msg 2 "unknown op" "a newline in an echoed spec" construct "gemn${nl}M=4 N=4 K=4"
check_msg 2 "unknown option '-x'" "construct -xy names -x" construct -xy 'gemm M=4 N=4 K=4'
check_msg 2 "unknown option '-x'" "construct --nvrtc -xy names -x" construct --nvrtc -xy 'gemm M=4 N=4 K=4'
check_msg 2 "'-q' (see" "suite -qz names -q" suite -qz "$tmp/suite_ok.json"
check_msg 2 "unknown option '--nvrtc=3'" "a value given to a flag" construct --nvrtc=3 'gemm M=4 N=4 K=4'
{ printf '# a comment\n'; i=0; while [ $i -lt 120 ]; do printf 'bm=4,bn=4,'; i=$((i + 1)); done; printf '\nbm=3\n'; } >"$tmp/long.txt"
check_msg 2 "long.txt:2:" "a 1200-byte --configs line keeps its line number" estimate --configs "$tmp/long.txt" 'gemm M=4 N=4 K=4'
{ printf '# a comment\n'; i=0; while [ $i -lt 500 ]; do printf 'bm=4,bn=4,'; i=$((i + 1)); done; printf '\nbm=3\n'; } >"$tmp/long2.txt"
check_msg 2 "long2.txt:2: line longer than 4095 bytes" "a 5000-byte --configs line is refused" estimate --configs "$tmp/long2.txt" 'gemm M=4 N=4 K=4'
# 7: write errors on stdout are exit 1 with a message
if [ -w /dev/full ]; then
    timeout 60 "$BIN" hw list >/dev/full 2>"$tmp/err"; rc=$?
    if [ "$rc" -eq 1 ] && grep -q "cannot write standard output" "$tmp/err"; then pass=$((pass + 1)); else
        echo "FAIL: hw list >/dev/full: exit $rc"; fail=$((fail + 1)); fi
    timeout 60 "$BIN" construct --hw t4 'gemm M=7 N=5 K=3' >/dev/full 2>"$tmp/err"; rc=$?
    if [ "$rc" -eq 1 ] && grep -q "cannot write standard output" "$tmp/err"; then pass=$((pass + 1)); else
        echo "FAIL: construct >/dev/full: exit $rc"; fail=$((fail + 1)); fi
else
    echo "cli_errors: /dev/full is not writable here: the two stdout write-error checks are skipped"
fi
# 4: --out writes every file or none; a write failure is exit 1, not "bad input"
check 0 "construct --out" construct --hw t4 --out "$tmp/out1" 'gemm M=64 N=64 K=64'
named=$(sed -n 's/^wrote *//p' "$tmp/out")
base=${named%%.\{*}; exts=${named#*\{}; exts=${exts%%\}*}; cl=${named##* }
missing=""
for e in $(echo "$exts" | tr ',' ' '); do [ -f "$base.$e" ] || missing="$missing $base.$e"; done
[ -f "$cl" ] || missing="$missing $cl"
nfiles=$(ls "$tmp/out1" | wc -l); nnamed=$(( $(echo "$exts" | tr ',' '\n' | wc -l) + 1 ))
if [ -z "$named" ] || [ -n "$missing" ] || [ "$nfiles" -ne "$nnamed" ]; then
    echo "FAIL: the wrote line names files not written ($missing) or $nfiles files for $nnamed named: $named"
    fail=$((fail + 1))
else pass=$((pass + 1)); fi
# a file-size limit below the largest file (dash counts 512-byte blocks): nothing is left
( trap '' XFSZ; ulimit -f 16 2>/dev/null && exec timeout 60 "$BIN" construct --hw t4 --out "$tmp/out2" 'gemm M=64 N=64 K=64' ) >/dev/null 2>"$tmp/err"
rc=$?
if [ "$rc" -ne 1 ] || ! grep -q "gensor: error: I/O error: cannot write $tmp/out2/" "$tmp/err" || [ -n "$(ls -A "$tmp/out2" 2>/dev/null)" ]; then
    echo "FAIL: --out under a file-size limit: exit $rc (want 1), left: $(ls -A "$tmp/out2" 2>/dev/null | tr '\n' ' ')"
    sed 's/^/    /' "$tmp/err" | head -3
    fail=$((fail + 1))
else pass=$((pass + 1)); fi
# 8: exhaustive on a conv has a time budget and says it was cut short
check_out 0 "hit its cap (the --max-ms time budget)" "exhaustive --max-ms on a conv" construct --hw t4 --strategy exhaustive --max-ms 200 'conv2d N=8 C=64 H=28 W=28 K=64 R=3 S=3 pad=1'
check_out 0 '"capped": true' "exhaustive --max-ms in JSON" construct --hw t4 --format json --strategy exhaustive --max-ms 200 'conv2d N=8 C=64 H=28 W=28 K=64 R=3 S=3 pad=1'
check_msg 2 "--max-ms expects" "a bad --max-ms" construct --max-ms -1 'gemm M=4 N=4 K=4'
check_msg 2 "--max-ms is not an option" "estimate --max-ms" estimate --max-ms 5 --config bm=4 'gemm M=4 N=4 K=4'
# issue 11 item 5: a second `construct --nvrtc --cache-dir D` compiles nothing
timeout 120 "$BIN" construct --hw t4 --nvrtc --cache-dir "$tmp/kc" 'gemm M=64 N=64 K=64' >"$tmp/kc1.out" 2>"$tmp/kc1.err"
rc=$?
if [ "$rc" -eq 1 ] && grep -q "NVRTC" "$tmp/kc1.err"; then
    echo "cli_errors: NVRTC is missing ($(head -1 "$tmp/kc1.err")): the --cache-dir checks are skipped"
    if [ -n "$GS_REQUIRE_NVRTC" ] && [ "$GS_REQUIRE_NVRTC" != 0 ]; then fail=$((fail + 1)); fi
else
    timeout 120 "$BIN" construct --hw t4 --nvrtc --cache-dir "$tmp/kc" 'gemm M=64 N=64 K=64' >"$tmp/kc2.out" 2>"$tmp/kc2.err"
    rc2=$?
    # the same report (but the construction time), a hit for each compile of the first run, nothing compiled
    n1=$(sed -n 's/.*kernel cache .*: 0 hits (0 from disk), \([0-9]*\) compiled.*/\1/p' "$tmp/kc1.err")
    if [ "$rc" -ne 0 ] || [ "$rc2" -ne 0 ] || [ -z "$n1" ] || [ "$n1" -eq 0 ] ||
       ! grep -q "kernel cache $tmp/kc: $n1 hits ($n1 from disk), 0 compiled" "$tmp/kc2.err" ||
       [ "$(grep -v '^construct ' "$tmp/kc1.out" | cksum)" != "$(grep -v '^construct ' "$tmp/kc2.out" | cksum)" ]; then
        echo "FAIL: construct --nvrtc --cache-dir: the second run is not all cache hits (exit $rc, $rc2):"
        cat "$tmp/kc1.err" "$tmp/kc2.err" | sed 's/^/    /' | head -6
        fail=$((fail + 1))
    else pass=$((pass + 1)); fi
    # GS_CACHE_DIR is the default of --cache-dir, and suite uses the cache too
    GS_CACHE_DIR="$tmp/kc" timeout 120 "$BIN" suite --hw t4 --nvrtc "$tmp/suite_ok.json" >/dev/null 2>"$tmp/kc3.err"
    GS_CACHE_DIR="$tmp/kc" timeout 120 "$BIN" suite --hw t4 --nvrtc "$tmp/suite_ok.json" >/dev/null 2>"$tmp/kc4.err"
    if ! grep -q "kernel cache $tmp/kc: 1 hits (1 from disk), 0 compiled" "$tmp/kc4.err"; then
        echo "FAIL: suite --nvrtc with GS_CACHE_DIR: the second run is not a cache hit:"
        cat "$tmp/kc3.err" "$tmp/kc4.err" | sed 's/^/    /' | head -4
        fail=$((fail + 1))
    else pass=$((pass + 1)); fi
fi
# verify runs on the --backend device: CUDA verifies there (NVRTC for its arch);
# without a CUDA driver or device it stops with the measurement-free line, exit 1
if "$BIN" construct --backend cuda --hw t4 'gemm M=4 N=4 K=4' >/dev/null 2>&1; then
    check_out 0 "verify    on CUDA device: " "verify --backend cuda on a GPU" verify --backend cuda --hw t4 'gemm M=40 N=24 K=72'
else
    check_msg 1 "no CUDA device: measurement-free mode (" "verify --backend cuda without a CUDA device" verify --backend cuda --hw t4 'gemm M=4 N=4 K=4'
fi
check 2 "unknown --form" construct --form matmul 'gemm M=4 N=4 K=4'
check 2 "estimate --form" estimate --hw t4 --config bm=4,bn=4,bk=4,sa=1,sb=1 --form auto 'gemm M=4 N=4 K=4'
# --split-atomic is construct's and verify's, not estimate's; estimate has its own help
check 2 "estimate --split-atomic" estimate --hw t4 --config bm=4,bn=4,bk=4,sa=1,sb=1 --split-atomic 'gemm M=4 N=4 K=4'
# --nonfinite is verify's alone, a count >= 0
check 2 "construct --nonfinite" construct --hw t4 --nonfinite 2 'gemm M=4 N=4 K=4'
check 2 "estimate --nonfinite" estimate --hw t4 --config bm=4,bn=4,bk=4,sa=1,sb=1 --nonfinite 2 'gemm M=4 N=4 K=4'
check_msg 2 "--nonfinite expects an integer" "verify --nonfinite -1" verify --hw t4 --nonfinite -1 'gemm M=4 N=4 K=4'
check 2 "split_atomic config value 2" estimate --hw t4 --config bm=4,bn=4,bk=4,sa=1,sb=1,split=1,atomic=2 'gemm M=4 N=4 K=4'
# ---- issue 19 item 8: the v1-style plan options (--plan-opts, config keys) ----------------
check_msg 2 "bad --plan-opts 'vectors'" "--plan-opts unknown item" construct --hw t4 --plan-opts vectors 'gemm M=4 N=4 K=4'
check_msg 2 "bad --plan-opts ''" "--plan-opts empty" estimate --hw t4 --config bm=4,bn=4,bk=4,sa=1,sb=1 --plan-opts '' 'gemm M=4 N=4 K=4'
check_msg 2 "bad --plan-opts 'scalar,'" "--plan-opts trailing comma" verify --hw t4 --plan-opts scalar, 'gemm M=4 N=4 K=4'
check_msg 2 "im2col and box exclude each other" "--plan-opts im2col,box" construct --hw t4 --plan-opts im2col,box 'gemm M=4 N=4 K=4'
check 2 "--plan-opts without a value" construct --hw t4 'gemm M=4 N=4 K=4' --plan-opts
check_msg 2 "config: scalar must be 0 or 1 (got 2)" "config scalar=2" estimate --hw t4 --config bm=4,bn=4,bk=4,sa=1,sb=1,scalar=2 'gemm M=4 N=4 K=4'
check_msg 2 "config: im2col must be 0..2 (got 3)" "config im2col=3" estimate --hw t4 --config bm=4,bn=4,bk=4,sa=1,sb=1,im2col=3 'gemm M=4 N=4 K=4'
check_msg 2 "config: key 'lb1' given twice" "config lb1 twice" construct --hw t4 --config bm=4,bn=4,bk=4,sa=1,sb=1,lb1=1,lb1=1 'gemm M=4 N=4 K=4'
check_msg 2 "config: bad value for 'noasync'" "config noasync=-1" estimate --hw t4 --config bm=4,bn=4,bk=4,sa=1,sb=1,noasync=-1 'gemm M=4 N=4 K=4'
# ---- issue 21: gensor import: bad models are one line, exit 2 ----------------------------
onnx_dir=$(dirname "$0")/data/onnx
head -c 1000 "$onnx_dir/chain.onnx" >"$tmp/trunc.onnx"
printf 'this is not a model\n' >"$tmp/text.onnx"
: >"$tmp/empty.onnx"
check_msg 2 "malformed ONNX model at byte" "import a truncated model" import --dim batch=2 "$tmp/trunc.onnx"
check_msg 2 "malformed ONNX model" "import a text file" import "$tmp/text.onnx"
check_msg 2 "empty file" "import an empty file" import "$tmp/empty.onnx"
check_msg 2 "cannot open" "import a missing file" import "$tmp/none.onnx"
# a FLOAT16 initializer whose int32_data holds 70000 (more than a 16-bit word),
# and a BFLOAT16 one with both raw_data and int32_data: malformed, not truncated
printf '\010\007\072\016\052\014\010\001\020\012\102\001\167\052\003\360\242\004' >"$tmp/wide16.onnx"
printf '\010\007\072\021\052\017\010\001\020\020\102\001\167\052\002\200\177\112\002\200\077' >"$tmp/two16.onnx"
check_msg 2 "tensor 'w': int32_data[0] is 70000, not a 16-bit FLOAT16 word" "import a FLOAT16 word above 0xffff" import "$tmp/wide16.onnx"
check_msg 2 "tensor 'w' has both raw_data and 1 typed data elements" "import a BFLOAT16 tensor with two sources" import "$tmp/two16.onnx"
# a model whose only node is a Cast to the type its input has (a view), and one
# with no nodes: no kernel, and no reasons to see above
printf '\010\010\102\002\020\021\072\111\012\032\012\001\170\022\001\171\032\001\171\042\004\103\141\163\164\052\011\012\002\164\157\030\012\240\001\002\022\001\147\132\023\012\001\170\022\016\012\014\010\012\022\010\012\002\010\002\012\002\010\002\142\023\012\001\171\022\016\012\014\010\012\022\010\012\002\010\002\012\002\010\002' >"$tmp/castsame.onnx"
printf '\010\007\072\003\022\001\147' >"$tmp/nonodes.onnx"
check_msg 1 "the model's 1 node only views tensors (a Reshape, a Cast to the type it has): no kernel" "import a FLOAT16 Cast to FLOAT16 alone" import "$tmp/castsame.onnx"
check_msg 1 "the model has no nodes: no kernel" "import a graph without nodes" import "$tmp/nonodes.onnx"
check_msg 2 "not a regular file" "import a directory" import "$tmp/adir"
check_msg 2 "dim 'batch' (input 'x' dim 0) is not bound" "import with batch unbound" import "$onnx_dir/chain.onnx"
check_msg 2 "no symbolic dim 'seq' (its dims: batch)" "import with an unknown dim" import --dim seq=3 "$onnx_dir/chain.onnx"
check_msg 2 "--dim wants NAME=N" "import --dim without =" import --dim batch "$onnx_dir/chain.onnx"
check_msg 2 "the size must be an integer" "import --dim batch=0" import --dim batch=0 "$onnx_dir/chain.onnx"
check_msg 2 "missing the MODEL.onnx" "import without a model" import --dim batch=2
check 2 "import --hw nosuch" import --hw nosuch --dim batch=2 "$onnx_dir/chain.onnx"
check_msg 1 "cannot create directory $tmp/none/x/kernels" "import --construct under a missing directory" import --hw t4 --dim batch=2 --construct "$tmp/none/x" "$onnx_dir/chain.onnx"
check_msg 2 "needs a value" "import --construct without a value" import --dim batch=2 "$onnx_dir/chain.onnx" --construct
check_out 0 '"spec": "gemm M=2 N=10 K=128 transA=0 transB=1 alpha=1 beta=0 bias=1 relu=1"' "import chain.onnx" import --hw t4 --dim batch=2 "$onnx_dir/chain.onnx"
check_msg 0 "unsupported: node 13 'selu' (Selu): operator Selu is not mapped" "import lists Selu" import --hw t4 --dim seq=3 "$onnx_dir/misc.onnx"
check_out 0 '"name": "softmax/Softmax.max"' "import expands Softmax" import --hw t4 --dim seq=3 "$onnx_dir/misc.onnx"
if "$BIN" import --hw t4 --dim batch=2 --out "$tmp/chain.json" "$onnx_dir/chain.onnx" 2>/dev/null &&
   "$BIN" suite --hw t4 --format csv "$tmp/chain.json" >"$tmp/suite.csv" 2>/dev/null && [ "$(wc -l <"$tmp/suite.csv")" -eq 4 ]; then
    pass=$((pass + 1))
else
    echo "FAIL: gensor suite does not read what gensor import --out wrote (3 rows)"
    fail=$((fail + 1))
fi
if "$BIN" estimate --help 2>/dev/null | head -1 | grep -q '^usage: gensor estimate '; then pass=$((pass + 1))
else
    echo "FAIL: estimate --help does not print estimate's usage"
    fail=$((fail + 1))
fi
# issue 22 item 1: extents above 2^29 ended in an endless loop (a block tile of
# 2^30 doubled past int32), and the time budgets must hold at any extent
within() { # seconds description args...: exit 0 within the seconds
    secs=$1; shift
    what=$1; shift
    start=$(date +%s)
    timeout $((secs + 30)) "$BIN" "$@" >"$tmp/out" 2>"$tmp/err"
    rc=$?
    took=$(( $(date +%s) - start ))
    if [ "$rc" -ne 0 ] || [ "$took" -gt "$secs" ]; then
        echo "FAIL: $what: exit $rc after ${took} s (want 0 within $secs s)"
        sed 's/^/    /' "$tmp/err" | head -3
        fail=$((fail + 1))
    else pass=$((pass + 1)); fi
}
within 10 "space of a rowsum with K = 2^29+1" space --hw t4 'rowsum M=1 K=536870913'
within 10 "space of a gemm with K = 2^30" space --hw t4 'gemm M=1 N=1 K=1073741824'
within 10 "exhaustive gemm with K = 2^30" construct --hw t4 --strategy exhaustive 'gemm M=1 N=1 K=1073741824'
within 10 "markov gemv with N = 2^31-1" construct --hw t4 'gemv M=3 N=2147483647'
within 5 "space --max-ms 500 of a space of millions" space --hw t4 --max-ms 500 --limit 20000000 'conv2d N=1 C=1073741824 H=8 W=8 K=16 R=3 S=3'
grep -q "TRUNCATED at the --max-ms time budget" "$tmp/out" && pass=$((pass + 1)) ||
    { echo "FAIL: space --max-ms 500 does not say the budget cut it"; fail=$((fail + 1)); }
within 5 "space --sample under --max-ms 500" space --hw t4 --max-ms 500 --sample 1000000 'conv2d N=1 C=1073741824 H=8 W=8 K=16 R=3 S=3'
within 5 "exhaustive --max-ms 500 of a space of millions" construct --hw t4 --strategy exhaustive --max-ms 500 'conv2d N=1 C=1073741824 H=8 W=8 K=16 R=3 S=3'
check 2 "space bad --max-ms" space --max-ms -1 'gemm M=4 N=4 K=4'
# ---- issue 22 item 8: CLI rough edges ------------------------------------------------
check_out 0 "usage: gensor hw list" "hw list --help" hw list --help
check_out 0 "usage: gensor hw list" "hw show --help" hw show --help
check_out 0 "usage: gensor hw list" "hw show t4 -h" hw show t4 -h
check_out 0 "usage: gensor verify SPEC" "verify --help is verify's" verify --help
for o in --emit --out --refine --sass; do
    if grep -q -e "$o " "$tmp/out"; then echo "FAIL: verify --help lists $o, which verify refuses"; fail=$((fail + 1)); fi
done
# the status is not repeated by the detail, and a shape error names its problem
check_msg 2 "gensor: error: unknown operator 'GEMM' (known:" "unknown operator said once" construct 'GEMM M=1 N=1 K=1'
check_msg 2 "gensor: error: unknown hardware profile 'nosuch': not a built-in" "unknown profile said once" construct --hw nosuch 'gemm M=4 N=4 K=4'
check_msg 2 "gensor: error: invalid shape: avgpool2d: kernel 3 along H (dilated extent 3) is larger than the padded input 2" \
    "a window larger than its input" construct 'avgpool2d N=1 C=1 H=2 W=2 R=3 S=3'
check_msg 2 "gensor: error: invalid shape: gemm: M=0 must be between 1 and" "an extent of 0" construct 'gemm M=0 N=1 K=1'
# a suite whose operator fails says so on stderr, not only in its table
check_msg 1 "gensor suite: error: operator 'a,\"b' (gemm M=0 N=1 K=1): invalid shape: gemm: M=0" \
    "suite with a bad op: a line on stderr" suite --hw t4 "$tmp/suite_bad.json"
check_msg 1 "gensor suite: error: operator 'a,\"b'" "suite --format json with a bad op: a line on stderr" \
    suite --hw t4 --format json "$tmp/suite_bad.json"
# a derived profile has a name of its own: its "name", else <base>+custom
printf '{"base": "t4", "dram_gbs": 100}\n' >"$tmp/derived.json"
printf '{"base": "t4", "name": "my-t4", "dram_gbs": 100}\n' >"$tmp/derived_named.json"
check_out 0 "t4+custom: NVIDIA Tesla T4" "a derived profile without a name" hw show "$tmp/derived.json"
check_out 0 "hw        t4+custom (sm_75" "construct names the derived profile" construct --hw "$tmp/derived.json" 'gemm M=8 N=8 K=8'
check_out 0 "my-t4: NVIDIA Tesla T4" "a derived profile with a name" hw show "$tmp/derived_named.json"
# ---- issue 22 item 10: the grammar is in the binary (and so in the man page) ------------
check_out 0 "rowsum, rowmean, rowmax" "help spec" help spec
check_out 0 "split=1..16" "help config" help config
check_msg 2 "unknown topic 'nosuch'" "help with an unknown topic" help nosuch
# ---- issue 18: element types --------------------------------------------------------------
check_msg 2 "unknown type 'f8' in dtype= (known: f32 f16 bf16)" "an unknown type" construct 'gemm M=4 N=4 K=4 dtype=f8'
check_msg 2 "unknown type 'half' in out_dtype=" "an unknown output type" construct 'relu M=4 N=4 out_dtype=half'
check_msg 2 "key 'dtype' given twice" "a type given twice" construct 'relu M=4 N=4 dtype=f16 dtype=bf16'
check_msg 2 "unknown type 'f8'" "verify: an unknown type" verify 'gemv M=4 N=4 dtype=f8'
check_msg 2 "math=tf32: only gemm, bgemm and conv2d take it" "math=tf32 on a gemv" construct 'gemv M=4 N=4 math=tf32'
check_msg 2 "math=tf32 rounds f32 inputs" "math=tf32 on an f16 gemm" construct 'gemm M=4 N=4 K=4 math=tf32 dtype=f16'
check_msg 2 "unknown math 'tf64'" "an unknown math" construct 'gemm M=4 N=4 K=4 math=tf64'
check_out 0 "math=tf32" "a tf32 spec prints its math" construct --hw a100 'gemm M=4 N=4 K=4 math=tf32'
check_out 0 "dtype=bf16 out_dtype=f32" "a typed spec prints its types" construct --hw t4 'gemv M=4 N=4 dtype=bf16 out_dtype=f32'
check_out 0 "grammar: gensor help spec, or man gensor" "--help points at the grammar" --help
check_out 0 "(gensor help config)" "construct --help points at the configuration form" construct --help
echo "cli_errors: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
