package deps_test

import (
	"os/exec"
	"strings"
	"testing"
)

const module = "github.com/abctl/abctl/"

// rules: a package whose path (below the module) starts with from may not
// import a package of this module whose path starts with any of not. An
// entry of allow is an exception to not.
var rules = []struct {
	from  string
	not   []string
	allow []string
	why   string
}{
	{"client", []string{""}, []string{"client", "internal/"},
		"the SDK is a leaf: programs import it without the rest"},
	{"internal/", []string{""}, []string{"internal/"},
		"shared helpers depend on nothing of the module"},
	{"tmpl", []string{""}, []string{"client", "internal/"},
		"templating is a leaf shared by agent files and the engine"},
	{"llm", []string{""}, []string{"llm", "client", "internal/"},
		"the model client is a leaf the engine, the daemon and the CLI share"},
	{"executor", []string{""}, []string{"executor", "client", "internal/"},
		"the seam between the daemon and the engine depends on neither"},
	{"engine", []string{"daemon", "cmd", "mcpserver", "agentfile", "bench", "examples"}, nil,
		"the engine runs jobs handed to it through the executor seam"},
	{"agentfile", []string{"engine", "daemon", "cmd", "llm", "mcpserver"}, nil,
		"agent files are read and written without the programs that run them"},
	{"mcpserver", []string{"engine", "daemon", "cmd", "llm"}, nil,
		"the MCP tools call the API through the SDK"},
	{"daemon/api", []string{"engine", "llm", "daemon/daemontest", "cmd"}, nil,
		"the HTTP face does not run browsers: package daemon wires the engine in"},
	{"daemon/definition", []string{""}, []string{"client", "internal/", "daemon/ids"},
		"the stored shape of agent definitions is a leaf the API and the store's tests share"},
	{"daemon/runview", []string{"daemon/api", "daemon/runner", "daemon/webhooks", "engine", "llm", "cmd"}, nil,
		"run answers are built below the HTTP face and the runner, which both use them"},
	{"daemon/store", []string{"daemon/artifacts", "daemon/runview", "daemon/definition", "daemon/api", "daemon/runner", "daemon/webhooks", "daemon/admin", "engine", "llm", "cmd", "mcpserver"}, nil,
		"the store stores; the layers above it use it"},
	{"daemon/runner", []string{"daemon/api", "engine", "llm", "cmd"}, nil,
		"the queue runs jobs through the executor seam"},
	{"daemon/", []string{"cmd"}, nil, "the daemon's packages do not know the CLI"},
	{"daemon/datadir", []string{""}, nil, "the layout of the data directory is a leaf the CLI reads without linking the daemon"},
	{"daemon/admin", []string{""}, []string{"client", "daemon/datadir"},
		"the admin client links no server code: the CLI uses it"},
	{"cmd/abctl/internal/", []string{"daemon", "engine", "executor", "mcpserver"}, []string{"daemon/admin", "daemon/datadir"},
		"a CLI command that does not serve links no server code (cli wires the daemon in; daemoncmd is the daemon; mcpcmd serves MCP)"},
}

// exempt are the packages that wire the server into the CLI, and may
// import what the rule of their folder forbids.
var exempt = map[string][]string{
	"cmd/abctl/internal/cli":           []string{"daemon", "executor"},
	"cmd/abctl/internal/cmd/daemoncmd": []string{"daemon", "executor"},
	"cmd/abctl/internal/cmd/mcpcmd":    []string{"mcpserver"},
}

func TestImportRules(t *testing.T) {
	out, err := exec.Command("go", "list", "-f", "{{.ImportPath}}{{range .Imports}} {{.}}{{end}}", module+"...").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	checked := 0
	for line := range strings.Lines(string(out)) {
		f := strings.Fields(line)
		pkg := strings.TrimPrefix(f[0], module)
		for _, imp := range f[1:] {
			dep, ok := strings.CutPrefix(imp, module)
			if !ok {
				continue
			}
			checked++
			for _, r := range rules {
				if !under(pkg, r.from) {
					continue
				}
				if under(dep, r.not...) && !under(dep, r.allow...) && !under(dep, exempt[pkg]...) {
					t.Errorf("%s imports %s: %s", pkg, dep, r.why)
				}
			}
		}
	}
	if checked < 100 {
		t.Fatalf("only %d imports of the module's packages were read:\n%s", checked, out)
	}
}

// under reports whether path is one of the packages or folders given: "a/b"
// matches a/b and a/b/c, "a/" matches what is inside a, "" matches all.
func under(path string, prefixes ...string) bool {
	for _, p := range prefixes {
		switch {
		case p == "":
			return true
		case strings.HasSuffix(p, "/"):
			if strings.HasPrefix(path, p) {
				return true
			}
		case path == p || strings.HasPrefix(path, p+"/"):
			return true
		}
	}
	return false
}
