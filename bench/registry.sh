#!/usr/bin/env bash
# Load test of `plugkit serve` on 127.0.0.1 with wrk, each
# figure beside its anchor measured in the same run:
#
#   resolve, resolve cache off   requests/s against the 25,000 target, p99 < 10 ms
#   artifact (500 KB)            requests/s against http.ServeFile on the very
#                                same blob file (target >= 0.9x), p99 < 10 ms
#   docker-registry blob         the CNCF distribution registry serving the same
#                                bytes, for scale
#
# Each line also gives the server's CPU time per request (from /proc), which
# stays meaningful when the machine is loaded and requests/s do not.
#
# Usage: bench/registry.sh [DURATION] [CONNECTIONS]   (default 10s, 16; THREADS=1)
# Installs wrk and docker-registry with apt-get when they are missing
# (SKIP_DOCKER=1 leaves docker-registry out). Everything listens on 127.0.0.1
# and is stopped on exit. Record `uptime` beside the figures: on 2 shared
# cores they move with the load.
set -euo pipefail

DURATION=${1:-10s}
CONNS=${2:-16}
THREADS=${THREADS:-1} # on 2 cores a second wrk thread takes CPU from the server
ROOT=$(cd "$(dirname "$0")/.." && pwd)
WORK=$(mktemp -d)
PIDS=()
cleanup() {
	for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
	wait 2>/dev/null || true
	rm -rf "$WORK"
}
trap cleanup EXIT

need() { command -v "$1" >/dev/null 2>&1; }
if ! need wrk || { [ -z "${SKIP_DOCKER:-}" ] && ! need docker-registry; }; then
	echo "installing wrk and docker-registry" >&2
	apt-get update -qq >&2
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq wrk docker-registry >&2
fi
need curl || { echo "bench: curl is required" >&2; exit 2; }

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
wait_line() { for _ in $(seq 200); do grep -q listening "$1" 2>/dev/null && return; sleep 0.05; done; echo "bench: $1 never listened" >&2; exit 1; }

echo "building plugkit and servefile" >&2
# Static, as the README installs them (CGO_ENABLED=0).
(cd "$ROOT" && CGO_ENABLED=0 go build -o "$WORK/" ./cmd/plugkit && go build -o "$WORK/servefile" ./bench/servefile)

# A plugin whose archive is about 500 KB: random bytes do not compress.
PLUGIN="$WORK/bench-plugin"
mkdir -p "$PLUGIN"
cat >"$PLUGIN/plugin.json" <<'JSON'
{"$schema": "https://agent-plugins.org/schemas/1.0.0/plugin.schema.json", "name": "bench", "version": "1.0.0", "description": "500 KB benchmark plugin"}
JSON
head -c 500000 /dev/urandom >"$PLUGIN/payload.bin"

# serve NAME DATA [ARGS...]: start plugkit serve over the directory DATA;
# sets URL and PID.
serve() {
	local name=$1 data=$2 port
	shift 2
	port=$(free_port)
	PLUGKIT_PUBLISH_TOKENS=bench=bench-token "$WORK/plugkit" serve --data "$data" --addr "127.0.0.1:$port" \
		--gc-interval 0 "$@" >"$WORK/$name.out" 2>"$WORK/$name.err" &
	PID=$!
	PIDS+=($PID)
	wait_line "$WORK/$name.out"
	URL="http://127.0.0.1:$port"
}

serve cached "$WORK/data"
BASE=$URL BASE_PID=$PID
PLUGKIT_TOKEN=bench-token "$WORK/plugkit" publish "$PLUGIN" --registry "$BASE" --json >"$WORK/publish.json"
DIGEST=$(sed -n 's/.*"artifact_digest": "\(sha256:[0-9a-f]*\)".*/\1/p' "$WORK/publish.json")
SIZE=$(sed -n 's/.*"size": \([0-9]*\).*/\1/p' "$WORK/publish.json")
HEX=${DIGEST#sha256:}
BLOB="$WORK/data/blobs/sha256/${HEX:0:2}/$HEX"
echo "artifact $DIGEST, $SIZE bytes" >&2
# A second server, with the resolve cache off: every resolve reads SQLite.
# One server holds a data directory, so it serves a copy of the data, taken
# once the first has stopped and closed its database; the first then starts
# again on its own.
kill "$BASE_PID"
wait "$BASE_PID" 2>/dev/null || true
cp -a "$WORK/data" "$WORK/data-nocache"
serve nocache "$WORK/data-nocache" --resolve-cache-ttl 0
NOCACHE=$URL NOCACHE_PID=$PID
serve cached "$WORK/data"
BASE=$URL BASE_PID=$PID

SPORT=$(free_port)
"$WORK/servefile" "127.0.0.1:$SPORT" "$BLOB" >"$WORK/servefile.out" 2>&1 &
SERVEFILE_PID=$!
PIDS+=($SERVEFILE_PID)
wait_line "$WORK/servefile.out"
cmp -s "$BLOB" <(curl -fsS "http://127.0.0.1:$SPORT/blob") || { echo "servefile serves other bytes" >&2; exit 1; }
cmp -s "$BLOB" <(curl -fsS "$BASE/plugin-protocol/v1/artifacts/$DIGEST") || { echo "plugkit serves other bytes" >&2; exit 1; }

DBASE=
if [ -z "${SKIP_DOCKER:-}" ]; then
	DPORT=$(free_port)
	cat >"$WORK/docker-registry.yml" <<YAML
version: 0.1
log:
  level: error
  accesslog:
    disabled: true
storage:
  filesystem:
    rootdirectory: $WORK/docker-data
  delete:
    enabled: false
http:
  addr: 127.0.0.1:$DPORT
YAML
	# docker-registry panics on this machine's AWS_CA_BUNDLE.
	env -u AWS_CA_BUNDLE docker-registry serve "$WORK/docker-registry.yml" >"$WORK/docker.log" 2>&1 &
	DOCKER_PID=$!
	PIDS+=($DOCKER_PID)
	DBASE="http://127.0.0.1:$DPORT"
	for _ in $(seq 100); do curl -fsS "$DBASE/v2/" >/dev/null 2>&1 && break; sleep 0.1; done
	LOCATION=$(curl -fsS -X POST -D - -o /dev/null "$DBASE/v2/bench/blobs/uploads/" | tr -d '\r' | sed -n 's/^[Ll]ocation: //p')
	case "$LOCATION" in http*) ;; *) LOCATION="$DBASE$LOCATION" ;; esac
	SEP='?'; case "$LOCATION" in *\?*) SEP='&' ;; esac
	curl -fsS -X PUT -H 'Content-Type: application/octet-stream' --data-binary @"$BLOB" \
		"$LOCATION${SEP}digest=$DIGEST" -o /dev/null
	cmp -s "$BLOB" <(curl -fsS "$DBASE/v2/bench/blobs/$DIGEST") || { echo "docker-registry serves other bytes" >&2; exit 1; }
