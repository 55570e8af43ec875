#!/bin/sh
# experiments/device/run.sh — gensor's device checks on a lent GPU machine, in one call of
# about 6-8 minutes, with the programs of experiments/device/kit.sh (build/devkit, carried):
#
#   1. the machine: GPU, CPUs, and whether the kit's programs find every library;
#   2. make check-gpu's script (experiments/check_gpu.sh): the CUDA path end to end,
#      refinement, constructed GEMMs against cuBLAS, the typed operators;
#   3. bench-gpu on experiments/device/goals.json: issue 19's GPU goals (SGEMM 4096^3 and
#      8192^3 against cuBLAS, the convolutions against cuDNN through PyTorch, gemv's DRAM
#      bandwidth);
#   4. bench-gpu QUICK=1 over the suite and model lists (one operator per class);
#   5. construction on that machine's CPUs: paper.json on h100 with 1, 2 and 4 workers and
#      the default (0: up to 4, started when worth it), 5 runs each, and the polish assist
#      prototype (gensor_assist, default workers) with and without GS_NO_ASSIST, 7 ABBA pairs.
#
# Each step has its own time limit (180 + 120 + 150 + 60 s: under the device tool's 600 s a
# call with the start's minutes left to spare), so one that hangs costs its limit and the rest
# still run.
# Everything goes to $OUT (the device tool's folder; build/device-out elsewhere) as at most
# 8 files: device.log (every step's output), goals.csv, goals.json, quick.csv, quick.json,
# construct.tsv. Without a CUDA device the GPU steps say SKIPPED and the rest runs, which is
# how this script is tested on the development machine.
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT" || exit 1
KIT=$ROOT/build/devkit
since() { awk -v s="$1" -v e="$(date +%s.%N)" 'BEGIN { printf "%.3f", e - s }'; }

# ---- 5. construction on this machine's CPUs (run by step 5 below, under its time limit) ----
# one line per run: binary, --threads, assist (1 on, 0 off, - none), summed construct_ms, wall s
if [ "${1:-}" = --construct ]; then
    TSV=$2
    printf 'bin\tthreads\tassist\tsum_construct_ms\twall_s\n' >"$TSV"
    suite_ms() { # BIN THREADS [VAR=VALUE]: the summed construct_ms of paper.json on h100
        # shellcheck disable=SC2086
        env ${3:-} "$1" suite experiments/suites/paper.json --hw h100 --threads "$2" --format json 2>/dev/null |
            python3 -c 'import json, sys; print(round(sum(o.get("construct_ms") or 0 for o in json.load(sys.stdin)["ops"]), 1))' 2>/dev/null
    }
    for t in 1 2 4 0; do
        for r in 1 2 3 4 5; do
            s=$(date +%s.%N)
            ms=$(suite_ms "$KIT/bin/gensor" $t)
            printf 'gensor\t%s\t-\t%s\t%s\n' $t "$ms" "$(since "$s")" >>"$TSV"
        done
    done
    if [ -x "$KIT/bin/gensor_assist" ]; then
        for r in 1 2 3 4 5 6 7; do # ABBA: on, off, off, on, ...
            for a in $([ $((r % 2)) = 1 ] && echo 1 0 || echo 0 1); do
                s=$(date +%s.%N)
                if [ "$a" = 0 ]; then ms=$(suite_ms "$KIT/bin/gensor_assist" 0 GS_NO_ASSIST=1); else ms=$(suite_ms "$KIT/bin/gensor_assist" 0); fi
                printf 'gensor_assist\t0\t%s\t%s\t%s\n' "$a" "$ms" "$(since "$s")" >>"$TSV"
            done
        done
    fi
    cat "$TSV"
    exit 0
fi

