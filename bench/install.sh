#!/usr/bin/env bash
# bench/install.sh: the installer's two speed targets, measured in one run.
#
#   list:  plugkit list on a home with 500 installed plugins (each 2 skills, 2 MCP servers),
#          text and --json. list checks every tree as a host would before running it (its
#          files against its file list, the plugin it holds against its lock entry): about
#          half a millisecond of file I/O per plugin. Target: under 400 ms (the process
#          included), under 1 ms per plugin.
#   sync:  plugkit sync of 100 plugins (each about 200 KB) from a local plugkit serve into an
#          empty home that has only the lock, against fetching the same 100 artifacts with
#          plugkit fetch in a loop, in the same run. Target: sync limited by the network and
#          the disk, not by plugkit: no slower than the fetch loop (ratio <= 1).
#
# Figures are hyperfine means (RUNS runs, default 10, after a warm-up) of wall time and of CPU
# time (user + system, the steadier figure on a loaded machine), with the load average printed
# beside them; plugkit version shows what starting the process costs. On a loaded machine,
# re-measure. Needs bash, Go, hyperfine, awk.
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS=${RUNS:-10}
command -v hyperfine >/dev/null || { echo "bench/install.sh: needs hyperfine (apt-get install hyperfine)" >&2; exit 2; }
work=$(mktemp -d)
serve_pid=
cleanup() {
	[ -n "$serve_pid" ] && kill "$serve_pid" 2>/dev/null
	chmod -R u+w "$work" 2>/dev/null
	rm -rf "$work"
}
trap cleanup EXIT
# Static, as the README installs them (CGO_ENABLED=0).
CGO_ENABLED=0 go build -o "$work/" ./cmd/plugkit
pk="$work/plugkit"

# plugin DIR NAME FILLER_BYTES: a plugin with two skills, two MCP servers and a filler file.
plugin() {
	local dir=$1 name=$2 filler=$3
	mkdir -p "$dir/skills/one" "$dir/skills/two" "$dir/bin"
	printf '{"$schema": "https://agent-plugins.org/schemas/1.0.0/plugin.schema.json", "name": "%s", "version": "1.0.0"}\n' "$name" >"$dir/plugin.json"
	printf -- '---\nname: one\ndescription: The first skill of %s.\n---\nDo one thing.\n' "$name" >"$dir/skills/one/SKILL.md"
	printf -- '---\nname: two\ndescription: The second skill of %s.\n---\nDo another.\n' "$name" >"$dir/skills/two/SKILL.md"
	printf '#!/bin/sh\nexit 0\n' >"$dir/bin/server" && chmod +x "$dir/bin/server"
	cat >"$dir/mcp.json" <<-EOF
	{"\$schema": "https://agent-plugins.org/schemas/1.0.0/mcp.schema.json", "mcpServers": {
	  "local": {"type": "stdio", "command": "./bin/server", "args": ["--data", "\${PLUGIN_DATA}/db"], "env": {"MODE": "fast"}},
	  "remote": {"type": "streamable-http", "url": "https://$name.example.com/mcp", "headers": {"X-Tenant": "t"}}}}
	EOF
	head -c "$filler" /dev/urandom >"$dir/bin/data"
}

mean_ms() { awk -F, -v n="$2" 'NR > 1 && NR - 1 == n { printf "%.1f", $2 * 1000 }' "$1"; }
# cpu_ms CSV N: user + system time of the Nth command, steadier than wall time under load.
cpu_ms() { awk -F, -v n="$2" 'NR > 1 && NR - 1 == n { printf "%.1f", ($5 + $6) * 1000 }' "$1"; }

echo "== plugkit list, 500 installed plugins"
srcs=()
for i in $(seq -w 1 500); do
	plugin "$work/src/p$i" "p$i" 100
	srcs+=("$work/src/p$i")
done
"$pk" install "${srcs[@]}" --home "$work/home500" --yes >/dev/null
uptime
hyperfine -N --warmup 3 --runs "$RUNS" --export-csv "$work/list.csv" \
	"$pk list --home $work/home500" "$pk list --home $work/home500 --json" "$pk version" >/dev/null
printf '%-22s %9s %9s %9s\n' command "mean ms" "cpu ms" target
printf '%-22s %9s %9s %9s\n' "list" "$(mean_ms "$work/list.csv" 1)" "$(cpu_ms "$work/list.csv" 1)" "< 400"
printf '%-22s %9s %9s %9s\n' "list --json" "$(mean_ms "$work/list.csv" 2)" "$(cpu_ms "$work/list.csv" 2)" "< 400"
printf '%-22s %9s %9s %9s\n' "version (start-up)" "$(mean_ms "$work/list.csv" 3)" "$(cpu_ms "$work/list.csv" 3)" ""

echo "== plugkit sync of 100 plugins from plugkit serve, against plugkit fetch in a loop"
PLUGKIT_PUBLISH_TOKENS=bench "$pk" serve --data "$work/registry" --addr 127.0.0.1:0 >"$work/serve.out" 2>"$work/serve.err" &
serve_pid=$!
for _ in $(seq 100); do
	grep -q listening "$work/serve.out" 2>/dev/null && break
	sleep 0.1
done
url=$(sed -n 's/^plugkit serve: listening on //p' "$work/serve.out")
[ -n "$url" ] || { echo "bench/install.sh: plugkit serve did not start" >&2; cat "$work/serve.err" >&2; exit 1; }
names=()
for i in $(seq -w 1 100); do
	plugin "$work/pub/s$i" "s$i" 200000
	PLUGKIT_TOKEN=bench "$pk" publish "$work/pub/s$i" --registry "$url" >/dev/null
	names+=("s$i")
done
"$pk" install "${names[@]}" --registry "$url" --home "$work/home100" --yes >/dev/null
cp "$work/home100/plugkit.lock" "$work/lock"
printf '%s\n' "${names[@]}" >"$work/names"
cat >"$work/fetch-loop.sh" <<EOF
#!/usr/bin/env bash
set -e
while read -r n; do "$pk" fetch "\$n" "$work/fetched/\$n" --registry "$url" >/dev/null; done <"$work/names"
EOF
chmod +x "$work/fetch-loop.sh"
uptime
hyperfine --warmup 1 --runs "$RUNS" --export-csv "$work/sync.csv" \
	--prepare "chmod -R u+w $work/sync 2>/dev/null; rm -rf $work/sync && mkdir $work/sync && cp $work/lock $work/sync/plugkit.lock" \
	"$pk sync --home $work/sync" \
	--prepare "rm -rf $work/fetched && mkdir $work/fetched" \
	"$work/fetch-loop.sh" >/dev/null
sync_ms=$(mean_ms "$work/sync.csv" 1)
fetch_ms=$(mean_ms "$work/sync.csv" 2)
printf '%-22s %9s %9s\n' command "mean ms" "cpu ms"
printf '%-22s %9s %9s\n' "sync (100 plugins)" "$sync_ms" "$(cpu_ms "$work/sync.csv" 1)"
printf '%-22s %9s %9s\n' "fetch loop (100)" "$fetch_ms" "$(cpu_ms "$work/sync.csv" 2)"
awk -v s="$sync_ms" -v f="$fetch_ms" 'BEGIN { printf "ratio sync / fetch loop: %.2f (target <= 1)\n", s / f }'
