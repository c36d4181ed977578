package daemoncmd

import (
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"

	"github.com/abctl/abctl/daemon"
)

// EnvBrowserEndpoints names the variable that gives the daemon's fleet of
// browser endpoints when no --browser-endpoint flag is given: the same
// values, one a line (blank lines and lines starting with # are skipped).
// It keeps the endpoints' tokens out of process lists.
const EnvBrowserEndpoints = "ABCTL_BROWSER_ENDPOINTS"

// flagBrowserEndpoint is the flag of the fleet's endpoints.
const flagBrowserEndpoint = "--browser-endpoint"

// The limits of an endpoint's options.
const (
	maxEndpointCapacity = 1000
	maxEndpointName     = 64
)

// endpointSyntax is how a value of --browser-endpoint is written, for the
// errors and the help.
const endpointSyntax = "URL[;capacity=N][;name=NAME][;header=Name: value]..."

// endpointValue is one value of --browser-endpoint or one line of
// EnvBrowserEndpoints, with where it came from for the errors.
type endpointValue struct {
	raw   string
	where string // `--browser-endpoint` or `ABCTL_BROWSER_ENDPOINTS line 3`
}

// endpointsFromEnv returns the values of EnvBrowserEndpoints: its lines,
// trimmed, without the blank ones and the comments.
func endpointsFromEnv(v string) []endpointValue { return endpointsFromLines(v, EnvBrowserEndpoints) }

// endpointsFromLines returns the values of a text of one endpoint a line
// (the environment variable, or a --browser-endpoints-file): its lines,
// trimmed, without the blank ones and the comments; source names the text
// in errors.
func endpointsFromLines(v, source string) []endpointValue {
	var out []endpointValue
	for i, line := range strings.Split(v, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		out = append(out, endpointValue{raw: line, where: fmt.Sprintf("%s line %d", source, i+1)})
	}
	return out
}

// endpointsFromFlag returns the values of --browser-endpoint.
func endpointsFromFlag(values []string) []endpointValue {
	out := make([]endpointValue, len(values))
	for i, v := range values {
		out[i] = endpointValue{raw: v, where: flagBrowserEndpoint}
	}
	return out
}

// parseEndpoints parses the values of the fleet's endpoints, and checks
// that no two have the same URL or the same name (an endpoint without a
// name is named by its URL without credentials or query). Errors quote the
// value, with the headers' values left out.
func parseEndpoints(values []endpointValue) ([]daemon.BrowserEndpoint, error) {
	var out []daemon.BrowserEndpoint
	urls, names := map[string]endpointValue{}, map[string]endpointValue{}
	for _, v := range values {
		ep, err := parseEndpoint(v.raw)
		if err != nil {
			return nil, fmt.Errorf("%s %q: %w", v.where, redactEndpoint(v.raw), err)
		}
		if prev, ok := urls[ep.URL]; ok {
			return nil, fmt.Errorf("%s %q: the same browser as %s %q; give it once, with the capacity of both",
				v.where, redactEndpoint(v.raw), prev.where, redactEndpoint(prev.raw))
		}
		urls[ep.URL] = v
		name := endpointName(ep)
		if prev, ok := names[name]; ok {
			return nil, fmt.Errorf("%s %q: the name %q is already that of %s %q; give each endpoint its own name=",
				v.where, redactEndpoint(v.raw), name, prev.where, redactEndpoint(prev.raw))
		}
		names[name] = v
		out = append(out, ep)
	}
	return out, nil
}

// parseEndpoint parses one value: URL[;capacity=N][;name=NAME][;header=Name: value]...
// The parts are split at every ';': a URL that holds one writes it %3B.
func parseEndpoint(raw string) (daemon.BrowserEndpoint, error) {
	parts := strings.Split(raw, ";")
	ep := daemon.BrowserEndpoint{URL: strings.TrimSpace(parts[0])}
	if err := checkEndpointURL(ep.URL); err != nil {
		return ep, err
	}
	seen := map[string]bool{}
	for _, part := range parts[1:] {
		part = strings.TrimSpace(part)
		if part == "" {
			continue // a trailing or doubled ;
		}
		key, val, ok := strings.Cut(part, "=")
		key = strings.TrimSpace(key)
		if !ok {
			return ep, fmt.Errorf("option %q is not key=value (want %s)", redactOption(part), endpointSyntax)
		}
		if key != "header" {
			if seen[key] {
				return ep, fmt.Errorf("%s is given twice", key)
			}
			seen[key] = true
		}
		val = strings.TrimSpace(val)
		switch key {
		case "capacity":
			n, err := strconv.Atoi(val)
			if err != nil || n < 1 || n > maxEndpointCapacity {
				return ep, fmt.Errorf("capacity must be a whole number from 1 to %d", maxEndpointCapacity)
			}
			ep.Capacity = n
		case "name":
			if err := checkEndpointName(val); err != nil {
				return ep, err
			}
			ep.Name = val
		case "header":
			name, value, err := parseEndpointHeader(val)
			if err != nil {
				return ep, err
			}
			if ep.Headers == nil {
				ep.Headers = map[string]string{}
			}
			for k := range ep.Headers {
				if strings.EqualFold(k, name) {
					return ep, fmt.Errorf("header %s is given twice", name)
				}
			}
			ep.Headers[name] = value
		default:
			return ep, fmt.Errorf("unknown option %q (want capacity=N, name=NAME or header=Name: value)", key)
		}
	}
	return ep, nil
}

