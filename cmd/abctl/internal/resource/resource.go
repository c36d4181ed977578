// Package resource is how abctl names resources on its command lines, both
// ways: what `-o name` prints (kind/ID: agent/contact-form, run/wr_123,
// folder/fld_123) and what every command taking a resource accepts back, as
// kubectl does with pod/NAME. So
//
//	abctl get runs --status failed -o name | xargs -n1 abctl runs artifacts
//
// works for every command and kind. An argument is an ID as it is, or the
// ID after its kind ("run/" or "runs/"); an argument of another kind
// ("agent/x" given for a run) is a usage error naming both kinds. Agents
// are then found by name or id by package agentref, which reads their
// references with Agent.ID.
package resource

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/abctl/abctl/cmd/abctl/internal/cmdutil"
)

// Kind is a kind of resource.
type Kind string

// The kinds -o name prints.
const (
	Agent      Kind = "agent"
	Run        Kind = "run"
	Folder     Kind = "folder"
	Credential Kind = "credential"
	Profile    Kind = "profile" // a browser profile
	Session    Kind = "session" // a browser session
)

var kinds = []Kind{Agent, Run, Folder, Credential, Profile, Session}

// Name is the -o name form of the resource of kind k called id: "run/wr_1".
func (k Kind) Name(id string) string { return string(k) + "/" + id }

// what says what an argument of kind k may be, for errors.
func (k Kind) what() string {
	switch k {
	case Run:
		return "a run id (wr_..., tsk_...) or run/ID"
	case Folder:
		return "a folder id (fld_...) or folder/ID"
	case Credential:
		return "a credential id (cred_...) or credential/ID, as 'abctl credentials list -o name' prints it"
	case Profile:
		return "a browser profile id (bp_...) or profile/ID, as 'abctl browser-profiles list -o name' prints it"
	case Session:
		return "a browser session id (pbs_...) or session/ID, as 'abctl browser-sessions list -o name' prints it"
	}
	return "an agent name or id (wpid_...), or agent/NAME"
}

// noun is how messages call a resource of kind k.
func (k Kind) noun() string {
	switch k {
	case Profile:
		return "browser profile"
	case Session:
		return "browser session"
	}
	return string(k)
}

// ID returns the ID arg names as a resource of kind k: arg without its
// "k/" (or "ks/") prefix, or arg itself when it has none. An arg that starts
// with another kind, or names nothing after the kind, is an error.
func (k Kind) ID(arg string) (string, error) {
	prefix, rest, found := strings.Cut(arg, "/")
	if !found {
		return arg, nil
	}
	for _, other := range kinds {
		if prefix != string(other) && prefix != string(other)+"s" {
			continue
		}
		switch {
		case other != k:
			return "", fmt.Errorf("%q names %s %s, not %s %s: give %s", arg, article(other), other.noun(), article(k), k.noun(), k.what())
		case strings.TrimSpace(rest) == "":
			return "", fmt.Errorf("%q names no %s: give %s", arg, k.noun(), k.what())
		}
		return rest, nil
	}
	return arg, nil // not a kind: an id (or a name) that holds a "/", left to the service
}

// Flag is ID for the value of a flag (--browser-profile): its errors name
// the flag.
func (k Kind) Flag(flag, value string) (string, error) {
	id, err := k.ID(value)
	if err != nil {
		return "", fmt.Errorf("%s %w", flag, err)
	}
	if strings.TrimSpace(id) == "" {
		return "", fmt.Errorf("%s %q names no %s: give %s", flag, value, k.noun(), k.what())
	}
	return id, nil
}

// Arg is ID for an argument of cmd: a wrong kind is a usage error (exit 2).
func (k Kind) Arg(cmd *cobra.Command, arg string) (string, error) {
	id, err := k.ID(arg)
	if err != nil {
		return "", cmdutil.Usagef(cmd, "%v", err)
	}
	return id, nil
}

// Args is Arg for each of args.
func (k Kind) Args(cmd *cobra.Command, args []string) ([]string, error) {
	ids := make([]string, 0, len(args))
	for _, a := range args {
		id, err := k.Arg(cmd, a)
		if err != nil {
			return nil, err
		}
		ids = append(ids, id)
	}
	return ids, nil
}

func article(k Kind) string {
	if k == Agent {
		return "an"
	}
	return "a"
}
