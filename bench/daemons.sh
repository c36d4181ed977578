#!/usr/bin/env bash
# bench/daemons.sh: several daemons on one PostgreSQL database (issue 34),
# beside the daemon on its bbolt file and beside the two stores' own
# ceilings, all in the same run.
#
# It builds runsd (the daemon with the instant executor: every run
# completes at once, no browser), the bbolt ceiling, the seeder and the run
# driver into a temporary directory, starts a private PostgreSQL server
# (initdb + postgres, Unix socket in a temporary directory, no TCP port,
# PostgreSQL's default durability: fsync and synchronous commit on), and
# starts on free loopback ports (127.0.0.1:0):
#
#   bolt    one runsd on its bbolt file (the default daemon)
#   pgN     N runsd (N = 1, 2, 3) sharing database dN, with the same
#           secret (ABCTL_DAEMON_SECRET), API key and run files' directory;
#           each group has a database of its own, so that the runs posted
#           to one group are taken from the queue by that group only
#   pgw     one runsd on database dw with as many workers as the three of
#           pg3 together: the control that tells more daemons from more
#           workers
#   ceiling bench/ceiling (bbolt): POST /record-group, group commit
#
# then runs $ROUNDS rounds of these rows, reversing their order every other
# round so that drift evens out:
#
#   c_bolt   wrk: POST /record-group of the bytes a created agent answers
#            with (about 6.5 KB), to the bbolt ceiling
#   c_pg     pgbench: one INSERT of the same bytes per transaction into a
#            table with a bigserial key, $PG_CLIENTS clients: PostgreSQL's
#            own rate of durable single-row commits ($PG_CLIENTS: the
#            connections of three daemons' pools, pgxpool's default of 4
#            each on a machine of up to 4 cores)
#   a_bolt   wrk: POST /v1/agents to the bbolt daemon
#   a_pgN    wrk: POST /v1/agents to the N daemons at once: one wrk per
#            daemon, the $CONNS connections split between them (-t2 -c50
#            for one daemon, -t1 -c25 each for two, -t1 -c17 each for
#            three), their rates summed
#   r_bolt   runs webhooks: $RUNS task runs from $RUN_CLIENTS clients, each
#            executed to its end with its webhook delivered to a local
#            receiver that checks every signature; runs/s from the first
#            POST to the last webhook
#   r_pgN    the same, run i posted to daemon i mod N and read back through
#            the next one (r_pgw: to the one daemon of pgw)
#
# For every row it also counts the CPU time of the servers (the daemons or
# the ceiling, and PostgreSQL's processes) from /proc, per request or run.
# It prints a Markdown table of medians over the rounds and stops
# everything it started on exit. About 7 minutes with the defaults.
#
# Environment: ROUNDS (3), DURATION (10s, whole seconds), CONNS (50),
# RUNS (500), RUN_CLIENTS (8), PG_CLIENTS (12), WORKERS (runsd --workers;
# 0: one per core), BENCH_OUT (a directory to keep the raw outputs and the
# table in; default: a temporary directory removed on exit), BENCH_REV (what
# to print as the source measured; default: the git commit).
set -euo pipefail

ROUNDS=${ROUNDS:-3}
DURATION=${DURATION:-10s}
CONNS=${CONNS:-50}
RUNS=${RUNS:-500}
RUN_CLIENTS=${RUN_CLIENTS:-8}
PG_CLIENTS=${PG_CLIENTS:-12}
WORKERS=${WORKERS:-0}
KEY="bench-$RANDOM$RANDOM"
MAX_DAEMONS=3
# The workers of one daemon (runsd's -workers 0: one per core), and of the
# three together: the one daemon of group pgw has as many as they.
per_daemon=$((WORKERS > 0 ? WORKERS : $(nproc)))
WIDE=$((MAX_DAEMONS * per_daemon))

cd "$(dirname "$0")/.."
root=$(pwd)

