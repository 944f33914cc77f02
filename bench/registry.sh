#!/usr/bin/env bash
# Load test of `plugkit serve` on 127.0.0.1 with wrk: requests/s and p99 of
# resolve, and of downloading a 500 KB artifact, side by side with Debian's
# docker-registry (the CNCF distribution registry) serving the same blob in
# the same run.
#
# Usage: bench/registry.sh [DURATION] [CONNECTIONS]   (default 10s, 16; THREADS=1)
# Installs wrk and docker-registry with apt-get when they are missing.
# Everything listens on 127.0.0.1 and is stopped on exit.
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
if ! need wrk || ! need docker-registry; then
	echo "installing wrk and docker-registry" >&2
	apt-get update -qq >&2
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq wrk docker-registry >&2
fi
need curl || { echo "bench: curl is required" >&2; exit 2; }

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

echo "building plugkit" >&2
(cd "$ROOT" && go build -o "$WORK/plugkit" ./cmd/plugkit)

# A plugin whose archive is about 500 KB: random bytes do not compress.
PLUGIN="$WORK/bench-plugin"
mkdir -p "$PLUGIN"
cat >"$PLUGIN/plugin.json" <<'JSON'
{"$schema": "https://agent-plugins.org/schemas/1.0.0/plugin.schema.json", "name": "bench", "version": "1.0.0", "description": "500 KB benchmark plugin"}
JSON
head -c 500000 /dev/urandom >"$PLUGIN/payload.bin"

# plugkit serve.
PORT=$(free_port)
PLUGKIT_PUBLISH_TOKENS=bench-token "$WORK/plugkit" serve --data "$WORK/data" --addr "127.0.0.1:$PORT" \
	>"$WORK/serve.out" 2>"$WORK/serve.err" &
PIDS+=($!)
BASE="http://127.0.0.1:$PORT"
for _ in $(seq 100); do grep -q listening "$WORK/serve.out" 2>/dev/null && break; sleep 0.1; done
PLUGKIT_TOKEN=bench-token "$WORK/plugkit" publish "$PLUGIN" --registry "$BASE" --json >"$WORK/publish.json"
DIGEST=$(sed -n 's/.*"artifact_digest": "\(sha256:[0-9a-f]*\)".*/\1/p' "$WORK/publish.json")
SIZE=$(sed -n 's/.*"size": \([0-9]*\).*/\1/p' "$WORK/publish.json")
echo "artifact $DIGEST, $SIZE bytes" >&2
curl -fsS "$BASE/plugin-protocol/v1/artifacts/$DIGEST" -o "$WORK/blob"

# docker-registry with the same blob, pushed through its HTTP API.
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
docker-registry serve "$WORK/docker-registry.yml" >"$WORK/docker.log" 2>&1 &
PIDS+=($!)
DBASE="http://127.0.0.1:$DPORT"
for _ in $(seq 100); do curl -fsS "$DBASE/v2/" >/dev/null 2>&1 && break; sleep 0.1; done
LOCATION=$(curl -fsS -X POST -D - -o /dev/null "$DBASE/v2/bench/blobs/uploads/" | tr -d '\r' | sed -n 's/^[Ll]ocation: //p')
case "$LOCATION" in http*) ;; *) LOCATION="$DBASE$LOCATION" ;; esac
SEP='?'; case "$LOCATION" in *\?*) SEP='&' ;; esac
curl -fsS -X PUT -H 'Content-Type: application/octet-stream' --data-binary @"$WORK/blob" \
	"$LOCATION${SEP}digest=$DIGEST" -o /dev/null
cmp -s "$WORK/blob" <(curl -fsS "$DBASE/v2/bench/blobs/$DIGEST") || { echo "docker-registry serves other bytes" >&2; exit 1; }

# bench NAME URL: one wrk run; prints a result line.
bench() {
	local name=$1 url=$2 out
	out=$(wrk -t"$THREADS" -c"$CONNS" -d"$DURATION" --latency "$url")
	local rps p99 xfer
	rps=$(awk '/^Requests\/sec:/ {print $2}' <<<"$out")
	p99=$(awk '$1 == "99%" {print $2}' <<<"$out")
	xfer=$(awk '/^Transfer\/sec:/ {print $2}' <<<"$out")
	local errors
	errors=$(awk '/Non-2xx|Socket errors/' <<<"$out")
	printf '%-34s %12s req/s   p99 %9s   %10s/s %s\n' "$name" "$rps" "$p99" "$xfer" "${errors:+  [$errors]}"
}

echo
echo "wrk -t$THREADS -c$CONNS -d$DURATION on $(nproc) cores, everything on 127.0.0.1"
bench "plugkit resolve (channel)" "$BASE/plugin-protocol/v1/resolve?plugin_id=bench&channel=stable"
bench "plugkit artifact ($SIZE B)" "$BASE/plugin-protocol/v1/artifacts/$DIGEST"
bench "docker-registry blob ($SIZE B)" "$DBASE/v2/bench/blobs/$DIGEST"
