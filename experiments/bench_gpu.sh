#!/bin/sh
# make bench-gpu: gensor's kernels against cuBLAS and PyTorch on the CUDA
# device, operator by operator (experiments/bench_gpu.c, torch_bench.py).
#
#   sh experiments/bench_gpu.sh [BUILD_DIR]   (default build; relative to the repository root)
#
# Settings (environment; `make bench-gpu` passes its variables through):
#   HW=auto|NAME|FILE  the profile to construct for (auto: the device's own)
#   REFINE=K           0/1: the model's top-1; K >= 2: best measured of top K
#   QUICK=1            one operator per class instead of every operator
#   DTYPE=f32|f16|bf16|tf32  which types (issue 18; default f32):
#                      f16, bf16: the default lists become the half model lists
#                      experiments/models/half/*_f16.json or *_bf16.json (every
#                      tensor of that type, f32 accumulation); tf32: the f32
#                      lists with math=tf32 on every gemm, bgemm and conv2d
#                      (bench_gpu --tf32). Typed operators get typed device
#                      buffers (gs_op_buffer_bytes), cuBLAS runs cublasGemmEx /
#                      cublasGemmStridedBatchedEx with CUDA_R_16F/CUDA_R_16BF
#                      storage and CUBLAS_COMPUTE_32F (math=tf32:
#                      CUBLAS_COMPUTE_32F_FAST_TF32), PyTorch the same dtypes
#                      (allow_tf32 for math=tf32); the table's type column says
#                      which. A SUITES list may also mix types (dtype=, math= specs).
#   SUITES='a.json b.json'  the lists (default: the paper suite and every model;
#                      with DTYPE=f16|bf16 the half lists of that type)
#   BENCH_GPU_OUT=DIR  where results.csv, summary.json, torch.csv go
#                      (default BUILD_DIR/bench-gpu)
#   BENCH_GPU_ARGS='...'  more bench_gpu options (--runs 5 30, --check-iters N, ...)
#   BENCH_GPU_SELF_TEST=1  for tests/bench_gpu_dry.sh only: no probe, and
#                      bench_gpu --self-test (no device; synthetic times)
#
# 1. builds libgensor and build/bench_gpu (make);
# 2. asks for a device (bench_gpu --probe). Without one it prints
#    "bench-gpu: SKIPPED: no CUDA device (<reason>)" and exits 0: no time is
#    taken on anything else;
# 3. runs torch_bench.py on the same operators when `import torch` works and
#    torch.cuda.is_available() (PyTorch first, alone on the device; the
#    PyTorch column says n/a and why otherwise);
# 4. runs bench_gpu: the table, geometric means and per-model totals.
# Exit status: 0 (done or skipped), 1 a failure (mismatch, build or run error).
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${1:-build} # as make knows it (its .d files name the objects that way)
BIN="$BUILD/bench_gpu"
OUT=${BENCH_GPU_OUT:-$BUILD/bench-gpu}
HW=${HW:-auto}
REFINE=${REFINE:-0}
QUICK=${QUICK:-0}
DTYPE=${DTYPE:-f32}
case $DTYPE in
f32 | tf32) DEFAULT_SUITES="$ROOT/experiments/suites/paper.json $(printf '%s ' "$ROOT"/experiments/models/*.json)" ;;
f16 | bf16) DEFAULT_SUITES=$(printf '%s ' "$ROOT"/experiments/models/half/*_"$DTYPE".json) ;;
*)
    echo "bench-gpu: FAILED: DTYPE=$DTYPE (want f32, f16, bf16 or tf32)" >&2
    exit 1
    ;;
esac
SUITES=${SUITES:-$DEFAULT_SUITES}

cd "$ROOT" || exit 1
# ---- 1. build ------------------------------------------------------------------
${MAKE:-make} --no-print-directory -s BUILD="$BUILD" all "$BIN" || {
    echo "bench-gpu: FAILED: build" >&2
    exit 1
}

set -- --hw "$HW" --refine "$REFINE" --out "$OUT"
[ "$QUICK" = 1 ] && set -- "$@" --quick
[ "$DTYPE" = tf32 ] && set -- "$@" --tf32
# BENCH_GPU_ARGS and SUITES are word-split on purpose (option lists, file lists)
# shellcheck disable=SC2086
set -- "$@" $BENCH_GPU_ARGS

# ---- 2. is there a device? -------------------------------------------------------
if [ "${BENCH_GPU_SELF_TEST:-0}" = 1 ]; then
    # tests/bench_gpu_dry.sh: this script's plumbing without a device
    # (bench_gpu --self-test: interpreter outputs, synthetic times, said so).
    echo "bench-gpu: SELF-TEST: no device; outputs simulated, times synthetic"
    set -- "$@" --self-test
else
    # shellcheck disable=SC2086
    probe=$("$BIN" --probe $SUITES 2>&1)
    st=$?
    if [ $st -eq 3 ]; then
        printf '%s\n' "$probe" | grep -m1 'SKIPPED'
        exit 0
    elif [ $st -ne 0 ]; then
        printf '%s\n' "$probe" >&2
        echo "bench-gpu: FAILED: the device probe failed" >&2
        exit 1
    fi
    printf '%s\n' "$probe"
fi
mkdir -p "$OUT" || exit 1

# ---- 3. PyTorch --------------------------------------------------------------------
SPECS="$OUT/specs.tsv"
# shellcheck disable=SC2086
"$BIN" --list-specs "$@" $SUITES >"$SPECS" || {
    echo "bench-gpu: FAILED: cannot list the operators" >&2
    exit 1
}
# No TF32 anywhere a library might pick it up (torch_bench.py turns it off in
# PyTorch, bench_gpu sets CUBLAS_DEFAULT_MATH; this covers the rest), unless
# an operator asks for it: NVIDIA_TF32_OVERRIDE=0 would also turn
# CUBLAS_COMPUTE_32F_FAST_TF32 and PyTorch's allow_tf32 off.
if grep -q 'math=tf32' "$SPECS"; then
    echo "bench-gpu: math=tf32 operators: TF32 only where a spec says math=tf32"
else
    NVIDIA_TF32_OVERRIDE=0
    export NVIDIA_TF32_OVERRIDE
fi
TORCH_CSV="$OUT/torch.csv"
rm -f "$TORCH_CSV"
torch_note=""
if command -v python3 >/dev/null 2>&1; then
    echo "bench-gpu: PyTorch side ($(wc -l <"$SPECS") operators; progress on stderr)"
    msg=$(python3 "$ROOT/experiments/torch_bench.py" --specs "$SPECS" --out "$TORCH_CSV")
    tst=$?
    [ -n "$msg" ] && printf '%s\n' "$msg"
    if [ $tst -ne 0 ]; then
        torch_note=$(printf '%s\n' "$msg" | tail -1 | sed -e 's/^torch_bench: //')
        [ -n "$torch_note" ] || torch_note="torch_bench.py exited $tst"
        [ $tst -ne 3 ] && echo "bench-gpu: warning: torch_bench.py failed (exit $tst); PyTorch column n/a" >&2
        rm -f "$TORCH_CSV"
    fi
else
    torch_note="no python3"
fi

# ---- 4. gensor and cuBLAS ------------------------------------------------------------
echo
if [ -f "$TORCH_CSV" ]; then
    # shellcheck disable=SC2086
    "$BIN" "$@" --torch-csv "$TORCH_CSV" $SUITES
else
    # shellcheck disable=SC2086
    "$BIN" "$@" --torch-note "$torch_note" $SUITES
fi
st=$?
if [ "${BENCH_GPU_SELF_TEST:-0}" = 1 ]; then
    [ $st -eq 0 ] && echo "bench-gpu: SELF-TEST passed (no device was used)" || echo "bench-gpu: SELF-TEST FAILED" >&2
elif [ $st -eq 0 ]; then echo "bench-gpu: PASSED (every kernel built, ran and matched its reference)"
else echo "bench-gpu: FAILED (see ERROR/FAIL rows above)" >&2
fi
exit $st
