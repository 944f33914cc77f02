#!/usr/bin/env bash
# bench/archive.sh: plugkit's archives against GNU tar and gzip, side by side.
#
# For a typical plugin (50 files, about 500 KB) and one at the limits
# (10,000 files, 60 MiB), both generated here, it times in one run:
#   pack:    plugkit pack DIR            vs  tar --sort=name --format=ustar -cf - DIR | gzip -6 -n
#   unpack:  plugkit unpack FILE NEWDIR  vs  tar -xzf FILE -C NEWDIR   (plugkit also prints the digest)
#   and archive.Unpack+Digest in memory (bench/archivebench), with its allocation and peak heap.
# Each figure is the best of RUNS (default 5) interleaved runs, wall time and CPU time
# (user+sys). Needs bash, Go, GNU tar, gzip, awk.
#
# Targets: pack time ratio <= 1 and size ratio <= 1.02; unpack+digest in
# memory at least 2x faster than tar -xzf (ratio <= 0.5); Unpack peak heap <= 2x the file
# bytes. Unpack to disk ends with a syncfs that tar does not do: the comparison of
# it, against tar -xzf && sync -f, is bench/unpack.sh's.
# Pack CPU (user+sys) <= 1.7x tar | gzip -6's: archives are compressed by the standard
# library's compress/flate, a new writer per 256 KiB chunk (docs/install.md says why), and
# plugkit pack's peak RSS <= 1.5x the payload (the files' bytes). With PROFILE=1 the
# script also prints the top of a CPU profile of archive.Pack on the limits plugin.
# Every timed command must succeed: a refusal stops the script.
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS=${RUNS:-5}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# Static, as the README installs them (CGO_ENABLED=0).
CGO_ENABLED=0 go build -o "$work/" ./cmd/plugkit
go build -o "$work/archivebench" ./bench/archivebench

# best NAME CMD...: run CMD; keep the smallest wall time in best_NAME and the
# smallest CPU time (user + sys, children included) in cpu_NAME, in seconds.
# On a loaded machine the CPU figures are the steadier ones.
best() {
	local name=$1; shift
	local real user sys cpu
	{ TIMEFORMAT='%R %U %S'; time "$@" >/dev/null 2>"$work/err"; } 2>"$work/time" || {
		echo "bench/archive.sh: $name failed: $*" >&2; cat "$work/err" >&2; exit 1; }
	read -r real user sys <"$work/time"
	cpu=$(awk -v u="$user" -v s="$sys" 'BEGIN { printf "%.3f", u + s }')
	keep_min "best_$name" "$real"
	keep_min "cpu_$name" "$cpu"
}
keep_min() {
	if [ -z "${!1:-}" ] || awk -v x="$2" -v y="${!1}" 'BEGIN { exit !(x < y) }'; then
		printf -v "$1" '%s' "$2"
	fi
}
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }

tar_gzip() { tar --sort=name --format=ustar -C "$1" -cf - . | gzip -6 -n >"$2"; }
fresh_tar_x() { rm -rf "$2" && mkdir "$2" && tar -xzf "$1" -C "$2"; }
fresh_unpack() { rm -rf "$2" && "$work/plugkit" unpack "$1" "$2"; }

