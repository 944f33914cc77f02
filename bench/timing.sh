# bench/timing.sh: what the side-by-side scripts share. Sourced from the
# repository root, it makes the scratch directory $work (removed on exit),
# builds plugkit and each bench program named as arguments into it, and
# prints the load average.
set -euo pipefail
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# Static, as the README installs them (CGO_ENABLED=0).
CGO_ENABLED=0 go build -o "$work/" ./cmd/plugkit
for tool in "$@"; do go build -o "$work/$tool" "./bench/$tool"; done
loadavg() { echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"; }
loadavg

# timed NAME CMD...: run CMD once, append its wall and CPU seconds (user+sys,
# children included) to $work/NAME.wall and $work/NAME.cpu, and keep its
# stdout and stderr in $work/NAME.out and $work/NAME.err. The wall time is
# taken from EPOCHREALTIME, to the microsecond: bash's time prints
# milliseconds, a 7% step on a 14 ms unpack.
timed() {
	local name=$1; shift
	local start end user sys
	start=$EPOCHREALTIME
	{ TIMEFORMAT='%U %S'; time "$@" >"$work/$name.out" 2>"$work/$name.err"; } 2>"$work/time"
	end=$EPOCHREALTIME
	read -r user sys <"$work/time"
	awk -v s="$start" -v e="$end" 'BEGIN { printf "%.6f\n", e - s }' >>"$work/$name.wall"
	awk -v u="$user" -v s="$sys" 'BEGIN { printf "%.4f\n", u + s }' >>"$work/$name.cpu"
}

# median FILE: the median of the numbers in FILE, one a line.
median() { sort -g "$1" | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else printf "%.4f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

# ratio A B: A/B to two decimals.
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }
