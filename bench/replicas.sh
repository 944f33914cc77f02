#!/usr/bin/env bash
# The registry beyond one machine, measured on 127.0.0.1:
#   1. resolve across two plugkit serve replicas on PostgreSQL (wrk on both
#      at once): total requests/s and p99, against 10,000/s and 10 ms;
#   2. artifact downloads streamed from S3 (versitygw) against the blob
#      directory (target: at least 50%), and with --blobs-redirect the
#      server's CPU per download for a small and a 20x larger artifact
#      (target: no CPU per byte);
#   3. publish throughput on PostgreSQL against SQLite, both with the blob
#      directory (target: at least; medians of PUBLISH_ROUNDS alternating
#      runs, default 5), and on PostgreSQL with S3, with the CPU time each
#      process spent per publish. PostgreSQL is measured twice: with a
#      database of its own, and on the database that the replicas of the
#      other sections listen on, where each commit's notification also wakes
#      those four plugkit serve processes and their PostgreSQL backends, on
#      the same 2 cores (in a deployment, on other machines). The target
#      line is the first: it compares one server and its store with one
#      server and its store, as in the SQLite rounds, where nothing else is
#      woken. The shared-database ratio is printed below it;
#   4. p50/p99 propagation delay of a change from one replica to the other
#      (target p99: 100 ms);
#   5. the first catalog page of a 50,000-plugin catalog (target: 20 ms).
#
# Usage: bench/replicas.sh [DURATION] [CONNECTIONS]   (default 10s, 16 per replica)
# SECTIONS="3" (say) runs only the sections listed (default: "1 2 3 4 5").
# Publish (section 3) creates and deletes files (spool, blob) in each
# server's directory, and this machine's ext4 (no journal) makes creating a
# file skip every inode of its group deleted in the last minute or more
# (perf: recently_deleted). A run started a minute after another's clean-up
# spent 42-48% of each publishing server's CPU samples there, SQLite's and
# PostgreSQL's alike, and the share differs between the servers' directories
# from run to run: leave 6 minutes between runs, as for bench/oci.sh.
# Needs wrk, PostgreSQL 15 server programs, runuser (as root) and versitygw
# (go install github.com/versity/versitygw/cmd/versitygw@v1.8.0); installs
# wrk and postgresql with apt-get when missing. Everything listens on
# 127.0.0.1 and is stopped, and its files removed, on exit. Prints the
# load average first and last: figures on a busy machine are low.
set -euo pipefail

DURATION=${1:-10s}
CONNS=${2:-16}
PLUGINS=${PLUGINS:-50000}
PUBLISH_ROUNDS=${PUBLISH_ROUNDS:-5}
SECTIONS=${SECTIONS:-1 2 3 4 5}
for s in $SECTIONS; do
	case $s in [1-5]) ;; *) echo "bench: SECTIONS: no section $s (want numbers from 1 to 5)" >&2; exit 2 ;; esac
done
# section N: whether section N is to run.
section() { [[ " $SECTIONS " == *" $1 "* ]]; }
ROOT=$(cd "$(dirname "$0")/.." && pwd)
WORK=$(mktemp -d /tmp/plugkit-replicas-bench.XXXXXX)
chmod 755 "$WORK"
PIDS=()
PGCTL=""
cleanup() {
	for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
	wait 2>/dev/null || true
	[ -n "$PGCTL" ] && $PGCTL stop -m fast >/dev/null 2>&1 || true
	rm -rf "$WORK"
}
trap cleanup EXIT

