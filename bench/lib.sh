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
# ratios A B: the per-round ratio of A's req/s to B's (column 3 of $data).
ratios() {
	awk -F'\t' -v a="$1" -v b="$2" '$1 == a {x[$2] = $3} $1 == b {y[$2] = $3}
		END {for (r in x) if (y[r] > 0) print x[r] / y[r]}' "$data"
}
# num X: X rounded, with thousands separators.
num() {
	awk -v v="$1" 'BEGIN {
		s = sprintf("%.0f", v); t = ""
		while (length(s) > 3) { t = "," substr(s, length(s) - 2) t; s = substr(s, 1, length(s) - 3) }
		print s t
	}'
}

# warm_up ROWS...: two seconds of every wrk row (run_wrk is the script's).
warm_up() {
	log "warm-up: 2 s of every row"
	local row
	for row in "$@"; do run_wrk "$row" 2s "$work/warmup.txt"; done
}
# round_order ROUND ROWS...: the rows in the order round ROUND runs them,
# one a line: as given in odd rounds, reversed in even ones, so that no
# row always runs on a machine warmed by the same neighbour.
round_order() {
	local round=$1 i
	shift
	if ((round % 2 == 0)); then
		for ((i = $#; i >= 1; i--)); do printf '%s\n' "${!i}"; done
	else
		printf '%s\n' "$@"
	fi
}
