#!/usr/bin/env bash
# bench/oci.sh: plugkit's OCI verbs against the raw transfer of the same blobs by
# the oras CLI, in one run, against a local docker-registry on 127.0.0.1.
#
#   push:   plugkit push DIR oci://…      vs  oras push of the same config and layer files,
#           and vs plugkit pack + oras push (the packing any tool has to do, then the
#           raw transfer)
#   pull:   plugkit pull oci://… NEWDIR   vs  oras pull -o NEWDIR of the same artifact,
#           and vs oras pull + tar -xzf of the layer (transfer, then extraction), and
#           that followed by sync -f (plugkit pull makes its tree durable; tar does not)
#   export: plugkit export of 100 plugins, each with a referrer, from a layout into one
#           tar (and export --check, which also unpacks and validates every layer)
#           vs  tar -cf of the same layout directory (disk speed), and that
#           followed by sync -f (export syncs its file; tar does not), and how much of
#           it is plugkit's start-up (plugkit version); for 100 small plugins (20 files,
#           60 KB: the fixed costs) and for 100 typical ones (where throughput shows)
# for a typical plugin (50 files, about 600 KB) and a 30 MB one (2,000 files).
# Each figure is the best of RUNS (default 5) interleaved runs; every push goes to a
# fresh repository, so that blobs really travel. Every timed command must succeed.
# Every pull or extraction writes a directory of its own, and nothing is deleted
# until the end: on this machine's ext4 (no journal), creating a file skips every
# inode of its group deleted in the last minute or more, so a tree made just after
# 2,000 files were deleted costs what the deletions left behind, not its own
# files (perf: recently_deleted). And a sync before each timed command (not
# timed) leaves each durable variant only its own writes to flush. For the same
# reason a run started within minutes of another (whose clean-up deleted some
# 45,000 files) pays for that clean-up in every pull and extraction: on this
# machine, leave 6 minutes between runs.
# Target: plugkit adds at most 10% over the raw transfer; export at disk speed.
# SECTIONS (default "transfer export") picks what runs: transfer is push and pull,
# export the two export cases; SECTIONS=export measures export alone.
# Needs bash, Go, docker-registry, oras (go install oras.land/oras/cmd/oras@v1.3.6), tar.
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS=${RUNS:-5}
SECTIONS=${SECTIONS:-transfer export}
# section NAME: whether SECTIONS names NAME.
section() { [[ " $SECTIONS " == *" $1 "* ]]; }
work=$(mktemp -d)
reg_pid=
cleanup() { [ -n "$reg_pid" ] && kill "$reg_pid" 2>/dev/null; rm -rf "$work"; }
trap cleanup EXIT
oras=$(command -v oras || echo "$(go env GOPATH)/bin/oras")
[ -x "$oras" ] || { echo "bench/oci.sh: oras is not installed" >&2; exit 1; }

# Static, as the README installs them (CGO_ENABLED=0).
CGO_ENABLED=0 go build -o "$work/" ./cmd/plugkit
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

# best NAME CMD...: keep the smallest wall time of CMD in NAME and the
# smallest CPU time (user + sys, children included) in cpu_NAME, in seconds.
# On a loaded machine the CPU figures are the steadier ones.
best() {
	local name=$1; shift
	local real user sys
	sync
	{ TIMEFORMAT='%R %U %S'; time "$@" >/dev/null 2>"$work/err"; } 2>"$work/time" || {
		echo "bench/oci.sh: $name failed: $*" >&2; cat "$work/err" >&2; exit 1; }
	read -r real user sys <"$work/time"
	keep_min "$name" "$real"
	keep_min "cpu_$name" "$(awk -v u="$user" -v s="$sys" 'BEGIN { printf "%.3f", u + s }')"
}
keep_min() {
	if [ -z "${!1:-}" ] || awk -v x="$2" -v y="${!1}" 'BEGIN { exit !(x < y) }'; then
		printf -v "$1" '%s' "$2"
	fi
}
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.2f", a / b; else printf "-" }'; }
n=0
# fresh CASE sets repo to a repository nothing was pushed to yet.
fresh() { n=$((n + 1)); repo="$host/run$n/$1"; }