need() { command -v "$1" >/dev/null 2>&1; }
PGBIN=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | tail -1 || true)
if ! need wrk || [ -z "$PGBIN" ]; then
	echo "installing wrk and postgresql" >&2
	apt-get update -qq >&2
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq wrk postgresql >&2
	PGBIN=$(ls -d /usr/lib/postgresql/*/bin | tail -1)
fi
VGW=$(command -v versitygw || echo "$(go env GOPATH)/bin/versitygw")
[ -x "$VGW" ] || { echo "bench: versitygw missing: go install github.com/versity/versitygw/cmd/versitygw@v1.8.0" >&2; exit 2; }
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg); $(nproc) cores"
echo "building plugkit and replicabench" >&2
# Static, as the README installs them (CGO_ENABLED=0).
(cd "$ROOT" && CGO_ENABLED=0 go build -o "$WORK/" ./cmd/plugkit && go build -o "$WORK/replicabench" ./bench/replicabench)

# PostgreSQL: a throwaway cluster with the durable defaults (fsync on).
PGDIR="$WORK/pg"
mkdir -p "$PGDIR"
AS=()
if [ "$(id -u)" = 0 ]; then chown postgres "$PGDIR"; AS=(runuser -u postgres --); fi
PGPORT=$(free_port)
"${AS[@]}" "$PGBIN/initdb" -D "$PGDIR/data" -U postgres --auth=trust -E UTF8 --locale=C >/dev/null
PGCTL="${AS[*]} $PGBIN/pg_ctl -D $PGDIR/data"
$PGCTL -l "$PGDIR/log" -o "-c listen_addresses=127.0.0.1 -p $PGPORT -k $PGDIR -c max_connections=200" -w start >/dev/null
"${AS[@]}" "$PGBIN/psql" -h "$PGDIR" -p "$PGPORT" -U postgres -qc "CREATE DATABASE plugkit" -c "CREATE DATABASE catalog" \
	-c "CREATE DATABASE publish"
DB="postgres://postgres@127.0.0.1:$PGPORT/plugkit?sslmode=disable"
POSTMASTER=$(head -1 "$PGDIR/data/postmaster.pid")

# versitygw with one bucket. It closes every connection after one request
# unless told --keep-alive; S3 keeps them, and without it each streamed
# download paid a new connection (13% of a 500 KB download's server CPU).
# --quiet: no line per request on its standard output.
S3PORT=$(free_port)
mkdir -p "$WORK/s3/plugkit"
ROOT_ACCESS_KEY_ID=bench ROOT_SECRET_ACCESS_KEY=bench-secret "$VGW" --port "127.0.0.1:$S3PORT" --health /healthz --keep-alive --quiet posix "$WORK/s3" \
	>"$WORK/s3.log" 2>&1 &
PID_vgw=$!
PIDS+=($PID_vgw)
for _ in $(seq 100); do curl -fsS "http://127.0.0.1:$S3PORT/healthz" >/dev/null 2>&1 && break; sleep 0.1; done
export AWS_ACCESS_KEY_ID=bench AWS_SECRET_ACCESS_KEY=bench-secret AWS_REGION=us-east-1 AWS_ENDPOINT_URL_S3="http://127.0.0.1:$S3PORT"
export PLUGKIT_PUBLISH_TOKENS=bench=bench-token PLUGKIT_TOKEN=bench-token

# serve NAME ARGS...: start a server, wait for its URL; sets URL_NAME and PID_NAME.
serve() {
	local name=$1; shift
	"$WORK/plugkit" serve --addr 127.0.0.1:0 "$@" >"$WORK/$name.out" 2>"$WORK/$name.err" &
	local pid=$!
	PIDS+=($pid)
	for _ in $(seq 200); do grep -q listening "$WORK/$name.out" 2>/dev/null && break; sleep 0.05; done
	local url
	url=$(sed -n 's/^plugkit serve: listening on //p' "$WORK/$name.out")
	[ -n "$url" ] || { echo "bench: $name did not start:" >&2; cat "$WORK/$name.err" >&2; exit 1; }
	printf -v "URL_$name" '%s' "$url"
	printf -v "PID_$name" '%s' "$pid"
}
serve a --database "$DB" --blobs "s3://plugkit/registry"
serve b --database "$DB" --blobs "s3://plugkit/registry"
serve r --database "$DB" --blobs "s3://plugkit/registry" --blobs-redirect
serve n --database "$DB" --blobs "s3://plugkit/registry" --s3-cache-bytes -1
serve d --data "$WORK/dir"
serve sq --data "$WORK/sqlite"
serve pd --database "$DB" --data "$WORK/pgdir"
serve ps --database "postgres://postgres@127.0.0.1:$PGPORT/publish?sslmode=disable" --data "$WORK/pgsolo"

# Artifacts: 500 KB and 10 MB of random bytes (they do not compress).
mkplugin() {
	local dir=$WORK/plugin-$1
	mkdir -p "$dir"
	printf '{"$schema": "https://agent-plugins.org/schemas/1.0.0/plugin.schema.json", "name": "%s", "version": "1.0.0", "description": "benchmark"}\n' "$1" >"$dir/plugin.json"
	head -c "$2" /dev/urandom >"$dir/payload.bin"
	echo "$dir"
}
publish() { "$WORK/plugkit" publish "$2" --registry "$1" --json | sed -n 's/.*"artifact_digest": "\(sha256:[0-9a-f]*\)".*/\1/p'; }
SMALL=$(mkplugin small 500000)
LARGE=$(mkplugin large 10000000)
D_SMALL=$(publish "$URL_a" "$SMALL")
D_LARGE=$(publish "$URL_a" "$LARGE")
publish "$URL_d" "$SMALL" >/dev/null
publish "$URL_d" "$LARGE" >/dev/null

# wrk NAME URL [wrk args]: one line with requests/s, p99 and transfer.
bench() {
	local name=$1 url=$2 out
	shift 2
	out=$(wrk -t1 -c"$CONNS" -d"$DURATION" --latency "$@" "$url")
	printf '%-44s %10s req/s  p99 %8s  %10s/s\n' "$name" "$(awk '/^Requests\/sec:/ {print $2}' <<<"$out")" \
		"$(awk '$1 == "99%" {print $2}' <<<"$out")" "$(awk '/^Transfer\/sec:/ {print $2}' <<<"$out")"
}
cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }

