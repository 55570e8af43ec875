#!/bin/sh
# tests/nvrtc_mma.sh GENSOR [--quick]: the tensor-core compile sweep of issue 20
# (make check-nvrtc-mma; the quick form runs in make test).
#
# Every GEMM, batched GEMM and convolution of the paper suite, in f16, bf16
# and tf32 (f32 tensors with math=tf32), is constructed for each sm_80+
# profile (a100 sm_80, rtx3090 sm_86, orin-nano sm_87, rtx4090 sm_89, h100
# sm_90), and in f16 for the t4 (sm_75). The top candidate is compiled by
# NVRTC for the profile's arch (construct --nvrtc): each must compile with
# 0 spill bytes. The line of each case says whether the walk picked mma
# (its config holds mma=). Then gemm 4096^3 in f16 and bf16 must pick mma on
# every sm_80+ profile and compile without spills; that is what --quick runs
# (on a100 and h100 only), plus gemm 4096^3 f16 on the t4.
#
# GS_NVRTC_MMA_PROFILES (default the six above) and GS_NVRTC_MMA_CLASSES
# (default "gemm bgemm conv2d") narrow the full sweep.
#
# Without NVRTC the sweep says SKIPPED and exits 0 (the CUDA source is then
# never compiled here; tests/test_nvrtc.c says the same). Exit 1 on any
# failure, spill, or a gemm 4096^3 that did not pick mma.
set -u
bin=$1
quick=0
[ "${2:-}" = "--quick" ] && quick=1
specs=$(mktemp)
trap 'rm -f "$specs"' EXIT
n=0; bad=0; mma=0

# run HW SPEC MUST_MMA: construct, compile, check spills (and the mma pick)
run() {
  n=$((n + 1))
  out=$("$bin" construct "$2" --hw "$1" --top 1 --nvrtc --format json 2>&1)
  rc=$?
  if printf '%s\n' "$out" | grep -q "NVRTC library not available"; then
    echo "nvrtc_mma: SKIPPED: NVRTC library not available"; exit 0
  fi
  spill=$(printf '%s\n' "$out" | sed -n 's/.*"ptxas_spill_bytes": \([0-9]*\).*/\1/p' | head -1)
  cfg=$(printf '%s\n' "$out" | sed -n 's/.*"config": "\([^"]*\)".*/\1/p' | head -1)
  picked=no
  case "$cfg" in *mma=*) picked=yes; mma=$((mma + 1)) ;; esac
  if [ $rc -ne 0 ] || [ -z "$spill" ]; then
    echo "FAIL $1: $2: exit $rc: $(printf '%s\n' "$out" | grep -m1 -i error)"; bad=$((bad + 1))
  elif [ "$spill" -ne 0 ]; then
    echo "SPILL $1: $2: $spill bytes ($cfg)"; bad=$((bad + 1))
  elif [ "$3" = 1 ] && [ $picked = no ]; then
    echo "NO-MMA $1: $2: the walk picked $cfg"; bad=$((bad + 1))
  else
    echo "ok $1: $2: mma $picked, 0 spills ($cfg)"
  fi
}

if [ $quick = 0 ]; then
  python3 -c "
import json, sys
for o in json.load(open('experiments/suites/paper.json'))['ops']:
    if o['spec'].split()[0] in sys.argv[1].split(): print(o['spec'])" "${GS_NVRTC_MMA_CLASSES:-gemm bgemm conv2d}" |
    sort -u >"$specs"
  for hw in ${GS_NVRTC_MMA_PROFILES:-a100 rtx3090 orin-nano rtx4090 h100 t4}; do
    types="dtype=f16 dtype=bf16 math=tf32"
    [ $hw = t4 ] && types="dtype=f16"
    for t in $types; do
      while IFS= read -r spec; do run $hw "$spec $t" 0; done <"$specs"
    done
  done
  must="a100 rtx3090 orin-nano rtx4090 h100"
else
  must="a100 h100"
fi
for hw in $must; do
  for t in f16 bf16; do run $hw "gemm M=4096 N=4096 K=4096 dtype=$t" 1; done
done
run t4 "gemm M=4096 N=4096 K=4096 dtype=f16" 0
echo "nvrtc_mma: $n compiled, $mma picked mma, $bad failed, spilled or missed mma"
[ "$bad" -eq 0 ]