if [[ ! $DURATION =~ ^[1-9][0-9]*s$ ]]; then
	echo "daemons.sh: DURATION must be whole seconds, like 10s (pgbench takes seconds)" >&2
	exit 2
fi

for tool in go curl wrk; do
	command -v "$tool" >/dev/null || {
		echo "daemons.sh: $tool is missing (wrk: sudo apt-get install -y wrk)" >&2
		exit 1
	}
done
# PostgreSQL's programs: where initdb is on PATH, else the newest of
# Debian's directories, the first that has all of them.
pgbin=""
for d in $(command -v initdb | xargs -r dirname) $(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -t/ -k4 -n -r); do
	if [[ -x $d/initdb && -x $d/postgres && -x $d/pg_isready && -x $d/pgbench && -x $d/psql ]]; then
		pgbin=$d
		break
	fi
done
if [[ -z $pgbin ]]; then
	echo "daemons.sh: PostgreSQL is not installed (no initdb, postgres, pg_isready, pgbench and psql together on PATH nor in /usr/lib/postgresql/*/bin);" \
		"Debian: sudo apt-get install -y postgresql" >&2
	exit 1
fi

bench_name=daemons.sh
# shellcheck source=bench/lib.sh
source "$root/bench/lib.sh"

# PostgreSQL refuses to run as root: as root, it runs as the postgres user
# Debian's package made, in a directory of its own that user owns (the
# work directory is private to root).
pgdir=$(mktemp -d /tmp/abctl-daemons-pg.XXXXXX)
as_pg=()
if [[ $(id -u) -eq 0 ]]; then
	id postgres >/dev/null 2>&1 || {
		echo "daemons.sh: running as root, and PostgreSQL refuses to: there is no postgres user to run it as" >&2
		exit 1
	}
	chown postgres: "$pgdir"
	as_pg=(setpriv --reuid=postgres --regid=postgres --init-groups)
fi
pg_pid=""

# finish stops the daemons and the rest (lib.sh's cleanup), then
# PostgreSQL (SIGINT: its fast shutdown; killed after 30 s), and removes
# its directory.
finish() {
	local i
	cleanup
	if [[ -n $pg_pid ]]; then
		kill -INT "$pg_pid" 2>/dev/null || true
		for ((i = 0; i < 300; i++)); do
			kill -0 "$pg_pid" 2>/dev/null || break
			sleep 0.1
		done
		kill -KILL "$pg_pid" 2>/dev/null || true
	fi
	rm -rf "$pgdir"
}
trap finish EXIT

log "building runsd, ceiling, seed and runs into $work/bin"
go build -o "$work/bin/runsd" ./bench/runsd
go build -o "$work/bin/ceiling" ./bench/ceiling
go build -o "$work/bin/seed" ./bench/seed
go build -o "$work/bin/runs" ./bench/runs

log "starting PostgreSQL ($("$pgbin/postgres" --version)) in $pgdir"
(cd / && "${as_pg[@]}" "$pgbin/initdb" --pgdata "$pgdir/data" --username abctl --auth trust \
	--encoding UTF8 --locale C --no-instructions) >"$work/initdb.log" 2>&1 || {
	cat "$work/initdb.log" >&2
	exit 1
}
(cd / && exec "${as_pg[@]}" "$pgbin/postgres" -D "$pgdir/data" -k "$pgdir" -c listen_addresses= \
	-c max_connections=200) >"$work/postgres.log" 2>&1 &
pg_pid=$!
for ((i = 0; i < 600; i++)); do
	"$pgbin/pg_isready" -q -h "$pgdir" -U abctl -d postgres && break
	kill -0 "$pg_pid" 2>/dev/null || break
	sleep 0.1
