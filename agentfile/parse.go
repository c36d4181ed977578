package agentfile

import (
	"encoding/json"

	"gopkg.in/yaml.v3"

	"github.com/abctl/abctl/client"
)

// Agent is one agent of an agent file, checked and ready to send.
type Agent struct {
	Name string // identity (given or derived)
	// ID is the `id` key: the permanent id of an agent that was not created
	// from its name (made in an editor or through the API, then exported
	// with `abctl get -o yaml`). When set, it is the agent's identity and
	// the name only labels it.
	ID string
	// NameFromFile tells that the document has no `name` key: Name was
	// made from the file's name. With an ID, such a name is no identity
	// and apply does not give it to the agent (an agent exported from the
	// service keeps the name it has, none for one made elsewhere).
	NameFromFile bool
	Tags         map[string]string       // abctl-only tags, nil if none
	File         string                  // path as given ("-" shown as "<stdin>")
	Line         int                     // line where this agent's document starts
	Definition   *client.AgentDefinition // what is sent to the service
	// Warnings are what the service accepts in this agent but abctl
	// cannot vouch for (see Validation), in file order; nil when none.
	Warnings Problems

	// Schedules are the `schedules:` list (schedules.go); HasSchedules
	// tells that the file has the key, which makes the listed schedules
	// the agent's only ones when it is applied.
	Schedules    []Schedule
	HasSchedules bool
}

const stdinName = "<stdin>"

// shownName is how a path appears in agents and problems.
func shownName(file string) string {
	if file == "-" {
		return stdinName
	}
	return file
}

// Parse reads the agents of one file's content, YAML or JSON; file is the
// path it came from ("-" for standard input), used in problems and for the
// default name. It returns the agents that have no error, each with its
// warnings, and the problems of the other agents and of the file as
// Problems (nil when there is none). It validates as ValidateWarn.
func Parse(file string, data []byte) ([]*Agent, error) {
	return ParseWith(file, data, ValidateWarn)
}

// ParseWith is Parse with the validation mode v.
func ParseWith(file string, data []byte, v Validation) ([]*Agent, error) {
	agents, named, problems := parseFile(file, data, v)
	agents, dupProblems := withoutDuplicateNames(agents, named)
	return agents, append(problems, dupProblems...).tidy().errorOrNil()
}

// parseFile returns the agents of a file that have no error, every agent
// that has a name (for the check of names across files), and the
// problems of the file and of the agents that have an error, their
// warnings included.
func parseFile(file string, data []byte, v Validation) (valid, named []*Agent, problems Problems) {
	shown := shownName(file)
	docs, syntaxErr := decodeDocuments(data)
	if syntaxErr != nil {
		problems = append(problems, Problem{File: shown, Line: syntaxErr.line, Msg: "syntax error: " + syntaxErr.msg})
	}
	var roots []*yaml.Node
	for _, d := range docs {
		if !isEmptyDocument(d) {
			roots = append(roots, d.Content[0])
		}
	}
	if len(roots) == 0 && syntaxErr == nil {
		problems = append(problems, Problem{File: shown, Msg: "no agent in the file (it is empty)"})
	}
	// A syntax error hides how many documents follow: the ones before it
	// are read as parts of a file with several agents.
	multi := len(roots) > 1 || syntaxErr != nil
	for _, root := range roots {
		a, ps := parseDocument(file, root, multi, v)
		if a != nil && a.Name != "" {
			named = append(named, a)
		}
		if a != nil && !ps.hasErrors() {
			a.Warnings = ps.tidy()
			valid = append(valid, a)
		} else {
			problems = append(problems, ps...)
		}
	}
	return valid, named, problems.tidy()
}

// parseDocument checks the agent of one document (root is its content;
// multi tells that the file has several) and returns it, with a name when
// one is known, and its problems; it is valid when none is an error.
func parseDocument(file string, root *yaml.Node, multi bool, v Validation) (*Agent, Problems) {
	w := &walker{schema: loadSchema(), file: shownName(file), budget: maxNodes, mode: v}
	root = unalias(root)
	if root == nil || root.Kind != yaml.MappingNode {
		w.problem(root, ctx{}, "an agent must be a mapping of the definition's keys (title, workflow_definition, ...), not %s", describe(root))
		return nil, w.problems
	}
	pairs := w.pairs(root, ctx{})
	var nameNode, tagsNode, idNode, schedulesNode *yaml.Node
	defPairs := pairs[:0:0]
	for _, p := range pairs {
		switch p.key.Value {
		case "name":
			nameNode = p.value
		case "tags":
			tagsNode = p.value
		case "id":
			idNode = p.value
		case "schedules":
			schedulesNode = p.value
		default:
			defPairs = append(defPairs, p)
		}
	}
	a := &Agent{File: w.file, Line: root.Line}
	a.Name = w.agentName(nameNode, root, file, multi)
	a.NameFromFile = nameNode == nil
	w.agent = a.Name
	for i := range w.problems { // found before the name was known
		w.problems[i].Agent = a.Name
	}
	a.Tags = w.tags(tagsNode)
	a.ID = w.agentID(idNode)
	a.Schedules, a.HasSchedules = w.schedules(schedulesNode)

	w.objectFromPairs(root, defPairs, w.schema.agent, ctx{}, []string{"name", "tags", "id", "schedules"})
	if w.tooBig {
		return a, w.problems // what was written is cut short: nothing more to check
	}
	def := new(client.AgentDefinition)
	if err := json.Unmarshal(w.buf.Bytes(), def); err != nil {
		// The JSON is written from checked values; this is a shape the
		// checks do not cover.
		w.problem(root, ctx{}, "the definition cannot be read: %v", err)
		return a, w.problems
	}
	w.validate(root, def)
	w.checkReferences(def)
	a.Definition = def
	return a, w.problems
}
