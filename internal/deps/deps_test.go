package deps_test

import (
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/abctl/abctl/"

// A rule says which of this module's packages the packages at a place may
// import. Every package is governed by exactly one rule: the one whose
// place is the longest that holds it ("a/b" holds a/b and everything
// below it). A package may import what is under one of may and not under
// one of not; its own subpackages and the packages beside it under the same
// place are not implied: list them.
type rule struct {
	place string
	may   []string
	not   []string
	// notOutside lists import paths from outside the module that the
	// place's packages must not import ("a/b": a/b and everything below it).
	notOutside []string
	why        string
}

// Paths in may and not: "a/b" is a/b and everything below it, "a/" only
// what is below a, "" everything.
var rules = []rule{
	// The leaves everyone shares.
	{place: "internal", may: []string{"internal/"},
		why: "the shared helpers depend on nothing of the module but each other"},
	{place: "internal/deps",
		why: "this test reads the graph; it imports nothing"},
	{place: "client", may: []string{"internal/jsonenc", "internal/jsonobject", "internal/ptr", "internal/retry"},
		why: "the SDK is a leaf: programs import it without the rest"},
	{place: "client/webhook", may: []string{"client"},
		why: "webhook verification needs only the SDK's types"},
	{place: "client/internal/blockgen",
		why: "the generator of the block methods reads source, not the module"},

	// Agent files and the formats they share with the engine.
	{place: "agentfile", may: []string{"agentfile/", "client", "internal/"},
		why: "agent files are read and written without the programs that run them"},
	{place: "agentfile/tmpl", may: []string{"client", "internal/"},
		why: "templating is a leaf shared by agent files, the daemon and the engine"},
	{place: "agentfile/script", may: []string{"client", "internal/"},
		why: "recorded scripts are a format the CLI, the daemon and the engine share"},

	// What runs agents on this machine.
	{place: "localrun/llm", may: []string{"localrun/llm", "client", "internal/"},
		why: "the model client is a leaf the engine, the daemon and the CLI share"},
	{place: "localrun/executor", may: []string{"localrun/executor", "client", "internal/"},
		why: "the seam between the daemon and the engine depends on neither"},
	{place: "localrun/engine", may: []string{"localrun/", "agentfile/", "client", "internal/"},
		not: []string{"localrun/llm/llmtest", "localrun/llm/handmodel", "localrun/executor/scripted"},
		why: "the engine runs jobs handed to it through the executor seam and knows nothing of the daemon"},
	{place: "localrun/engine/internal", may: []string{"internal/"},
		why: "the engine's own helpers are leaves"},
	{place: "localrun/engine/browser", may: []string{"internal/"},
		why: "the Chromium pool knows nothing of runs, pages or models"},
	{place: "localrun/engine/record",
		why: "the recording reads frames and writes a file; it knows nothing else"},
	{place: "localrun/engine/page", may: []string{"localrun/engine/secrets", "localrun/engine/internal/", "internal/"},
		why: "observing and acting on a page knows nothing of runs, blocks or models"},
	{place: "localrun/engine/secrets", may: []string{"localrun/executor", "client", "internal/"},
		why: "a run's credentials are revealed to the page and scrubbed from what comes out, below everything that uses them"},
	{place: "localrun/engine/steplog", may: []string{"localrun/executor", "localrun/llm", "localrun/engine/internal/", "client", "internal/"},
		why: "the step log counts and reports; the agent and the blocks write to it"},
	{place: "localrun/engine/agent", may: []string{"localrun/engine/page", "localrun/engine/secrets", "localrun/engine/steplog", "localrun/engine/internal/",
		"localrun/executor", "localrun/llm", "agentfile/script", "client", "internal/"},
		not: []string{"localrun/llm/llmtest", "localrun/llm/handmodel"},
		why: "the agent loop sees the browser through its narrow Browser interface, not the run's browser"},
	{place: "localrun/engine/blocks", may: []string{"localrun/engine/", "localrun/executor", "localrun/llm", "agentfile/", "client", "internal/"},
		not: []string{"localrun/llm/llmtest", "localrun/llm/handmodel"},
		why: "the block interpreter is used by the engine and does not reach back into it"},

	{place: "localrun/engine/blocks/pdf", may: []string{"localrun/engine/internal/", "internal/"},
		why: "an integration of the blocks is a leaf: it takes plain values and knows nothing of the interpreter"},
	{place: "localrun/engine/blocks/storage", may: []string{"localrun/engine/internal/", "internal/"},
		why: "an integration of the blocks is a leaf: it takes plain values and knows nothing of the interpreter"},
	{place: "localrun/engine/blocks/mail", may: []string{"localrun/engine/internal/", "internal/"},
		why: "an integration of the blocks is a leaf: it takes plain values and knows nothing of the interpreter"},
	{place: "localrun/engine/blocks/sheets", may: []string{"localrun/engine/internal/", "internal/"},
		why: "an integration of the blocks is a leaf: it takes plain values and knows nothing of the interpreter"},
	{place: "localrun/engine/blocks/python", may: []string{"localrun/engine/internal/", "internal/"},
		why: "an integration of the blocks is a leaf: it takes plain values and knows nothing of the interpreter"},

	// The daemon.
	{place: "daemon", may: []string{"daemon/", "localrun/", "agentfile/", "mcpserver", "client", "internal/"},
		not: []string{"daemon/daemontest", "localrun/llm/llmtest", "localrun/executor/scripted"},
		why: "package daemon wires the server, the store and the engine together"},
	{place: "daemon/daemontest", may: []string{"daemon", "localrun/", "client", "internal/"},
		why: "a daemon inside a test is the whole daemon"},
	{place: "daemon/cluster",
		why: "the several-daemons test is all tests: its package itself imports nothing"},
	{place: "daemon/api", may: []string{"daemon/", "localrun/executor", "mcpserver", "agentfile/", "client", "internal/"},
		not: []string{"daemon/daemontest", "localrun/executor/scripted"},
		why: "the HTTP face does not run browsers: package daemon wires the engine in"},
	{place: "daemon/webui", may: []string{"agentfile", "client", "internal/"},
		why: "the web page reads what the API answers, through the SDK, in process: no second path to the store (agentfile writes an agent as get -o yaml does)"},
	{place: "daemon/store/pgstore", may: []string{"daemon/store", "daemon/ids", "daemon/tagquery", "localrun/executor", "client", "internal/"},
		not: []string{"localrun/executor/scripted", "daemon/store/boltstore", "daemon/store/storetest"},
		why: "the PostgreSQL backend implements the store's interfaces on its own: no code of the bbolt backend, only the records both keep"},
	{place: "daemon/store", may: []string{"daemon/ids", "daemon/tagquery", "localrun/executor", "client", "internal/"},
		not:        []string{"localrun/executor/scripted", "daemon/store/"},
		notOutside: []string{"go.etcd.io/bbolt", "github.com/jackc/pgx"},
		why:        "the store is the seam: the interfaces, values, errors and sealing every backend shares, and no database; the layers above it use it"},
	{place: "daemon/store/boltstore", may: []string{"daemon/store", "daemon/ids", "daemon/tagquery", "localrun/executor", "client", "internal/"},
		not: []string{"localrun/executor/scripted", "daemon/store/pgstore", "daemon/store/storetest"},
		why: "the embedded backend implements the store's interfaces on bbolt and stores what it is given, in the records both backends keep"},
	{place: "daemon/store/internal/records", may: []string{"client", "daemon/ids", "daemon/store", "daemon/tagquery", "localrun/executor", "internal/"},
		not:        []string{"localrun/executor/scripted", "daemon/store/"},
		notOutside: []string{"go.etcd.io/bbolt", "github.com/jackc/pgx"},
		why:        "the documents both backends keep and the pure rules on them: no database, no backend"},
	{place: "daemon/store/storetest", may: []string{"daemon/store", "daemon/definition", "daemon/ids", "daemon/tagquery",
		"localrun/executor", "client", "internal/"},
		not: []string{"daemon/store/", "localrun/executor/scripted"},
		why: "the conformance suite tests any backend through the store's exported methods, never a backend's own code"},
	{place: "daemon/runner", may: []string{"daemon/store", "daemon/runview", "daemon/artifacts", "daemon/webhooks", "daemon/ids",
		"localrun/executor", "agentfile/", "client", "internal/"},
		not: []string{"localrun/executor/scripted"},
		why: "the queue runs jobs through the executor seam"},
	{place: "daemon/runview", may: []string{"daemon/store", "daemon/artifacts", "daemon/ids", "client", "internal/"},
		why: "run answers are built below the HTTP face and the runner, which both use them"},
	{place: "daemon/artifacts", may: []string{"daemon/store", "daemon/ids", "localrun/executor", "client", "internal/"},
		not: []string{"localrun/executor/scripted"},
		why: "run files and their signed URLs sit beside the store, below the runner and the API"},
	{place: "daemon/definition", may: []string{"daemon/ids", "client", "internal/"},
		why: "the stored shape of agent definitions is a leaf the API and the store's tests share"},
	{place: "daemon/scheduler", may: []string{"daemon/store", "daemon/ids", "client", "internal/"},
		why: "the scheduler fires runs through the store and a callback"},
	{place: "daemon/webhooks", may: []string{"client", "internal/"},
		why: "webhook payloads and delivery need only the SDK's types and the egress policy"},
	{place: "daemon/metrics", may: []string{"localrun/engine/browser", "client", "internal/"},
		why: "metrics read the browser fleet's figures and nothing else of the engine"},
	{place: "daemon/admin", may: []string{"daemon/datadir", "client"},
		why: "the admin client links no server code: the CLI uses it"},
	{place: "daemon/datadir",
		why: "the layout of the data directory is a leaf the CLI reads without linking the daemon"},
	{place: "daemon/ids", may: []string{"internal/"},
		why: "ids are a leaf"},
	{place: "daemon/tagquery",
		why: "the tag filter's grammar is a leaf"},

	// The MCP tools.
	{place: "mcpserver", may: []string{"agentfile", "agentfile/", "client", "internal/"},
		why: "the MCP tools call the API through the SDK"},

	// The command line.
	{place: "cmd/abctl", may: []string{"cmd/abctl/internal/cli"},
		why: "main only calls the command tree"},
	{place: "cmd/abctl/internal", may: []string{"cmd/abctl/internal/", "agentfile", "agentfile/", "daemon/admin", "daemon/datadir", "localrun/llm", "client", "internal/"},
		not: []string{"cmd/abctl/internal/cmd/", "localrun/llm/llmtest"},
		why: "a CLI package that does not serve links no server code, and no command package imports another"},
	{place: "cmd/abctl/internal/cli", may: []string{"cmd/abctl/internal/", "daemon", "localrun/executor", "localrun/llm", "client", "internal/"},
		not: []string{"localrun/llm/llmtest", "localrun/executor/scripted"},
		why: "the command tree wires the embedded daemon into the factory"},
	{place: "cmd/abctl/internal/cmd/daemoncmd", may: []string{"cmd/abctl/internal/", "daemon", "daemon/", "localrun/executor", "localrun/llm", "client", "internal/"},
		not: []string{"cmd/abctl/internal/cmd/", "daemon/daemontest", "localrun/llm/llmtest", "localrun/executor/scripted"},
		why: "abctl daemon is the daemon"},
	{place: "cmd/abctl/internal/cmd/mcpcmd", may: []string{"cmd/abctl/internal/", "mcpserver", "client", "internal/"},
		not: []string{"cmd/abctl/internal/cmd/"},
		why: "abctl mcp serves the MCP tools"},
	{place: "cmd/abctl/internal/cmd/modelbyhand", may: []string{"cmd/abctl/internal/", "localrun/llm", "client", "internal/"},
		not: []string{"cmd/abctl/internal/cmd/", "localrun/llm/llmtest"},
		why: "abctl model-by-hand serves the hand-played model"},

	// Programs that use the module from outside.
	{place: "examples", may: []string{"agentfile", "client", "client/webhook"},
		why: "the examples use only what a user's program can import"},
	{place: "bench", may: []string{""}, not: []string{"cmd/"},
		why: "benchmarks measure the packages and the programs, never the CLI's internals"},
}

func TestImportRules(t *testing.T) {
	graph := importGraph(t)
	checked := 0
	for pkg, imports := range graph {
		r, ok := ruleFor(pkg)
		if !ok {
			t.Errorf("%s has no import rule: add one to rules (and say in docs/architecture.md what the package is for)", pkg)
			continue
		}
		for _, dep := range imports {
			checked++
			if under(dep, pkg) && !under(dep, r.not...) {
				continue // a package's own subpackages are its business
			}
			if !under(dep, r.may...) || under(dep, r.not...) {
				t.Errorf("%s imports %s: %s (rule %q)", pkg, dep, r.why, r.place)
			}
		}
	}
	if checked < 100 {
		t.Fatalf("only %d imports of the module's packages were read", checked)
	}
}

// TestOutsideImportRules checks the imports from outside the module that
// rules forbid (notOutside): the store's seam links no database.
func TestOutsideImportRules(t *testing.T) {
	out, err := exec.Command("go", "list", "-f", "{{.ImportPath}}{{range .Imports}} {{.}}{{end}}", module+"...").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	checked := 0
	for line := range strings.Lines(string(out)) {
		f := strings.Fields(line)
		pkg, ok := strings.CutPrefix(f[0], module)
		if !ok {
			continue
		}
		r, ok := ruleFor(pkg)
		if !ok || len(r.notOutside) == 0 {
			continue
		}
		checked++
		for _, imp := range f[1:] {
			if !strings.HasPrefix(imp, module) && under(imp, r.notOutside...) {
				t.Errorf("%s imports %s: %s (rule %q)", pkg, imp, r.why, r.place)
			}
		}
	}
	if checked == 0 {
		t.Fatal("no package is governed by a rule with notOutside")
	}
}

// TestEveryRuleGovernsAPackage keeps the rules from outliving the packages
// they were written for.
func TestEveryRuleGovernsAPackage(t *testing.T) {
	graph := importGraph(t)
	for _, r := range rules {
		found := false
		for pkg := range graph {
			if got, _ := ruleFor(pkg); got.place == r.place {
				found = true
				break
			}
		}
		if !found {
			t.Errorf("rule %q governs no package: remove it or fix its place", r.place)
		}
	}
}

// TestArchitectureNamesEveryPackage holds docs/architecture.md to the code:
// every package that is not a test helper, a benchmark or an example is
// named there, and every package path the page names in its table exists.
func TestArchitectureNamesEveryPackage(t *testing.T) {
	doc, err := os.ReadFile("../../docs/architecture.md")
	if err != nil {
		t.Fatal(err)
	}
	named := map[string]bool{}
	for _, m := range regexp.MustCompile("`([a-z][a-z0-9_/.…]*)/?`").FindAllStringSubmatch(string(doc), -1) {
		named[strings.TrimSuffix(m[1], "/")] = true
	}
	graph := importGraph(t)
	for pkg := range graph {
		if under(pkg, "bench", "examples", "internal/deps") {
			continue
		}
		if !named[pkg] && !namedByFolder(named, pkg) {
			t.Errorf("docs/architecture.md does not say what %s is for", pkg)
		}
	}
	for name := range named {
		if !strings.Contains(name, "/") || strings.ContainsAny(name, ".…") {
			continue
		}
		if _, ok := graph[name]; !ok && !isFolder(graph, name) {
			t.Errorf("docs/architecture.md names %s, which is neither a package nor a folder of packages", name)
		}
	}
}

// namedByFolder accepts a package the page names by its folder's pattern
// (`cmd/abctl/internal/cmd/…` for the command packages).
func namedByFolder(named map[string]bool, pkg string) bool {
	for name := range named {
		if folder, ok := strings.CutSuffix(name, "/…"); ok && under(pkg, folder+"/") {
			return true
		}
	}
	return false
}

func isFolder(graph map[string][]string, name string) bool {
	for pkg := range graph {
		if under(pkg, name+"/") {
			return true
		}
	}
	return false
}

// importGraph lists the module's packages (tests left out) with the
// module's packages each imports.
func importGraph(t *testing.T) map[string][]string {
	t.Helper()
	out, err := exec.Command("go", "list", "-f", "{{.ImportPath}}{{range .Imports}} {{.}}{{end}}", module+"...").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	graph := map[string][]string{}
	for line := range strings.Lines(string(out)) {
		f := strings.Fields(line)
		pkg, ok := strings.CutPrefix(f[0], module)
		if !ok {
			continue // the module's root, if it ever has a package
		}
		graph[pkg] = []string{}
		for _, imp := range f[1:] {
			if dep, ok := strings.CutPrefix(imp, module); ok {
				graph[pkg] = append(graph[pkg], dep)
			}
		}
	}
	if len(graph) < 50 {
		t.Fatalf("go list found only %d packages:\n%s", len(graph), out)
	}
	return graph
}

// ruleFor returns the rule with the longest place that holds pkg.
func ruleFor(pkg string) (rule, bool) {
	best, found := rule{}, false
	for _, r := range rules {
		if (pkg == r.place || strings.HasPrefix(pkg, r.place+"/")) && (!found || len(r.place) > len(best.place)) {
			best, found = r, true
		}
	}
	return best, found
}

// under reports whether path is one of the packages or folders given: "a/b"
// matches a/b and a/b/c, "a/" matches what is inside a, "" matches all.
func under(path string, prefixes ...string) bool {
	return slices.ContainsFunc(prefixes, func(p string) bool {
		switch {
		case p == "":
			return true
		case strings.HasSuffix(p, "/"):
			return strings.HasPrefix(path, p)
		default:
			return path == p || strings.HasPrefix(path, p+"/")
		}
	})
}