printf '%-8s %-7s %9s %9s %7s   %s\n' case step plugkit raw ratio note
section transfer && for spec in "typical 50 600000" "large 2000 31457280"; do
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
	unset pk_push pk_pack raw_push pk_pull raw_pull packpush pullx pullxs
	unset cpu_pk_push cpu_pk_pack cpu_raw_push cpu_pk_pull cpu_raw_pull cpu_packpush cpu_pullx cpu_pullxs
	# packpush_cmd CASE SRC and pullx_cmd CASE take the case as an argument:
	# best's own local "name" shadows the loop's.
	packpush_cmd() {
		"$work/plugkit" pack "$2" --root bench -o "$work/$1.pp/bench.tar.gz" &&
			(cd "$work/$1.pp" && "$oras" push --plain-http --artifact-type application/vnd.colossus.agent-plugin.v1 \
				--config "$work/$1.config.json:application/vnd.colossus.agent-plugin.config.v1+json" \
				"$repo:1" "bench.tar.gz:application/vnd.colossus.agent-plugin.content.v1.tar+gzip")
	}
	# pullx_cmd CASE DIR
	pullx_cmd() {
		"$oras" pull --plain-http -o "$2" "$pullrepo:1" && tar -xzf "$2/bench.tar.gz" -C "$2"
	}
	# plugkit pull makes the tree durable (one syncfs before the rename):
	# the same extraction, then the same flush.
	pullxs_cmd() { pullx_cmd "$1" "$2" && sync -f "$2"; }
	mkdir -p "$work/$name.pp" "$work/out"
	fresh "$name"
	pullrepo=$repo # what the pulls read
	"$work/plugkit" push "$src" "oci://$pullrepo:1" --plain-http >/dev/null
	for _ in $(seq "$RUNS"); do
		fresh "$name"
		best pk_push "$work/plugkit" push "$src" "oci://$repo:1" --plain-http
		best pk_pack "$work/plugkit" pack "$src" --root bench -o "$work/$name.pack.tgz"
		fresh "$name"
		(cd "$work/$name.blobs" && best raw_push "$oras" push --plain-http --artifact-type application/vnd.colossus.agent-plugin.v1 \
			--config "$work/$name.config.json:application/vnd.colossus.agent-plugin.config.v1+json" \
			"$repo:1" "bench.tar.gz:application/vnd.colossus.agent-plugin.content.v1.tar+gzip"
			echo "$raw_push $cpu_raw_push" >"$work/raw_push")
		read -r raw_push cpu_raw_push <"$work/raw_push"
		best pk_pull "$work/plugkit" pull "oci://$pullrepo:1" "$work/out/$n.pulled" --plain-http
		best raw_pull "$oras" pull --plain-http -o "$work/out/$n.oras" "$pullrepo:1"
		fresh "$name"
		best packpush packpush_cmd "$name" "$src"
		best pullx pullx_cmd "$name" "$work/out/$n.px"
		best pullxs pullxs_cmd "$name" "$work/out/$n.pxs"
	done
	printf '%-8s %-7s %9s %9s %7s   %s\n' "$name" push "$pk_push" "$raw_push" "$(ratio "$pk_push" "$raw_push")" "validate + pack + push vs oras push of the blobs"
	printf '%-8s %-7s %9s %9s %7s   %s\n' "$name" push "$pk_push" "$packpush" "$(ratio "$pk_push" "$packpush")" "plugkit push vs plugkit pack ($pk_pack s) + oras push; target <= 1.10"
	printf '%-8s %-7s %9s %9s %7s   %s\n' "$name" pull "$pk_pull" "$raw_pull" "$(ratio "$pk_pull" "$raw_pull")" "check + unpack + validate + write vs oras pull"
	printf '%-8s %-7s %9s %9s %7s   %s\n' "$name" pull "$pk_pull" "$pullx" "$(ratio "$pk_pull" "$pullx")" "plugkit pull vs oras pull + tar -xzf; target <= 1.10"
	printf '%-8s %-7s %9s %9s %7s   %s\n' "$name" pull "$pk_pull" "$pullxs" "$(ratio "$pk_pull" "$pullxs")" "plugkit pull vs oras pull + tar -xzf && sync -f, durable as pull is"
	printf '%-8s %-7s %9s %9s %7s   %s\n' "$name" "push cpu" "$cpu_pk_push" "$cpu_packpush" "$(ratio "$cpu_pk_push" "$cpu_packpush")" "user+sys; plugkit pack alone $cpu_pk_pack"
	printf '%-8s %-7s %9s %9s %7s   %s\n' "$name" "pull cpu" "$cpu_pk_pull" "$cpu_pullx" "$(ratio "$cpu_pk_pull" "$cpu_pullx")" "user+sys"