fi

# cputicks PID: user+system clock ticks the process has used.
cputicks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
TICK=$(getconf CLK_TCK)

# bench NAME PID URL: one wrk run; prints a result line, with the server's
# CPU time per request, which stays meaningful on a loaded machine where
# requests/s do not, and sets RPS and P99MS.
bench() {
	local name=$1 pid=$2 url=$3 out xfer errors p99 t0 t1 reqs cpu
	t0=$(cputicks "$pid")
	out=$(wrk -t"$THREADS" -c"$CONNS" -d"$DURATION" --latency "$url")
	t1=$(cputicks "$pid")
	RPS=$(awk '/^Requests\/sec:/ {print $2}' <<<"$out")
	reqs=$(awk '/requests in/ {print $1}' <<<"$out")
	cpu=$(awk -v d=$((t1 - t0)) -v n="$reqs" -v hz="$TICK" 'BEGIN { printf "%.1f", d / hz / n * 1e6 }')
	p99=$(awk '$1 == "99%" {print $2}' <<<"$out")
	P99MS=$(awk -v v="$p99" 'BEGIN { n = v + 0; if (v ~ /us$/) n /= 1000; else if (v ~ /ms$/) n += 0; else if (v ~ /s$/) n *= 1000; printf "%.2f", n }')
	xfer=$(awk '/^Transfer\/sec:/ {print $2}' <<<"$out")
	errors=$(awk '/Non-2xx|Socket errors/' <<<"$out")
	printf '%-32s %10s req/s  p99 %8s ms  %10s/s  server CPU %7s us/req%s\n' "$name" "$RPS" "$P99MS" "$xfer" "$cpu" "${errors:+  [$errors]}"
}
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }
verdict() { awk -v v="$1" -v t="$2" 'BEGIN { print (v >= t ? "met" : "MISSED") }'; }
under() { awk -v v="$1" -v t="$2" 'BEGIN { print (v < t ? "met" : "MISSED") }'; }

echo
echo "wrk -t$THREADS -c$CONNS -d$DURATION on $(nproc) cores, everything on 127.0.0.1; $(uptime | sed 's/.*load/load/')"
bench "plugkit resolve (cache)" "$BASE_PID" "$BASE/plugin-protocol/v1/resolve?plugin_id=bench&channel=stable"
CACHED=$RPS
bench "plugkit resolve (cache off)" "$NOCACHE_PID" "$NOCACHE/plugin-protocol/v1/resolve?plugin_id=bench&channel=stable"
RESOLVE=$RPS RESOLVE_P99=$P99MS
bench "plugkit artifact ($SIZE B)" "$BASE_PID" "$BASE/plugin-protocol/v1/artifacts/$DIGEST"
ART=$RPS ART_P99=$P99MS
bench "http.ServeFile, same file" "$SERVEFILE_PID" "http://127.0.0.1:$SPORT/blob"
SERVEFILE=$RPS
if [ -n "$DBASE" ]; then
	bench "docker-registry blob ($SIZE B)" "$DOCKER_PID" "$DBASE/v2/bench/blobs/$DIGEST"
fi
echo
echo "resolve, cache off:   $RESOLVE req/s = $(ratio "$RESOLVE" 25000)x the 25,000 target: $(verdict "$RESOLVE" 25000); p99 $RESOLVE_P99 ms < 10: $(under "$RESOLVE_P99" 10)"
# On a loaded machine both resolve figures fall together, and their ratio
# moves less: with the cache at 43,000/s, as last measured on a quiet
# machine, 25,000 needs 0.58x.
echo "resolve, off/on:      $(ratio "$RESOLVE" "$CACHED")x the cached rate of this run (0.58x reaches 25,000 if the cache does 43,000)"
echo "artifact/ServeFile:   $(ratio "$ART" "$SERVEFILE")x (target >= 0.9): $(verdict "$(ratio "$ART" "$SERVEFILE")" 0.9); p99 $ART_P99 ms < 10: $(under "$ART_P99" 10)"
