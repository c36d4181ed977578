#!/usr/bin/env bash
# bench/runs.sh: runs under load. The daemon with an instant executor
# (bench/runsd: every run completes at once, no browser) beside the plain
# net/http + bbolt server (bench/ceiling), measured in the same run.
#
# It builds runsd, the ceiling and the load program (bench/runs) into a
# temporary directory and starts, on free loopback ports (127.0.0.1:0):
#
#   ceiling  bench/ceiling with 10,000 records of 1 KiB
#   runsd    on an empty data directory, seeded with $SEED_RUNS completed
#            task runs (runs seed-runs, through the SDK)
#
# then:
#
#   1. $ROUNDS rounds of wrk (-t2 -c50 -d$DURATION --latency, with
#      bench/request.lua): the ceiling's GET /record/{n} and runsd's
#      GET /v1/runs/{id} (a random one of the seeded runs), the order
#      reversed every other round;
#   2. $ROUNDS rounds of: runs commit (sequential POST /record to the
#      ceiling, one durable commit each), runs latency ($LATENCY_RUNS
#      sequential POST /v1/run/tasks, each polled until running) and
#      runs webhooks ($WEBHOOK_RUNS runs from 8 clients, each with a webhook
#      to a local receiver that verifies every signature);
#   3. stops runsd and checks in its store (runs records) that every run of
#      step 2 completed with its webhook delivery recorded.
#
# It prints a Markdown table of medians over the rounds, with the ratio to
# the ceiling of the same round, and stops everything it started on exit.
# About 3 minutes with the defaults.
#
# Environment: ROUNDS (3), DURATION (10s), SEED_RUNS (1000), LATENCY_RUNS
# (200), WEBHOOK_RUNS (1000), WORKERS (runsd's --workers; 0: one per core),
# BENCH_OUT (a directory to keep the raw outputs and the table in; default:
# a temporary directory removed on exit), BENCH_REV (what to print as the
# source measured; default: the git commit).
set -euo pipefail

ROUNDS=${ROUNDS:-3}
DURATION=${DURATION:-10s}
SEED_RUNS=${SEED_RUNS:-1000}
LATENCY_RUNS=${LATENCY_RUNS:-200}
WEBHOOK_RUNS=${WEBHOOK_RUNS:-1000}
WORKERS=${WORKERS:-0}
RECORDS=10000
KEY="bench-$RANDOM$RANDOM"

cd "$(dirname "$0")/.."
root=$(pwd)

for tool in go curl wrk; do
	command -v "$tool" >/dev/null || {
		echo "runs.sh: $tool is missing (wrk: sudo apt-get install -y wrk)" >&2
		exit 1
	}
done

bench_name=runs.sh
# shellcheck source=bench/lib.sh
source "$root/bench/lib.sh"

log "building runsd, ceiling and runs into $work/bin"
go build -o "$work/bin/runsd" ./bench/runsd
go build -o "$work/bin/ceiling" ./bench/ceiling
go build -o "$work/bin/runs" ./bench/runs

{
	echo "date: $(date -u '+%Y-%m-%d %H:%M UTC')"
	echo "cpu: $(nproc) x $(awk -F': ' '/^model name/ {print $2; exit}' /proc/cpuinfo)"
	echo "kernel: $(uname -r); $(go version | cut -d' ' -f3); $(wrk --version 2>&1 | head -1 | cut -d' ' -f1-2)"
	if [[ -n ${BENCH_REV:-} ]]; then
		echo "source: $BENCH_REV"
	else
		echo "source: $(git rev-parse --short HEAD 2>/dev/null || echo unknown)$(git diff --quiet HEAD -- daemon client bench 2>/dev/null || echo ' with uncommitted changes')"
	fi
	echo "load average at the start: $(cut -d' ' -f1-3 /proc/loadavg)"
} >"$out/env.txt"

"$work/bin/ceiling" -db "$work/ceiling.db" -records "$RECORDS" >"$work/ceiling.log" 2>&1 &
ceiling_pid=$!
pids+=("$ceiling_pid")
ceiling_url="http://$(wait_for "$work/ceiling.log" '127\.0\.0\.1:[0-9]+')"

"$work/bin/runsd" -data-dir "$work/runsd" -api-key "$KEY" -workers "$WORKERS" >"$work/runsd.out" 2>>"$work/runsd.log" &
runsd_pid=$!
pids+=("$runsd_pid")
runsd_url="http://$(wait_for "$work/runsd.out" '127\.0\.0\.1:[0-9]+')"

log "seeding $SEED_RUNS runs into $runsd_url"
timeout 300 "$work/bin/runs" seed-runs -url "$runsd_url" -key "$KEY" -n "$SEED_RUNS" \
	-out "$work/run_paths.txt" >"$out/seed.txt" 2>"$out/seed.log"
cat "$out/seed.log" >&2
seq -f '/record/%g' 1 "$RECORDS" >"$work/record_paths.txt"
# A sanity check of every request before timing anything.
curl -fsS -o /dev/null "$ceiling_url/record/1"
curl -fsS -o /dev/null -H "x-api-key: $KEY" "$runsd_url$(head -1 "$work/run_paths.txt")"
: >"$work/runsd.log"

# The wrk rows: label | server | paths file
rows=(
	"c_get|ceiling|record_paths.txt"
	"d_get|runsd|run_paths.txt"
)

# run_wrk ROW DURATION OUTFILE: runs wrk for one row into OUTFILE.
run_wrk() {
	local label server paths url key=""
	IFS='|' read -r label server paths <<<"$1"
	case $server in
	ceiling) url=$ceiling_url ;;
	runsd) url=$runsd_url key=$KEY ;;
	esac
	# A Lua error does not stop wrk (it sends GET / instead): look for one.
	if ! BENCH_PATHS="$work/$paths" BENCH_KEY=$key \
		timeout 60 wrk -t2 -c50 -d"$2" --latency --timeout 5s -s "$root/bench/request.lua" "$url" >"$3" 2>&1 ||
		grep -q 'request\.lua' "$3"; then
		echo "runs.sh: wrk failed for $label:" >&2
		cat "$3" >&2
		return 1
	fi
	# Keep runsd's access log from filling the disk.
	: >"$work/runsd.log"
}


warm_up "${rows[@]}"

data="$out/runs.tsv"
printf 'label\tround\treq_per_s\tp50_ms\terrors\n' >"$data"
for ((round = 1; round <= ROUNDS; round++)); do
	mapfile -t order < <(round_order "$round" "${rows[@]}")
	for row in "${order[@]}"; do
		label=${row%%|*}
		run_wrk "$row" "$DURATION" "$out/$label.r$round.txt"
		read -r rps p50 errs _ < <(parse "$out/$label.r$round.txt")
		printf '%s\t%d\t%s\t%s\t%s\n' "$label" "$round" "$rps" "$p50" "$errs" >>"$data"
		log "round $round/$ROUNDS $label: $rps req/s, p50 $p50 ms, errors $errs"
		sleep 1
	done
done

# Latency and webhooks. Their outputs are "name value" lines.
ids_all="$work/webhook_ids.txt"
: >"$ids_all"
for ((round = 1; round <= ROUNDS; round++)); do
	sleep 2
	steps=(commit latency)
	if ((round % 2 == 0)); then steps=(latency commit); fi
	for step in "${steps[@]}"; do
		case $step in
		commit) timeout 120 "$work/bin/runs" commit -url "$ceiling_url" -n "$LATENCY_RUNS" \
			>"$out/commit.r$round.txt" 2>"$out/commit.r$round.log" ;;
		latency) timeout 120 "$work/bin/runs" latency -url "$runsd_url" -key "$KEY" -n "$LATENCY_RUNS" \
			>"$out/latency.r$round.txt" 2>"$out/latency.r$round.log" ;;
		esac
		cat "$out/$step.r$round.log" >&2
	done
	sleep 2
	rc=0
	timeout 300 "$work/bin/runs" webhooks -url "$runsd_url" -key "$KEY" -n "$WEBHOOK_RUNS" -concurrency 8 \
		-deadline 120s -ids "$work/webhook_ids.r$round.txt" >"$out/webhooks.r$round.txt" 2>"$out/webhooks.r$round.log" || rc=$?
	cat "$out/webhooks.r$round.log" >&2
	if ((rc != 0)); then log "round $round: the webhook check FAILED (exit $rc)"; fi
	cat "$work/webhook_ids.r$round.txt" >>"$ids_all" 2>/dev/null || true
	: >"$work/runsd.log"
