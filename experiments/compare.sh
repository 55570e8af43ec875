#!/bin/sh
# compare.sh — construction quality: the Markov walk against the tree (Roller-style),
# random and exhaustive strategies and the paper's printed policy, under the analytic
# model, over every distinct operator of experiments/suites/paper.json and
# experiments/models/*.json on the 7 built-in profiles. See experiments/README.md.
#
#   sh experiments/compare.sh [BIN] [OUTDIR]        (make compare)
#
# BIN defaults to build/gensor, OUTDIR to build/compare. Writes OUTDIR/results.csv,
# table.txt, summary.txt, ops.tsv, the plot data and (with gnuplot) compare.png and
# compare_all.png. POSIX sh + awk; jq reads the JSON (installed with apt-get if missing).
#
# Knobs (environment):
#   GS_COMPARE_PROFILES     profiles [h100 a100 rtx4090 rtx3090 orin-nano v100 t4]
#   GS_COMPARE_FILES        suite/model files [experiments/suites/paper.json experiments/models/*.json]
#   GS_COMPARE_EXHAUSTIVE   all | subset | none [subset]. Exhaustive enumeration of a
#                           sliding-window op (conv2d, dwconv2d, pools: 6-7 axes) takes
#                           10-20 s and hits the enumeration cap, so `subset` runs it on
#                           every gemm/gemv/bgemm/elementwise/row-reduce op, and on the
#                           window ops named in GS_COMPARE_EXH_WINDOW_OPS (paper.json
#                           names) for the profiles in GS_COMPARE_EXH_WINDOW_PROFILES.
#   GS_COMPARE_EXH_WINDOW_OPS       [C1 C2 C3 P1 P2 P3]  (the paper's Table IV window ops)
#   GS_COMPARE_EXH_WINDOW_PROFILES  [rtx4090 orin-nano] (the paper's two devices)
#   GS_COMPARE_JOBS         parallel exhaustive runs [number of CPUs]; the other
#                           strategies always run one at a time so that their
#                           construction times are not disturbed
#   GS_COMPARE_SEED         seed of the markov/random runs [1]
set -u

