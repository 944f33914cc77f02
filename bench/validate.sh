#!/usr/bin/env bash
# bench/validate.sh: what validating a hostile plugin costs, by shape and size.
#
# For every shape of plugin.json and mcp.json (a wide object, a long array, deep
# nesting, escapes, one diagnostic per element past MaxDiagnostics), of SKILL.md
# frontmatter (aliases that multiply problems, alias bombs, dense YAML; plugins of
# 4 KiB frontmatters) and of directory link fan-out (two links per level to the
# next; 12 levels over a bottom file that makes the plugin the size, read from
# disk), at 1, 4 and 16 MiB, bench/validatebench prints the least CPU time of RUNS
# loads, the least CPU time of the anchor in the same run (encoding/json parsing
# the same bytes into an any; yaml.v3 into a yaml.Node for frontmatter; os.ReadFile
# of every path for the fan-out), their ratio, and the peak heap of one more load
# (runtime/metrics, collector at GOGC=10) against the input's size. Every load is
# checked: a plugin refused when its shape should load (or loaded when it should
# be refused) stops the bench, so no figure measures an unintended refusal.
#
# A last line, dir-link-fanout-30, reads the 30-level fan-out (2^30 paths), refused
# at MaxEntries, against listing as many directories as that limit admits; its
# "x size" is the peak heap per entry admitted.
#
# Targets: time linear in the size (the ratio stays flat from 1 to
# 16 MiB), a JSON document validated in about the time it takes to parse it, and
# peak heap within about 10x the input.
#
# Usage: bench/validate.sh [RUNS] [SIZES] [SHAPES-REGEXP]   (default 3, "1,4,16", all)
set -euo pipefail
cd "$(dirname "$0")/.."
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || uptime)"
go run ./bench/validatebench shapes -runs "${1:-3}" -sizes "${2:-1,4,16}" -shapes "${3:-}"
