// Command observe is the benchmark of bench/observe.sh: what a model is
// shown of a page, by abctl's observation (engine/page) and by Playwright's
// ariaSnapshot() (the snapshot Playwright's MCP server sends to models),
// on the same pages in the same Chromium, measured in the same run.
//
// For each page it reports the median time of each side over -rounds
// observations (after a warm-up), the size of what each would put in a
// prompt (abctl: the rendered element list; Playwright: the snapshot), and
// each side's recall of the named interactive controls of the first
// viewport, the browser's own accessibility tree being the ground truth: a
// control counts when the side shows one of the same role whose name
// matches (equal, or one containing the other, whitespace and case aside);
// abctl's must be in its prompt and marked in the viewport (an option: in
// its select's list). The parts a browser draws inside a field (a date
// input's segments) are not counted.
//
//	observe -node-dir DIR [-rounds 15] [-chromium /usr/bin/chromium] [-dump DIR]
//
// With -dump, what each side would put in a prompt is written there, per
// page: NAME.abctl.txt and NAME.playwright.yaml.
//
// DIR holds node_modules with playwright-core and aria.mjs. It starts the
// test site (internal/testsite) and Chromium on loopback, prints a Markdown
// table on stdout and stops everything it started.
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/chromedp/cdproto/accessibility"
	"github.com/chromedp/cdproto/dom"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/remote"

	"github.com/abctl/abctl/internal/testsite"
	"github.com/abctl/abctl/localrun/engine/page"
)

// pages are the test site's pages measured: forms, names hidden where a
// careless reader misses them, shadow roots, a todo list, a product list,
// a large generated page of about 2,000 elements, and the widgets of issue
// 29 (a tree of clickable items, icons bound by script, icon fonts and
// CSS-drawn icons, suggestion lists, rows of repeated controls, menus and
// a catalogue of 400 items).
var pages = []string{
	testsite.PageIndex, testsite.PageForm, testsite.PageNames, testsite.PageShadow, testsite.PageTodos,
	testsite.PageProducts, testsite.PageLogin, testsite.PageCookieBanner, testsite.PageShopSearch, testsite.PageBig,
	testsite.PageObserveTree, testsite.PageObservePosts, testsite.PageObserveIcons, testsite.PageObserveOptions,
	testsite.PageObserveRows, testsite.PageEvalMenu, testsite.PageEvalCatalog,
}

// interactive are the roles of the controls recall counts.
var interactive = map[string]bool{
	"button": true, "link": true, "checkbox": true, "radio": true, "textbox": true, "searchbox": true,
	"combobox": true, "listbox": true, "slider": true, "spinbutton": true, "switch": true, "tab": true,
	"menuitem": true, "menuitemcheckbox": true, "menuitemradio": true, "option": true,
}

type control struct{ role, name string }

type result struct {
	page                   string
	abctlMS, pwMS          float64
	abctlChars, pwChars    int
	pwMCPChars             int // the snapshot with the page state lines Playwright's MCP server sends
	abctlText, pwText      string
	truth                  int
	abctlFound, pwFound    int
	abctlMissing, pwMissed []string
}

