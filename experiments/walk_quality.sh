#!/bin/sh
# walk_quality.sh — the walk against exhaustive enumeration over the bench set (issue 22
# item 7): make bench's 7 GEMMs and two long rowsums on the 7 profiles (63 cases). Prints,
# per (profile, op), the predicted time of the default walk's pick (markov, seed 1) and of
# the exhaustive optimum under the same model, their ratio, then the median and the worst.
#
#   sh experiments/walk_quality.sh [BIN]
#
# Knobs: GS_WQ_PROFILES [h100 a100 rtx4090 rtx3090 orin-nano v100 t4], GS_WQ_SEED [1],
#        GS_WQ_SPECS (newline-separated specs) [the bench set], GS_WQ_ETIR=1 adds both ETIRs.
set -u
BIN=${1:-build/gensor}
PROFILES=${GS_WQ_PROFILES:-h100 a100 rtx4090 rtx3090 orin-nano v100 t4}
SEED=${GS_WQ_SEED:-1}
SPECS=${GS_WQ_SPECS:-'gemm M=8192 N=8192 K=8192
gemm M=65536 N=4 K=1024
gemm M=65536 N=4096 K=1024
gemm M=32768 N=2048 K=64
gemm M=16384 N=1024 K=32
gemm M=2039 N=2039 K=2039
gemm M=128 N=768 K=3072 transB=1
rowsum M=1 K=16777216
rowsum M=4 K=1048576'}
command -v jq >/dev/null || { echo "walk_quality: needs jq" >&2; exit 2; }
tmp=$(mktemp) || exit 1
trap 'rm -f "$tmp"' EXIT INT TERM

printf "%-10s %-36s %10s %10s %7s\n" profile op markov_ms exhaust_ms ratio
for hw in $PROFILES; do
    echo "$SPECS" | while IFS= read -r spec; do
        [ -n "$spec" ] || continue
        m=$("$BIN" construct --hw "$hw" --seed "$SEED" --format json --top 1 "$spec") || exit 1
        x=$("$BIN" construct --hw "$hw" --format json --top 1 --strategy exhaustive --max-ms 0 "$spec") || exit 1
        mp=$(echo "$m" | jq -r '.candidates[0].predicted_s'); xp=$(echo "$x" | jq -r '.candidates[0].predicted_s')
        r=$(echo "$mp $xp" | awk '{printf "%.4f", $1 / $2}')
        printf "%-10s %-36s %10.4f %10.4f %7s\n" "$hw" "$spec" "$(echo $mp | awk '{print $1*1e3}')" \
            "$(echo $xp | awk '{print $1*1e3}')" "$r"
        echo "$r" >>"$tmp"
        if [ "${GS_WQ_ETIR:-0}" = 1 ]; then
            echo "    markov     $(echo "$m" | jq -r '.candidates[0].etir')"
            echo "    exhaustive $(echo "$x" | jq -r '.candidates[0].etir')"
        fi
    done
done
sort -g "$tmp" | awk '{a[NR] = $1} END { m = (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2;
    over = 0; for (i = 1; i <= NR; i++) if (a[i] > 1.1) over++
    printf "markov/exhaustive: median %.4f, max %.4f, over 1.1: %d of %d cases\n", m, a[NR], over, NR }'