OUT=${OUT:-$ROOT/build/device-out}
mkdir -p "$OUT" || exit 1
LOG=$OUT/device.log
: >"$LOG"
SCRATCH=$(mktemp -d) || exit 1
trap 'rm -rf "$SCRATCH"' EXIT INT TERM
say() { printf '%s\n' "$*" | tee -a "$LOG"; }
# step TITLE SECONDS COMMAND...: run it under a time limit, its output to the log
step() {
    title=$1 limit=$2
    shift 2
    say ""
    say "==== $title (limit ${limit} s) $(date -u +%H:%M:%S)"
    t0=$(date +%s)
    timeout "$limit" "$@" >>"$LOG" 2>&1
    st=$?
    say "==== $title: exit $st after $(($(date +%s) - t0)) s"
    return $st
}

if [ ! -x "$KIT/bin/gensor" ]; then
    say "device: no kit at $KIT: run sh experiments/device/kit.sh here first and carry build/devkit"
    exit 2
fi
export LD_LIBRARY_PATH="$KIT/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
# NVRTC and cuBLAS: the CUDA toolkit's, else the nvidia-* wheels of the machine's python3
for d in /usr/local/cuda/lib64 /usr/local/cuda/targets/x86_64-linux/lib \
    $(python3 -c 'import site; print(" ".join(site.getsitepackages()))' 2>/dev/null); do
    [ -d "$d" ] || continue
    dirs=$(find "$d" -maxdepth 4 \( -name 'libnvrtc.so*' -o -name 'libcublas.so*' \) -exec dirname {} \; 2>/dev/null | sort -u)
    for dir in $dirs; do
        case ":$LD_LIBRARY_PATH:" in *":$dir:"*) ;; *) LD_LIBRARY_PATH="$LD_LIBRARY_PATH:$dir" ;; esac
    done
done
export LD_LIBRARY_PATH

# ---- 1. the machine --------------------------------------------------------------------
say "device run: $(date -u +%Y-%m-%dT%H:%MZ), $(nproc) CPUs, $(uname -srm)"
[ -f "$KIT/MANIFEST" ] && head -2 "$KIT/MANIFEST" | tee -a "$LOG"
{ command -v nvidia-smi >/dev/null && nvidia-smi -L 2>&1 || echo "no nvidia-smi"; } | tee -a "$LOG"
missing=$(for b in "$KIT"/bin/*; do ldd "$b" 2>&1 | grep 'not found'; done | sort -u)
if [ -n "$missing" ]; then
    say "device: the kit's programs miss libraries:"
    say "$missing"
    exit 2
fi
say "LD_LIBRARY_PATH=$LD_LIBRARY_PATH"
touch "$KIT/bin/cublas_check" # newer than its sources: check_gpu.sh must not rebuild it here

# ---- 2. check-gpu ------------------------------------------------------------------------
step "check-gpu (experiments/check_gpu.sh)" 180 sh experiments/check_gpu.sh "$KIT/bin/gensor"

# ---- 3, 4. bench-gpu: the issue's goals, then one operator per class of every list -------
MAKE=true
export MAKE
step "bench-gpu on experiments/device/goals.json" 120 \
    env SUITES="$ROOT/experiments/device/goals.json" BENCH_GPU_OUT="$SCRATCH/goals" sh experiments/bench_gpu.sh "$KIT/bin"
cp "$SCRATCH/goals/results.csv" "$OUT/goals.csv" 2>/dev/null
cp "$SCRATCH/goals/summary.json" "$OUT/goals.json" 2>/dev/null
step "bench-gpu QUICK=1 (suite and model lists)" 150 \
    env QUICK=1 BENCH_GPU_OUT="$SCRATCH/quick" sh experiments/bench_gpu.sh "$KIT/bin"
cp "$SCRATCH/quick/results.csv" "$OUT/quick.csv" 2>/dev/null
cp "$SCRATCH/quick/summary.json" "$OUT/quick.json" 2>/dev/null

# ---- 5. construction on this machine's CPUs (the --construct mode above) -------------------
step "construction time on $(nproc) CPUs (paper.json, h100)" 60 sh "$0" --construct "$OUT/construct.tsv"

say ""
say "device run done $(date -u +%H:%M:%S); files: $(find "$OUT" -maxdepth 1 -type f -printf '%f ')"