func main() {
	nodeDir := flag.String("node-dir", "", "directory with node_modules/playwright-core and aria.mjs (required)")
	rounds := flag.Int("rounds", 15, "observations per page and side, after a warm-up")
	chromium := flag.String("chromium", "/usr/bin/chromium", "the Chromium both sides drive")
	verbose := flag.Bool("v", false, "list the controls each side missed")
	dump := flag.String("dump", "", "a directory to write each side's prompt text into, per page")
	flag.Parse()
	if *nodeDir == "" {
		log.Fatal("observe: -node-dir is required")
	}
	site, stopSite, err := testsite.Serve("127.0.0.1:0")
	if err != nil {
		log.Fatal(err)
	}
	defer stopSite()

	ws, stopChromium, err := startChromium(*chromium)
	if err != nil {
		log.Fatal(err)
	}
	defer stopChromium()

	node := exec.Command("node", filepath.Join(*nodeDir, "aria.mjs"), ws)
	node.Dir = *nodeDir
	node.Stderr = os.Stderr
	toNode, err := node.StdinPipe()
	if err != nil {
		log.Fatal(err)
	}
	fromNode, err := node.StdoutPipe()
	if err != nil {
		log.Fatal(err)
	}
	if err := node.Start(); err != nil {
		log.Fatal(err)
	}
	defer func() { toNode.Close(); node.Wait() }()
	answers := bufio.NewReader(fromNode)

	alloc, cancelAlloc := remote.NewAllocator(context.Background(), ws)
	defer cancelAlloc()
	bctx, cancelBrowser := chromedp.NewContext(alloc)
	defer cancelBrowser()

	var results []result
	for _, path := range pages {
		url := site.URL(path)
		r, err := measure(bctx, url, *rounds, toNode, answers)
		if err != nil {
			log.Fatalf("%s: %v", path, err)
		}
		r.page = path
		results = append(results, r)
		if *dump != "" {
			name := strings.Trim(strings.NewReplacer("/", "_", ".html", "").Replace(path), "_")
			if name == "" {
				name = "index"
			}
			if err := errors.Join(
				os.WriteFile(filepath.Join(*dump, name+".abctl.txt"), []byte(r.abctlText), 0o644),
				os.WriteFile(filepath.Join(*dump, name+".playwright.yaml"), []byte(r.pwText), 0o644),
			); err != nil {
				log.Fatal(err)
			}
		}
		fmt.Fprintf(os.Stderr, "%s: abctl %.1f ms, Playwright %.1f ms\n", path, r.abctlMS, r.pwMS)
	}
	report(os.Stdout, results, *rounds, *verbose)
}

// startChromium starts Chromium headless on a free loopback port and
// returns its browser endpoint.
func startChromium(path string) (string, func(), error) {
	dir, err := os.MkdirTemp("", "observe-bench-profile-")
	if err != nil {
		return "", nil, err
	}
	cmd := exec.Command(path, "--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
		"--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--remote-debugging-address=127.0.0.1", "--remote-debugging-port=0", "--user-data-dir="+dir,
		"--window-size=1280,720", "about:blank")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return "", nil, err
	}
	if err := cmd.Start(); err != nil {
		return "", nil, err
	}
	stop := func() { cmd.Process.Kill(); cmd.Wait(); os.RemoveAll(dir) }
	found := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			if i := strings.Index(sc.Text(), "ws://"); i >= 0 && strings.Contains(sc.Text(), "DevTools listening") {
				found <- strings.TrimSpace(sc.Text()[i:])
				io.Copy(io.Discard, stderr)
				return
			}
		}
	}()
	select {
	case ws := <-found:
		return ws, stop, nil
	case <-time.After(30 * time.Second):
		stop()
		return "", nil, errors.New("chromium did not print its DevTools endpoint within 30 s")
	}
}

func measure(bctx context.Context, url string, rounds int, toNode io.Writer, fromNode *bufio.Reader) (result, error) {
	var r result
	tab, cancel := chromedp.NewContext(bctx)
	defer cancel()
	if err := chromedp.Do(tab, chromedp.EmulateViewport(1280, 720), chromedp.Navigate(url)); err != nil {
		return r, err
	}
	p := page.New(tab)
	obs, err := p.Observe(tab, page.ObserveOptions{}) // warm-up: the page script is installed
	if err != nil {
		return r, err
	}
	var ms []float64
	for range rounds {
		t0 := time.Now()
		obs, err = p.Observe(tab, page.ObserveOptions{})
		if err != nil {
			return r, err
		}
		ms = append(ms, float64(time.Since(t0).Microseconds())/1000)
	}
	r.abctlMS, r.abctlChars, r.abctlText = median(ms), len(obs.Rendered), obs.Rendered

	truth, err := firstViewportControls(tab)
	if err != nil {
		return r, err
	}
	r.truth = len(truth)

	req, _ := json.Marshal(map[string]any{"url": url, "rounds": rounds})
	if _, err := fmt.Fprintf(toNode, "%s\n", req); err != nil {
		return r, err
	}
	line, err := fromNode.ReadBytes('\n')
	if err != nil {
		return r, fmt.Errorf("the Playwright side: %w", err)
	}
	var pw struct {
		MedianMS float64 `json:"median_ms"`
		Snapshot string  `json:"snapshot"`
		Error    string  `json:"error"`
	}
	if err := json.Unmarshal(line, &pw); err != nil || pw.Error != "" {
		return r, fmt.Errorf("the Playwright side: %v %s", err, pw.Error)
	}
	r.pwMS, r.pwChars, r.pwText = pw.MedianMS, len(pw.Snapshot), pw.Snapshot
	r.pwMCPChars = len(mcpPageState(obs.URL, obs.Title, pw.Snapshot))
	snap := snapshotControls(pw.Snapshot)
	for _, c := range truth {
		if abctlShows(obs, c) {
			r.abctlFound++
		} else {
			r.abctlMissing = append(r.abctlMissing, fmt.Sprintf("%s %q", c.role, c.name))
		}
		if slices.ContainsFunc(snap, func(s control) bool { return s.role == c.role && nameMatches(s.name, c.name) }) {
			r.pwFound++
		} else {
			r.pwMissed = append(r.pwMissed, fmt.Sprintf("%s %q", c.role, c.name))
		}
	}
	return r, nil
}

