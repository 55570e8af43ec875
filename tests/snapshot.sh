#!/bin/sh
# tests/snapshot.sh GENSOR OUTDIR [PROFILES...]: the construction table and the
# emitted kernel (CUDA and OpenCL) of every operator of the suite and model
# lists, for each profile (default: every built-in one), into
# OUTDIR/<hw>/<spec-hash>.{cuda,opencl}, the wall-clock line removed. Two
# snapshots are compared with `diff -r`: a refactor must leave them
# byte-identical, or explain each difference.
set -eu
bin=$1; out=$2; shift 2
profiles=${*:-"h100 a100 rtx4090 rtx3090 orin-nano v100 t4"}
specs=$(mktemp)
python3 - >"$specs" <<'PY'
import glob, json
seen = []
for f in sorted(glob.glob('experiments/suites/*.json') + glob.glob('experiments/models/*.json')):
    for o in json.load(open(f))['ops']:
        if o['spec'] not in seen: seen.append(o['spec'])
print('\n'.join(seen))
PY
for hw in $profiles; do
  mkdir -p "$out/$hw"
  while IFS= read -r spec; do
    h=$(printf '%s' "$spec" | sha1sum | cut -c1-12)
    for d in cuda opencl; do
      { "$bin" construct "$spec" --hw "$hw" --top 2 --emit $d 2>&1 || echo "exit $?"; } \
        | sed -E 's/^construct +[0-9.]+ ms/construct _ ms/' >"$out/$hw/$h.$d"
    done
  done <"$specs"
done
rm -f "$specs"
echo "snapshot: $(ls "$out"/*/*.cuda | wc -l) operator x profile pairs in $out"
# the model's own outputs, when built (make build/plans_bench build/calibrate)
b=$(dirname "$bin")
[ -x "$b/plans_bench" ] && "$b/plans_bench" --hw h100 >"$out/plans_bench.txt" 2>&1
[ -x "$b/calibrate" ] && [ -d ../shared/data ] && "$b/calibrate" --xgemm ../shared/data/xgemm_rtx3090_4096.csv \
  --fidelity ../shared/data/h100/fidelity_v1.csv --suite ../shared/data/h100/suite_v1.csv >"$out/calibrate.txt" 2>&1
exit 0
