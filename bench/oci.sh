#!/usr/bin/env bash
# bench/oci.sh: plugkit's OCI verbs against the raw transfer of the same blobs by
# the oras CLI, in one run, against a local docker-registry on 127.0.0.1.
#
#   push:   plugkit push DIR oci://…      vs  oras push of the same config and layer files
#           (plugkit also validates and packs: the pack alone is timed too, so that the
#           time push adds over pack + raw transfer is printed)
#   pull:   plugkit pull oci://… NEWDIR   vs  oras pull -o NEWDIR of the same artifact
#           (plugkit also checks, unpacks, validates and writes the tree)
#   export: plugkit export of 100 plugins, each with a referrer, from a layout into one
#           tar  vs  tar -cf of the same layout directory (disk speed)
# for a typical plugin (50 files, about 600 KB) and a 30 MB one (2,000 files).
# Each figure is the best of RUNS (default 5) interleaved runs; every push goes to a
# fresh repository, so that blobs really travel. Every timed command must succeed.
# Target (issue 9): plugkit adds at most 10% over the raw transfer; export at disk speed.
# Needs bash, Go, docker-registry, oras (go install oras.land/oras/cmd/oras@v1.3.6), tar.
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS=${RUNS:-5}
work=$(mktemp -d)
reg_pid=
cleanup() { [ -n "$reg_pid" ] && kill "$reg_pid" 2>/dev/null; rm -rf "$work"; }
trap cleanup EXIT
oras=$(command -v oras || echo "$(go env GOPATH)/bin/oras")
[ -x "$oras" ] || { echo "bench/oci.sh: oras is not installed" >&2; exit 1; }

go build -o "$work/plugkit" ./cmd/plugkit
go build -o "$work/archivebench" ./bench/archivebench
export DOCKER_CONFIG="$work/docker"

port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
host=127.0.0.1:$port
cat >"$work/registry.yml" <<CFG
version: 0.1
log: {level: error, accesslog: {disabled: true}}
storage: {filesystem: {rootdirectory: $work/storage}, delete: {enabled: true}}
http: {addr: $host}
CFG
env -u AWS_CA_BUNDLE docker-registry serve "$work/registry.yml" >"$work/registry.log" 2>&1 &
reg_pid=$!
for _ in $(seq 100); do curl -fs "http://$host/v2/" >/dev/null && break; sleep 0.1; done

# best NAME CMD...: keep the smallest wall time of CMD in best_NAME (seconds).
best() {
	local name=$1; shift
	local real
	{ TIMEFORMAT='%R'; time "$@" >/dev/null 2>"$work/err"; } 2>"$work/time" || {
		echo "bench/oci.sh: $name failed: $*" >&2; cat "$work/err" >&2; exit 1; }
	read -r real <"$work/time"
	if [ -z "${!name:-}" ] || awk -v x="$real" -v y="${!name}" 'BEGIN { exit !(x < y) }'; then
		printf -v "$name" '%s' "$real"
	fi
}
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }
sub() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", a - b }'; }
n=0
fresh() { n=$((n + 1)); echo "$host/run$n/$1"; }

printf '%-8s %-7s %9s %9s %7s   %s\n' case step plugkit raw ratio note
for spec in "typical 50 600000" "large 2000 31457280"; do
	read -r name files bytes <<<"$spec"
	src="$work/$name"
	"$work/archivebench" gen "$src" "$files" "$bytes"
	# The raw blobs: the same config and layer plugkit pushes.
	"$work/plugkit" push "$src" "oci-layout:$work/$name.layout:1" >/dev/null
	"$work/plugkit" pull "oci-layout:$work/$name.layout:1" "$work/$name.check" >/dev/null
	"$oras" pull --oci-layout -o "$work/$name.blobs" "$work/$name.layout:1" >/dev/null
	layer="$work/$name.blobs/bench.tar.gz"
	manifest=$("$oras" manifest fetch --oci-layout "$work/$name.layout:1")
	cfg_digest=$(python3 -c 'import json,sys; print(json.loads(sys.argv[1])["config"]["digest"].split(":")[1])' "$manifest")
	cp "$work/$name.layout/blobs/sha256/$cfg_digest" "$work/$name.config.json"
	unset pk_push pk_pack raw_push pk_pull raw_pull
	for _ in $(seq "$RUNS"); do
		best pk_push "$work/plugkit" push "$src" "oci://$(fresh "$name"):1" --plain-http
		best pk_pack "$work/plugkit" pack "$src" --root bench -o "$work/$name.pack.tgz"
		(cd "$work/$name.blobs" && best raw_push "$oras" push --plain-http --artifact-type application/vnd.colossus.agent-plugin.v1 \
			--config "$work/$name.config.json:application/vnd.colossus.agent-plugin.config.v1+json" \
			"$(fresh "$name"):1" "bench.tar.gz:application/vnd.colossus.agent-plugin.content.v1.tar+gzip"
			echo "$raw_push" >"$work/raw_push")
		raw_push=$(cat "$work/raw_push")
		rm -rf "$work/$name.pulled" "$work/$name.oras"
		best pk_pull "$work/plugkit" pull "oci://$host/run1/$name:1" "$work/$name.pulled" --plain-http
		best raw_pull "$oras" pull --plain-http -o "$work/$name.oras" "$host/run1/$name:1"
	done
	printf '%-8s %-7s %9s %9s %7s   %s\n' "$name" push "$pk_push" "$raw_push" "$(ratio "$pk_push" "$raw_push")" "validate + pack + push vs oras push of the blobs"
	printf '%-8s %-7s %9s %9s %7s   %s\n' "$name" "- pack" "$(sub "$pk_push" "$pk_pack")" "$raw_push" "$(ratio "$(sub "$pk_push" "$pk_pack")" "$raw_push")" "push less plugkit pack ($pk_pack s) vs oras push; target <= 1.10"
	printf '%-8s %-7s %9s %9s %7s   %s\n' "$name" pull "$pk_pull" "$raw_pull" "$(ratio "$pk_pull" "$raw_pull")" "check + unpack + validate + write vs oras pull; target <= 1.10"
done

# Export: 100 plugins, each with a referrer, in one layout.
lay="$work/many"
digests=()
for i in $(seq 100); do
	"$work/archivebench" gen "$work/p$i" 20 60000
	sed -i "s/\"name\":\"bench\"/\"name\":\"bench$i\"/" "$work/p$i/plugin.json"
	d=$("$work/plugkit" push "$work/p$i" "oci-layout:$lay:p$i" --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["digest"])')
	echo "signature of bench$i" >"$work/sig$i.txt"
	(cd "$work" && "$oras" attach --oci-layout --artifact-type application/vnd.example.signature "$lay@$d" "sig$i.txt" >/dev/null)
	digests+=("oci-layout:$lay@$d")
done
unset pk_export raw_export
for _ in $(seq "$RUNS"); do
	best pk_export "$work/plugkit" export "${digests[@]}" "$work/many.tar"
	best raw_export tar -cf "$work/raw.tar" -C "$lay" .
done
printf '%-8s %-7s %9s %9s %7s   %s\n' "100x" export "$pk_export" "$raw_export" "$(ratio "$pk_export" "$raw_export")" \
	"$(stat -c %s "$work/many.tar") B tar with 100 referrers vs tar -cf of the layout (disk speed)"
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