// firstViewportControls are the named interactive controls of the
// browser's accessibility tree with a box in the first viewport.
func firstViewportControls(tab context.Context) ([]control, error) {
	tree, err := chromedp.Call(tab, accessibility.GetFullAXTree, accessibility.GetFullAXTreeParams{})
	if err != nil {
		return nil, err
	}
	// The parts the browser draws inside a field (the segments and the
	// picker button of a date input) are that field, not controls of the
	// page: nodes under a field are left out.
	byID := map[accessibility.NodeID]*accessibility.Node{}
	for _, n := range tree.Nodes {
		byID[n.NodeID] = n
	}
	insideField := func(n *accessibility.Node) bool {
		for p := byID[n.ParentID]; p != nil; p = byID[p.ParentID] {
			var role string
			if p.Role != nil {
				json.Unmarshal(p.Role.Value, &role)
			}
			switch role {
			case "textbox", "searchbox", "spinbutton", "combobox", "slider", "date", "Date", "time", "DateTime", "InputTime":
				return true
			}

		}
		return false
	}
	var out []control
	for _, n := range tree.Nodes {
		if n.Ignored || n.Role == nil || n.Name == nil || n.BackendDOMNodeID == 0 || insideField(n) {
			continue
		}
		var role, name string
		json.Unmarshal(n.Role.Value, &role)
		json.Unmarshal(n.Name.Value, &name)
		name = norm(name)
		if !interactive[role] || name == "" {
			continue
		}
		box, err := chromedp.Call(tab, dom.GetBoxModel, dom.GetBoxModelParams{BackendNodeID: n.BackendDOMNodeID})
		if err != nil || box.Model == nil || len(box.Model.Border) < 8 {
			continue // not rendered
		}
		q := box.Model.Border
		x0, y0, x1, y1 := q[0], q[1], q[4], q[5]
		if x1-x0 < 1 || y1-y0 < 1 || x1 <= 0 || y1 <= 0 || x0 >= 1280 || y0 >= 720 {
			continue
		}
		out = append(out, control{role, name})
	}
	return out, nil
}

// abctlShows reports whether the observation has, in the viewport and in
// its prompt, an element of the control's role with a matching name.
func abctlShows(obs *page.Observation, c control) bool {
	for i := range obs.Elements {
		e := &obs.Elements[i]
		if !e.InViewport || !strings.Contains(obs.Rendered, "["+e.ID+"]") {
			continue
		}
		if c.role == "option" && e.Tag == "select" {
			// A select lists its options on its own line.
			if slices.ContainsFunc(e.Options, func(o string) bool { return nameMatches(norm(o), c.name) }) {
				return true
			}
			continue
		}
		role := e.Role
		if role == "" {
			role = e.Tag
		}
		if role != c.role && !(c.role == "textbox" && (e.Tag == "input" || e.Tag == "textarea")) {
			continue
		}
		for _, n := range []string{e.Text, e.Label, e.Placeholder, e.Value, e.Attrs["title"], e.Attrs["alt"], e.Icon} {
			if nameMatches(norm(n), c.name) {
				return true
			}
		}
	}
	return false
}

