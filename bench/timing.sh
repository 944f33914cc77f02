# bench/timing.sh: helpers the side-by-side scripts source. $work must name a
# scratch directory.

# timed NAME CMD...: run CMD once, append its wall and CPU seconds (user+sys,
# children included) to $work/NAME.wall and $work/NAME.cpu, and keep its
# stdout and stderr in $work/NAME.out and $work/NAME.err.
timed() {
	local name=$1; shift
	local real user sys
	{ TIMEFORMAT='%R %U %S'; time "$@" >"$work/$name.out" 2>"$work/$name.err"; } 2>"$work/time"
	read -r real user sys <"$work/time"
	echo "$real" >>"$work/$name.wall"
	awk -v u="$user" -v s="$sys" 'BEGIN { printf "%.4f\n", u + s }' >>"$work/$name.cpu"
}

# median FILE: the median of the numbers in FILE, one a line.
median() { sort -g "$1" | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else printf "%.4f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

# ratio A B: A/B to two decimals.
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }
