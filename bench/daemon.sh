#!/usr/bin/env bash
# bench/daemon.sh: the daemon under load, side by side with a plain
# net/http + bbolt server (bench/ceiling) measured in the same run.
#
# It builds abctl, the ceiling and the seeder into a temporary directory,
# starts on free loopback ports (from 127.0.0.1:0):
#
#   ceiling        bench/ceiling with 10,000 records of 1 KiB
#   daemon "read"  abctl daemon seeded with $AGENTS agents and 20 folders
#                  (bench/seed, through the SDK): GET agent, GET folder, search
#   daemon "write" abctl daemon on an empty data directory: POST /v1/agents
#                  (so that the POST runs do not grow the agent list the
#                  searches walk)
#   runsd          the daemon with the instant executor (bench/runsd: every
#                  run completes at once, no browser) on an empty data
#                  directory: POST /v1/run/tasks, each run then executed
#
# The writes are compared with two ceilings: one commit per request
# (POST /record) and group commit (POST /record-group, db.Batch with a
# 1 ms delay), the daemon's own way of writing; group commit again with a
# body of the bytes the daemon stores per agent (6.5 KB), and the reads
# with records of the agents' size (GET /sized), are the floors of the
# same bytes (issue 32).
#
# then runs $ROUNDS rounds of every measurement with wrk (-t2 -c50 -d10s
# --latency, the searches with -c$SEARCH_CONNS), reversing the order every
# other round so that ceiling and daemon runs alternate and drift evens out,
# measures the daemon's idle RSS, and prints a Markdown table of medians with
# the ratio to the ceiling of the same round. Everything it starts is
# stopped on exit. About 5 minutes with the defaults.
#
# Environment: ROUNDS (3), DURATION (10s), SEARCH_CONNS (2, one per core), AGENTS (10000),
# BENCH_OUT (a directory to keep the raw wrk outputs, runs.tsv and the table
# in; default: a temporary directory removed on exit), BENCH_REV (what to
# print as the source measured; default: the git commit).
set -euo pipefail

ROUNDS=${ROUNDS:-3}
DURATION=${DURATION:-10s}
SEARCH_CONNS=${SEARCH_CONNS:-2}
AGENTS=${AGENTS:-10000}
RECORDS=10000
KEY="bench-$RANDOM$RANDOM"

cd "$(dirname "$0")/.."
root=$(pwd)

if ! command -v wrk >/dev/null; then
	if [[ $(id -u) -ne 0 ]]; then
		echo "daemon.sh: wrk is missing; install it with: sudo apt-get install -y wrk" >&2
		exit 1
	fi
	echo "installing wrk ..." >&2
	apt-get update -qq && apt-get install -y -qq wrk >/dev/null
fi

for tool in go curl; do
	command -v "$tool" >/dev/null || {
		echo "daemon.sh: $tool is missing" >&2
		exit 1
	}
done

bench_name=daemon.sh
# shellcheck source=bench/lib.sh
source "$root/bench/lib.sh"

# start_daemon NAME: starts abctl daemon on a fresh data directory
# $work/NAME, logging to $work/NAME.log; sets daemon_pid and daemon_url.
start_daemon() {
	local name=$1 addr
	"$work/bin/abctl" daemon --data-dir "$work/$name" --addr 127.0.0.1:0 --api-key "$KEY" \
		2>>"$work/$name.log" &
	daemon_pid=$!
	pids+=("$daemon_pid")
	addr=$(wait_for "$work/$name.log" 'addr=127\.0\.0\.1:[0-9]+')
	daemon_url="http://${addr#addr=}"
}

# rss PID: "VmRSS RssAnon RssFile DB" in KiB, DB being the resident part
# of the process's mappings of *.db files (bbolt maps its whole file).
rss() {
	local db
	db=$(awk '/^[0-9a-f]+-[0-9a-f]+ / {name = $6} /^Rss:/ && name ~ /\.db$/ {s += $2} END {print s + 0}' "/proc/$1/smaps")
	awk -v db="$db" '/^VmRSS:/ {v = $2} /^RssAnon:/ {a = $2} /^RssFile:/ {f = $2} END {print v, a, f, db}' "/proc/$1/status"
}

mib() { awk -v k="$1" 'BEGIN {printf "%.1f", k / 1024}'; }

log "building abctl, ceiling and seed into $work/bin"
go build -o "$work/bin/abctl" ./cmd/abctl
go build -o "$work/bin/ceiling" ./bench/ceiling
go build -o "$work/bin/seed" ./bench/seed
go build -o "$work/bin/runsd" ./bench/runsd

{
	echo "date: $(date -u '+%Y-%m-%d %H:%M UTC')"
	echo "cpu: $(nproc) x $(awk -F': ' '/^model name/ {print $2; exit}' /proc/cpuinfo)"
	echo "kernel: $(uname -r); $(go version | cut -d' ' -f3); $(wrk --version 2>&1 | head -1 | cut -d' ' -f1-2)"
	if [[ -n ${BENCH_REV:-} ]]; then
		echo "source: $BENCH_REV"
	else
		echo "source: $(git rev-parse --short HEAD 2>/dev/null || echo unknown)$(git diff --quiet HEAD -- daemon cmd client 2>/dev/null || echo ' with uncommitted changes')"
	fi
} >"$out/env.txt"

# The daemon on an empty data directory: idle RSS, then the POST target.
start_daemon write
write_pid=$daemon_pid write_url=$daemon_url
sleep 5
read -r rss_empty rss_empty_anon rss_empty_file rss_empty_db < <(rss "$write_pid")
log "daemon on an empty data dir: VmRSS $(mib "$rss_empty") MiB after 5 s idle"

start_daemon read
read_pid=$daemon_pid read_url=$daemon_url
log "seeding $AGENTS agents into $read_url"
timeout 300 "$work/bin/seed" -url "$read_url" -key "$KEY" -agents "$AGENTS" -folders 20 -workers 8 -out "$work" | tee "$out/seed.txt" >&2
sleep 5
read -r rss_seeded rss_seeded_anon rss_seeded_file rss_seeded_db < <(rss "$read_pid")
log "seeded daemon: VmRSS $(mib "$rss_seeded") MiB after 5 s idle"

"$work/bin/runsd" -data-dir "$work/tasks" -api-key "$KEY" >"$work/tasks.out" 2>>"$work/tasks.log" &
tasks_pid=$!
pids+=("$tasks_pid")
tasks_url="http://$(wait_for "$work/tasks.out" '127\.0\.0\.1:[0-9]+')"

"$work/bin/ceiling" -db "$work/ceiling.db" -records "$RECORDS" >"$work/ceiling.log" 2>&1 &
ceiling_pid=$!
pids+=("$ceiling_pid")
ceiling_url="http://$(wait_for "$work/ceiling.log" '127\.0\.0\.1:[0-9]+')"
sleep 5
read -r rss_ceiling rss_ceiling_anon rss_ceiling_file rss_ceiling_db < <(rss "$ceiling_pid")

seq -f '/record/%g' 1 "$RECORDS" >"$work/record_paths.txt"
seq -f '/sized/%g' 1 "$RECORDS" >"$work/sized_paths.txt"
echo /record >"$work/record_post.txt"
echo /record-group >"$work/record_group_post.txt"
# A body of 6,656 bytes, the size of what the daemon stores per agent
# create (the agent as the API answers it): group commit at the same
# bytes per write (issue 32's floor for POST /v1/agents).
printf '{"pad":"%s"}' "$(head -c 6646 /dev/zero | tr '\0' x)" >"$work/post_sized_body.json"
echo /v1/run/tasks >"$work/task_post.txt"
echo '{"prompt":"Find the price of the first product","url":"https://shop.example.com/"}' >"$work/task_body.json"
echo /v1/agents >"$work/agent_post.txt"
echo '/v1/agents?search_key=northwind' >"$work/search_hit.txt"
echo '/v1/agents?search_key=no-such-agent' >"$work/search_miss.txt"
# A sanity check of every request before timing anything.
curl -fsS -o /dev/null "$ceiling_url/record/1"
curl -fsS -o /dev/null -H "x-api-key: $KEY" "$read_url$(head -1 "$work/agent_paths.txt")"
curl -fsS -o /dev/null -H "x-api-key: $KEY" "$read_url$(head -1 "$work/folder_paths.txt")"
hits=$(curl -fsS -H "x-api-key: $KEY" "$read_url/v1/agents?search_key=northwind&page_size=100" | grep -o '"workflow_permanent_id"' | wc -l)
log "search_key=northwind: $hits agents on a page of 100 (the runs fetch the first page of 10)"

# The rows: label | server | paths file | body file | connections
rows=(
	"c_get|ceiling|record_paths.txt||50"
	"c_sized|ceiling|sized_paths.txt||50"
	"d_agent|read|agent_paths.txt||50"
	"d_folder|read|folder_paths.txt||50"
	"c_post|ceiling|record_post.txt|post_body.json|50"
	"c_group|ceiling|record_group_post.txt|post_body.json|50"
	"c_group_sized|ceiling|record_group_post.txt|post_sized_body.json|50"
	"d_post|write|agent_post.txt|post_body.json|50"
	"d_task|tasks|task_post.txt|task_body.json|50"
	"d_search|read|search_hit.txt||$SEARCH_CONNS"
	"d_scan|read|search_miss.txt||$SEARCH_CONNS"
)

# io PID: the bytes the process has caused to be written to disk so far.
io() { awk '/^write_bytes:/ {print $2}' "/proc/$1/io"; }

# run_wrk ROW DURATION OUTFILE: runs wrk for one row; OUTFILE gets wrk's
# output and OUTFILE.io the server's disk writes during the run.
run_wrk() {
	local label server paths body conns url key="" pid b0 b1
	IFS='|' read -r label server paths body conns <<<"$1"
	case $server in
	ceiling) url=$ceiling_url pid=$ceiling_pid ;;
	read) url=$read_url pid=$read_pid key=$KEY ;;
	write) url=$write_url pid=$write_pid key=$KEY ;;
	tasks) url=$tasks_url pid=$tasks_pid key=$KEY ;;
	esac
	b0=$(io "$pid")
	# A Lua error does not stop wrk (it sends GET / instead): look for one.
	if ! BENCH_PATHS="$work/$paths" BENCH_BODY=${body:+$work/$body} BENCH_KEY=$key \
		timeout 60 wrk -t2 -c"$conns" -d"$2" --latency --timeout 5s -s "$root/bench/request.lua" "$url" >"$3" 2>&1 ||
		grep -q 'request\.lua' "$3"; then
		echo "daemon.sh: wrk failed for $label:" >&2
		cat "$3" >&2
		return 1
	fi
	b1=$(io "$pid")
	echo "$((b1 - b0))" >"$3.io"
	# Keep the daemons' access logs from filling the disk.
	: >"$work/read.log"
	: >"$work/write.log"
	: >"$work/tasks.log"
}


warm_up "${rows[@]}"

data="$out/runs.tsv"
printf 'label\tround\treq_per_s\tp50_ms\terrors\tdisk_bytes_per_req\n' >"$data"
for ((round = 1; round <= ROUNDS; round++)); do
	mapfile -t order < <(round_order "$round" "${rows[@]}")
	for row in "${order[@]}"; do
		label=${row%%|*}
		run_wrk "$row" "$DURATION" "$out/$label.r$round.txt"
		read -r rps p50 errs n < <(parse "$out/$label.r$round.txt")
		read -r bytes <"$out/$label.r$round.txt.io"
		printf '%s\t%d\t%s\t%s\t%s\t%s\n' "$label" "$round" "$rps" "$p50" "$errs" \
			"$(awk -v b="$bytes" -v n="$n" 'BEGIN {printf "%.0f", n ? b / n : 0}')" >>"$data"
		log "round $round/$ROUNDS $label: $rps req/s, p50 $p50 ms, errors $errs"
		sleep 1
	done
done

sleep 5
read -r rss_after rss_after_anon rss_after_file rss_after_db < <(rss "$read_pid")

# col LABEL N: the values of column N (3 req/s, 4 p50) of LABEL's rounds.
range() { sort -g | awk 'NR == 1 {lo = $1} {hi = $1} END {printf "%.0f–%.0f", lo, hi}'; }
# met CONDITION R P: "yes" or "**no**", CONDITION being an awk expression on
# r (the ratio) and p (the p50 in ms).

# row LABEL WHAT CEILING_LABEL TARGET_TEXT CONDITION(awk, on r = ratio, p = p50 ms)
row() {
	local rps p50 rng ratio="" ceil="—" ratio_txt="—"
	rps=$(col "$1" 3 | median)
	p50=$(col "$1" 4 | median)
	rng=$(col "$1" 3 | range)
	if [[ -n $3 ]]; then
		ratio=$(ratios "$1" "$3" | median)
		ratio_txt="$(fmt "$ratio" '%.2f')×"
		ceil=$(num "$(col "$3" 3 | median)")
	fi
	printf '| %s | %s (%s) | %s ms | %s | %s | %s | %s |\n' "$2" "$(num "$rps")" "$rng" \
		"$(fmt "$p50" '%.2f')" "$ceil" "$ratio_txt" "$4" "$(if [[ -n $5 ]]; then met "$5" "$ratio" "$p50"; else echo —; fi)"
}