var snapLine = regexp.MustCompile(`^\s*- ([a-z]+)(?: "((?:[^"\\]|\\.)*)")?`)

// snapshotControls reads the role and name of each line of an aria
// snapshot ("- button \"Sign in\"").
func snapshotControls(s string) []control {
	var out []control
	for _, line := range strings.Split(s, "\n") {
		m := snapLine.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		name := m[2]
		var unq string
		if json.Unmarshal([]byte(`"`+name+`"`), &unq) == nil {
			name = unq
		}
		out = append(out, control{m[1], norm(name)})
	}
	return out
}

// norm folds case and spaces, reads an icon ligature's underscores and
// hyphens as spaces ("delete_forever") and drops the characters of
// Unicode's private use area, which icon fonts draw as pictures: a name
// made only of those ("\uf1f8") is no name, and the control does not count
// as a named one.
func norm(s string) string {
	s = strings.Map(func(r rune) rune {
		switch {
		case r >= 0xE000 && r <= 0xF8FF, r >= 0xF0000:
			return -1
		case r == '_' || r == '-':
			return ' '
		}
		return r
	}, s)
	return strings.ToLower(strings.Join(strings.Fields(s), " "))
}

// nameMatches: equal, or one holds the other (at least 3 characters), as
// names are cut at different lengths.
func nameMatches(shown, truth string) bool {
	if shown == "" || truth == "" {
		return false
	}
	if shown == truth {
		return true
	}
	return len(shown) >= 3 && len(truth) >= 3 && (strings.Contains(shown, truth) || strings.Contains(truth, shown))
}

func median(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	return s[len(s)/2]
}

// mcpPageState is a snapshot as Playwright's MCP server puts it in a
// model's context: under the page's URL and title, which abctl's prompt
// carries too (its first two lines), in a YAML code block.
func mcpPageState(url, title, snapshot string) string {
	return "- Page URL: " + url + "\n- Page Title: " + title + "\n- Page Snapshot:\n```yaml\n" + snapshot + "\n```\n"
}

func report(w io.Writer, rs []result, rounds int, verbose bool) {
	fmt.Fprintf(w, "Medians of %d observations per page and side, after a warm-up; recall: named interactive controls of the first viewport (the browser's accessibility tree) shown with a matching name.\n\n", rounds)
	fmt.Fprintln(w, "| page | abctl ms | Playwright ms | speed-up | abctl prompt chars | Playwright snapshot chars | the same with URL and title, as Playwright's MCP server sends it | controls | abctl recall | Playwright recall |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|---|---|---|")
	var speed, ab, pw []float64
	var truth, abF, pwF int
	for _, r := range rs {
		fmt.Fprintf(w, "| `%s` | %.1f | %.1f | %.1f× | %d | %d | %d | %d | %d | %d |\n", r.page, r.abctlMS, r.pwMS, r.pwMS/r.abctlMS,
			r.abctlChars, r.pwChars, r.pwMCPChars, r.truth, r.abctlFound, r.pwFound)
		speed = append(speed, r.pwMS/r.abctlMS)
		ab, pw = append(ab, r.abctlMS), append(pw, r.pwMS)
		truth, abF, pwF = truth+r.truth, abF+r.abctlFound, pwF+r.pwFound
	}
	fmt.Fprintf(w, "\nMedian over the pages: abctl %.1f ms, Playwright %.1f ms, speed-up %.1f×. Recall over all %d controls: abctl %.1f %%, Playwright %.1f %%.\n",
		median(ab), median(pw), median(speed), truth, 100*float64(abF)/float64(max(truth, 1)), 100*float64(pwF)/float64(max(truth, 1)))
	if verbose {
		for _, r := range rs {
			if len(r.abctlMissing) > 0 {
				fmt.Fprintf(w, "\nabctl missed on %s: %s\n", r.page, strings.Join(r.abctlMissing, ", "))
			}
			if len(r.pwMissed) > 0 {
				fmt.Fprintf(w, "\nPlaywright missed on %s: %s\n", r.page, strings.Join(r.pwMissed, ", "))
			}
		}
	}
}
