#!/bin/sh
# tests/calibrate_holdout.sh BUILD: calibrate's held-out mode (--holdout) on a
# small synthetic sweep in the CLBlast Xgemm format (so it runs without the
# measured data). Checks that
#  - two runs with the same seed print the same report and the same split;
#  - the split, as dumped from the copies the fitter and the held-out pricing
#    were given, never trains on a held-out row: in each fold the training and
#    held-out ids are disjoint and cover every row, and every row is held out
#    in exactly one fold;
#  - another seed deals other folds, and bad --folds / --seed / --start / --fix
#    values exit 2 with a message.
# With the measured data in ../shared/data the same split checks run on it.
set -eu
b=${1:-build}
cal=$b/calibrate
[ -x "$cal" ] || { echo "calibrate_holdout: $cal not built (make $cal)" >&2; exit 1; }
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT

# 64 configurations: work-group tiles 64/128, 8/16 threads per dim, A and B
# staged or not; times from a smooth formula with a deterministic wobble
echo "MWG,NWG,KWG,MDIMC,NDIMC,MDIMA,NDIMB,KWI,VWM,VWN,STRM,STRN,SA,SB,time_ms" >"$t/sweep.csv"
i=0
for mwg in 64 128; do for nwg in 64 128; do for md in 8 16; do for nd in 8 16; do
  for sa in 0 1; do for sb in 0 1; do
    i=$((i + 1))
    awk -v m=$mwg -v n=$nwg -v a=$md -v c=$nd -v sa=$sa -v sb=$sb -v i=$i 'BEGIN {
      tt = (m / a) * (n / c); ms = 6 + 200 / tt + 3 * (2 - sa - sb) + 0.002 * m * n / 64 + (i * 37 % 11) / 10
      printf "%d,%d,32,%d,%d,%d,%d,2,1,1,0,0,%d,%d,%.4f\n", m, n, a, c, a, c, sa, sb, ms }' >>"$t/sweep.csv"
  done; done
done; done; done; done

# the split as dumped: "label train|held id"; $2 rows in all
check_split() { # dump rows folds
  awk -v rows="$2" -v folds="$3" '
    $1 ~ /^fold/ { n[$1 " " $2 " " $3]++; role[$1, $3] = role[$1, $3] $2; if ($2 == "held") held[$3]++; f[$1] = 1 }
    END {
      bad = 0; nf = 0
      for (k in f) {
        nf++
        for (id = 0; id < rows; id++) {
          r = role[k, id]
          if (r != "train" && r != "held") { printf "%s: row %d is %s\n", k, id, (r == "" ? "missing" : "in both (" r ")"); bad = 1 }
        }
      }
      for (id = 0; id < rows; id++) if (held[id] != 1) { printf "row %d held out %d times\n", id, held[id]; bad = 1 }
      for (k in n) if (n[k] > 1) { printf "%s listed %d times\n", k, n[k]; bad = 1 }
      if (nf != folds) { printf "%d folds dumped, %d asked\n", nf, folds; bad = 1 }
      exit bad }' "$1"
}
fail() { echo "calibrate_holdout: FAIL: $*" >&2; exit 1; }

"$cal" --xgemm "$t/sweep.csv" --holdout --folds 4 --dump-split "$t/d1" >"$t/o1" || fail "holdout run exited $?"
"$cal" --xgemm "$t/sweep.csv" --holdout --folds 4 --dump-split "$t/d2" >"$t/o2" || fail "second run exited $?"
cmp -s "$t/o1" "$t/o2" || fail "two runs with one seed print different reports"
cmp -s "$t/d1" "$t/d2" || fail "two runs with one seed deal different splits"
grep -q '^held out: 4 folds' "$t/o1" || fail "no held-out table in the report"
grep -q '^xgemm-rtx3090 *48/16 ' "$t/o1" || fail "the held-out table does not train on 48 and hold out 16 rows per fold"
rows=$(grep -c '^fold0 ' "$t/d1")
[ "$rows" -eq 64 ] || fail "fold0 lists $rows rows, not 64"
check_split "$t/d1" 64 4 || fail "the split trains on a held-out row (above)"
"$cal" --xgemm "$t/sweep.csv" --holdout --folds 4 --seed 7 --dump-split "$t/d3" >/dev/null || fail "seed 7 run"
check_split "$t/d3" 64 4 || fail "the seed-7 split trains on a held-out row (above)"
cmp -s "$t/d1" "$t/d3" && fail "seeds 22 and 7 deal the same folds"
for bad in "--folds 1" "--folds x" "--seed -3" "--start middle" "--fix nosuch"; do
  # shellcheck disable=SC2086
  if "$cal" --xgemm "$t/sweep.csv" --holdout $bad >/dev/null 2>"$t/err"; then fail "'$bad' accepted"; fi
  [ -s "$t/err" ] || fail "'$bad' rejected without a message"
done

d=../shared/data
if [ -f $d/xgemm_rtx3090_4096.csv ] && [ -f $d/h100/fidelity_v1.csv ] && [ -f $d/h100/suite_v1.csv ]; then
  "$cal" --xgemm $d/xgemm_rtx3090_4096.csv --fidelity $d/h100/fidelity_v1.csv --suite $d/h100/suite_v1.csv \
    --holdout --dump-split "$t/dm" >/dev/null || fail "holdout on the measured data"
  n=$(grep -c '^fold0 ' "$t/dm")
  check_split "$t/dm" "$n" 5 || fail "the measured data's split trains on a held-out row (above)"
  # across GPUs: the H100 fit never sees an RTX 3090 row and the other way round
  nx=$(awk '$1 == "gpu-h100" && $2 == "held"' "$t/dm" | wc -l)
  ny=$(awk '$1 == "gpu-rtx3090" && $2 == "train"' "$t/dm" | wc -l)
  [ "$nx" -gt 0 ] && [ "$nx" -eq "$ny" ] || fail "the cross-GPU splits do not swap the sweep ($nx held, $ny trained)"
  awk '$1 ~ /^gpu/ { r[$1, $3] = r[$1, $3] $2 } END { for (k in r) if (r[k] != "train" && r[k] != "held") exit 1 }' \
    "$t/dm" || fail "a cross-GPU split lists a row twice"
  echo "calibrate_holdout: ok (synthetic 64 rows, 4 folds; measured $n rows, 5 folds and across GPUs)"
else
  echo "calibrate_holdout: ok (synthetic 64 rows, 4 folds; measured data not found under $d)"
fi
