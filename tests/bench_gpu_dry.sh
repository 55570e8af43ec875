#!/bin/sh
# make bench-gpu without a GPU: everything bench_gpu and its scripts do short
# of device work. Usage: sh tests/bench_gpu_dry.sh [BUILD_DIR] (default build)
#  1. no device: `SKIPPED: no CUDA device (...)`, exit 0, nothing written
#     (GS_CUDA_LIB points nowhere, so this holds on a GPU machine too);
#  2. the hand-written driver/cuBLAS declarations of experiments/cuda_host.h
#     against the toolkit's cuda.h and cublas_v2.h (when installed);
#  3. --dry-run on tests/data/bench_gpu_small.json (every class, transposes,
#     epilogues, layouts, windows) and a model list sharing its specs:
#     constructed, emitted and compiled by NVRTC for sm_90, deduplicated, CSV
#     and JSON written;
#  4. the script end to end in its self-test mode: bench_gpu --self-test
#     (checks pass exact outputs and fail corrupted ones; gemm/bgemm/gemv go
#     through ch_blas_run into tests/fake_cublas.c, a column-major reference
#     BLAS), torch_bench.py on tests/fake_torch (shape-only PyTorch), the CSV
#     join, geomeans and per-list sums;
#  4b. typed operators (issue 18; and a half GEMM built as an mma kernel,
#     issue 20; tests/data/bench_gpu_half.json: f16, bf16,
#     f16 in / f32 out and math=tf32 in every class): dry run, then
#     --self-test: the fake cuBLAS reads and writes the buffers in the types
#     cublasGemmEx / cublasGemmStridedBatchedEx are told (CUDA_R_16F = 2,
#     CUDA_R_16BF = 14, CUBLAS_COMPUTE_32F = 68, _FAST_TF32 = 77), so f32
#     buffers handed to a typed operator, or a wrong cuBLAS type, fail the
#     check; its call log must name exactly the expected types. The script
#     with DTYPE=tf32 (--tf32) on the small list, and fake PyTorch's dtypes;
#  5. torch_bench.py --self-test on every operator of the real lists (the
#     half ones included), and its "no PyTorch" exit;
#  6. bad lists: exit 2.
BUILD=${1:-build}
BIN="$BUILD/bench_gpu"
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT" || exit 1
SMALL=tests/data/bench_gpu_small.json
MODEL=tests/data/bench_gpu_model.json
HALF=tests/data/bench_gpu_half.json
pass=0
fail=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
ok() { pass=$((pass + 1)); }
bad() {
    echo "FAIL: $*"
    fail=$((fail + 1))
}
# has FILE PATTERN WHAT: FILE contains a line matching the extended regex
has() { if grep -Eq -- "$2" "$1"; then ok; else bad "$3 (no line matching '$2' in $(basename "$1"))"; fi; }
t0=$(date +%s)

# ---- 1. no device ------------------------------------------------------------------
GS_CUDA_LIB="$tmp/nolib.so" "$BIN" --out "$tmp/skip" "$SMALL" >"$tmp/skip.txt" 2>&1
rc=$?
[ $rc -eq 0 ] && ok || bad "no device: exit $rc, want 0"
[ "$(wc -l <"$tmp/skip.txt")" -eq 1 ] && ok || bad "no device: more than the SKIPPED line"
has "$tmp/skip.txt" '^bench-gpu: SKIPPED: no CUDA device \(.*nolib\.so.*\)$' "no device"
[ ! -e "$tmp/skip" ] && ok || bad "no device: an output directory was written"
GS_CUDA_LIB="$tmp/nolib.so" "$BIN" --probe >/dev/null 2>&1
rc=$?
[ $rc -eq 3 ] && ok || bad "--probe without a device: exit $rc, want 3"
GS_CUDA_LIB="$tmp/nolib.so" SUITES="$SMALL" BENCH_GPU_OUT="$tmp/skip2" sh experiments/bench_gpu.sh "$BUILD" >"$tmp/skip2.txt" 2>&1
rc=$?
[ $rc -eq 0 ] && ok || bad "bench_gpu.sh without a device: exit $rc, want 0"
has "$tmp/skip2.txt" '^bench-gpu: SKIPPED: no CUDA device \(' "bench_gpu.sh without a device"
[ ! -e "$tmp/skip2" ] && ok || bad "bench_gpu.sh without a device wrote $tmp/skip2"

