#!/bin/sh
# sass_audit.sh — the static SASS of the picks, against the model's instruction count.
#
#   sh experiments/sass_audit.sh [BIN] [OUT.tsv]        BIN build/gensor, OUT build/sass_audit.tsv
#
# For every distinct spec of experiments/suites/*.json and experiments/models/*.json, in
# each type of GS_SA_TYPES, on each profile of GS_SA_PROFILES, the pick (rank 0, seed 1)
# is compiled with NVRTC for the profile's arch and read with cuobjdump
# (`gensor construct --sass --format json`; make sass-tools). One row per (profile, type,
# spec):
#   profile type spec etir predicted_ms bound steady_instr hmma ffma
#   sass_per_math model_per_math ratio tensor_clocks_per_hmma int_addr near near_no_math
#   ldl stl
# sass_per_math is the steady state's instructions per HMMA (per FFMA on the FFMA core),
# model_per_math the model's count of the same plan's full tile
# (gs_model_issue_per_math), ratio their quotient (docs/MODEL.md). Where
# sass_per_math exceeds tensor_clocks_per_hmma, the tensor pipe waits on issue in the
# warp's own loop. near counts the shared loads under 20 slots before their use,
# near_no_math those with no FFMA or HMMA between (of the first 8 listed). The summary prints each type and
# operator class's median ratio and range, and the tensor-core picks that issue more
# slots per HMMA than the tensor pipe takes clocks.
#
# Types: f32 (the specs as written), f16 (dtype=f16) and tf32 (math=tf32); f16 and tf32
# only for conv2d, gemm and bgemm (the operators with a tensor-core row). A pair whose
# construction or compile fails is listed in the summary and left out.
# Knobs: GS_SA_PROFILES [h100 a100], GS_SA_TYPES [f32 f16 tf32],
#        GS_SA_FILES [experiments/suites/*.json experiments/models/*.json]. Needs jq,
#        NVRTC and cuobjdump; about 3 s a pair (the default is about 1100 pairs).
set -u
BIN=${1:-build/gensor}
OUT=${2:-build/sass_audit.tsv}
PROFILES=${GS_SA_PROFILES:-h100 a100}
TYPES=${GS_SA_TYPES:-f32 f16 tf32}
FILES=${GS_SA_FILES:-$(ls experiments/suites/*.json experiments/models/*.json)}
command -v jq >/dev/null || { echo "sass_audit: needs jq" >&2; exit 2; }
[ -x "$BIN" ] || { echo "sass_audit: no executable $BIN (run make)" >&2; exit 2; }
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT INT TERM

# the distinct specs, in file order
for f in $FILES; do jq -r '.ops[].spec' "$f"; done | awk '!seen[$0]++' >"$tmp/specs"
: >"$OUT"
: >"$tmp/failed"
for hw in $PROFILES; do
    for ty in $TYPES; do
        while IFS= read -r spec; do
            case $ty in
            f32) s=$spec ;;
            f16 | tf32)
                case $spec in conv2d\ * | gemm\ * | bgemm\ *) ;; *) continue ;; esac
                case $spec in *dtype=* | *math=*) continue ;; esac
                if [ "$ty" = f16 ]; then s="$spec dtype=f16"; else s="$spec math=tf32"; fi ;;
            *) echo "sass_audit: unknown type $ty" >&2; exit 2 ;;
            esac
            if ! "$BIN" construct "$s" --hw "$hw" --sass --format json >"$tmp/j" 2>"$tmp/e"; then
                printf '%s\t%s\t%s\t%s\n' "$hw" "$ty" "$s" "$(head -1 "$tmp/e")" >>"$tmp/failed"
                continue
            fi
            jq -r --arg hw "$hw" --arg ty "$ty" --arg s "$s" '
                .candidates[0] as $c | .sass as $x | ($x.steady // {}) as $st | ($st.counts // {}) as $n |
                (if ($n.hmma // 0) > 0 then $n.hmma else ($n.ffma // 0) end) as $m |
                (if $m > 0 then $n.total / $m else 0 end) as $spm |
                ($st.model_issue_per_math // 0) as $mpm |
                [$hw, $ty, $s, $c.etir, ($c.predicted_s * 1e3), $c.bound, ($n.total // 0), ($n.hmma // 0),
                 ($n.ffma // 0), $spm, $mpm, (if $mpm > 0 then $spm / $mpm else 0 end),
                 ($st.tensor_clocks_per_hmma // 0), ($st.int_addr // 0), ($st.lds_near // 0),
                 ([($st.lds_near_at // [])[] | select(.math_between == 0)] | length),
                 $x.all.ldl, $x.all.stl] | map(tostring) | @tsv' "$tmp/j" >>"$OUT"
        done <"$tmp/specs"
    done
done

echo "== sass_audit: $(wc -l <"$OUT") (profile, type, spec) rows in $OUT"
printf "%-24s %5s %8s %6s %6s %s\n" "type and class" "picks" "median" "min" "max" "issue-bound (mma)"
awk -F'\t' '$12 > 0 {
        split($3, w, " "); k = $2 " " w[1]
        if (w[1] == "conv2d") k = k ($3 ~ /layout=nhwc/ ? " nhwc" : " nchw")
        n[k]++; v[k, n[k]] = $12
        if ($8 > 0 && $13 > 0 && $10 > $13) { ib[k]++ }
    }
    END {
        for (k in n) {
            m = n[k]
            for (i = 1; i <= m; i++) a[i] = v[k, i]
            for (i = 2; i <= m; i++) { x = a[i]; for (j = i - 1; j >= 1 && a[j] > x; j--) a[j + 1] = a[j]; a[j + 1] = x }
            med = m % 2 ? a[(m + 1) / 2] : (a[m / 2] + a[m / 2 + 1]) / 2
            printf "%-24s %5d %8.3f %6.3f %6.3f %s\n", k, m, med, a[1], a[m], (k in ib) ? ib[k] : "-"
        }
    }' "$OUT" | sort
echo "(ratio: the steady state's instructions per math instruction over the model's count)"
if [ -s "$tmp/failed" ]; then
    echo "== failed ($(wc -l <"$tmp/failed")):"
    cat "$tmp/failed"
fi
