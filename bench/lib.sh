# shellcheck shell=bash
# shellcheck disable=SC2154 # $bench_name is set by the sourcing script
# Shared by bench/daemon.sh and bench/runs.sh (sourced, not run): a work
# directory, the processes to stop on exit, and the small helpers both use.
# The sourcing script sets $bench_name (its name, for messages) first.

work=$(mktemp -d "/tmp/abctl-${bench_name%.sh}.XXXXXX")
out=${BENCH_OUT:-$work/out}
mkdir -p "$out" "$work/bin"
pids=()

# cleanup stops every process in pids (politely, then with SIGKILL after
# 5 s) and removes the work directory.
cleanup() {
	local pid i
	for pid in "${pids[@]}"; do
		kill "$pid" 2>/dev/null || true
	done
	for pid in "${pids[@]}"; do
		for ((i = 0; i < 50; i++)); do
			kill -0 "$pid" 2>/dev/null || break
			sleep 0.1
		done
		kill -KILL "$pid" 2>/dev/null || true
	done
	rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

log() { printf '%s %s\n' "$(date +%T)" "$*" >&2; }

# wait_for FILE REGEX: prints the first match of REGEX in FILE, waiting up
# to 60 s for it to appear (the ceiling seeds its records first).
wait_for() {
	local i m
	for ((i = 0; i < 600; i++)); do
		if m=$(grep -oE -m1 "$2" "$1" 2>/dev/null); then
			printf '%s\n' "$m"
			return 0
		fi
		sleep 0.1
	done
	echo "$bench_name: nothing matching '$2' in $1 after 60 s:" >&2
	cat "$1" >&2
	return 1
}

# parse FILE: "req_per_s p50_ms errors requests" from wrk's output.
parse() {
	awk '
		function ms(s) {
			if (s ~ /us$/) return substr(s, 1, length(s) - 2) / 1000
			if (s ~ /ms$/) return substr(s, 1, length(s) - 2) + 0
			if (s ~ /s$/) return substr(s, 1, length(s) - 1) * 1000
			return -1
		}
		/^Requests\/sec:/ {rps = $2}
		/ requests in / {n = $1}
		/^ +50%/ {p50 = ms($2)}
		/Non-2xx or 3xx responses:/ {err += $NF}
		/Socket errors:/ {gsub(/,/, ""); err += $4 + $6 + $8 + $10}
		END {printf "%s %s %d %d\n", rps, p50, err, n}
	' "$1"
}

# Small helpers of the result tables.
col() { awk -F'\t' -v l="$1" -v n="$2" '$1 == l {print $n}' "$data"; }
median() { sort -g | awk '{v[NR] = $1} END {if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }
fmt() { awk -v v="$1" -v f="$2" 'BEGIN {printf f, v}'; }
met() { if awk -v r="${2:-0}" -v p="${3:-0}" "BEGIN {exit !($1)}"; then echo yes; else echo "**no**"; fi; }