# ---- 2. declarations against the toolkit's headers -----------------------------------
CUDA_INC=${CUDA_HOME:-/usr/local/cuda}/include
if [ -f "$CUDA_INC/cublas_v2.h" ] && [ -f "$CUDA_INC/cuda.h" ]; then
    if ${CC:-cc} -std=c11 -Wall -Wextra -Werror -fsyntax-only -D_POSIX_C_SOURCE=200809L -D_DEFAULT_SOURCE \
        -DCH_CHECK_HEADERS -I. -Iinclude -I"$CUDA_INC" experiments/cuda_host.c 2>"$tmp/hdr.txt"; then ok
    else
        bad "cuda_host.h declarations disagree with $CUDA_INC:"
        head -5 "$tmp/hdr.txt"
    fi
else
    echo "bench_gpu_dry: note: no cuda.h/cublas_v2.h under $CUDA_INC; declaration check skipped"
fi

# ---- 3. dry run --------------------------------------------------------------------------
"$BIN" --dry-run --arch 90 --out "$tmp/dry" "$SMALL" "$MODEL" >"$tmp/dry.txt" 2>&1
rc=$?
[ $rc -eq 0 ] && ok || { bad "dry run: exit $rc"; tail -5 "$tmp/dry.txt"; }
has "$tmp/dry.txt" '^operators 22 distinct of 25 entries in 2 lists' "dry run: deduplication"
if grep -q 'NVRTC unavailable' "$tmp/dry.txt"; then
    echo "bench_gpu_dry: note: NVRTC missing; kernels emitted, not compiled"
else
    has "$tmp/dry.txt" 'cubins for sm_90' "dry run: sm_90 cubins"
    has "$tmp/dry.txt" '22 of 22 kernels built' "dry run: every kernel compiled"
    n=$(grep -c ',90,cubin,' "$tmp/dry/results.csv")
    [ "$n" -eq 22 ] && ok || bad "dry run: $n CSV rows compiled for sm_90, want 22"
fi
[ "$(grep -c '^[0-9]' "$tmp/dry/results.csv")" -eq 22 ] && ok || bad "dry run: CSV rows"
has "$tmp/dry/summary.json" '"dry_run": true' "dry run: summary.json"
has "$tmp/dry.txt" '^ +22 +reduce +f32 +[0-9.]+ +- +- +- ' "dry run: table skeleton with '-' times"

