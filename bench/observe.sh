#!/usr/bin/env bash
# bench/observe.sh: what a model is shown of a page, abctl's observation
# beside Playwright's ariaSnapshot(), on the test site's pages in the same
# Chromium, measured in the same run (bench/observe/main.go says how).
#
# It installs playwright-core from npm into a temporary directory (the
# Chromium is Debian's: Playwright's own browser download is not used),
# builds the Go side and prints a Markdown table of medians on stdout.
# About a minute.
#
# Environment: ROUNDS (15), PLAYWRIGHT_VERSION (1.64.1), CHROMIUM
# (/usr/bin/chromium), BENCH_OUT (a directory to keep the table in), DUMP (a
# directory to write what each side would put in a prompt into, per page).
set -euo pipefail
ROUNDS=${ROUNDS:-15}
PLAYWRIGHT_VERSION=${PLAYWRIGHT_VERSION:-1.64.1}
CHROMIUM=${CHROMIUM:-/usr/bin/chromium}
cd "$(dirname "$0")/.."

for tool in go node npm; do
	command -v "$tool" >/dev/null || { echo "observe.sh: $tool is missing" >&2; exit 1; }
done
[[ -x $CHROMIUM ]] || { echo "observe.sh: no Chromium at $CHROMIUM (apt-get install -y chromium)" >&2; exit 1; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
echo "installing playwright-core@$PLAYWRIGHT_VERSION into $work ..." >&2
(cd "$work" && npm init -y >/dev/null && PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 npm install --silent --no-audit --no-fund "playwright-core@$PLAYWRIGHT_VERSION" >/dev/null)
cp bench/observe/aria.mjs "$work/"
go build -o "$work/observe" ./bench/observe
{
	echo "date: $(date -u '+%Y-%m-%d %H:%M UTC'); load average $(cut -d' ' -f1-3 /proc/loadavg)"
	echo "source: $(git rev-parse --short HEAD 2>/dev/null || echo unknown); $($CHROMIUM --version); playwright-core $PLAYWRIGHT_VERSION; node $(node --version)"
	echo
	"$work/observe" -node-dir "$work" -rounds "$ROUNDS" -chromium "$CHROMIUM" -v ${DUMP:+-dump "$DUMP"}
} | tee "${BENCH_OUT:-$work}/observe.md"
