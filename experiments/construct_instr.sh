#!/bin/sh
# construct_instr.sh — the instructions one construction executes (gs_construct, under
# valgrind's callgrind), per operator of a fixed list from the median of make
# bench-construct to its maximum, and their sum. Unlike the wall clock
# (construct_time.sh), the count does not move with the machine's load, so two trees
# compare on a shared machine: docs/CONSTRUCTION.md steers construction time by it.
#
#   sh experiments/construct_instr.sh [BIN] [THREADS]     BIN build/gensor, THREADS 1
#
# With THREADS other than 1 the count is every worker's (the work, not the wall time):
# valgrind runs the threads interleaved (--fair-sched=yes) and counts the helpers' start
# routines too (work, and form_work: a 1x1 conv's second form), which toggling
# gs_construct alone misses. The list (PROFILE|SPEC per line) can be replaced with
# GS_CI_OPS=FILE. Needs valgrind.
set -u
BIN=${1:-build/gensor}
THREADS=${2:-1}
command -v valgrind >/dev/null || { echo "construct_instr: needs valgrind (apt-get install valgrind)" >&2; exit 2; }
[ -x "$BIN" ] || { echo "construct_instr: no executable $BIN (run make)" >&2; exit 2; }
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT INT TERM
if [ -n "${GS_CI_OPS:-}" ]; then
    cp "$GS_CI_OPS" "$tmp/ops" || exit 2
else
    # a median 1x1 conv (both forms), gemms, a depthwise conv, a bgemm, two poolings, the
    # max (7x7 s2 C=3), a 3x3 conv, a half-precision gemm on the tensor cores
    cat >"$tmp/ops" <<'EOF'
v100|conv2d N=1 C=960 H=7 W=7 K=320 R=1 S=1 layout=nchw bias=1 relu=0
rtx4090|gemm M=2048 N=512 K=512 bias=1
h100|gemm M=128 N=1000 K=2048 bias=1
a100|dwconv2d N=128 C=576 H=14 W=14 R=3 S=3 stride=2 pad=1 layout=nchw bias=1 relu=1
h100|bgemm B=128 M=128 N=64 K=128
v100|maxpool2d N=1 C=64 H=112 W=112 F=3 stride=2 pad=1 layout=nchw
h100|avgpool2d N=128 C=617 H=21 W=21 F=3 stride=2 pad=0 layout=nchw
rtx3090|conv2d N=1 C=3 H=224 W=224 K=64 R=7 S=7 stride=2 pad=3 layout=nchw bias=1 relu=1
a100|conv2d N=32 C=128 H=28 W=28 K=128 R=3 S=3 pad=1 layout=nhwc
rtx3090|gemm M=1024 N=768 K=768 bias=1 dtype=f16
EOF
fi
total=0
# (with one thread form_work runs inside gs_construct, where a toggle would stop the count)
tog="--toggle-collect=gs_construct"
[ "$THREADS" != 1 ] && tog="$tog --toggle-collect=work --toggle-collect=form_work --fair-sched=yes"
printf "%14s  %-9s %s\n" instructions profile operator
while IFS='|' read -r hw spec; do
    [ -n "$hw" ] || continue
    valgrind --tool=callgrind --callgrind-out-file="$tmp/cg" $tog \
        "$BIN" construct "$spec" --hw "$hw" --threads "$THREADS" --emit json >/dev/null 2>"$tmp/err" ||
        { echo "construct_instr: $hw $spec failed:" >&2; tail -3 "$tmp/err" >&2; exit 1; }
    n=$(awk '/I *refs:/ { gsub(",", "", $NF); print $NF; exit }' "$tmp/err")
    [ -n "$n" ] || { echo "construct_instr: no count for $hw $spec" >&2; exit 1; }
    printf "%14s  %-9s %s\n" "$n" "$hw" "$spec"
    total=$((total + n))
done <"$tmp/ops"
printf "%14s  total (threads %s)\n" "$total" "$THREADS"