done

# Export: 100 plugins, each with a referrer, in one layout; CASE FILES BYTES per plugin.
section export && for spec in "100x 20 60000" "100x600K 50 600000"; do
	read -r name files bytes <<<"$spec"
	lay="$work/$name.many"
	digests=()
	for i in $(seq 100); do
		p="$work/$name.p$i"
		"$work/archivebench" gen "$p" "$files" "$bytes"
		sed -i "s/\"name\":\"bench\"/\"name\":\"bench$i\"/" "$p/plugin.json"
		d=$("$work/plugkit" push "$p" "oci-layout:$lay:p$i" --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["digest"])')
		echo "signature of bench$i" >"$work/sig$i.txt"
		(cd "$work" && "$oras" attach --oci-layout --artifact-type application/vnd.example.signature "$lay@$d" "sig$i.txt" >/dev/null)
		digests+=("oci-layout:$lay@$d")
	done
	unset pk_export pk_check raw_export rawsync_export cpu_pk_export cpu_pk_check cpu_raw_export cpu_rawsync_export pk_start cpu_pk_start
	# export syncs its file before the rename; tar_cfs does the same flush.
	tar_cfs() { tar -cf "$work/raw.tar" -C "$lay" . && sync -f "$work/raw.tar"; }
	for _ in $(seq "$RUNS"); do
		best pk_export "$work/plugkit" export "${digests[@]}" "$work/many.tar"
		best pk_check "$work/plugkit" export --check "${digests[@]}" "$work/many.tar"
		best raw_export tar -cf "$work/raw.tar" -C "$lay" .
		best rawsync_export tar_cfs
		best pk_start "$work/plugkit" version
	done
	printf '%-8s %-7s %9s %9s %7s   %s\n' "$name" export "$pk_export" "$raw_export" "$(ratio "$pk_export" "$raw_export")" \
		"$(stat -c %s "$work/many.tar") B tar with 100 referrers vs tar -cf of the layout (disk speed)"
	printf '%-8s %-7s %9s %9s %7s   %s\n' "$name" export "$pk_export" "$rawsync_export" "$(ratio "$pk_export" "$rawsync_export")" \
		"vs tar -cf && sync -f, durable as export is"
	printf '%-8s %-7s %9s %9s %7s   %s\n' "$name" "exp cpu" "$cpu_pk_export" "$cpu_raw_export" "$(ratio "$cpu_pk_export" "$cpu_raw_export")" "user+sys"
	printf '%-8s %-7s %9s %9s %7s   %s\n' "$name" "--check" "$pk_check" "$raw_export" "$(ratio "$pk_check" "$raw_export")" \
		"export --check (every layer unpacked and validated, as pull does; CPU $cpu_pk_check s) vs tar -cf"
	printf '%-8s %-7s %9s %9s %7s   %s\n' "$name" "start" "$pk_start" "$pk_export" "$(ratio "$pk_start" "$pk_export")" "of the export, plugkit's start-up (plugkit version; CPU $cpu_pk_start s)"
	# The export's own work: its best time less its best start-up, which
	# tar, started in about a millisecond, hardly pays.
	pk_work=$(awk -v a="$pk_export" -v b="$pk_start" 'BEGIN {printf "%.3f", a - b}')
	printf '%-8s %-7s %9s %9s %7s   %s\n' "$name" "-start" "$pk_work" "$rawsync_export" "$(ratio "$pk_work" "$rawsync_export")" \
		"export less plugkit's start-up vs tar -cf && sync -f"
done
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