done

log "stopping runsd, then reading its store"
kill "$runsd_pid"
wait "$runsd_pid" || true
rc=0
timeout 120 "$work/bin/runs" records -data-dir "$work/runsd" -ids "$ids_all" >"$out/records.txt" 2>"$out/records.log" || rc=$?
cat "$out/records.log" >&2
echo "load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)" >>"$out/env.txt"

# col LABEL N: the values of column N (3 req/s, 4 p50) of LABEL's rounds.
maximum() { sort -g | tail -1; }
range() {
	local lo hi
	lo=$(sort -g | tee "$work/range.tmp" | head -1)
	hi=$(tail -1 "$work/range.tmp")
	printf '%s–%s' "$(num "$lo")" "$(num "$hi")"
}
frange() { sort -g | awk 'NR == 1 {lo = $1} {hi = $1} END {printf "%.2f–%.2f", lo, hi}'; }
# val FILE NAME: the value of NAME in a "name value" file (empty if absent).
val() { awk -v k="$2" '$1 == k {print $2}' "$1" 2>/dev/null; }
# vals PREFIX NAME: NAME's value in each round's PREFIX.rN.txt, one per line.
vals() {
	local r
	for ((r = 1; r <= ROUNDS; r++)); do val "$out/$1.r$r.txt" "$2"; done
}
# lratios A NAME_A B NAME_B: the per-round ratio of A's NAME_A to B's NAME_B.
lratios() {
	local r x y
	for ((r = 1; r <= ROUNDS; r++)); do
		x=$(val "$out/$1.r$r.txt" "$2") y=$(val "$out/$3.r$r.txt" "$4")
		[[ -n $x && -n $y ]] && awk -v x="$x" -v y="$y" 'BEGIN {if (y > 0) print x / y}'
	done
	return 0
}
# met CONDITION R P: "yes" or "**no**", CONDITION being an awk expression on
# r (a ratio) and p (a p50 in ms).
# sum PREFIX NAME: the sum of NAME over the rounds.
sum() { vals "$1" "$2" | awk '{s += $1} END {print s + 0}'; }

wrow() {
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
		"$(fmt "$p50" '%.2f')" "$ceil" "$ratio_txt" "${4:-—}" "$(if [[ -n $5 ]]; then met "$5" "$ratio" "$p50"; else echo —; fi)"
}

# lrow PREFIX NAME WHAT CEIL_PREFIX CEIL_NAME TARGET CONDITION
lrow() {
	local p50 p90 mx ratio_txt="—" ceil="—"
	p50=$(vals "$1" "$2_p50" | median)
	p90=$(vals "$1" "$2_p90" | median)
	mx=$(vals "$1" "$2_max" | maximum)
	if [[ -n $4 ]]; then
		ceil="$(fmt "$(vals "$4" "$5_p50" | median)" '%.2f') ms"
		ratio_txt="$(fmt "$(lratios "$1" "$2_p50" "$4" "$5_p50" | median)" '%.1f')×"
	fi
	printf '| %s | %s ms (%s) | %s ms | %s ms | %s | %s | %s | %s |\n' "$3" "$(fmt "$p50" '%.2f')" \
		"$(vals "$1" "$2_p50" | frange)" "$(fmt "$p90" '%.2f')" "$(fmt "$mx" '%.1f')" "$ceil" "$ratio_txt" "${6:-—}" \
		"$(if [[ -n ${7:-} ]]; then met "$7" 0 "$p50"; else echo —; fi)"
}

