#!/bin/sh
# tests/nvrtc_types.sh GENSOR [PROFILES...]: every operator of the paper
# suite in f16 and in bf16, constructed for each profile (default: the 7
# built-in ones, T4's sm_75 included), its top candidate compiled by NVRTC
# for the profile's arch (construct --nvrtc). Prints one line per failure
# (a compile error, or spills) and a summary; exits 1 on any.
set -u
bin=$1; shift
profiles=${*:-"h100 a100 rtx4090 rtx3090 orin-nano v100 t4"}
specs=$(mktemp)
python3 -c "
import json
for o in json.load(open('experiments/suites/paper.json'))['ops']: print(o['spec'])" >"$specs"
n=0; bad=0
for hw in $profiles; do
  for t in f16 bf16; do
    while IFS= read -r spec; do
      n=$((n + 1))
      out=$("$bin" construct "$spec dtype=$t" --hw "$hw" --top 1 --nvrtc --format json 2>&1)
      rc=$?
      spill=$(printf '%s\n' "$out" | sed -n 's/.*"ptxas_spill_bytes": \([0-9]*\).*/\1/p' | head -1)
      if [ $rc -ne 0 ] || [ -z "$spill" ]; then
        echo "FAIL $hw $t: $spec: exit $rc: $(printf '%s\n' "$out" | grep -m1 -i error)"; bad=$((bad + 1))
      elif [ "$spill" -ne 0 ]; then
        echo "SPILL $hw $t: $spec: $spill bytes"; bad=$((bad + 1))
      fi
    done <"$specs"
  done
done
rm -f "$specs"
echo "nvrtc_types: $n compiled, $bad failed or spilled"
[ "$bad" -eq 0 ]
