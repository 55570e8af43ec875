#!/bin/sh
# make check-gpu: the CUDA path end to end on a real device.
#
#   sh experiments/check_gpu.sh [build/gensor]
#
# 1. probe: `gensor construct ... --hw auto --backend cuda --refine 3` opens the
#    device (gs_cuda_open), reads its profile and refines 3 candidates with
#    NVRTC cubins and event-timed launches. Without a device it prints
#    "check-gpu: SKIPPED: no CUDA device (...)" and exits 0.
# 2. refinement: the same on a larger GEMM, showing predicted vs measured.
# 3. cuBLAS: experiments/cublas_check.c (built by make, or here on demand
#    against libgensor.a, with experiments/cuda_host.c) verifies the constructed (and refined) kernels of the
#    suite's GEMMs against cublasSgemm_v2 and tabulates our time vs cuBLAS.
# 4. typed operators (issue 18; experiments/check_gpu_typed.json: f16, bf16
#    and math=tf32 gemm, an f16 conv, an f16 gemv): `gensor verify --backend
#    cuda` on each (typed buffers, the reference's per-type bound), then
#    build/bench_gpu on the list: typed device buffers, the GEMMs checked and
#    timed against cublasGemmEx (CUDA_R_16F / CUDA_R_16BF, CUBLAS_COMPUTE_32F;
#    CUBLAS_COMPUTE_32F_FAST_TF32 for math=tf32), the others against the
#    interpreter. Written without a GPU at hand: until a lent one runs it,
#    only the skip path and bench_gpu's dry run and self-test are exercised.
# Exit status: 0 (pass or skipped), 1 a failure.
BIN=${1:-build/gensor}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD_DIR=$(cd "$(dirname "$BIN")" && pwd)
SUITE="$ROOT/experiments/suites/paper.json"

if [ ! -x "$BIN" ]; then
    echo "check-gpu: error: $BIN not found (run make first)" >&2
    exit 1
fi

# ---- 1. is there a device? ---------------------------------------------------
probe=$("$BIN" construct 'gemm M=256 N=256 K=256' --hw auto --backend cuda --refine 3 --emit json 2>&1)
status=$?
if [ $status -ne 0 ]; then
    line=$(printf '%s\n' "$probe" | grep -m1 'no CUDA device')
    if [ -n "$line" ]; then
        # "gensor: error: no CUDA device: measurement-free mode (why)" -> (why)
        why=$(printf '%s\n' "$line" | sed -e 's/^.*measurement-free mode *//')
        [ -n "$why" ] || why="(gs_cuda_open failed)"
        echo "check-gpu: SKIPPED: no CUDA device $why"
        exit 0
    fi
    echo "check-gpu: FAILED: the CUDA probe failed:" >&2
    printf '%s\n' "$probe" >&2
    exit 1
fi
echo "check-gpu: CUDA device found; probe refinement:"
printf '%s\n' "$probe" | sed -n '/^refine/,/^$/p' | sed -n '1,12p'

rc=0
# refine_step TITLE WHAT LINES ARGS...: run `gensor ARGS`, show the LINES (a sed
# address) of its output; on a failure show its tail and name WHAT.
refine_step() {
    title=$1 what=$2 lines=$3
    shift 3
    echo
    echo "check-gpu: $title"
    out=$("$BIN" "$@" 2>&1)
    st=$?
    printf '%s\n' "$out" | sed -n "${lines}p"
    if [ $st -ne 0 ]; then
        printf '%s\n' "$out" | tail -3 >&2
        echo "check-gpu: FAILED: $what" >&2
        rc=1
    fi
}
# ---- 2. refinement on a real size ---------------------------------------------
refine_step "refinement (top 4, 200 ms budget) on the device's own profile" "refinement" '1,/^$/' \
    construct 'gemm M=4096 N=4096 K=4096' --hw auto --backend cuda --refine 4 --emit opencl
refine_step "refinement against a named profile (rtx4090 predictions, measured here)" \
    "refinement (named profile)" '/^refine/,/^$/' \
    construct 'gemm M=1024 N=2304 K=768 transB=1' --hw rtx4090 --backend cuda --refine 3

# ---- 3. cuBLAS comparison ----------------------------------------------------------
CHECK="$BUILD_DIR/cublas_check"
if [ ! -x "$CHECK" ] || [ "$ROOT/experiments/cublas_check.c" -nt "$CHECK" ] || [ "$ROOT/experiments/cuda_host.c" -nt "$CHECK" ] ||
   [ "$BUILD_DIR/libgensor.a" -nt "$CHECK" ]; then
    echo
    echo "check-gpu: building $CHECK"
    ${CC:-cc} -O2 -std=c11 -Wall -Wextra -D_POSIX_C_SOURCE=200809L -D_DEFAULT_SOURCE -I"$ROOT" -I"$ROOT/include" \
        "$ROOT/experiments/cublas_check.c" "$ROOT/experiments/cuda_host.c" "$BUILD_DIR/libgensor.a" -o "$CHECK" \
        -lgsl -lgslcblas -ljansson -lOpenCL -ldl -lm || { echo "check-gpu: FAILED: cannot build cublas_check" >&2; exit 1; }
fi
echo
echo "check-gpu: constructed GEMMs vs cuBLAS (suite $SUITE)"
if ! "$CHECK" --hw auto --refine 3 --reps 10 --suite "$SUITE" \
        'gemm M=257 N=127 K=31 transA=1 alpha=1.5 beta=0.5' 'gemm M=1000 N=7 K=1000 transB=1' \
        'gemm M=2048 N=2304 K=768 transB=1'; then
    echo "check-gpu: FAILED: cuBLAS comparison" >&2
    rc=1
fi

# ---- 4. typed operators ---------------------------------------------------------------
TYPED="$ROOT/experiments/check_gpu_typed.json"
BENCH="$BUILD_DIR/bench_gpu"
if [ ! -x "$BENCH" ]; then
    echo "check-gpu: FAILED: $BENCH not built (make check-gpu builds it)" >&2
    rc=1
elif ! "$BENCH" --list-specs "$TYPED" >"$BUILD_DIR/check-gpu-typed.tsv"; then
    echo "check-gpu: FAILED: cannot read $TYPED" >&2
    rc=1
else
    # the list's canonical specs (column 2), each verified on the device
    while IFS="$(printf '\t')" read -r _cls spec _shapes; do
        refine_step "verify on the device: $spec" "typed verify ($spec)" '1,$' verify "$spec" --hw auto --backend cuda --top 2
    done <"$BUILD_DIR/check-gpu-typed.tsv"
    echo
    echo "check-gpu: typed operators vs cublasGemmEx (bench_gpu, $TYPED)"
    if ! "$BENCH" --hw auto --refine 3 --out "$BUILD_DIR/check-gpu-typed" "$TYPED"; then
        echo "check-gpu: FAILED: typed operators (bench_gpu)" >&2
        rc=1
    fi
fi
[ $rc -eq 0 ] && echo "check-gpu: PASSED"
exit $rc