errors=$(awk -F'\t' 'NR > 1 {s += $5} END {print s + 0}' "$data")
{
	echo "wrk -t2 -c50 -d$DURATION --latency (searches: -c$SEARCH_CONNS), $ROUNDS rounds: medians, min–max of req/s;" \
		"the ratio is the median over rounds of daemon ÷ ceiling in the same round."
	echo
	echo "| row | req/s median (min–max) | p50 median | ceiling req/s | ratio to ceiling | target | met |"
	echo "|---|---|---|---|---|---|---|"
	row c_get "ceiling: \`GET /record/{n}\`, 1 KiB from bbolt" "" "" ""
	row c_sized "ceiling: \`GET /sized/{n}\`, 6.5 KiB from bbolt, the agents' size (informative)" "" "" ""
	row d_agent "daemon: \`GET /v1/agents/{id}\`, one of $AGENTS at random" c_get "≥ 0.5×, p50 ≤ 1 ms" "r >= 0.5 && p <= 1"
	row d_agent "  the same, against the 6.5 KiB ceiling: the same bytes (issue 32)" c_sized "≥ 0.9×" "r >= 0.9"
	row d_folder "daemon: \`GET /v1/folders/{id}\`, one of 20 at random" c_get "≥ 0.5×, p50 ≤ 1 ms" "r >= 0.5 && p <= 1"
	row c_post "ceiling: \`POST /record\`, one \`db.Update\` per request" "" "" ""
	row c_group "ceiling: \`POST /record-group\`, group commit (\`db.Batch\`, 1 ms delay)" "" "" ""
	row d_post "daemon: \`POST /v1/agents\`" c_group "≥ 0.5×" "r >= 0.5"
	row d_post "  the same, against one commit per request (informative)" c_post "" ""
	row c_group_sized "ceiling: \`POST /record-group\` of 6.5 KB, what the daemon stores per agent (informative)" "" "" ""
	row d_post "  the same, against group commit of the same bytes (issue 32)" c_group_sized "≥ 0.8×" "r >= 0.8"
	row d_task "daemon: \`POST /v1/run/tasks\`, each run then executed at once (bench/runsd)" c_group "≥ 0.5×" "r >= 0.5"
	row d_search "daemon: \`GET /v1/agents?search_key=northwind\` (1% match), first page" "" "p50 ≤ 20 ms" "p <= 20"
	row d_scan "daemon: \`GET /v1/agents?search_key=no-such-agent\` (scans all $AGENTS)" "" "p50 ≤ 20 ms" "p <= 20"
	echo
	printf '| idle RSS, 5 s after the last request | VmRSS MiB | anonymous | file-backed | of which the bbolt file | target | met |\n'
	printf '|---|---|---|---|---|---|---|\n'
	rss_row() {
		printf '| %s | %s | %s | %s | %s | %s | %s |\n' "$1" "$(mib "$2")" "$(mib "$3")" "$(mib "$4")" "$(mib "$5")" \
			"${6:-—}" "$(if [[ -n ${6:-} ]]; then met "$2 * 1024 <= 40000000"; else echo —; fi)"
	}
	rss_row "daemon, empty data directory" "$rss_empty" "$rss_empty_anon" "$rss_empty_file" "$rss_empty_db" "≤ 40 MB"
	rss_row "daemon, after seeding $AGENTS agents" "$rss_seeded" "$rss_seeded_anon" "$rss_seeded_file" "$rss_seeded_db" "≤ 40 MB"
	rss_row "daemon, after all the runs (informative)" "$rss_after" "$rss_after_anon" "$rss_after_file" "$rss_after_db"
	rss_row "ceiling, 10,000 records (informative)" "$rss_ceiling" "$rss_ceiling_anon" "$rss_ceiling_file" "$rss_ceiling_db"
	echo
	echo "Bytes written to disk per POST (medians, write_bytes of /proc/PID/io over the run ÷ requests):" \
		"ceiling $(num "$(col c_post 6 | median)"), daemon $(num "$(col d_post 6 | median)")."
	echo "Non-2xx responses and socket errors over all runs: $errors."
	echo
	sed 's/^/    /' "$out/env.txt" "$out/seed.txt"
	echo "    total time: $((SECONDS / 60)) min $((SECONDS % 60)) s"
} | tee "$out/table.md"