done
"$pgbin/pg_isready" -q -h "$pgdir" -U abctl -d postgres || {
	echo "daemons.sh: PostgreSQL did not start; its log:" >&2
	cat "$work/postgres.log" >&2
	exit 1
}
psql() { "$pgbin/psql" -h "$pgdir" -U abctl -v ON_ERROR_STOP=1 -qAt "$@"; }
# pg_url DB: the URL of database DB, its host the socket's directory.
pg_url() { printf 'postgres://abctl@/%s?host=%s&sslmode=disable' "$1" "$pgdir"; }
for db in d1 d2 d3 dw; do psql -d postgres -c "CREATE DATABASE $db"; done
psql -d postgres -c "CREATE DATABASE ceiling"
psql -d ceiling -c "CREATE TABLE record (id bigserial PRIMARY KEY, body text NOT NULL)"

{
	echo "date: $(date -u '+%Y-%m-%d %H:%M UTC')"
	echo "cpu: $(nproc) x $(awk -F': ' '/^model name/ {print $2; exit}' /proc/cpuinfo)"
	echo "kernel: $(uname -r); $(go version | cut -d' ' -f3); $(wrk --version 2>&1 | head -1 | cut -d' ' -f1-2);" \
		"$("$pgbin/postgres" --version) (fsync $(psql -d postgres -c 'SHOW fsync'), synchronous_commit $(psql -d postgres -c 'SHOW synchronous_commit'), shared_buffers $(psql -d postgres -c 'SHOW shared_buffers'))"
	if [[ -n ${BENCH_REV:-} ]]; then
		echo "source: $BENCH_REV"
	else
		echo "source: $(git rev-parse --short HEAD 2>/dev/null || echo unknown)$(git diff --quiet HEAD -- daemon client bench 2>/dev/null || echo ' with uncommitted changes')"
	fi
	echo "load average at the start: $(cut -d' ' -f1-3 /proc/loadavg)"
} >"$out/env.txt"

# The daemons. start_runsd NAME WORKERS [STORE_URL ARTIFACTS_DIR]: starts
# runsd on data directory $work/NAME; sets runsd_pid and runsd_url.
secret=$(head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n')
start_runsd() {
	local name=$1 args=()
	if [[ -n ${3:-} ]]; then args=(-store "$3" -artifacts "$4"); fi
	ABCTL_DAEMON_SECRET=$secret "$work/bin/runsd" -data-dir "$work/$name" -api-key "$KEY" -workers "$2" "${args[@]}" \
		>"$work/$name.out" 2>>"$work/$name.log" &
	runsd_pid=$!
	pids+=("$runsd_pid")
	runsd_url="http://$(wait_for "$work/$name.out" '127\.0\.0\.1:[0-9]+')"
}
declare -A urls dpids # group -> its daemons' URLs, PIDs (space-separated)
start_runsd bolt "$WORKERS"
urls[bolt]=$runsd_url dpids[bolt]=$runsd_pid
for ((n = 1; n <= MAX_DAEMONS; n++)); do
	mkdir -p "$work/files$n"
	for ((i = 1; i <= n; i++)); do
		start_runsd "pg$n.$i" "$WORKERS" "$(pg_url "d$n")" "$work/files$n"
		urls[pg$n]="${urls[pg$n]:-}${urls[pg$n]:+ }$runsd_url"
		dpids[pg$n]="${dpids[pg$n]:-}${dpids[pg$n]:+ }$runsd_pid"
	done
	log "pg$n: ${urls[pg$n]}"
done
mkdir -p "$work/filesw"
start_runsd pgw "$WIDE" "$(pg_url dw)" "$work/filesw"
urls[pgw]=$runsd_url dpids[pgw]=$runsd_pid

"$work/bin/ceiling" -db "$work/ceiling.db" -records 1 >"$work/ceiling.log" 2>&1 &
ceiling_pid=$!
pids+=("$ceiling_pid")
ceiling_url="http://$(wait_for "$work/ceiling.log" '127\.0\.0\.1:[0-9]+')"
dpids[ceiling]=$ceiling_pid

# The agent request (bench/seed's) and the answer to it, what the daemon
# stores per agent: the ceilings write those bytes.
timeout 120 "$work/bin/seed" -url "${urls[bolt]}" -key "$KEY" -agents 1 -folders 1 -workers 1 -out "$work" >&2
curl -fsS -o "$work/agent_answer.json" -H "x-api-key: $KEY" "${urls[bolt]}$(head -1 "$work/agent_paths.txt")"
agent_bytes=$(wc -c <"$work/agent_answer.json")
log "agent request $(wc -c <"$work/post_body.json") bytes, its answer $agent_bytes bytes"
echo /v1/agents >"$work/agent_post.txt"
echo /record-group >"$work/record_group_post.txt"
printf 'INSERT INTO record (body) VALUES (:body);\n' >"$work/insert.sql"
# A sanity check of every daemon before timing anything: the API key works
# through each one (the PostgreSQL groups share theirs).
for g in bolt pg1 pg2 pg3 pgw; do
	for u in ${urls[$g]}; do curl -fsS -o /dev/null -H "x-api-key: $KEY" "$u/v1/agents?page_size=1"; done
done

# ticks PIDS...: the CPU time (user + system, in clock ticks) of the
# processes so far.
ticks() {
	local p s=0 t
	for p in "$@"; do
		t=$(awk '{sub(/.*\) /, ""); print $12 + $13}' "/proc/$p/stat")
		s=$((s + t))
	done
	echo "$s"
}
# pg_ticks: PostgreSQL's CPU time so far: the postmaster's own and that
# of its children, live (their stat) and ended (its cutime and cstime).
pg_ticks() {
	{ cat /proc/[0-9]*/stat 2>/dev/null || true; } | awk -v pg="$pg_pid" '
		{ pid = $1; sub(/.*\) /, "") }
		pid == pg { s += $12 + $13 + $14 + $15 }
		$2 == pg { s += $12 + $13 }
		END { print s + 0 }'
}
hz=$(getconf CLK_TCK)

