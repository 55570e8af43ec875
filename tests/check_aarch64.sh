#!/bin/sh
# make check-aarch64: the aarch64 build under qemu-user.
#   sh tests/check_aarch64.sh BUILD_AARCH64 NATIVE_GENSOR
# 1. The ir, hw and construct unit tests (tests/minicr: one emulated process
#    per test, two at a time).
# 2. tests/cli_errors.sh against the aarch64 CLI.
# 3. x86-64 against aarch64: the same spec, profile, seed and policy give the
#    same candidate list, byte for byte (JSON with 17 significant digits;
#    only construct_ms and peak_rss_kb, measurements, are dropped; one worker each): construct --top 10 for every
#    spec of tests/data/cross_specs.txt on every built-in profile, and the
#    top-1 of every operator of experiments/suites/paper.json.
set -u
B=$1
NATIVE=$2
case $B in /*) ;; *) B=$PWD/$B ;; esac
QEMU=${QEMU_AARCH64:-qemu-aarch64 -L /} # (the multiarch root: see A64_QEMU in the Makefile)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass=0
fail=0

# a wrapper so that scripts can run the aarch64 CLI as one command
printf '#!/bin/sh\nexec %s "%s/gensor" "$@"\n' "$QEMU" "$B" >"$tmp/gensor"
chmod +x "$tmp/gensor"

# ---- 1. unit tests --------------------------------------------------------
t0=$(date +%s)
$QEMU "$B/minicr_tests" --list | grep -E '^(ir|hw|construct)/' >"$tmp/list" || {
    echo "check-aarch64: cannot list the tests of $B/minicr_tests"; exit 1; }
lane() { # lane K: runs every other test, from the K-th
    awk -v k="$1" 'NR % 2 == k' "$tmp/list" | while read -r t; do
        GS_GENSOR_BIN="$tmp/gensor" timeout -s KILL 900 $QEMU "$B/minicr_tests" --run "$t" </dev/null >"$tmp/out.$1" 2>&1
        rc=$?
        case $rc in
            0) echo "pass $t" ;;
            77) echo "skip $t: $(tail -n 1 "$tmp/out.$1")" ;;
            *) echo "FAIL $t (exit $rc)"; sed 's/^/    /' "$tmp/out.$1" | tail -n 5 ;;
        esac
    done >"$tmp/lane.$1"
}
lane 0 &
lane 1
wait
cat "$tmp/lane.0" "$tmp/lane.1" | grep -v '^pass ' || true
np=$(cat "$tmp/lane.0" "$tmp/lane.1" | grep -c '^pass ')
nf=$(cat "$tmp/lane.0" "$tmp/lane.1" | grep -c '^FAIL ')
ns=$(cat "$tmp/lane.0" "$tmp/lane.1" | grep -c '^skip ')
echo "unit tests (ir, hw, construct) under qemu: $np passed, $nf failed, $ns skipped ($(( $(date +%s) - t0 )) s)"
[ "$np" -gt 0 ] && [ "$nf" -eq 0 ] && pass=$((pass + 1)) || fail=$((fail + 1))

# ---- 2. CLI errors ---------------------------------------------------------
if sh tests/cli_errors.sh "$tmp/gensor"; then pass=$((pass + 1)); else fail=$((fail + 1)); fi

# ---- 3. x86-64 and aarch64 give the same candidates ---------------------------
# (one worker on each side: with several, states_pruned varies from run to run,
# by whether a floor another worker kept is there yet; the unit tests above run
# the workers under qemu, threads_same_result among them)
t0=$(date +%s)
strip() { grep -v -e '"construct_ms"' -e '"peak_rss_kb"'; }
n=0
bad=0
compare() { # label, then gensor arguments
    what=$1; shift
    "$NATIVE" "$@" --threads 1 </dev/null 2>&1 | strip >"$tmp/x86"
    "$tmp/gensor" "$@" --threads 1 </dev/null 2>&1 | strip >"$tmp/a64"
    n=$((n + 1))
    if ! grep -q '"predicted_s"' "$tmp/x86"; then
        echo "FAIL: $what: the x86-64 run printed no candidate:"; head -n 3 "$tmp/x86" | sed 's/^/    /'
        bad=$((bad + 1))
    elif ! cmp -s "$tmp/x86" "$tmp/a64"; then
        echo "FAIL: $what: x86-64 and aarch64 differ:"
        diff "$tmp/x86" "$tmp/a64" | head -n 8 | sed 's/^/    /'
        bad=$((bad + 1))
    fi
}
profiles=$("$NATIVE" hw list | awk 'NR > 1 { print $1 }')
grep -v -e '^#' -e '^$' tests/data/cross_specs.txt >"$tmp/specs"
for hw in $profiles; do
    while read -r spec; do
        compare "$hw seed 1 '$spec'" construct --hw "$hw" --top 10 --format json --seed 1 "$spec"
        compare "$hw seed 7 balanced '$spec'" construct --hw "$hw" --top 10 --format json --seed 7 \
            --policy balanced "$spec"
    done <"$tmp/specs"
    compare "$hw suite paper.json" suite experiments/suites/paper.json --hw "$hw" --format json
    compare "$hw suite paper.json (tree)" suite experiments/suites/paper.json --hw "$hw" --format json \
        --strategy tree
done
echo "x86-64 vs aarch64: $((n - bad)) of $n candidate lists identical ($(( $(date +%s) - t0 )) s)"
[ "$bad" -eq 0 ] && pass=$((pass + 1)) || fail=$((fail + 1))

echo "check-aarch64: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
