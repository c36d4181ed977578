// The Playwright side of bench/observe.sh: it connects to the Chromium the
// Go side started (over CDP, the endpoint given as the first argument),
// and answers one request per line on stdin, {"url": ..., "rounds": N},
// with one line on stdout: the medians of page.locator('body').ariaSnapshot()
// over the rounds (after one warm-up), in its own tab of a new context, and
// the snapshot itself. It is run with playwright-core from npm, driving
// Debian's chromium; nothing else is contacted.
import { chromium } from 'playwright-core';
import readline from 'node:readline';

const endpoint = process.argv[2];
const browser = await chromium.connectOverCDP(endpoint);
const rl = readline.createInterface({ input: process.stdin });
for await (const line of rl) {
  if (!line.trim()) continue;
  const req = JSON.parse(line);
  const context = await browser.newContext({ viewport: { width: 1280, height: 720 } });
  const page = await context.newPage();
  try {
    await page.goto(req.url, { waitUntil: 'load' });
    let snapshot = await page.locator('body').ariaSnapshot(); // warm-up
    const ms = [];
    for (let i = 0; i < req.rounds; i++) {
      const t0 = process.hrtime.bigint();
      snapshot = await page.locator('body').ariaSnapshot();
      ms.push(Number(process.hrtime.bigint() - t0) / 1e6);
    }
    ms.sort((a, b) => a - b);
    process.stdout.write(JSON.stringify({ median_ms: ms[Math.floor(ms.length / 2)], snapshot }) + '\n');
  } catch (e) {
    process.stdout.write(JSON.stringify({ error: String(e) }) + '\n');
  } finally {
    await context.close();
  }
}
await browser.close();