# ---- 4. the script, self-test mode (fake cuBLAS, fake PyTorch) -----------------------------
if ${CC:-cc} -shared -fPIC -O1 -Wall -Wextra -Werror -o "$tmp/libfakecublas.so" tests/fake_cublas.c; then
    export GS_CUBLAS_LIB="$tmp/libfakecublas.so"
    GS_FAKE_CUBLAS_LOG="$tmp/blas-f32.log" PYTHONDONTWRITEBYTECODE=1 PYTHONPATH="$ROOT/tests/fake_torch" BENCH_GPU_SELF_TEST=1 SUITES="$SMALL $MODEL" BENCH_GPU_OUT="$tmp/st" \
        sh experiments/bench_gpu.sh "$BUILD" >"$tmp/st.txt" 2>"$tmp/st.err"
    rc=$?
    unset GS_CUBLAS_LIB
    [ $rc -eq 0 ] && ok || { bad "self-test: exit $rc"; tail -5 "$tmp/st.txt" "$tmp/st.err"; }
    has "$tmp/st.txt" '^SELF-TEST: no device' "self-test banner"
    has "$tmp/st.txt" '^checks: 22 PASS, 0 FAIL, 0 unchecked, 0 ERROR' "self-test: checks"
    [ "$(grep -Ec '^ +[0-9]+ +(gemm|bgemm|gemv) .*PASS cuBLAS' "$tmp/st.txt")" -eq 9 ] && ok ||
        bad "self-test: 9 gemm/bgemm/gemv rows should pass against the cuBLAS double"
    has "$tmp/st.txt" '^gemm +4 +2\.000 ' "self-test: ours/cuBLAS geomean of gemm"
    if command -v python3 >/dev/null 2>&1; then
        has "$tmp/st.txt" '^PyTorch +torch 0\.0-fake.*\(22 operators joined\)' "self-test: torch CSV joined"
        has "$tmp/st.txt" '^all +9 +2\.000 +22 +1\.000$' "self-test: overall geomeans"
        has "$tmp/st.txt" '^bench_gpu_model +3 +9 +9\.0000 +9\.0000 +1\.000$' "self-test: time x count"
    fi
    [ ! -s "$tmp/blas-f32.log" ] && ok || bad "self-test: f32 operators called a typed cuBLAS entry point"

    # ---- 4b. typed operators ----
    "$BIN" --dry-run --arch 90 --out "$tmp/hdry" "$HALF" >"$tmp/hdry.txt" 2>&1
    rc=$?
    [ $rc -eq 0 ] && ok || { bad "typed dry run: exit $rc"; tail -5 "$tmp/hdry.txt"; }
    grep -q 'NVRTC unavailable' "$tmp/hdry.txt" || has "$tmp/hdry.txt" '15 of 15 kernels built' "typed dry run: every kernel compiled"
    [ "$(grep -c '^[0-9]*,gemm,f16,f32,f32,' "$tmp/hdry/results.csv")" -eq 1 ] && ok || bad "typed dry run: CSV dtype,out_dtype,math columns"
    # the tensor cores flow through (issue 20): a half GEMM large enough for
    # them is constructed, emitted and compiled as an mma kernel, no spills
    printf '{"name": "mma_flow", "ops": [{"name": "g512", "spec": "gemm M=512 N=512 K=512 dtype=f16", "count": 1}]}\n' \
        >"$tmp/mma.json"
    "$BIN" --dry-run --arch 90 --out "$tmp/mdry" "$tmp/mma.json" >"$tmp/mdry.txt" 2>&1
    [ "$(grep -c '^1,gemm,f16,f16,f32,.* mma[0-9]' "$tmp/mdry/results.csv" 2>/dev/null)" -eq 1 ] && ok ||
        bad "dry run: gemm 512^3 f16 was not built with mma: $(sed -n 2p "$tmp/mdry/results.csv" 2>/dev/null | cut -c1-200)"
    grep -q 'NVRTC unavailable' "$tmp/mdry.txt" || has "$tmp/mdry.txt" '1 of 1 kernels built' "mma dry run: compiled"
    GS_CUBLAS_LIB="$tmp/libfakecublas.so" GS_FAKE_CUBLAS_LOG="$tmp/blas-half.log" \
        "$BIN" --self-test --out "$tmp/hst" "$HALF" >"$tmp/hst.txt" 2>&1
    rc=$?
    [ $rc -eq 0 ] && ok || { bad "typed self-test: exit $rc"; grep -E 'FAIL|note' "$tmp/hst.txt" | head -5; }
    has "$tmp/hst.txt" '^checks: 15 PASS, 0 FAIL, 0 unchecked, 0 ERROR' "typed self-test: checks"
    [ "$(grep -Ec '^ +[0-9]+ +(gemm|bgemm|gemv) +(f16|bf16|f16>f32|tf32) .*PASS cuBLAS' "$tmp/hst.txt")" -eq 9 ] && ok ||
        bad "typed self-test: 9 typed gemm/bgemm/gemv rows should pass against the cuBLAS double"
    has "$tmp/hst.txt" '^ +10 +conv2d +f16 .*PASS self-test' "typed self-test: type column"
    has "$tmp/hst.txt" '^all:f16 +3 +2\.000 ' "typed self-test: geomean per type (f16)"
    has "$tmp/hst.txt" '^all:tf32 +2 +2\.000 ' "typed self-test: geomean per type (tf32)"
    # which types cuBLAS was asked for: one call per typed gemm/bgemm/gemv row
    for want in "GemmEx A=2 B=2 C=2 compute=68:2" "GemmEx A=14 B=14 C=14 compute=68:2" \
        "GemmEx A=2 B=2 C=0 compute=68:1" "GemmEx A=0 B=0 C=0 compute=77:1" \
        "GemmStridedBatchedEx A=2 B=2 C=2 compute=68:1" "GemmStridedBatchedEx A=14 B=14 C=14 compute=68:1" \
        "GemmStridedBatchedEx A=0 B=0 C=0 compute=77:1"; do
        n=$(grep -cx "${want%:*}" "$tmp/blas-half.log" 2>/dev/null)
        [ "${n:-0}" -eq "${want##*:}" ] && ok || bad "typed self-test: ${n:-0} cuBLAS calls '${want%:*}', want ${want##*:}"
    done
    [ "$(wc -l <"$tmp/blas-half.log")" -eq 9 ] && ok || bad "typed self-test: $(wc -l <"$tmp/blas-half.log") typed cuBLAS calls, want 9"
    # the script, DTYPE=tf32: gemm and bgemm (not gemv) of the small list in TF32
    GS_CUBLAS_LIB="$tmp/libfakecublas.so" GS_FAKE_CUBLAS_LOG="$tmp/blas-tf32.log" PYTHONDONTWRITEBYTECODE=1 PYTHONPATH="$ROOT/tests/fake_torch" BENCH_GPU_SELF_TEST=1 \
        DTYPE=tf32 SUITES="$SMALL" BENCH_GPU_OUT="$tmp/tst" sh experiments/bench_gpu.sh "$BUILD" >"$tmp/tst.txt" 2>"$tmp/tst.err"
    rc=$?
    [ $rc -eq 0 ] && ok || { bad "DTYPE=tf32 self-test: exit $rc"; tail -5 "$tmp/tst.txt" "$tmp/tst.err"; }
    [ "$(grep -Ec '^ +[0-9]+ +(gemm|bgemm) +tf32 .*PASS cuBLAS' "$tmp/tst.txt")" -eq 7 ] && ok || bad "DTYPE=tf32: 7 tf32 gemm/bgemm rows"
    [ "$(grep -Ec '^Gemm(StridedBatched)?Ex A=0 B=0 C=0 compute=77$' "$tmp/blas-tf32.log")" -eq 7 ] && ok ||
        bad "DTYPE=tf32: want 7 FAST_TF32 cuBLAS calls"
    has "$tmp/tst.txt" '^bench-gpu: math=tf32 operators' "DTYPE=tf32: NVIDIA_TF32_OVERRIDE left unset"
    if command -v python3 >/dev/null 2>&1; then
        has "$tmp/tst.txt" '^PyTorch +torch 0\.0-fake.*\(22 operators joined\)' "DTYPE=tf32: torch CSV joined"
        "$BIN" --list-specs "$HALF" >"$tmp/hspecs.tsv"
        PYTHONDONTWRITEBYTECODE=1 PYTHONPATH="$ROOT/tests/fake_torch" python3 experiments/torch_bench.py --specs "$tmp/hspecs.tsv" \
            --out "$tmp/ht.csv" >/dev/null 2>&1
        [ "$(grep -c ',ok,' "$tmp/ht.csv" 2>/dev/null)" -eq 15 ] && ok || bad "torch_bench on typed specs (fake PyTorch, dtypes checked)"
    fi
    DTYPE=f8 SUITES="$SMALL" sh experiments/bench_gpu.sh "$BUILD" >/dev/null 2>"$tmp/dt.err"
    [ $? -eq 1 ] && grep -q 'DTYPE=f8' "$tmp/dt.err" && ok || bad "DTYPE=f8 accepted"