# wrk_group ROWFILE URLS...: POST /v1/agents (or /record-group) to every
# URL at once, one wrk each, $CONNS connections split between them;
# "req_per_s p50_ms errors requests" summed (p50: the mean of theirs).
wrk_group() {
	local outp=$1 paths=$2 body=$3 key=$4 secs=$5 n i=0 c t u wp=()
	shift 5
	n=$#
	c=$(((CONNS + n - 1) / n))
	t=$((n == 1 ? 2 : 1))
	for u in "$@"; do
		i=$((i + 1))
		BENCH_PATHS="$work/$paths" BENCH_BODY="$work/$body" BENCH_KEY=$key \
			timeout 60 wrk -t"$t" -c"$c" -d"$secs" --latency --timeout 5s -s "$root/bench/request.lua" "$u" >"$outp.$i" 2>&1 &
		wp+=($!)
	done
	for i in "${!wp[@]}"; do
		if ! wait "${wp[$i]}" || grep -q 'request\.lua' "$outp.$((i + 1))"; then
			echo "daemons.sh: wrk failed ($outp.$((i + 1))):" >&2
			cat "$outp.$((i + 1))" >&2
			return 1
		fi
	done
	for ((i = 1; i <= n; i++)); do parse "$outp.$i"; done |
		awk '{r += $1; p += $2; e += $3; q += $4} END {printf "%s %s %d %d\n", r, p / NR, e, q}'
}