printf '%-8s %-10s %10s %10s %7s   %s\n' case step plugkit tar ratio note
for spec in "typical 50 500000" "limits 10000 62914560"; do
	read -r name files bytes <<<"$spec"
	src="$work/$name"
	"$work/archivebench" gen "$src" "$files" "$bytes"
	unset best_pk best_tg best_pu best_tx cpu_pk cpu_tg cpu_pu cpu_tx
	for _ in $(seq "$RUNS"); do
		best pk "$work/plugkit" pack "$src" -o "$work/$name.pk.tgz"
		best tg tar_gzip "$src" "$work/$name.tar.gz"
		best pu fresh_unpack "$work/$name.pk.tgz" "$work/$name.pu"
		best tx fresh_tar_x "$work/$name.pk.tgz" "$work/$name.tx"
	done
	pk_size=$(stat -c %s "$work/$name.pk.tgz")
	tg_size=$(stat -c %s "$work/$name.tar.gz")
	# The typical plugin's wall time is mostly start-up, whose bounds are
	# bench/beforeafter.sh's; the limits plugin's is packing.
	wall_target="target <= 1"
	[ "$name" = typical ] && wall_target="no bound: start-up, see bench/beforeafter.sh"
	printf '%-8s %-10s %10s %10s %7s   %s\n' "$name" "pack s" "$best_pk" "$best_tg" "$(ratio "$best_pk" "$best_tg")" "$wall_target"
	printf '%-8s %-10s %10s %10s %7s   %s\n' "$name" "pack cpu" "$cpu_pk" "$cpu_tg" "$(ratio "$cpu_pk" "$cpu_tg")" "user+sys; target <= 1.7"
	printf '%-8s %-10s %10s %10s %7s   %s\n' "$name" "size B" "$pk_size" "$tg_size" "$(ratio "$pk_size" "$tg_size")" "target <= 1.02"
	printf '%-8s %-10s %10s %10s %7s   %s\n' "$name" "unpack s" "$best_pu" "$best_tx" "$(ratio "$best_pu" "$best_tx")" "plugkit unpack to disk, made durable, vs tar -xzf without a sync; bench/unpack.sh adds the sync"
	printf '%-8s %-10s %10s %10s %7s   %s\n' "$name" "unpack cpu" "$cpu_pu" "$cpu_tx" "$(ratio "$cpu_pu" "$cpu_tx")" "user+sys"
	mem=$("$work/archivebench" unpack "$work/$name.pk.tgz" "$RUNS")
	inmem=$(sed -n 's/.*unpack_digest_best_s=\([0-9.]*\).*/\1/p' <<<"$mem")
	printf '%-8s %-10s %10s %10s %7s   %s\n' "$name" "unpack s" "$inmem" "$best_tx" "$(ratio "$inmem" "$best_tx")" "archive.Unpack+Digest in memory vs tar -xzf; target <= 0.5"
	sed -n 's/^alloc_bytes=.* alloc_ratio=\([0-9.]*\) peak_heap_bytes=\([0-9]*\) peak_heap_ratio=\([0-9.]*\)/         Unpack memory: peak heap \2 B = \3 x file bytes (target <= 2), allocated \1 x/p' <<<"$mem"
	if [ -x /usr/bin/time ]; then
		payload=$(find "$src" -type f -printf '%s\n' | awk '{ s += $1 } END { print s }')
		prss=$(/usr/bin/time -f %M "$work/plugkit" pack "$src" -o "$work/$name.rss.tgz" 2>&1 >/dev/null | tail -1)
		echo "         plugkit pack peak RSS: ${prss} KiB = $(ratio "$((prss * 1024))" "$payload") x the payload of $payload B (target <= 1.5)"
		idle=$(/usr/bin/time -f %M "$work/plugkit" version 2>&1 >/dev/null | tail -1)
		echo "         of which the process at rest (plugkit version): ${idle} KiB; the rest is $(ratio "$(((prss - idle) * 1024))" "$payload") x the payload"
		cmp -s "$work/$name.rss.tgz" "$work/$name.pk.tgz" || { echo "bench/archive.sh: two packs differ" >&2; exit 1; }
		rm -rf "$work/$name.pu"
		rss=$(/usr/bin/time -f %M "$work/plugkit" unpack "$work/$name.pk.tgz" "$work/$name.pu" 2>&1 >/dev/null | tail -1)
		echo "         plugkit unpack peak RSS: ${rss} KiB (whole process)"
	fi
done

if [ "${PROFILE:-0}" = 1 ]; then
	echo "CPU profile of archive.Pack, limits plugin (go test -bench 'Pack/limits'):"
	go test ./archive -run '^$' -bench 'BenchmarkPack/limits' -benchtime 3x -cpuprofile "$work/pack.prof" -o "$work/archive.test" >/dev/null
	go tool pprof -top -nodecount 15 "$work/archive.test" "$work/pack.prof" 2>/dev/null | sed -n '1,22p'
fi
