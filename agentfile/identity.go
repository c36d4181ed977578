package agentfile

import (
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"unicode/utf8"

	"gopkg.in/yaml.v3"

	"github.com/abctl/abctl/internal/agentid"
)

// namePattern is the form of an agent's name: lowercase, so that names
// that differ only in case, which would be different agents, cannot both
// exist.
var namePattern = regexp.MustCompile(`^[a-z0-9]([a-z0-9._-]{0,98}[a-z0-9])?$`)

// ValidName reports whether name is a valid agent name: 1 to 100
// lowercase letters, digits, ".", "_" and "-", starting and ending with a
// letter or digit.
func ValidName(name string) bool { return namePattern.MatchString(name) }

const nameRule = `1 to 100 lowercase letters, digits, ".", "_" and "-", starting and ending with a letter or digit`

// NameFromFile returns the default name of the agent of a single-agent
// file: its base name without the extension, lowercased, with every
// character a name cannot hold turned into "-". It returns "" when that is
// still not a valid name (say, a file named "-x.yaml").
func NameFromFile(path string) string {
	base := filepath.Base(path)
	base = strings.TrimSuffix(base, filepath.Ext(base))
	var b strings.Builder
	for _, r := range strings.ToLower(base) {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '.' || r == '_' || r == '-' {
			b.WriteRune(r)
		} else {
			b.WriteByte('-')
		}
	}
	if name := b.String(); ValidName(name) {
		return name
	}
	return ""
}

// idempotencyPrefix marks the creates abctl makes, so that its keys never
// meet keys other tools choose.
const idempotencyPrefix = "abctl:"

// IdempotencyKey is the Idempotency-Key header abctl sends when it creates
// the agent called name. The service derives the agent's id from it (see
// AgentID), which is what makes a name an identity.
func IdempotencyKey(name string) string { return idempotencyPrefix + name }

// AgentID is the permanent id (wpid_...) the service gives the agent called
// name in the organization orgID when abctl creates it: the id it derives
// from the create's idempotency key, IdempotencyKey(name) (the rule is in
// the package documentation). So the agent of a name can be found, or known
// to be missing, with no state kept anywhere but the service.
func AgentID(orgID, name string) string { return agentid.FromKey(orgID, IdempotencyKey(name)) }

// agentName returns the name of the agent whose document is root: the one
// given by nameNode, else the file's. It reports why there is none.
func (w *walker) agentName(nameNode, root *yaml.Node, file string, multi bool) string {
	c := ctx{path: "name"}
	if nameNode != nil {
		n := unalias(nameNode)
		if n == nil || n.Kind != yaml.ScalarNode || isNull(n) || n.ShortTag() == "!!bool" {
			w.mismatch(n, c, "a string")
			return ""
		}
		if !ValidName(n.Value) {
			w.problem(n, c, "name %q is not valid: use %s", n.Value, nameRule)
		}
		return n.Value
	}
	switch {
	case multi:
		w.problem(root, c, `missing "name": each agent of a file with several agents needs one`)
	case file == "-":
		w.problem(root, c, `missing "name": an agent read from standard input has no file name to take one from`)
	default:
		if name := NameFromFile(file); name != "" {
			return name
		}
		w.problem(root, c, `missing "name": none can be made from the file name %q (use %s)`, filepath.Base(file), nameRule)
	}
	return ""
}

// idPattern is what an agent's permanent id looks like: a snowflake, or the
// hex digest of an id derived from an idempotency key.
var idPattern = regexp.MustCompile(`^` + agentid.Prefix + `_([0-9]{1,20}|[0-9a-f]{64})$`)

// agentID reads the abctl-only id key; "" when there is none.
func (w *walker) agentID(n *yaml.Node) string {
	if n == nil {
		return ""
	}
	c := ctx{path: "id"}
	n = unalias(n)
	if n == nil || n.Kind != yaml.ScalarNode || isNull(n) {
		w.mismatch(n, c, "an agent id (wpid_...)")
		return ""
	}
	if !idPattern.MatchString(n.Value) {
		w.problem(n, c, "id %q is not an agent's permanent id (wpid_ and its number or digest)", n.Value)
		return ""
	}
	return n.Value
}

// Tag keys and values, as the service accepts them; the prefixes are the
// service's own tags and the ones abctl may set for itself.
var (
	tagKeyPattern      = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]*$`)
	reservedTagPrefixs = []string{"skyvern.", "abctl."}
)

const (
	maxTagKeyLen   = 64
	maxTagValueLen = 256
)

// tags reads the abctl-only tags mapping; nil when there is none.
func (w *walker) tags(n *yaml.Node) map[string]string {
	c := ctx{path: "tags"}
	if n == nil {
		return nil
	}
	if n = unalias(n); n == nil || isNull(n) {
		return nil
	}
	if n.Kind != yaml.MappingNode {
		w.mismatch(n, c, "a mapping of tag keys to values")
		return nil
	}
	var tags map[string]string
	for _, p := range w.pairs(n, c) {
		key := p.key.Value
		kc := c.key(key)
		if msg := tagKeyProblem(key); msg != "" {
			w.problem(p.key, kc, "%s", msg)
			continue
		}
		v := unalias(p.value)
		if v == nil || v.Kind != yaml.ScalarNode || isNull(v) {
			w.problem(v, kc, "the value of tag %q must be a string, not %s", key, describe(v))
			continue
		}
		if msg := tagValueProblem(key, v.Value); msg != "" {
			w.problem(v, kc, "%s", msg)
			continue
		}
		if tags == nil {
			tags = map[string]string{}
		}
		tags[key] = v.Value
	}
	return tags
}

// TagProblem says why key: value cannot be one of the tags of an agent
// file, "" when it can: how get -o yaml knows which of an agent's tags its
// file may carry (tags abctl and the service keep for themselves and values
// a file cannot hold stay out).
func TagProblem(key, value string) string {
	if msg := tagKeyProblem(key); msg != "" {
		return msg
	}
	return tagValueProblem(key, value)
}

// ReservedTagKey reports whether key belongs to the service or to abctl
// (abctl.name), not to agent files.
func ReservedTagKey(key string) bool {
	lower := strings.ToLower(key)
	return strings.HasPrefix(lower, reservedTagPrefixs[0]) || strings.HasPrefix(lower, reservedTagPrefixs[1])
}

func tagKeyProblem(key string) string {
	switch {
	case !tagKeyPattern.MatchString(key) || len(key) > maxTagKeyLen:
		return fmt.Sprintf("tag key %q is not valid: use 1 to %d letters, digits, \"_\", \".\" and \"-\", starting with a letter or digit", key, maxTagKeyLen)
	case ReservedTagKey(key):
		return fmt.Sprintf("tag key %q is reserved: keys starting with %q or %q belong to the service and to abctl", key, reservedTagPrefixs[0], reservedTagPrefixs[1])
	}
	return ""
}

func tagValueProblem(key, value string) string {
	switch {
	case value == "":
		return fmt.Sprintf("the value of tag %q is empty", key)
	case utf8.RuneCountInString(value) > maxTagValueLen:
		return fmt.Sprintf("the value of tag %q is longer than %d characters", key, maxTagValueLen)
	case strings.Contains(value, ","):
		return fmt.Sprintf("the value of tag %q has a \",\", which tag filters use as a separator", key)
	}
	return ""
}
