#!/usr/bin/env bash
# bench/cli.sh: the CLI's figures (issue "abctl, the CLI", benchmark item),
# each beside a ceiling measured in the same run:
#
#   - `abctl apply -f DIR` of AGENTS new agent files, against `clibase
#     create`, which makes the same requests (create with the name's
#     Idempotency-Key, then the abctl.name tag) from one Go process without
#     reading any file: agents per second;
#   - `abctl apply -f DIR` of the same files, all unchanged (one walk of the
#     agent list, one batch read of the tags, local normalising, no write),
#     against `clibase list`, which makes the same reads: hyperfine, median;
#   - `abctl --version`, against /bin/true: process start, hyperfine, median.
#
# Both sides run against the same `abctl daemon` on a loopback port with a
# temporary data directory (the creation ceiling against a second one, so
# that each creates into an empty store). Needs hyperfine (Debian package;
# installed when run as root). ROUNDS (hyperfine runs, default 10) and
# AGENTS (default 1000) change it.
set -euo pipefail
cd "$(dirname "$0")/.."
bench_name=cli.sh
# shellcheck source=bench/lib.sh
source bench/lib.sh

ROUNDS=${ROUNDS:-10}
AGENTS=${AGENTS:-1000}
if ! command -v hyperfine >/dev/null; then
	if [ "$(id -u)" = 0 ]; then apt-get install -y -qq hyperfine >/dev/null; else
		echo "$bench_name: needs hyperfine (apt-get install hyperfine)" >&2; exit 1; fi
fi

log "building abctl and clibase"
go build -o "$work/bin/abctl" ./cmd/abctl
go build -o "$work/bin/clibase" ./bench/clibase
abctl=$work/bin/abctl clibase=$work/bin/clibase

# start_daemon NAME: starts a daemon on a free port; sets url_NAME, key_NAME.
start_daemon() {
	local name=$1 dir=$work/$1
	mkdir -p "$dir"
	"$abctl" daemon --data-dir "$dir" --addr 127.0.0.1:0 --workers 1 >"$dir.log" 2>&1 &
	pids+=($!)
	local addr
	addr=$(wait_for "$dir.log" 'addr=127\.0\.0\.1:[0-9]+' | cut -d= -f2)
	printf -v "url_$name" 'http://%s' "$addr"
	printf -v "key_$name" '%s' "$(cat "$dir/api-key")"
}
start_daemon a
start_daemon b
log "daemons at $url_a and $url_b"

"$clibase" gen -dir "$work/agents" -n "$AGENTS"
export ABCTL_BASE_URL=$url_a ABCTL_API_KEY=$key_a ABCTL_EMBED=false ABCTL_CONFIG_DIR=$work/config

log "creating $AGENTS agents: clibase (daemon b), then abctl apply (daemon a)"
ceil_create=$("$clibase" create -url "$url_b" -key "$key_b" -n "$AGENTS" | awk '{print $(NF-1)}')
t0=$(date +%s.%N)
"$abctl" apply -f "$work/agents" >"$work/apply-create.txt"
t1=$(date +%s.%N)
abctl_create=$(awk -v a="$t0" -v b="$t1" 'BEGIN {printf "%.3f", b - a}')
created=$(grep -c ' created$' "$work/apply-create.txt" || true)
[ "$created" = "$AGENTS" ] || { echo "$bench_name: apply created $created of $AGENTS" >&2; exit 1; }

log "apply of $AGENTS unchanged files vs clibase list ($ROUNDS runs each)"
hyperfine -N --warmup 2 --runs "$ROUNDS" --export-json "$work/unchanged.json" \
	-n "abctl apply (unchanged)" "$abctl apply -f $work/agents" \
	-n "clibase list" "$clibase list -url $url_a -key $key_a" >"$work/hyperfine1.txt" 2>&1 || { cat "$work/hyperfine1.txt" >&2; exit 1; }
"$abctl" apply -f "$work/agents" | sort | uniq -c | awk '{print $3}' | sort -u | grep -qx unchanged ||
	{ echo "$bench_name: a repeated apply did not report every agent unchanged" >&2; exit 1; }

log "abctl --version vs /bin/true"
hyperfine -N --warmup 20 --runs 300 --export-json "$work/version.json" \
	-n "abctl --version" "$abctl --version" -n "true" "/bin/true" >"$work/hyperfine2.txt" 2>&1 || { cat "$work/hyperfine2.txt" >&2; exit 1; }

median() { python3 -c "import json,sys; r=json.load(open(sys.argv[1]))['results']; print(' '.join('%.2f' % (x['median']*1000) for x in r))" "$1"; }
read -r apply_ms list_ms < <(median "$work/unchanged.json")
read -r version_ms true_ms < <(median "$work/version.json")

cat <<TABLE

Run of $(date -u +%F) on $(git rev-parse --short HEAD)$(git diff --quiet || echo ' (working tree)'), $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg).

| what | abctl | ceiling, same run | ratio | target | met |
|---|---|---|---|---|---|
| apply $AGENTS new agent files (end to end) | $abctl_create s ($(awk -v n="$AGENTS" -v s="$abctl_create" 'BEGIN {printf "%.0f", n / s}') agents/s) | clibase create: $ceil_create s ($(awk -v n="$AGENTS" -v s="$ceil_create" 'BEGIN {printf "%.0f", n / s}') agents/s) | $(awk -v a="$abctl_create" -v b="$ceil_create" 'BEGIN {printf "%.2f×", a / b}') | (throughput reported) | |
| apply $AGENTS unchanged files (median of $ROUNDS) | $apply_ms ms | clibase list: $list_ms ms | $(awk -v a="$apply_ms" -v b="$list_ms" 'BEGIN {printf "%.2f×", a / b}') | ≤ 2 s | $(awk -v a="$apply_ms" 'BEGIN {print (a <= 2000) ? "yes" : "**no**"}') |
| \`abctl --version\` (median of 300) | $version_ms ms | /bin/true: $true_ms ms | — | ≤ 30 ms | $(awk -v a="$version_ms" 'BEGIN {print (a <= 30) ? "yes" : "**no**"}') |
TABLE