else
    bad "cannot build tests/fake_cublas.c"
fi

# ---- 5. torch_bench.py -------------------------------------------------------------------------
if command -v python3 >/dev/null 2>&1; then
    "$BIN" --list-specs experiments/suites/paper.json experiments/models/*.json experiments/models/half/*.json >"$tmp/specs.tsv"
    python3 experiments/torch_bench.py --specs "$tmp/specs.tsv" --self-test >"$tmp/tself.txt" 2>&1
    rc=$?
    [ $rc -eq 0 ] && ok || { bad "torch_bench --self-test: exit $rc"; tail -3 "$tmp/tself.txt"; }
    has "$tmp/tself.txt" '^torch_bench self-test: 445 operators planned, 0 mismatches$' "torch_bench plans"
    if ! python3 -c 'import torch' >/dev/null 2>&1; then
        python3 experiments/torch_bench.py --specs "$tmp/specs.tsv" --out "$tmp/t.csv" >"$tmp/tno.txt" 2>&1
        rc=$?
        [ $rc -eq 3 ] && ok || bad "torch_bench without torch: exit $rc, want 3"
        has "$tmp/tno.txt" '^torch_bench: PyTorch not available' "torch_bench without torch"
    fi
else
    echo "bench_gpu_dry: note: no python3; torch_bench.py not exercised"
fi

# ---- 6. bad input ---------------------------------------------------------------------------------
printf '{"name": "x", "ops": [{"name": "a", "spec": "gemm M=4 N=4", "count": 1}]}\n' >"$tmp/badspec.json"
printf '{"name": "x", "ops": [{"name": "a", "spec": "relu M=4 N=4", "count": 0}]}\n' >"$tmp/badcount.json"
for f in "$tmp/badspec.json" "$tmp/badcount.json" "$tmp/missing.json"; do
    "$BIN" --dry-run "$f" >/dev/null 2>"$tmp/err.txt"
    rc=$?
    [ $rc -eq 2 ] && [ "$(wc -l <"$tmp/err.txt")" -eq 1 ] && ok || bad "bad list $(basename "$f"): exit $rc, want 2 with one line"
done
"$BIN" --dry-run --refine x "$SMALL" >/dev/null 2>&1
[ $? -eq 2 ] && ok || bad "bad --refine value accepted"

echo "bench_gpu_dry: $pass passed, $fail failed ($(($(date +%s) - t0)) s)"
[ $fail -eq 0 ]
