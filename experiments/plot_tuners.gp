# plot_tuners.gp — kernel time relative to the best found vs time to solution
# (make compare-tuners). Called by experiments/compare_tuners.py:
#   gnuplot -e "dir='build/compare-tuners'; methods='m1 m2 ...'; device='...'" experiments/plot_tuners.gp
# Reads dir/plot_tuners.dat (method_index tune_s kernel/best op budget), writes dir/tuners.png.
if (!exists("dir")) dir = 'build/compare-tuners'
if (!exists("methods")) methods = ''
if (!exists("device")) device = ''
set terminal pngcairo size 1200,700 font 'Sans,11' noenhanced
set output dir.'/tuners.png'
set title sprintf("Kernel time relative to the best found per operator vs tuning time\non %s (a CPU device says nothing about GPU speed)", device) font ',12'
set logscale x
set logscale y 2
set xlabel 'time to solution (s, log): construction, refinement or Kernel Tuner run'
set ylabel 'kernel time / best kernel time of the operator (1 = best)'
set grid xtics ytics lc rgb '#dddddd'
set key outside right top font ',9'
set datafile separator whitespace
f = dir.'/plot_tuners.dat'
n = words(methods)
plot for [i=1:n] f using ($1 == i ? $2 : 1/0):3 with points pt (i % 13 + 1) ps 1.4 lw 2 title word(methods, i)
