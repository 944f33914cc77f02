#!/usr/bin/env bash
# bench/skills.sh: validating plugins with many skills against the read floor.
#
# Generates two plugins inside the limits with bench/validatebench:
#   skills5000  5,000 skills, each one SKILL.md (every frontmatter key, 4 KB)  5,001 files
#   fileheavy   1,000 skills of SKILL.md and 8 reference files                9,001 files
# and times, interleaved, RUNS whole-process runs of
#   plugkit validate DIR        (checked: exit 0 and "valid")
#   validatebench read DIR      a serial Go read of the same files (checked: the file count)
# printing the medians of wall and CPU time (user+sys) and their ratio.
#
# Bound: validate of 5,000 skills within 1.8x of the serial read. Both ratios are
# printed: validate parses the skills on every CPU, which shortens its wall time and
# not its CPU time.
#
# Usage: bench/skills.sh [RUNS]   (default 15). Needs bash, Go, awk, sort.
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS=${1:-15}
. bench/timing.sh validatebench

printf '%-11s %-5s %10s %10s %7s\n' plugin time validate read ratio
for spec in "skills5000 5000 1" "fileheavy 1000 9"; do
	read -r name skills files <<<"$spec"
	dir="$work/$name"
	"$work/validatebench" gen "$dir" "$skills" "$files"
	want=$((skills * files + 1))
	"$work/validatebench" read "$dir" >/dev/null # warm the page cache
	rm -f "$work"/v.* "$work"/r.*
	for _ in $(seq "$RUNS"); do
		timed v "$work/plugkit" validate "$dir"
		grep -q ": valid: $skills skills" "$work/v.out" || { echo "validate did not succeed:"; cat "$work/v.out" "$work/v.err"; exit 1; }
		timed r "$work/validatebench" read "$dir"
		grep -q "^files=$want " "$work/r.out" || { echo "read did not see $want files:"; cat "$work/r.out"; exit 1; }
	done
	for t in wall cpu; do
		v=$(median "$work/v.$t")
		r=$(median "$work/r.$t")
		printf '%-11s %-5s %9ss %9ss %7s\n' "$name" "$t" "$v" "$r" "$(ratio "$v" "$r")"
	done
done
loadavg