# ---- internal: one exhaustive run, called back through xargs -------------------------
# args: --exh-job BIN OUTDIR "op_id<TAB>profile<TAB>spec"
if [ "${1:-}" = "--exh-job" ]; then
    bin=$2 out=$3 line=$4
    tab=$(printf '\t')
    id=${line%%"$tab"*}; rest=${line#*"$tab"}
    prof=${rest%%"$tab"*}; spec=${rest#*"$tab"}
    # Text mode with --emit json: the table says whether the enumeration hit its cap
    # (the JSON format has no such field), and the candidate JSON printed after the
    # table carries predicted_s at full precision.
    "$bin" construct --hw "$prof" --top 1 --strategy exhaustive --max-ms 0 --seed "${GS_COMPARE_SEED:-1}" --emit json "$spec" \
        2>>"$out/errors.log" |
        awk -v id="$id" -v prof="$prof" '
            /^op  / { sub(/^op +/, ""); op = $0 }
            /^construct / { ms = $2 }
            /^note +exhaustive enumeration hit its cap/ { capped = 1 }
            /"predicted_s":/ && pred == "" { v = $2; sub(/,$/, "", v); pred = v }
            END { if (pred == "" || op == "") exit 1
                  printf "%s,%s,exhaustive,%s,%s,%d,%s\n", op, prof, pred, ms, capped, id }' \
        >"$out/exh/$id.$prof.row" || {
        echo "compare: exhaustive failed: op $id on $prof: $spec" >>"$out/errors.log"
        rm -f "$out/exh/$id.$prof.row"
    }
    exit 0
fi

BIN=${1:-build/gensor}
OUT=${2:-build/compare}
PROFILES=${GS_COMPARE_PROFILES:-h100 a100 rtx4090 rtx3090 orin-nano v100 t4}
FILES=${GS_COMPARE_FILES:-experiments/suites/paper.json $(ls experiments/models/*.json 2>/dev/null)}
EXH_MODE=${GS_COMPARE_EXHAUSTIVE:-subset}
EXH_WIN_OPS=${GS_COMPARE_EXH_WINDOW_OPS:-C1 C2 C3 P1 P2 P3}
EXH_WIN_PROFILES=${GS_COMPARE_EXH_WINDOW_PROFILES:-rtx4090 orin-nano}
JOBS=${GS_COMPARE_JOBS:-$(getconf _NPROCESSORS_ONLN 2>/dev/null || echo 1)}
SEED=${GS_COMPARE_SEED:-1}
SELF=$0
case $EXH_MODE in all | subset | none) ;; *) echo "compare: error: GS_COMPARE_EXHAUSTIVE must be all, subset or none (got '$EXH_MODE')" >&2; exit 2 ;; esac
[ -x "$BIN" ] || { echo "compare: error: $BIN is not an executable (build it with make)" >&2; exit 2; }
[ -d experiments/models ] || { echo "compare: error: run from the repository root (experiments/models not found in $(pwd))" >&2; exit 2; }

if ! command -v jq >/dev/null 2>&1; then
    SUDO=""
    [ "$(id -u)" = 0 ] || SUDO=sudo
    echo "compare: jq is missing; running: $SUDO apt-get install -y jq" >&2
    $SUDO apt-get install -y -qq jq >&2 ||
        { echo "compare: retrying after: $SUDO apt-get update" >&2; $SUDO apt-get update -qq >&2 && $SUDO apt-get install -y -qq jq >&2; } ||
        { echo "compare: error: cannot install jq" >&2; exit 1; }
fi

mkdir -p "$OUT" "$OUT/exh" || exit 1
rm -f "$OUT"/exh/*.row "$OUT/errors.log" "$OUT"/plot_*.dat
T0=$(date +%s)
tty=false
[ -t 2 ] && tty=true
TAB=$(printf '\t')

# ---- the operator list: distinct specs in file order ---------------------------------
# ops_raw.tsv: source<TAB>name<TAB>spec, first appearance of each spec text.
for f in $FILES; do
    src=$(basename "$f" .json)
    jq -r --arg src "$src" '.ops[] | [$src, (.name // ""), .spec] | @tsv' "$f" || { echo "compare: error: cannot read $f" >&2; exit 1; }
done | awk -F '\t' '!seen[$3]++' >"$OUT/ops_raw.tsv"
nraw=$(wc -l <"$OUT/ops_raw.tsv")
nprof=$(echo $PROFILES | wc -w)
echo "compare: $nraw distinct spec texts x $nprof profiles; exhaustive: $EXH_MODE; $JOBS parallel exhaustive job(s)" >&2

# is the spec's operator a sliding-window one (6-7 axes: exhaustive is capped and slow)?
is_window() { case $1 in conv2d* | dwconv2d* | avgpool2d* | maxpool2d*) return 0 ;; esac; return 1; }
in_list() { # word list...
    w=$1; shift
    for x in "$@"; do [ "$x" = "$w" ] && return 0; done
    return 1
}

# markov/tree/random/paper: gensor construct --format json --top 1, one at a time
run_json() { # label strategy policy profile spec
    "$BIN" construct --format json --top 1 --seed "$SEED" --hw "$4" --strategy "$2" --policy "$3" "$5" 2>>"$OUT/errors.log" |
        jq -r '[.op, (.candidates[0].predicted_s | tostring), (.construct_ms | tostring)] | @tsv' 2>>"$OUT/errors.log"
}

: >"$OUT/results.body"
: >"$OUT/exh_jobs.tsv"
printf 'op_id\tsource\tname\tkind\tspec\texhaustive\n' >"$OUT/ops.tsv"
id=0
k=0
seen_canon=""
: >"$OUT/canon.txt"
while IFS="$TAB" read -r src name spec; do
    k=$((k + 1))
    canon=""
    exh_profiles=""
    nid=$((id + 1))
    for hw in $PROFILES; do
        $tty && printf '\r[%d/%d] %-10s %-60.60s' "$k" "$nraw" "$hw" "$spec" >&2
        for sp in "markov markov model" "tree tree model" "random random model" "markov-paper markov paper"; do
            set -- $sp
            r=$(run_json "$1" "$2" "$3" "$hw" "$spec")
            if [ -z "$r" ]; then
                echo "compare: $1 failed: $spec on $hw" >>"$OUT/errors.log"
                continue
            fi
            c=${r%%"$TAB"*}
            if [ -z "$canon" ]; then
                canon=$c
                # the same operator written differently (defaults spelled out): skip it
                if grep -Fxq -- "$canon" "$OUT/canon.txt"; then break 2; fi
                echo "$canon" >>"$OUT/canon.txt"
                id=$nid
            fi
            rest=${r#*"$TAB"}
            printf '%s,%s,%s,%s,%s,,%s\n' "$canon" "$hw" "$1" "${rest%%"$TAB"*}" "${rest#*"$TAB"}" "$id" >>"$OUT/results.body"
        done
        [ "$id" = "$nid" ] || continue
        # exhaustive: which (op, profile) pairs
        want=false
        case $EXH_MODE in
        all) want=true ;;
        subset)
            if ! is_window "$spec"; then want=true
            elif [ "$src" = paper ] && in_list "$name" $EXH_WIN_OPS && in_list "$hw" $EXH_WIN_PROFILES; then want=true; fi ;;
        esac
        if $want; then
            printf '%s\t%s\t%s\n' "$id" "$hw" "$spec" >>"$OUT/exh_jobs.tsv"
            exh_profiles="$exh_profiles${exh_profiles:+ }$hw"
        fi
    done
    if [ "$id" = "$nid" ]; then
        printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$id" "$src" "$name" "${spec%% *}" "$canon" "${exh_profiles:-none}" >>"$OUT/ops.tsv"
    elif [ -n "$canon" ]; then
        echo "compare: note: '$spec' is the same operator as an earlier spec ($canon); skipped" >>"$OUT/errors.log"
    fi
done <"$OUT/ops_raw.tsv"
$tty && printf '\r%90s\r' '' >&2
T1=$(date +%s)
nexh=$(wc -l <"$OUT/exh_jobs.tsv")
echo "compare: $id operators done with markov/tree/random/paper in $((T1 - T0)) s; now $nexh exhaustive runs" >&2

# ---- exhaustive runs (in parallel when JOBS > 1) -------------------------------------
if [ "$nexh" -gt 0 ]; then
    if [ "$JOBS" -gt 1 ] && echo | xargs -P 2 true 2>/dev/null; then
        # one line = one argument (-I); specs have no quotes or backslashes
        xargs -P "$JOBS" -I{} sh "$SELF" --exh-job "$BIN" "$OUT" {} <"$OUT/exh_jobs.tsv"
    else
        while IFS= read -r line; do sh "$SELF" --exh-job "$BIN" "$OUT" "$line"; done <"$OUT/exh_jobs.tsv"
    fi
fi
T2=$(date +%s)

{
    echo "op,profile,strategy,predicted_s,construct_ms,capped,op_id"
    cat "$OUT/results.body"
    # exhaustive rows in job order
    while IFS="$TAB" read -r jid jhw _; do
        [ -f "$OUT/exh/$jid.$jhw.row" ] && cat "$OUT/exh/$jid.$jhw.row"
    done <"$OUT/exh_jobs.tsv"
} >"$OUT/results.csv"
rm -f "$OUT/results.body" "$OUT/canon.txt"

# ---- peak RSS of a large construction -------------------------------------------------
rss=$("$BIN" construct --format json 'gemm M=16384 N=16384 K=16384' 2>>"$OUT/errors.log" | jq -r '.peak_rss_kb // empty')
T3=$(date +%s)
nerr=$(grep -c '^compare: .*failed' "$OUT/errors.log" 2>/dev/null || true)

# ---- table, summary, plot data ---------------------------------------------------------
awk -F, -v out="$OUT" -v profiles="$PROFILES" -v rss="${rss:-NA}" -v t_all="$((T3 - T0))" -v t_walk="$((T1 - T0))" \
    -v t_exh="$((T2 - T1))" -v jobs="$JOBS" -v exh_mode="$EXH_MODE" -v exh_win_ops="$EXH_WIN_OPS" \
    -v exh_win_prof="$EXH_WIN_PROFILES" -v nerr="${nerr:-0}" -v seed="$SEED" '
function isort(a, n,    i, j, v) { for (i = 2; i <= n; i++) { v = a[i]; for (j = i - 1; j >= 1 && a[j] > v; j--) a[j + 1] = a[j]; a[j + 1] = v } }
function median(a, n) { if (n == 0) return "NA"; isort(a, n); return (n % 2) ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2 }
function amax(a, n,    i, m) { if (n == 0) return "NA"; m = a[1]; for (i = 2; i <= n; i++) if (a[i] > m) m = a[i]; return m }
function amin(a, n,    i, m) { if (n == 0) return "NA"; m = a[1]; for (i = 2; i <= n; i++) if (a[i] < m) m = a[i]; return m }
function geomean(a, n,    i, s) { if (n == 0) return "NA"; s = 0; for (i = 1; i <= n; i++) s += log(a[i]); return exp(s / n) }
function fmt(x, f) { return x == "NA" ? "NA" : sprintf(f, x) }
function group(kind) {
    if (kind == "gemm" || kind == "gemv" || kind == "bgemm") return 1
    if (kind == "conv2d" || kind == "dwconv2d") return 2
    if (kind == "avgpool2d" || kind == "maxpool2d") return 3
    if (kind == "add" || kind == "mul" || kind == "relu") return 4
    return 5
}
BEGIN {
    nprof = split(profiles, P, " ")
    ns = split("markov tree random markov-paper exhaustive", S, " ")
    gname[1] = "gemm/gemv/bgemm"; gname[2] = "conv"; gname[3] = "pool"; gname[4] = "eltwise"; gname[5] = "reduce"
    # operator names and kinds from ops.tsv
    while ((getline line < (out "/ops.tsv")) > 0) {
        split(line, f, "\t")
        if (f[1] == "op_id") continue
        nops++; oid[nops] = f[1]; oname[f[1]] = f[3]; osrc[f[1]] = f[2]; okind[f[1]] = f[4]; ospec[f[1]] = f[5]
    }
}
NR == 1 { next }
{
    key = $7 SUBSEP $2
    t[key, $3] = $4 + 0; ms[key, $3] = $5 + 0; if ($3 == "exhaustive") cap[key] = $6 + 0
    has[key] = 1
}
END {
    # ---- per (operator, profile): reference and relative performance ----
    tbl = out "/table.txt"
    printf "# relative predicted performance = reference_time / strategy_time (1.0 = the reference)\n" > tbl
    printf "# reference: ref=exh  the exhaustive optimum (enumeration finished)\n" > tbl
    printf "#            ref=best the best time any strategy found (exhaustive capped: exh*, or not run: -)\n" > tbl
    printf "# columns: op_id profile ref ref_ms markov tree random paper(markov, policy paper) exhaustive  name | spec\n" > tbl
    printf "%5s %-9s %-4s %12s %7s %7s %7s %7s %7s  %s\n", "id", "profile", "ref", "ref_ms", "markov", "tree", "random", "paper", "exh", "name | spec" > tbl
    # plot order: grouped by operator kind, file order inside a group
    nx = 0
    for (g = 1; g <= 5; g++) {
        first = nx + 1
        for (i = 1; i <= nops; i++) if (group(okind[oid[i]]) == g) { nx++; xo[nx] = oid[i] }
        if (nx >= first) { gfirst[g] = first; glast[g] = nx }
    }
    for (x = 1; x <= nx; x++) {
        o = xo[x]
        for (p = 1; p <= nprof; p++) {
            key = o SUBSEP P[p]
            if (!(key in has)) continue
            best = ""
            for (s = 1; s <= ns; s++) if (((key, S[s]) in t) && t[key, S[s]] > 0 && (best == "" || t[key, S[s]] < best)) best = t[key, S[s]]
            exact = ((key, "exhaustive") in t) && !cap[key]
            ref = exact ? t[key, "exhaustive"] : best
            refkind = exact ? "exh" : "best"
            line = ""
            for (s = 1; s <= ns; s++) {
                if (((key, S[s]) in t) && t[key, S[s]] > 0) {
                    r = ref / t[key, S[s]]; rel[key, S[s]] = r
                    v = sprintf("%7.4f", r); if (S[s] == "exhaustive" && cap[key]) v = sprintf("%6.3f*", r)
                } else v = sprintf("%7s", "-")
                line = line " " v
            }
            printf "%5d %-9s %-4s %12.6f%s  %s | %s\n", o, P[p], refkind, ref * 1e3, line, oname[o], ospec[o] > tbl
            # plot rows: x markov tree random paper exh refkind
            pf = out "/plot_" P[p] ".dat"
            printf "%d", x > pf
            for (s = 1; s <= ns; s++) printf " %s", (((key, S[s]) in rel) ? sprintf("%.6f", rel[key, S[s]]) : "NaN") > pf
            printf " %d\n", exact > pf
            # statistics
            npairs++; pp[P[p]]++
            if (((key, "markov") in t) && ((key, "exhaustive") in t)) {
                q = t[key, "markov"] / t[key, "exhaustive"]
                if (cap[key]) { nc++; rc[nc] = q; if (q < 1 - 1e-9) cbetter++ }
                else { nu++; ru[nu] = q; if (q > 1 + 1e-9) uworse++; if (q < 1 - 1e-9) { ubetter++; anomalies = anomalies sprintf("    op %d on %s: markov %.6g s < exhaustive %.6g s (%s)\n", o, P[p], t[key, "markov"], t[key, "exhaustive"], ospec[o]) } }
            }
            if (((key, "markov") in t) && ((key, "tree") in t)) {
                nmt++; nmt_p[P[p]]++
                if (t[key, "markov"] <= t[key, "tree"] * (1 + 1e-9)) { ge++; ge_p[P[p]]++ }
                if (t[key, "markov"] < t[key, "tree"] * (1 - 1e-6)) { gt++; gt_p[P[p]]++ }
                if (t[key, "markov"] > t[key, "tree"] * (1 + 1e-9)) { worse_mt = worse_mt sprintf("    op %d on %s: markov/tree %.4f  %s | %s\n", o, P[p], t[key, "markov"] / t[key, "tree"], oname[o], ospec[o]); nworse_mt++ }
            }
            for (s = 1; s <= ns; s++) if ((key, S[s]) in t) {
                cn[S[s]]++; cms[S[s], cn[S[s]]] = ms[key, S[s]]
                if ((key, S[s]) in rel) { rn[S[s]]++; rr[S[s], rn[S[s]]] = rel[key, S[s]] }
            }
        }
    }
    close(tbl)
    # group boundaries for the plot
    gp = out "/plot_groups.gp"
    printf "# written by compare.sh: operator-kind groups on the x axis\n" > gp
    for (g = 1; g <= 5; g++) if (g in gfirst) {
        printf "set arrow from %g, graph 0 to %g, graph 1 nohead lc rgb \"#999999\" dt 2\n", gfirst[g] - 0.5, gfirst[g] - 0.5 > gp
        printf "set label \"%s\" at %g, graph 0.06 center font \",10\"\n", gname[g], (gfirst[g] + glast[g]) / 2 > gp
    }
    printf "xmax = %d\n", nx + 1 > gp
    close(gp)

    # ---- summary ----
    sm = out "/summary.txt"
    printf "gensor strategy comparison (predicted times under the analytic model; seed %s)\n", seed > sm
    printf "operators: %d distinct, profiles: %d (%s), (operator, profile) pairs: %d\n", nops, nprof, profiles, npairs > sm
    printf "exhaustive: %s", exh_mode > sm
    if (exh_mode == "subset") printf " (all gemm/gemv/bgemm/eltwise/reduce ops on every profile; window ops %s on %s)", exh_win_ops, exh_win_prof > sm
    printf "\nrun time: %d s total (%d s markov/tree/random/paper, %d s exhaustive with %d job(s))\n", t_all, t_walk, t_exh, jobs > sm
    if (nerr > 0) printf "failed runs: %d (see errors.log)\n", nerr > sm
    printf "\nMarkov vs exhaustive (ratio markov_time / exhaustive_time; 1 = optimum)\n" > sm
    for (i = 1; i <= nu; i++) tmp[i] = ru[i]
    printf "  enumeration finished: %d pairs, median %s, worst %s; markov worse in %d, equal in %d\n", nu, fmt(median(tmp, nu), "%.4f"), fmt(amax(ru, nu), "%.4f"), uworse, nu - uworse - ubetter > sm
    if (ubetter > 0) printf "  ANOMALY: markov beat the finished enumeration in %d pairs:\n%s", ubetter, anomalies > sm
    delete tmp; for (i = 1; i <= nc; i++) tmp[i] = rc[i]
    if (nc > 0) printf "  enumeration capped:   %d pairs, median %s, worst %s; markov better than the capped enumeration in %d\n", nc, fmt(median(tmp, nc), "%.4f"), fmt(amax(rc, nc), "%.4f"), cbetter > sm
    printf "\nMarkov vs tree (Roller-style), all pairs\n" > sm
    printf "  markov at least as good (markov <= tree*(1+1e-9)): %.1f%% (%d of %d)\n", nmt ? 100 * ge / nmt : 0, ge, nmt > sm
    printf "  markov strictly better  (markov <  tree*(1-1e-6)): %.1f%% (%d of %d)\n", nmt ? 100 * gt / nmt : 0, gt, nmt > sm
    for (p = 1; p <= nprof; p++) if (nmt_p[P[p]]) printf "    %-10s at least as good %5.1f%%, strictly better %5.1f%% (%d pairs)\n", P[p], 100 * ge_p[P[p]] / nmt_p[P[p]], 100 * gt_p[P[p]] / nmt_p[P[p]], nmt_p[P[p]] > sm
    if (nworse_mt > 0) {
        printf "  pairs where tree beats markov (%d; first 15):\n", nworse_mt > sm
        n = split(worse_mt, wl, "\n"); for (i = 1; i <= n && i <= 15; i++) if (wl[i] != "") print wl[i] > sm
    }
    printf "\nrelative predicted performance (reference_time / strategy_time, see table.txt)\n" > sm
    printf "  %-13s %6s %8s %8s %8s %8s\n", "strategy", "pairs", "geomean", "median", "min", "=1.0" > sm
    for (s = 1; s <= ns; s++) {
        n = rn[S[s]]; delete tmp; ones = 0
        for (i = 1; i <= n; i++) { tmp[i] = rr[S[s], i]; if (tmp[i] >= 1 - 1e-9) ones++ }
        printf "  %-13s %6d %8s %8s %8s %7.1f%%\n", S[s], n, fmt(geomean(tmp, n), "%.4f"), fmt(median(tmp, n), "%.4f"), fmt(amin(tmp, n), "%.4f"), n ? 100 * ones / n : 0 > sm
    }
    printf "\nconstruction time per operator (ms, in-process timer)\n" > sm
    printf "  %-13s %6s %10s %10s\n", "strategy", "runs", "median", "max" > sm
    for (s = 1; s <= ns; s++) {
        n = cn[S[s]]; delete tmp
        for (i = 1; i <= n; i++) tmp[i] = cms[S[s], i]
        printf "  %-13s %6d %10s %10s%s\n", S[s], n, fmt(median(tmp, n), "%.3f"), fmt(amax(tmp, n), "%.1f"), (S[s] == "exhaustive" && jobs > 1) ? "  (parallel runs)" : "" > sm
    }
    printf "\npeak RSS of gensor construct --format json '"'"'gemm M=16384 N=16384 K=16384'"'"': %s\n", rss == "NA" ? "NA" : sprintf("%d kB (%.1f MB)", rss, rss / 1024) > sm
    printf "\n(markov = default walk, policy model; markov-paper = the walk with the printed formulas (1)-(3);\n tree = Roller-style top-down growth; random = uniform draws, as many as the walk'"'"'s steps)\n" > sm
    close(sm)
}' "$OUT/results.csv"

# ---- the figure ---------------------------------------------------------------------------
if command -v gnuplot >/dev/null 2>&1; then
    gnuplot -e "dir='$OUT'; profiles='$PROFILES'" "$(dirname "$SELF")/plot_compare.gp" 2>>"$OUT/errors.log" ||
        echo "compare: gnuplot failed (see $OUT/errors.log)" >&2
else
    echo "compare: gnuplot not found: no compare.png" >&2
fi
T4=$(date +%s)
# the run time in the summary, now with the plot
awk -v t="$((T4 - T0))" '/^run time: [0-9]+ s total/ { sub(/^run time: [0-9]+ s total/, "run time: " t " s total") } { print }' \
    "$OUT/summary.txt" >"$OUT/summary.tmp" && mv "$OUT/summary.tmp" "$OUT/summary.txt"
cat "$OUT/summary.txt"
echo
echo "compare: wrote $OUT/results.csv, table.txt, summary.txt, ops.tsv$( [ -f "$OUT/compare.png" ] && echo ', compare.png, compare_all.png') in $((T4 - T0)) s"
