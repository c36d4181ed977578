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
