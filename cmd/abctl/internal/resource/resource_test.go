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
