#!/usr/bin/env bash
# bench/beforeafter.sh: every verb a person waits on, this tree against another revision, in
# one run, each figure beside its bound.
#
#   version          plugkit version                               bound: median <= 60 ms
#   validate         plugkit validate examples/release-notes       bound: median <= 70 ms
#   list             plugkit list on an empty home                 bound: within 10% of BASE,
#                    start-up (the version figure) left out of both, here and below
#   skills5000       plugkit validate of 5,000 skills (4 KB SKILL.md each, every frontmatter
#                    key)                                          bound: <= 1.8x a serial Go
#                    read of the same files (read5000, timed in the same rounds)
#   pack typical     plugkit pack of 50 files, 500 KB              bound: within 10% of BASE
#   pack limits      plugkit pack of 10,000 files, 60 MiB          bound: within 10% of BASE
#   unpack typical   plugkit unpack of that archive to disk        bound: within 10% of BASE
#   unpack limits                                                  bound: within 10% of BASE
#
# Each figure is the median wall and CPU time (user+sys) of RUNS (default 10) rounds. In a
# round every command of both builds runs once, interleaved (which build goes first
# alternates from round to round), so that a change in the
# machine's load reaches both alike; the load average is printed before and after. BASE is
# a commit, tag or branch, built static as the README installs plugkit; a revision that had
# two binaries runs its light plugkit, which hands its heavy verbs to plugkit-full beside it.
# The packs of both builds must be the same bytes (archive digests never change), and every
# command must succeed: a failure stops the script. Every pack and unpack writes a path of its
# own and nothing is deleted until the end, for the reason bench/oci.sh gives (on this ext4, a
# file created soon after many were deleted pays for the deletions).
#
# Usage: BASE=REV bench/beforeafter.sh [RUNS]. Needs bash, Go, git, awk. docs/performance.md
# keeps the figures.
set -euo pipefail
cd "$(dirname "$0")/.."
[ -n "${BASE:-}" ] || { echo "usage: BASE=REV bench/beforeafter.sh [RUNS]" >&2; exit 2; }
RUNS=${1:-10}
. bench/timing.sh validatebench archivebench
mkdir -p "$work/now" "$work/src"
mv "$work/plugkit" "$work/now/"
git archive "$BASE" | tar -x -C "$work/src"
(cd "$work/src" && CGO_ENABLED=0 go build -o "$work/base/" ./cmd/...)
builds=(now base)

example=$PWD/examples/release-notes
mkdir -p "$work/home"
"$work/validatebench" gen "$work/skills5000" 5000 1
"$work/archivebench" gen "$work/typical" 50 500000
"$work/archivebench" gen "$work/limits" 10000 62914560
"$work/validatebench" read "$work/skills5000" >/dev/null # warm the page cache

for ((i = 0; i < RUNS; i++)); do
	timed read5000 "$work/validatebench" read "$work/skills5000"
	# Which build goes first alternates: run against itself (BASE=HEAD), a
	# fixed order showed the first build about 10% slower.
	order=("${builds[@]}")
	((i % 2)) && order=(base now)
	for b in "${order[@]}"; do
		pk=$work/$b/plugkit
		timed "$b.version" "$pk" version
		timed "$b.validate" "$pk" validate "$example"
		timed "$b.list" "$pk" list --home "$work/home"
		timed "$b.skills5000" "$pk" validate "$work/skills5000"
		grep -q ": valid: 5000 skills" "$work/$b.skills5000.out" || { echo "validate of 5,000 skills did not succeed ($b):"; cat "$work/$b.skills5000.out" "$work/$b.skills5000.err"; exit 1; }
		for p in typical limits; do
			timed "$b.pack-$p" "$pk" pack "$work/$p" -o "$work/$b.$p.$i.tgz"
			timed "$b.unpack-$p" "$pk" unpack "$work/$b.$p.$i.tgz" "$work/$b.$p.$i.d"
		done
	done
done
for p in typical limits; do
	cmp -s "$work/now.$p.0.tgz" "$work/base.$p.0.tgz" || { echo "bench/beforeafter.sh: the $p pack differs from BASE's: archive digests changed" >&2; exit 1; }
done

# bound VERB: the bound of VERB's wall time, and the figure it is checked against.
bound() {
	local now base
	now=$(median "$work/now.$1.wall")
	base=$(median "$work/base.$1.wall")
	case $1 in
	version) awk -v n="$now" 'BEGIN { printf "%s (<= 60 ms)", (n <= 0.060) ? "met" : "NOT MET" }' ;;
	validate) awk -v n="$now" 'BEGIN { printf "%s (<= 70 ms)", (n <= 0.070) ? "met" : "NOT MET" }' ;;
	skills5000)
		local read
		read=$(median "$work/read5000.wall")
		awk -v n="$now" -v r="$read" 'BEGIN { printf "%s (%.2fx the serial read of %.3f s; <= 1.8x)", (n <= 1.8 * r) ? "met" : "NOT MET", n / r, r }' ;;
	*)
		# One binary with every verb starts slower than a light one, on purpose; the
		# start-up has its own bound above, so this one compares the verb's own work.
		local sn sb
		sn=$(median "$work/now.version.wall")
		sb=$(median "$work/base.version.wall")
		awk -v n="$now" -v b="$base" -v sn="$sn" -v sb="$sb" 'BEGIN { r = (n - sn) / (b - sb); printf "%s (%.2fx BASE less start-up; <= 1.10x)", (r <= 1.10) ? "met" : "NOT MET", r }' ;;
	esac
}

printf '%-15s %-5s %10s %10s %6s   %s\n' verb time now "base" now/base "bound of the wall time"
for verb in version validate list skills5000 pack-typical pack-limits unpack-typical unpack-limits; do
	for t in wall cpu; do
		now=$(median "$work/now.$verb.$t")
		base=$(median "$work/base.$verb.$t")
		note=""
		[ "$t" = wall ] && note=$(bound "$verb")
		printf '%-15s %-5s %9ss %9ss %6s   %s\n' "$verb" "$t" "$now" "$base" "$(ratio "$now" "$base")" "$note"
	done
done
loadavg