# measure ROW SECS OUT: runs one row; prints "rate p50_ms errors count
# server_ticks pg_ticks" (p50: wrk's, pgbench's mean latency, or the
# run driver's elapsed time in ms).
measure() {
	local label=$1 secs=$2 outp=$3 group server s0 p0 res s1 p1 rc=0
	case $label in
	c_bolt) group=ceiling ;;
	c_pg) group="" ;;
	*) group=${label#*_} ;;
	esac
	server=""
	if [[ -n $group ]]; then server=${dpids[$group]}; fi
	# shellcheck disable=SC2086 # the PIDs are words
	s0=$(ticks $server) p0=$(pg_ticks)
	case $label in
	c_bolt) res=$(wrk_group "$outp" record_group_post.txt agent_answer.json "" "$secs" "$ceiling_url") ;;
	a_*)
		# shellcheck disable=SC2086
		res=$(wrk_group "$outp" agent_post.txt post_body.json "$KEY" "$secs" ${urls[$group]})
		;;
	c_pg)
		timeout 60 "$pgbin/pgbench" -h "$pgdir" -U abctl -n -M prepared -c "$PG_CLIENTS" -j 2 -T "${secs%s}" \
			-D body="$(cat "$work/agent_answer.json")" -f "$work/insert.sql" ceiling >"$outp" 2>&1 || {
			echo "daemons.sh: pgbench failed:" >&2
			cat "$outp" >&2
			return 1
		}
		res=$(awk '/^tps = / {r = $3} /^latency average = / {p = $4} /^number of transactions actually processed:/ {n = $6}
			/^number of failed transactions:/ {e = $5} END {printf "%s %s %d %d\n", r, p, e, n}' "$outp")
		;;
	r_*)
		timeout 300 "$work/bin/runs" webhooks -url "$(tr ' ' , <<<"${urls[$group]}")" -key "$KEY" -n "$RUNS" \
			-concurrency "$RUN_CLIENTS" -deadline 120s >"$outp" 2>"$outp.log" || rc=$?
		cat "$outp.log" >&2
		res=$(awk -v rc="$rc" '{v[$1] = $2} END {
			e = v["webhook_lost"] + v["webhook_unknown"] + v["webhook_duplicates"] + v["webhook_bad_signatures"]
			e += v["webhook_bad_bodies"] + v["webhook_not_completed_payloads"] + v["runs_not_completed"] + (rc != 0)
			printf "%s %s %d %d\n", v["webhook_runs_per_s"] + 0, v["webhook_elapsed_s"] * 1000, e, v["webhook_unique"] + 0}' "$outp")
		;;
	esac
	# shellcheck disable=SC2086
	s1=$(ticks $server) p1=$(pg_ticks)
	echo "$res $((s1 - s0)) $((p1 - p0))"
	# Keep the daemons' logs from filling the disk.
	for f in "$work"/*.log; do : >"$f"; done
}

rows=(c_bolt c_pg a_bolt a_pg1 a_pg2 a_pg3 r_bolt r_pg1 r_pg2 r_pg3 r_pgw)

log "warm-up: 2 s of every wrk row, 100 runs through every group"
for row in "${rows[@]}"; do
	case $row in
	r_*) RUNS=100 measure "$row" 2s "$work/warmup.txt" >"$work/measured.txt" ;;
	*) measure "$row" 2s "$work/warmup.txt" >"$work/measured.txt" ;;
	esac
done

data="$out/runs.tsv"
printf 'label\tround\trate\tp50_ms\terrors\tcount\tserver_ticks\tpg_ticks\n' >"$data"
for ((round = 1; round <= ROUNDS; round++)); do
	mapfile -t order < <(round_order "$round" "${rows[@]}")
	for row in "${order[@]}"; do
		measure "$row" "$DURATION" "$out/$row.r$round.txt" >"$work/measured.txt"
		read -r rate p50 errs count st pt <"$work/measured.txt"
		printf '%s\t%d\t%s\t%s\t%s\t%s\t%s\t%s\n' "$row" "$round" "$rate" "$p50" "$errs" "$count" "$st" "$pt" >>"$data"
		log "round $round/$ROUNDS $row: $rate/s, p50 $p50 ms, errors $errs, CPU server $st pg $pt ticks"
		sleep 1
	done
done
echo "load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)" >>"$out/env.txt"

range() { sort -g | awk 'NR == 1 {lo = $1} {hi = $1} END {printf "%.0f–%.0f", lo, hi}'; }
# cpu LABEL COLUMN: the median over rounds of that column's CPU ms per
# request or run.
cpu() {
	awk -F'\t' -v l="$1" -v c="$2" -v hz="$hz" '$1 == l && $6 > 0 {print $c * 1000 / hz / $6}' "$data" | median
}
# row LABEL WHAT DAEMONS BASE [BASE2]: a table row; the ratio columns are
# the medians over rounds of LABEL ÷ BASE (and ÷ BASE2) in the same round.
# The last column is a p50 in ms, or for runs the elapsed time in s.
row() {
	local last
	last=$(col "$1" 4 | median)
	case $1 in
	r_*) last="$(fmt "$(awk -v v="$last" 'BEGIN {print v / 1000}')" '%.2f') s" ;;
	*) last="$(fmt "$last" '%.2f') ms" ;;
	esac
	local r2="—"
	if [[ -n ${5:-} ]]; then r2="$(fmt "$(ratios "$1" "$5" | median)" '%.2f')×"; fi
	printf '| %s | %s | %s (%s) | %s | %s | %s | %s | %s |\n' "$2" "$3" "$(num "$(col "$1" 3 | median)")" \
		"$(col "$1" 3 | range)" "$(if [[ -n $4 ]]; then echo "$(fmt "$(ratios "$1" "$4" | median)" '%.2f')×"; else echo —; fi)" \
		"$r2" "$(fmt "$(cpu "$1" 7)" '%.2f')" "$(fmt "$(cpu "$1" 8)" '%.2f')" "$last"
}

errors=$(awk -F'\t' 'NR > 1 {s += $5} END {print s + 0}' "$data")
{
	echo "$ROUNDS rounds, rows in alternating order: medians over rounds, min–max of the rate; a ratio is the median" \
		"over rounds of the row ÷ the named row in the same round. CPU: user + system time of the servers (the" \
		"daemons, or the bbolt ceiling) and of all PostgreSQL's processes during the row, per request or run."
	echo
	echo "| \`POST /v1/agents\` (wrk, $CONNS connections in all, ${DURATION}) | daemons | req/s median (min–max) | ÷ 1 daemon on bbolt | ÷ its store's ceiling | server CPU ms/req | PostgreSQL CPU ms/req | p50 (mean of the wrks) |"
	echo "|---|---|---|---|---|---|---|---|"
	row c_bolt "ceiling: bbolt group commit (\`POST /record-group\`, bench/ceiling) of $(num "$agent_bytes") B" — "" ""
	row c_pg "ceiling: PostgreSQL, one \`INSERT\` of the same $(num "$agent_bytes") B per transaction (pgbench, $PG_CLIENTS clients; latency: mean)" — "" ""
	row a_bolt "daemon on its bbolt file" 1 "" c_bolt
	row a_pg1 "daemons on one PostgreSQL database" 1 a_bolt c_pg
	row a_pg2 "" 2 a_bolt c_pg
	row a_pg3 "" 3 a_bolt c_pg
	echo
	echo "| runs to their end ($(num "$RUNS") task runs from $RUN_CLIENTS clients, each webhook checked) | daemons | runs/s median (min–max) | ÷ 1 daemon on bbolt | — | daemons' CPU ms/run | PostgreSQL CPU ms/run | first POST → last webhook |"
	echo "|---|---|---|---|---|---|---|---|"
	row r_bolt "daemon on its bbolt file" 1 "" ""
	row r_pg1 "daemons on one PostgreSQL database" 1 r_bolt ""
	row r_pg2 "" 2 r_bolt ""
	row r_pg3 "" 3 r_bolt ""
	row r_pgw "  one daemon with as many workers as the three (\`--workers $WIDE\`)" 1 r_bolt ""
	echo
	echo "Errors over all rows (non-2xx answers, socket errors, failed transactions; runs lost, duplicated, badly signed or not completed): $errors."
	echo
	sed 's/^/    /' "$out/env.txt"
	echo "    total time: $((SECONDS / 60)) min $((SECONDS % 60)) s"
} | tee "$out/table.md"
