package resource

import (
	"strings"
	"testing"
)

func TestID(t *testing.T) {
	for _, tc := range []struct {
		kind Kind
		arg  string
		want string // the id, or "error: <part of the message>"
	}{
		{Run, "wr_1", "wr_1"},
		{Run, "run/wr_1", "wr_1"},
		{Run, "runs/tsk_v2_1", "tsk_v2_1"},
		{Folder, "folder/fld_1", "fld_1"},
		{Folder, "fld_1", "fld_1"},
		{Agent, "agent/contact-form", "contact-form"},
		{Agent, "agents/wpid_1", "wpid_1"},
		{Agent, "contact-form", "contact-form"},
		{Run, "x/y", "x/y"}, // not a kind: left to the service
		{Run, "agent/contact-form", `error: "agent/contact-form" names an agent, not a run: give a run id (wr_..., tsk_...) or run/ID`},
		{Folder, "run/wr_1", `error: "run/wr_1" names a run, not a folder: give a folder id`},
		{Agent, "folder/fld_1", `error: "folder/fld_1" names a folder, not an agent: give an agent name or id`},
		{Run, "run/", `error: "run/" names no run`},
	} {
		got, err := tc.kind.ID(tc.arg)
		if want, ok := strings.CutPrefix(tc.want, "error: "); ok {
			if err == nil || !strings.Contains(err.Error(), want) {
				t.Errorf("%s %q: %q, %v; want an error with %q", tc.kind, tc.arg, got, err, want)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("%s %q: %q, %v; want %q", tc.kind, tc.arg, got, err, tc.want)
		}
	}
}

// TestNameIsAnID: what Name prints, ID reads back.
func TestNameIsAnID(t *testing.T) {
	for _, k := range kinds {
		if id, err := k.ID(k.Name("x_1")); err != nil || id != "x_1" {
			t.Errorf("%s: %q, %v", k, id, err)
		}
	}
}

// TestNewKinds: credentials, browser profiles and browser sessions are
// named as the other kinds are, in arguments and in flags.
func TestNewKinds(t *testing.T) {
	for _, tc := range []struct {
		k         Kind
		arg, want string
	}{
		{Credential, "cred_1", "cred_1"}, {Credential, "credential/cred_1", "cred_1"}, {Credential, "credentials/cred_1", "cred_1"},
		{Credential, "run/wr_1", `error: "run/wr_1" names a run, not a credential: give a credential id (cred_...)`},
		{Credential, "credential/", `error: "credential/" names no credential`},
		{Profile, "profile/bp_1", "bp_1"}, {Profile, "profiles/bp_1", "bp_1"}, {Profile, "x/y", "x/y"},
		{Profile, "folder/fld_1", `error: "folder/fld_1" names a folder, not a browser profile`},
		{Profile, "credentials/x", `error: "credentials/x" names a credential, not a browser profile`},
		{Session, "sessions/pbs_1", "pbs_1"},
		{Session, "profiles/bp_1", `error: "profiles/bp_1" names a browser profile, not a browser session: give a browser session id (pbs_...)`},
		{Session, "session/ ", `error: "session/ " names no browser session`},
	} {
		got, err := tc.k.ID(tc.arg)
		if w, ok := strings.CutPrefix(tc.want, "error: "); ok {
			if err == nil || !strings.Contains(err.Error(), w) {
				t.Errorf("%s %q: %q, %v; want an error with %q", tc.k, tc.arg, got, err, w)
			}
		} else if err != nil || got != tc.want {
			t.Errorf("%s %q: %q, %v; want %q", tc.k, tc.arg, got, err, tc.want)
		}
	}
	if _, err := Credential.Flag("--credential", " "); err == nil || !strings.Contains(err.Error(), `--credential " " names no credential`) {
		t.Errorf("a blank flag: %v", err)
	}
	if _, err := Profile.Flag("--browser-profile", "session/pbs_1"); err == nil || !strings.HasPrefix(err.Error(), `--browser-profile "session/pbs_1" names a browser session, not a browser profile`) {
		t.Errorf("a flag naming the wrong kind: %v", err)
	}
}
