#!/usr/bin/env bash
# bench/startup.sh: what starting plugkit costs, for the verbs where a person waits on it.
#
#   version:   plugkit version                                  bound: median <= 60 ms
#   validate:  plugkit validate examples/release-notes          bound: median <= 70 ms
#   list:      plugkit list on an empty home                     (no bound: shown beside them)
#
# Each figure is the median wall time of RUNS (default 20) runs, the commands interleaved so
# that a change in the machine's load reaches all of them alike, with the load average
# printed before. With BASE=REV (a commit, tag or branch) the same commands of that revision
# are built (static, as the README installs plugkit) and run in the same interleaving, for a
# before/after in one run; a revision that had two binaries runs its light plugkit, which
# hands its heavy verbs to plugkit-full beside it. Needs bash, Go, git, awk.
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS=${RUNS:-20}
work=$(mktemp -d)
trap 'chmod -R u+w "$work" 2>/dev/null; rm -rf "$work"' EXIT

CGO_ENABLED=0 go build -o "$work/now/" ./cmd/plugkit
builds=(now)
if [ -n "${BASE:-}" ]; then
	mkdir -p "$work/src"
	git archive "$BASE" | tar -x -C "$work/src"
	(cd "$work/src" && CGO_ENABLED=0 go build -o "$work/base/" ./cmd/...)
	builds+=(base)
fi
example=$PWD/examples/release-notes
mkdir -p "$work/home"

# ms CMD...: the wall time of one run of CMD, in milliseconds; a failure stops the script.
ms() {
	local start end
	start=$(date +%s%N)
	"$@" >/dev/null 2>"$work/err" || { echo "bench/startup.sh: failed: $*" >&2; cat "$work/err" >&2; exit 1; }
	end=$(date +%s%N)
	echo $(((end - start) / 1000))
}

echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
for ((i = 0; i < RUNS; i++)); do
	for b in "${builds[@]}"; do
		pk=$work/$b/plugkit
		ms "$pk" version >>"$work/$b.version"
		ms "$pk" validate "$example" >>"$work/$b.validate"
		ms "$pk" list --home "$work/home" >>"$work/$b.list"
	done
done

median() { sort -n "$1" | awk '{ v[NR] = $1 } END { m = (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2; printf "%.1f", m / 1000 }'; }
printf '%-10s %12s %12s %8s\n' "" "now (ms)" "${BASE:+base (ms)}" "bound"
for verb in version validate list; do
	bound=$(case $verb in version) echo "<= 60" ;; validate) echo "<= 70" ;; *) echo "" ;; esac)
	base=""
	[ -n "${BASE:-}" ] && base=$(median "$work/base.$verb")
	printf '%-10s %12s %12s %8s\n' "$verb" "$(median "$work/now.$verb")" "$base" "$bound"
done