if section 1; then
echo
echo "== 1. resolve on two replicas (PostgreSQL), wrk -t1 -c$CONNS -d$DURATION on each at once"
# scrape URL: the replica's counters that tell a stall's cause, as
# "name value" lines: resolves slower than 10 and 100 ms by the server's own
# clock (handler start to end of answer: a wait for a CPU before it is not
# in it), cache misses, lookups answered from the database while the change
# feed was down, feed losses, garbage collections. A series not yet counted
# reads 0.
scrape() {
	curl -fsS "$1/metrics" | awk '
		/^plugkit_http_request_duration_seconds_bucket\{route="\/resolve",le="0.01"\}/ {f10 = $2}
		/^plugkit_http_request_duration_seconds_bucket\{route="\/resolve",le="0.1"\}/ {f100 = $2}
		/^plugkit_http_request_duration_seconds_count\{route="\/resolve"\}/ {n = $2}
		/^plugkit_cache_requests_total\{cache="resolve",result="miss"\}/ {miss = $2}
		/^plugkit_cache_bypasses_total\{cache="resolve"\}/ {bypass = $2}
		/^plugkit_change_feed_losses_total\{/ {loss += $2}
		/^go_gc_duration_seconds_count / {gc = $2}
		END {printf "over10ms %d\nover100ms %d\nmisses %d\nbypassed %d\nfeedlosses %d\ngcs %d\n", n - f10, n - f100, miss, bypass, loss, gc}'
}
RES="/plugin-protocol/v1/resolve?plugin_id=small&channel=stable"
scrape "$URL_a" >"$WORK/ma0"
scrape "$URL_b" >"$WORK/mb0"
bench "replica A resolve" "$URL_a$RES" >"$WORK/ra" &
WA=$!
bench "replica B resolve" "$URL_b$RES" >"$WORK/rb" &
WB=$!
wait $WA $WB
cat "$WORK/ra" "$WORK/rb"
awk '{s += $(NF-4)} END {printf "%-44s %10.0f req/s in total (target 10,000; p99 target 10 ms)\n", "both replicas", s}' "$WORK/ra" "$WORK/rb"
# wrk corrects its latencies for coordinated omission: a response that
# took S adds samples up to S at every mean interval between requests of a
# connection (about 0.6 ms here), so one stall of all 16 connections of
# 0.3 s in a 10 s run puts p99 near 0.2 s. The server's own counts tell
# whether the stall was in the server's work (slow resolves, misses, the
# feed down) or in waiting for a CPU (none of them).
for r in a b; do
	u=URL_$r
	scrape "${!u}" >"$WORK/m${r}1"
	awk -v r="${r^^}" 'NR == FNR {v0[$1] = $2; next} {d[$1] = $2 - v0[$1]}
		END {printf "replica %s during the run: resolves over 10 ms %d, over 100 ms %d (server clock); misses %d, bypassed %d, feed losses %d; GCs %d\n",
			r, d["over10ms"], d["over100ms"], d["misses"], d["bypassed"], d["feedlosses"], d["gcs"]}' "$WORK/m${r}0" "$WORK/m${r}1"
	# Why the feed was lost, if it was: the server's log says.
	grep "change feed" "$WORK/$r.err" | sed "s/^/replica ${r^^}: /" || true
done
fi

if section 2; then
echo
echo "== 2. artifact downloads streamed through the server (target: S3 at least 0.5x the directory)"
# The memory cache is the default (--s3-cache-bytes); without it, every
# download is a GET to versitygw, which shares the 2 cores with the server
# and wrk. Both are printed, for a small and a large artifact.
for pair in "500 KB:$D_SMALL" "10 MB:$D_LARGE"; do
	label=${pair%%:*} digest=${pair#*:}
	d0=$(cpu_ticks "$PID_d") a0=$(cpu_ticks "$PID_a") n0=$(cpu_ticks "$PID_n") v0=$(cpu_ticks "$PID_vgw")
	bench "directory backend, $label" "$URL_d/plugin-protocol/v1/artifacts/$digest" >"$WORK/dl-d"
	d1=$(cpu_ticks "$PID_d") a1=$(cpu_ticks "$PID_a")
	bench "S3 backend, memory cache, $label" "$URL_a/plugin-protocol/v1/artifacts/$digest" >"$WORK/dl-a"
	a2=$(cpu_ticks "$PID_a") n1=$(cpu_ticks "$PID_n") v1=$(cpu_ticks "$PID_vgw")
	bench "S3 backend, no cache, $label" "$URL_n/plugin-protocol/v1/artifacts/$digest" >"$WORK/dl-n"
	n2=$(cpu_ticks "$PID_n") v2=$(cpu_ticks "$PID_vgw")
	cat "$WORK/dl-d" "$WORK/dl-a" "$WORK/dl-n"
	# The CPU per download of the plugkit server, and of versitygw: on
	# these 2 cores versitygw's share caps the no-cache rate; in a
	# deployment S3 runs elsewhere and the server's share is what counts.
	# Requests are rate x duration (wrk's rate is requests over its run).
	for c in "d:directory:$((d1 - d0)):0" "a:S3, memory cache:$((a2 - a1)):0" "n:S3, no cache:$((n2 - n1)):$((v2 - v1))"; do
		IFS=: read -r f what st vt <<<"$c"
		downloads=$(awk -v secs="${DURATION%s}" '{print $(NF-4) * secs}' "$WORK/dl-$f")
		per=$(awk -v t="$st" -v hz="$(getconf CLK_TCK)" -v n="$downloads" 'BEGIN {printf "%.1f", t / hz / n * 1e6}')
		printf -v "cpu_$f" '%s' "$per"
		awk -v l="$label" -v what="$what" -v s="$per" -v vt="$vt" -v hz="$(getconf CLK_TCK)" -v n="$downloads" \
			'BEGIN {printf "CPU per download, %-7s %-18s plugkit serve %6.1f us, versitygw %6.1f us\n", l, what, s, vt / hz / n * 1e6}'
	done
	# The uncached ratio were versitygw on other cores: the directory
	# server's CPU per download over the uncached S3 server's. It bounds a
	# replica's rate where S3 runs elsewhere.
	awk -v l="$label" -v d="$cpu_d" -v n="$cpu_n" \
		'BEGIN {printf "S3/directory, %-7s no cache, by server CPU %.2fx (versitygw on other cores)\n", l, d / n}'
	for c in "a:memory cache (default)" "n:no cache"; do
		awk -v l="$label" -v what="${c#*:}" 'NR == FNR {d = $(NF-4); next} {r = $(NF-4) / d
			printf "S3/directory, %-7s %-24s %.2fx (target >= 0.5): %s\n", l, what, r, (r >= 0.5 ? "met" : "MISSED")}' \
			"$WORK/dl-d" "$WORK/dl-${c%%:*}"
	done
done
for pair in "500 KB:$D_SMALL" "10 MB:$D_LARGE"; do
	label=${pair%%:*} digest=${pair#*:}
	before=$(cpu_ticks "$PID_r")
	out=$(wrk -t1 -c"$CONNS" -d"$DURATION" "$URL_r/plugin-protocol/v1/artifacts/$digest")
	after=$(cpu_ticks "$PID_r")
	reqs=$(awk '/requests in/ {print $1}' <<<"$out")
	awk -v l="$label" -v t=$((after - before)) -v n="$reqs" -v hz="$(getconf CLK_TCK)" \
		'BEGIN {printf "--blobs-redirect %-7s %9d redirects, server CPU %.1f us per download\n", l, n, t / hz / n * 1e6}'
done
fi

if section 3; then
echo
echo "== 3. publish throughput (200 publishes of distinct plugins, 8 at a time, $PUBLISH_ROUNDS rounds alternating)"
# One run moves with the machine's load by more than the difference
# measured, so the stores alternate and the medians are compared.
# pg_ticks: the CPU ticks of the PostgreSQL cluster (the postmaster, its
# children, and those it has reaped).
pg_ticks() {
	local t=0 f st
	for f in /proc/[0-9]*/stat; do
		{ read -r st <"$f"; } 2>/dev/null || continue
		set -- ${st##*) }
		if [ "${f#/proc/}" = "$POSTMASTER/stat" ]; then
			t=$((t + ${12} + ${13} + ${14} + ${15}))
		elif [ "$2" = "$POSTMASTER" ]; then
			t=$((t + ${12} + ${13}))
		fi
	done
	echo "$t"
}
SERVERS=("$PID_a" "$PID_b" "$PID_r" "$PID_n" "$PID_d" "$PID_sq" "$PID_pd" "$PID_ps")
serve_ticks() { local t=0 p; for p in "${SERVERS[@]}"; do t=$((t + $(cpu_ticks "$p"))); done; echo "$t"; }
# rate NAME URL PID: one round; appends to pub-NAME its rate and the CPU
# microseconds per publish of the server, of PostgreSQL and of the other
# plugkit serve processes.
rate() {
	local s0 p0 a0 s1 p1 a1 r
	s0=$(cpu_ticks "$3") p0=$(pg_ticks) a0=$(serve_ticks)
	r=$("$WORK/replicabench" publish "$2" 200 8 | sed -n 's/.*: \([0-9.]*\) publishes\/s.*/\1/p')
	s1=$(cpu_ticks "$3") p1=$(pg_ticks) a1=$(serve_ticks)
	awk -v r="$r" -v s=$((s1 - s0)) -v p=$((p1 - p0)) -v o=$((a1 - a0 - s1 + s0)) -v hz="$(getconf CLK_TCK)" \
		'BEGIN {f = 1e6 / hz / 200; printf "%s %.0f %.0f %.0f\n", r, s * f, p * f, o * f}' >>"$WORK/pub-$1"
}
median() { sort -n | awk '{v[NR] = $1} END {print (NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2)}'; }
col() { awk -v c="$2" '{print $c}' "$WORK/pub-$1" | median; }
for _ in $(seq "$PUBLISH_ROUNDS"); do
	rate sq "$URL_sq" "$PID_sq"
	rate ps "$URL_ps" "$PID_ps"
	rate pd "$URL_pd" "$PID_pd"
	rate a "$URL_a" "$PID_a"
done
for pair in "sq:SQLite, blob directory" "ps:PostgreSQL, own database" "pd:PostgreSQL, shared database" "a:PostgreSQL, S3, shared database"; do
	n=${pair%%:*}
	printf '%-34s %7.1f publishes/s (median; runs: %s)\n' "${pair#*:}:" "$(col "$n" 1)" "$(awk '{printf "%s ", $1}' "$WORK/pub-$n")"
	printf '%-34s CPU per publish (medians): server %s us, PostgreSQL %s us, other plugkit serve %s us\n' "" \
		"$(col "$n" 2)" "$(col "$n" 3)" "$(col "$n" 4)"
done
SQ=$(col sq 1) PS=$(col ps 1) PD=$(col pd 1)
awk -v p="$PS" -v s="$SQ" 'BEGIN {printf "PostgreSQL/SQLite, own database:    %.2fx (target >= 1): %s\n", p / s, (p >= s ? "met" : "MISSED")}'
awk -v p="$PD" -v s="$SQ" 'BEGIN {printf "PostgreSQL/SQLite, shared database: %.2fx (4 more replicas woken per commit)\n", p / s}'
fi

if section 4; then
echo
echo "== 4. propagation of a change from replica A to replica B"
"$WORK/replicabench" propagate "$URL_a" "$URL_b" 200
fi

if section 5; then
echo
echo "== 5. first catalog page of $PLUGINS plugins"
CATDB="postgres://postgres@127.0.0.1:$PGPORT/catalog?sslmode=disable"
# Seeding is setup, not a figure: commits need not wait for the disk.
"$WORK/replicabench" seed "$CATDB&synchronous_commit=off" "$PLUGINS"
serve c --database "$CATDB" --blobs "s3://plugkit/catalog"
printf '%-12s ' "PostgreSQL:"; "$WORK/replicabench" latency "$URL_c" 200
"$WORK/replicabench" seed-sqlite "$WORK/catalog-sqlite" "$PLUGINS"
serve cs --data "$WORK/catalog-sqlite"
printf '%-12s ' "SQLite:"; "$WORK/replicabench" latency "$URL_cs" 200
fi

echo
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
