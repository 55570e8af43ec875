#!/bin/sh
# construct_time.sh — construction time per operator over the suite and model lists, and the
# predicted time of each pick, so that a change to the walk can be checked for speed and for
# the quality of its picks at once (make bench-construct).
#
#   sh experiments/construct_time.sh [BIN] [OUT.tsv]          measure, print the summary
#   sh experiments/construct_time.sh --diff BEFORE.tsv AFTER.tsv   picks that changed
#
# Every distinct spec of experiments/suites/*.json and experiments/models/*.json is
# constructed by `gensor suite --format json` (the CLI's defaults: markov, seed 1, conv form
# auto) on each profile, GS_CT_REPS times (default 3); an operator's construct_ms is the
# MINIMUM over the runs (the machine is shared: the minimum is the least disturbed figure).
# OUT.tsv (default build/construct_time.tsv) has one row per (profile, spec):
#   profile <TAB> spec <TAB> construct_ms <TAB> predicted_s <TAB> etir
# The summary gives the median, p90 and max of construct_ms per profile and over all rows,
# and the five slowest operators.
# --diff lists every (profile, spec) whose pick (etir) changed, with its predicted time
# before and after and the ratio, and counts the picks that got worse (ratio > 1 + 1e-9).
#
# The host's speed moves with its other tenants (by a quarter within an hour on the 2-vCPU
# VM), so the summary also prints a reference taken before and after the runs: the sum of
# construct_ms of the 51 operators of experiments/suites/paper.json on h100 on one worker
# (the minimum of 3). Two tables compare fairly when their references are close; a
# target can be stated against it.
# Knobs: GS_CT_PROFILES [h100 a100 rtx4090 rtx3090 orin-nano v100 t4], GS_CT_REPS [3],
#        GS_CT_FILES [experiments/suites/*.json experiments/models/*.json].
set -u

if [ "${1:-}" = "--diff" ]; then
    [ $# -eq 3 ] || { echo "usage: $0 --diff BEFORE.tsv AFTER.tsv" >&2; exit 2; }
    awk -F'\t' 'NR == FNR { k = $1 "\t" $2; pb[k] = $4; eb[k] = $5; next }
        { k = $1 "\t" $2; if (!(k in pb)) { printf "new   %s\n", k; next }
          seen[k] = 1
          if ($5 != eb[k] || $4 != pb[k]) {
              r = $4 / pb[k]; n++
              if (r > 1 + 1e-9) { worse++; tag = "WORSE" } else if (r < 1 - 1e-9) { better++; tag = "better" } else tag = "same"
              printf "%-6s %-9s %-60s %12.6g %12.6g %8.4f\n        before %s\n        after  %s\n", tag, $1, $2, pb[k] * 1e3, $4 * 1e3, r, eb[k], $5
          } }
        END { for (k in pb) if (!(k in seen)) printf "gone  %s\n", k
              printf "changed picks: %d (better %d, worse %d, same time %d)\n", n, better, worse, n - better - worse }' "$2" "$3"
    exit 0
fi

BIN=${1:-build/gensor}
OUT=${2:-build/construct_time.tsv}
PROFILES=${GS_CT_PROFILES:-h100 a100 rtx4090 rtx3090 orin-nano v100 t4}
REPS=${GS_CT_REPS:-3}
FILES=${GS_CT_FILES:-$(ls experiments/suites/*.json experiments/models/*.json)}
command -v jq >/dev/null || { echo "construct_time: needs jq" >&2; exit 2; }
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT INT TERM

# the host reference: the minimum over 3 runs of paper.json's summed construct_ms (h100, one worker)
reference() {
    best=
    for i in 1 2 3; do
        t=$("$BIN" suite experiments/suites/paper.json --hw h100 --threads 1 --format json 2>/dev/null |
            jq '[.ops[].construct_ms // 0] | add')
        case $t in '' | null) continue ;; esac
        best=$(awk -v a="$t" -v b="${best:-$t}" 'BEGIN { print (a < b ? a : b) }')
    done
    if [ -n "$best" ]; then awk -v b="$best" 'BEGIN { printf "%.0f\n", b }'; else echo unknown; fi
}
ref_before=$(reference)
for hw in $PROFILES; do
    for rep in $(seq "$REPS"); do
        for f in $FILES; do
            "$BIN" suite "$f" --hw "$hw" --format json 2>>"$tmp/err" |
                jq -r --arg hw "$hw" '.ops[] | select(.construct_ms != null) |
                    [$hw, .spec, (.construct_ms | tostring), (.predicted_s | tostring), .etir] | @tsv' >>"$tmp/rows" ||
                echo "construct_time: $f on $hw failed" >&2
        done
    done
done
[ -s "$tmp/err" ] && { echo "construct_time: stderr of the runs:" >&2; head -5 "$tmp/err" >&2; }

# one row per (profile, spec): the minimum time; the pick of the first row (seeded: all agree)
awk -F'\t' -v OFS='\t' '{ k = $1 "\t" $2
        if (!(k in t)) { order[++n] = k; t[k] = $3; p[k] = $4; e[k] = $5 }
        else { if ($3 + 0 < t[k] + 0) t[k] = $3; if ($5 != e[k]) bad[k] = 1 } }
    END { for (i = 1; i <= n; i++) { k = order[i]; print k, t[k], p[k], e[k]
              if (k in bad) print "construct_time: runs disagree on the pick of " k > "/dev/stderr" } }' \
    "$tmp/rows" >"$OUT"

stats() { # label < times: n, median, p90, max
    sort -g | awk -v l="$1" '{ a[NR] = $1 } END {
        if (!NR) exit
        m = NR % 2 ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2
        i = int(0.9 * NR + 0.999999); if (i < 1) i = 1
        printf "%-10s %5d %10.3f %10.3f %10.3f\n", l, NR, m, a[i], a[NR] }'
}
ref_after=$(reference)
echo "== construction time per operator, ms (min of $REPS runs; $(wc -l <"$OUT") (profile, spec) pairs; $OUT)"
echo "host reference (paper.json on h100, one worker, summed construct_ms, min of 3): $ref_before ms before, $ref_after ms after"
printf "%-10s %5s %10s %10s %10s\n" profile ops median p90 max
for hw in $PROFILES; do awk -F'\t' -v h="$hw" '$1 == h { print $3 }' "$OUT" | stats "$hw"; done
cut -f3 "$OUT" | stats all
echo "slowest:"
sort -t"$(printf '\t')" -k3,3gr "$OUT" | head -5 | awk -F'\t' '{ printf "  %8.3f ms  %-9s %s\n", $3, $1, $2 }'