// checkEndpointURL checks that u can name a CDP endpoint. Its messages
// never repeat u (the caller quotes the value, redacted).
func checkEndpointURL(u string) error {
	if u == "" {
		return fmt.Errorf("the URL is missing (want %s)", endpointSyntax)
	}
	p, err := url.Parse(u)
	if err != nil || p.Host == "" {
		return errors.New("the URL is not a URL with a host (want http://host:9222 or ws://host:9222/devtools/browser/...)")
	}
	switch p.Scheme {
	case "http", "https", "ws", "wss":
		return nil
	}
	return fmt.Errorf("the URL's scheme must be http, https, ws or wss, not %q", p.Scheme)
}

// checkEndpointName checks an endpoint's name: it shows in tables, metric
// labels and messages.
func checkEndpointName(name string) error {
	if name == "" {
		return errors.New("name is empty")
	}
	if len(name) > maxEndpointName {
		return fmt.Errorf("name has %d characters; at most %d", len(name), maxEndpointName)
	}
	for _, r := range name {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' || r == '.') {
			return fmt.Errorf("name %q: only letters, digits, '-', '_' and '.' are allowed", name)
		}
	}
	return nil
}

// parseEndpointHeader parses `Name: value`. Its messages never repeat the
// value.
func parseEndpointHeader(s string) (name, value string, err error) {
	name, value, ok := strings.Cut(s, ":")
	name, value = strings.TrimSpace(name), strings.TrimSpace(value)
	if !ok || name == "" {
		return "", "", errors.New("a header must be written header=Name: value")
	}
	for _, r := range name {
		if r <= ' ' || r >= 0x7f || strings.ContainsRune(`()<>@,;:\"/[]?={}`, r) {
			return "", "", fmt.Errorf("header name %q is not a valid HTTP header name", name)
		}
	}
	if value == "" {
		return "", "", fmt.Errorf("header %s has no value", name)
	}
	for _, r := range value {
		if r < ' ' && r != '\t' || r == 0x7f {
			return "", "", fmt.Errorf("header %s (set): its value holds a control character", name)
		}
	}
	return name, value, nil
}

// endpointName is the name an endpoint goes by: its own, or its URL
// without credentials or query.
func endpointName(ep daemon.BrowserEndpoint) string {
	if ep.Name != "" {
		return ep.Name
	}
	return redactURL(ep.URL)
}

// redactEndpoint is a value of --browser-endpoint fit for messages and
// logs: the URL without its password and query values, the headers by
// name only (`header=Authorization (set)`).
func redactEndpoint(raw string) string {
	parts := strings.Split(raw, ";")
	parts[0] = redactURL(strings.TrimSpace(parts[0]))
	for i, part := range parts[1:] {
		parts[i+1] = redactOption(part)
	}
	return strings.Join(parts, ";")
}

// redactOption is an option of a value of --browser-endpoint fit for
// messages: a header by its name only.
func redactOption(part string) string {
	key, val, ok := strings.Cut(strings.TrimSpace(part), "=")
	if !ok || strings.TrimSpace(key) != "header" {
		return part
	}
	name, _, ok := strings.Cut(val, ":")
	if !ok {
		return "header=... (set)" // no name to tell from the value
	}
	return "header=" + strings.TrimSpace(name) + " (set)"
}

// redactURL is u without credentials or query (hosted browser services
// take their token there). A u that is not a URL with a host loses what
// may be credentials (up to its last '@') and its query all the same.
func redactURL(u string) string {
	p, err := url.Parse(u)
	if err != nil || p.Host == "" {
		if i := strings.Index(u, "?"); i >= 0 {
			u = u[:i] + "?..."
		}
		if i := strings.LastIndex(u, "@"); i >= 0 {
			u = "...@" + u[i+1:]
		}
		return u
	}
	p.User = nil
	p.RawQuery, p.ForceQuery = "", false
	p.Fragment, p.RawFragment = "", ""
	return p.String()
}
