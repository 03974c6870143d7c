# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Plots of `make bench`, from the data files tools/bench/bench.sh leaves in dir:
#   gnuplot -e "dir='/tmp/wrbench.X'; out='docs'" tools/bench/plots.gp
# Each plot is drawn only when its data file exists.
have(f) = system("test -s '" . f . "' && echo 1 || echo 0") + 0

set terminal pngcairo size 900,480 font "sans,11" linewidth 1.5
set grid ytics lc rgb "#dddddd"
set key top left

if (have(dir . "/rules.dat")) {
	set output out . "/bench-rules.png"
	set title "Program cost against rules (the packet matches the last one)"
	set xlabel "rules"
	set ylabel "ns per packet over the trivial program"
	set logscale x 2
	set xrange [0.8:320]
	set yrange [0:*]
	plot dir . "/rules.dat" using 1:2 with linespoints pt 7 lc rgb "#2ca02c" \
	         title "clock auto (the default)", \
	     "" using 1:3 with linespoints pt 9 lc rgb "#1f77b4" title "clock precise", \
	     "" using 1:4 with linespoints pt 5 lc rgb "#ff7f0e" title "clock coarse"
	unset logscale x
	set xrange [*:*]
}

if (have(dir . "/keys_e2e.dat") || have(dir . "/keys_tr.dat")) {
	set output out . "/bench-keys.png"
	set title "weir's cost against tracked keys (existing keys, scattered order)"
	set xlabel "tracked keys"
	set ylabel "ns per packet over the floor"
	set logscale x 2
	set format x "2^{%L}"
	set yrange [0:*]
	e2e = dir . "/keys_e2e.dat"
	tr = dir . "/keys_tr.dat"
	t_e2e = "flood over veth, in program (bpf\\_stats)"
	t_tr = "bpf\\_prog\\_test\\_run, one run per packet"
	if (have(e2e) && have(tr)) {
		plot e2e using 1:2 with linespoints pt 7 lc rgb "#1f77b4" title t_e2e, \
		     tr using 1:2 with linespoints pt 5 lc rgb "#ff7f0e" title t_tr
	} else {
		if (have(e2e)) {
			plot e2e using 1:2 with linespoints pt 7 lc rgb "#1f77b4" title t_e2e
		} else {
			plot tr using 1:2 with linespoints pt 5 lc rgb "#ff7f0e" title t_tr
		}
	}
	unset logscale x
	set format x "%g"
}

set style data histograms
set style histogram clustered gap 1
set style fill solid 0.85 border -1
set boxwidth 0.9

if (have(dir . "/flood.dat")) {
	set output out . "/bench-flood.png"
	set title "Flood cost: CPU ns per packet over the bare XDP\\_DROP floor (median of rounds)"
	set xlabel ""
	set ylabel "ns per packet over the floor"
	set yrange [0:*]
	set xtics nomirror
	set key top left
	plot dir . "/flood.dat" using 2:xtic(1) title "A: 256 sources over their limit" \
	         lc rgb "#1f77b4", \
	     "" using 3 title "B: random spoofed sources, rule-wide limit" lc rgb "#ff7f0e", \
	     "" using 4 title "C: 1M sources under their limit" lc rgb "#2ca02c"
	set xtics norotate
}

if (have(dir . "/acc.dat")) {
	set output out . "/bench-accuracy.png"
	set title "Admitted against ideal (burst + rate x time), sent from both CPUs"
	set xlabel "rate (packets/s)"
	set ylabel "error (%)"
	set yrange [*:*]
	set key top right
	plot dir . "/acc.dat" using 2:xtic(1) title "weir" lc rgb "#1f77b4", \
	     "" using 3 title "nftables" lc rgb "#ff7f0e", \
	     "" using 4 title "iptables hashlimit" lc rgb "#2ca02c", \
	     "" using 5 title "weir, clock coarse" lc rgb "#9467bd"
}

if (have(dir . "/svc.dat")) {
	set output out . "/bench-service.png"
	set title "TCP request/response rate under a UDP + SYN flood (100% = unattacked)"
	set xlabel "flood offered (packets/s)"
	set ylabel "% of the unattacked rate"
	set yrange [0:119]
	set key top right maxrows 2 width -2
	plot dir . "/svc.dat" using 2:xtic(1) title "no filter" lc rgb "#999999", \
	     "" using 3 title "nftables" lc rgb "#ff7f0e", \
	     "" using 4 title "weir" lc rgb "#1f77b4", \
	     "" using 5 title "XDP drop of the spoofed range (floor)" lc rgb "#2ca02c"
}