errors=$(awk -F'\t' 'NR > 1 {s += $5} END {print s + 0}' "$data")
run_bytes=$(val "$out/seed.txt" run_json_bytes)
{
	echo "wrk -t2 -c50 -d$DURATION --latency, $ROUNDS rounds: medians, min–max of req/s;" \
		"the ratio is the median over rounds of runsd ÷ ceiling in the same round."
	echo
	echo "| row | req/s median (min–max) | p50 median | ceiling req/s | ratio to ceiling | target | met |"
	echo "|---|---|---|---|---|---|---|"
	wrow c_get "ceiling: \`GET /record/{n}\`, 1 KiB from bbolt" "" "" ""
	wrow d_get "runsd: \`GET /v1/runs/{id}\`, one of $(num "$SEED_RUNS") completed runs ($(num "$run_bytes") B of JSON)" c_get "≥ 0.5×, p50 ≤ 1 ms" "r >= 0.5 && p <= 1"
	echo
	echo "$LATENCY_RUNS sequential requests per round, $ROUNDS rounds: the median of the rounds' p50 (their min–max)," \
		"of their p90, the largest max; the ratio is the median over rounds of the row's p50 ÷ the ceiling commit's p50."
	echo
	echo "| one run at a time | p50 (min–max) | p90 | max | ceiling commit p50 | ratio | target | met |"
	echo "|---|---|---|---|---|---|---|---|"
	lrow commit commit_rtt "ceiling: \`POST /record\` round trip, one durable commit" "" "" "" ""
	lrow latency post_rtt "\`POST /v1/run/tasks\` round trip" commit commit_rtt "" ""
	lrow latency accept_to_running "accepted → first \`GET\` showing \`running\` or later" commit commit_rtt "p50 ≤ 20 ms" "p <= 20"
	lrow latency created_to_started "\`created_at\` → \`started_at\` (the daemon's stamps)" commit commit_rtt "p50 ≤ 20 ms" "p <= 20"
	echo
	echo "$(num "$WEBHOOK_RUNS") runs per round from 8 clients, each with a webhook to a local receiver (runsd --workers $WORKERS, 0 = one per core);" \
		"elapsed is from the first POST to the last webhook; a run is 5 durable commits" \
		"(created, running, its step, ended, delivery recorded)."
	echo
	echo "| round | delivered | lost | duplicates | bad signatures | elapsed | runs/s | store commits/s (5 per run) |"
	echo "|---|---|---|---|---|---|---|---|"
	for ((r = 1; r <= ROUNDS; r++)); do
		f="$out/webhooks.r$r.txt"
		rps=$(val "$f" webhook_runs_per_s)
		printf '| %d | %s / %s | %s | %s | %s | %s s | %s | %s |\n' "$r" "$(num "$(val "$f" webhook_unique)")" \
			"$(num "$(val "$f" webhook_runs)")" "$(val "$f" webhook_lost)" "$(val "$f" webhook_duplicates)" \
			"$(val "$f" webhook_bad_signatures)" "$(fmt "$(val "$f" webhook_elapsed_s)" '%.2f')" "$(fmt "$rps" '%.0f')" \
			"$(num "$(awk -v r="$rps" 'BEGIN {print 5 * r}')")"
	done
	lost=$(sum webhooks webhook_lost)
	unique=$(sum webhooks webhook_unique)
	bad=$(($(sum webhooks webhook_bad_signatures) + $(sum webhooks webhook_bad_bodies) + $(sum webhooks webhook_unknown)))
	notdone=$(($(sum webhooks runs_not_completed) + $(sum webhooks webhook_not_completed_payloads)))
	rbad=$(val "$out/records.txt" records_bad)
	rdel=$(val "$out/records.txt" records_delivered)
	ok=$(if ((unique == ROUNDS * WEBHOOK_RUNS && lost == 0 && bad == 0 && notdone == 0)) && [[ $rbad == 0 && $rdel == "$unique" ]]; then echo yes; else echo "**no**"; fi)
	rps=$(vals webhooks webhook_runs_per_s | median)
	printf '| median | | | | | %s s | %s | %s |\n' \
		"$(fmt "$(vals webhooks webhook_elapsed_s | median)" '%.2f')" "$(fmt "$rps" '%.0f')" \
		"$(num "$(awk -v r="$rps" 'BEGIN {print 5 * r}')")"
	echo
	echo "Target: every webhook delivered, none lost — met: $ok. $(num "$unique") of $(num "$((ROUNDS * WEBHOOK_RUNS))") runs' webhooks arrived" \
		"with a valid signature; $(sum webhooks webhook_duplicates) duplicates, $bad bad or unknown deliveries," \
		"$notdone runs not completed; in the store afterwards, ${rdel:-?} runs completed with their delivery recorded (2xx), ${rbad:-?} not."
	echo "Non-2xx responses and socket errors over all wrk runs: $errors."
	echo
	sed 's/^/    /' "$out/env.txt" "$out/seed.log"
	echo "    total time: $((SECONDS / 60)) min $((SECONDS % 60)) s"
} | tee "$out/table.md"
