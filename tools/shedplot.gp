# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# gnuplot script for `make plot-shed`: draws the output of build/shedplot.
#   gnuplot -e "data='build/shed.dat'; out='docs/shed.png'" tools/shedplot.gp
if (!exists("data")) data = 'build/shed.dat'
if (!exists("out")) out = 'docs/shed.png'

set terminal pngcairo size 960,520 font "sans,11" linewidth 1.5
set output out
set title "Adaptive shedding: u = 0.5 for 60 s, overloaded (u = 1) for 200 s, then 0.5 again"
set xlabel "time (s)"
set ylabel "utilization u, shedding amount S, drop probability"
set xrange [0:500]
set yrange [-0.3:1.08]
set xtics 60
set ytics 0.2
set mytics 2
set grid xtics ytics lc rgb "#dddddd"
set key below horizontal maxrows 1 width 1
# The dead zone between good (0.7) and bad (0.8): S stays where it is.
set object 1 rectangle from graph 0, first 0.7 to graph 1, first 0.8 \
	fillcolor rgb "#eeeeee" fillstyle solid noborder behind
set label 1 "dead zone" at 30, first 0.75 center textcolor rgb "#888888"
set arrow 1 from graph 0, first 0 to graph 1, first 0 nohead lc rgb "#999999" dt 2
# The overload, and how long S takes to start shedding and to shed everything.
set object 2 rectangle from first 60, graph 0 to first 260, graph 1 \
	fillcolor rgb "#fff3f0" fillstyle solid noborder behind
set arrow 2 from 60, -0.12 to 88, -0.12 heads size 4,30 lc rgb "#555555"
set label 2 "delay 28 s" at 56, -0.12 right textcolor rgb "#555555"
set arrow 3 from 88, -0.12 to 208, -0.12 heads size 4,30 lc rgb "#555555"
set label 3 "ramp 120 s: classes 3, 2, 1 shed in turn" at 96, -0.18 left \
	textcolor rgb "#555555"

plot data using 1:2 with lines lc rgb "#999999" lw 2 dt 3 title "u (utilization)", \
     data using 1:3 with lines lc rgb "black" lw 2.5 title "S (shedding amount)", \
     data using 1:7 with lines lc rgb "#d62728" lw 2 title "class 3", \
     data using 1:6 with lines lc rgb "#ff7f0e" lw 2 title "class 2", \
     data using 1:5 with lines lc rgb "#1f77b4" lw 2 title "class 1", \
     data using 1:4 with lines lc rgb "#2ca02c" lw 2 dt 2 title "class 0 (never)"
