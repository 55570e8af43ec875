# plot_compare.gp — relative predicted performance per operator, after the paper's Fig. 6.
# Called by experiments/compare.sh:
#   gnuplot -e "dir='build/compare'; profiles='h100 a100 ...'" experiments/plot_compare.gp
# Reads dir/plot_<profile>.dat (x markov tree random paper exhaustive exact) and
# dir/plot_groups.gp (operator-kind separators), writes dir/compare.png (one profile,
# rtx4090 unless `profile` is set) and dir/compare_all.png (one panel per profile).
if (!exists("dir")) dir = 'build/compare'
if (!exists("profiles")) profiles = 'h100 a100 rtx4090 rtx3090 orin-nano v100 t4'
if (!exists("profile")) profile = 'rtx4090'

load dir.'/plot_groups.gp'

set style line 1 lc rgb '#d62728' pt 6 ps 1.1 lw 1.5  # markov (gensor): open circle
set style line 2 lc rgb '#1f77b4' pt 5 ps 0.6   # tree (Roller-style)
set style line 3 lc rgb '#7f7f7f' pt 1 ps 0.6   # random
set style line 4 lc rgb '#2ca02c' pt 9 ps 0.6   # markov, paper policy: drawn last, inside markov's circle when equal
set yrange [0:1.12]
set xrange [0:xmax]
set ytics 0, 0.2, 1
set grid ytics lc rgb '#dddddd'
set key top right horizontal font ',10' samplen 1 opaque box
set xtics nomirror out font ',9'
set ylabel 'relative performance (ref / strategy)'

# ---- one profile ----------------------------------------------------------------------
set terminal pngcairo size 1600,600 font 'Sans,11'
set output dir.'/compare.png'
f = dir.'/plot_'.profile.'.dat'
set title sprintf("Predicted performance relative to the reference on %s (1.0 = exhaustive optimum; conv/pool: best found, enumeration capped or not run)", profile) font ',12'
set xlabel 'operator (distinct ops of experiments/suites/paper.json and experiments/models/*.json, grouped by kind)'
plot f using 1:4 with points ls 3 title 'random', \
     f using 1:3 with points ls 2 title 'tree (Roller-style)', \
     f using 1:2 with points ls 1 title 'markov (gensor)', \
     f using 1:5 with points ls 4 title 'markov, paper policy'
unset output

# ---- one panel per profile ------------------------------------------------------------
np = words(profiles)
set terminal pngcairo size 1600, 300*np + 60 font 'Sans,10'
set output dir.'/compare_all.png'
set multiplot layout np, 1 title 'Predicted performance relative to the reference (1.0 = exhaustive optimum / best found), per profile' font ',12'
set xlabel ''
unset title
set key font ',9'
do for [i=1:np] {
    p = word(profiles, i)
    f = dir.'/plot_'.p.'.dat'
    set ylabel p.' (ref / strategy)'
    if (i == np) { set xlabel 'operator, grouped by kind' }
    if (i > 1) { unset key }
    plot f using 1:4 with points ls 3 title 'random', \
         f using 1:3 with points ls 2 title 'tree (Roller-style)', \
         f using 1:2 with points ls 1 title 'markov (gensor)', \
         f using 1:5 with points ls 4 title 'markov, paper policy'
}
unset multiplot
unset output
