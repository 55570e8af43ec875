#!/bin/sh
# make bench: construction-time and construction-quality benchmarks.
# These measure; they never fail on a slow machine (tests check behaviour).
BIN=${1:-build/gensor}
REPS=${GS_BENCH_REPS:-11}
PROFILES="h100 a100 rtx4090 rtx3090 orin-nano v100 t4"

json_num() { # key < json
    sed -n "s/.*\"$1\": *\([0-9.eE+-]*\).*/\1/p" | head -1
}
median() { sort -g | awk '{a[NR]=$1} END {if (NR%2) print a[(NR+1)/2]; else print (a[NR/2]+a[NR/2+1])/2}'; }

echo "== construction time: gemm M=4096 N=4096 K=4096 (median of $REPS runs, in-process timer; target < 50 ms)"
printf "%-10s %10s %10s %12s %9s\n" profile median_ms min_ms predicted_ms TFLOP/s
for hw in $PROFILES; do
    : >/tmp/gs_bench_$$
    for i in $(seq $REPS); do
        "$BIN" construct --hw $hw --format json --top 1 'gemm M=4096 N=4096 K=4096' >/tmp/gs_bench_j_$$ || exit 1
        json_num construct_ms </tmp/gs_bench_j_$$ >>/tmp/gs_bench_$$
    done
    med=$(median </tmp/gs_bench_$$)
    min=$(sort -g /tmp/gs_bench_$$ | head -1)
    pred=$(json_num predicted_s </tmp/gs_bench_j_$$)
    tf=$(json_num predicted_tflops </tmp/gs_bench_j_$$)
    printf "%-10s %10.3f %10.3f %12.4f %9.2f\n" $hw "$med" "$min" "$(echo "$pred" | awk '{print $1*1e3}')" "$tf"
done
rm -f /tmp/gs_bench_$$ /tmp/gs_bench_j_$$

echo
echo "== peak RSS: gensor construct 'gemm M=16384 N=16384 K=16384' (target <= 16 MB)"
"$BIN" construct --format json 'gemm M=16384 N=16384 K=16384' | json_num peak_rss_kb | awk '{printf "peak RSS %.1f MB\n", $1/1024}'

echo
echo "== construction quality: Markov walk vs exhaustive enumeration (predicted time under the same model)"
printf "%-10s %-42s %10s %10s %8s %10s %10s\n" profile op markov_ms exhaust_ms ratio walk_ms enum_ms
for hw in $PROFILES; do
    for spec in 'gemm M=8192 N=8192 K=8192' 'gemm M=65536 N=4 K=1024' 'gemm M=65536 N=4096 K=1024' \
                'gemm M=32768 N=2048 K=64' 'gemm M=16384 N=1024 K=32' 'gemm M=2039 N=2039 K=2039' \
                'gemm M=128 N=768 K=3072 transB=1'; do
        m=$("$BIN" construct --hw $hw --format json --top 1 "$spec")
        x=$("$BIN" construct --hw $hw --format json --top 1 --strategy exhaustive --max-ms 0 "$spec")
        mp=$(echo "$m" | json_num predicted_s); xp=$(echo "$x" | json_num predicted_s)
        mt=$(echo "$m" | json_num construct_ms); xt=$(echo "$x" | json_num construct_ms)
        short=$(echo "$spec" | sed 's/ transA=0//; s/ transB=0//')
        printf "%-10s %-42s %10.4f %10.4f %8.4f %10.2f %10.1f\n" $hw "$short" \
            "$(echo $mp | awk '{print $1*1e3}')" "$(echo $xp | awk '{print $1*1e3}')" \
            "$(echo "$mp $xp" | awk '{print $1/$2}')" "$mt" "$xt"
    done
done | tee /tmp/gs_bench_q_$$
r_med=$(awk '{print $(NF-2)}' /tmp/gs_bench_q_$$ | median); r_max=$(awk '{print $(NF-2)}' /tmp/gs_bench_q_$$ | sort -g | tail -1)
t_med=$(awk '{print $(NF-1)}' /tmp/gs_bench_q_$$ | median); t_max=$(awk '{print $(NF-1)}' /tmp/gs_bench_q_$$ | sort -g | tail -1)
e_med=$(awk '{print $NF}' /tmp/gs_bench_q_$$ | median)
echo "markov/exhaustive ratio: median $r_med, max $r_max | walk ms: median $t_med, max $t_max | exhaustive ms: median $e_med ($(wc -l </tmp/gs_bench_q_$$) cases)"
rm -f /tmp/gs_bench_q_$$
