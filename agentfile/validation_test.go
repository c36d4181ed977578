package agentfile_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/abctl/abctl/agentfile"
)

var modes = []agentfile.Validation{agentfile.ValidateWarn, agentfile.ValidateStrict, agentfile.ValidateIgnore}

// TestValidationModesGolden loads each file of testdata/real, definitions
// shaped like real ones written for or exported from the service, in the
// three validation modes, and compares the reports with the file's
// .golden: the problems, then each agent that loaded with its warnings.
func TestValidationModesGolden(t *testing.T) {
	inputs, err := filepath.Glob("testdata/real/*.yaml")
	if err != nil || len(inputs) < 5 {
		t.Fatalf("%d files in testdata/real (%v)", len(inputs), err)
	}
	for _, path := range inputs {
		t.Run(filepath.Base(path), func(t *testing.T) {
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			var got strings.Builder
			for _, mode := range modes {
				fmt.Fprintf(&got, "== --validate=%s\n", mode)
				agents, err := agentfile.ParseWith(path, data, mode)
				if err != nil {
					got.WriteString(err.Error() + "\n")
				}
				writeLoaded(&got, agents)
			}
			checkGolden(t, path+".golden", got.String(), "TestValidationModesGolden")
		})
	}
}

// report is what ParseWith gives for one file in one mode.
type report struct {
	loaded   []string
	errors   []string // messages of the errors
	warnings []string // messages of the warnings, of loaded agents or not
}

func parseReport(t *testing.T, path string, data []byte, mode agentfile.Validation) report {
	t.Helper()
	agents, err := agentfile.ParseWith(path, data, mode)
	var r report
	var ps agentfile.Problems
	if err != nil && !errors.As(err, &ps) {
		t.Fatalf("%s: %v is not Problems", path, err)
	}
	for _, a := range agents {
		r.loaded = append(r.loaded, a.Name)
		ps = append(ps, a.Warnings...)
		for _, w := range a.Warnings {
			if w.Severity != agentfile.SeverityWarning || w.File != path || w.Line == 0 || w.Agent != a.Name {
				t.Errorf("%s: a warning of agent %s is not placed as one: %+v", path, a.Name, w)
			}
		}
	}
	for _, p := range ps {
		where := fmt.Sprintf("%d:%d %s", p.Line, p.Column, p.Msg)
		if p.Severity == agentfile.SeverityWarning {
			r.warnings = append(r.warnings, where)
		} else {
			r.errors = append(r.errors, where)
		}
	}
	slices.Sort(r.errors)
	slices.Sort(r.warnings)
	return r
}

// TestValidationModes checks how the modes relate, on every file of
// testdata/real and testdata/problems: strict reports as errors exactly
// the warnings of warn, at the same places; ignore reports no warning and
// no error that warn does not; warn's errors are strict's too.
func TestValidationModes(t *testing.T) {
	var inputs []string
	for _, pattern := range []string{"testdata/real/*.yaml", "testdata/problems/*.yaml", "testdata/agents/*"} {
		m, _ := filepath.Glob(pattern)
		inputs = append(inputs, m...)
	}
	for _, path := range inputs {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		warn := parseReport(t, path, data, agentfile.ValidateWarn)
		strict := parseReport(t, path, data, agentfile.ValidateStrict)
		ignore := parseReport(t, path, data, agentfile.ValidateIgnore)
		if len(strict.warnings) > 0 || len(ignore.warnings) > 0 {
			t.Errorf("%s: warnings in strict (%v) or ignore (%v) mode", path, strict.warnings, ignore.warnings)
		}
		if want := slices.Sorted(slices.Values(append(slices.Clone(warn.errors), warn.warnings...))); !slices.Equal(strict.errors, want) {
			t.Errorf("%s: strict reports\n%v\nwant warn's errors and warnings\n%v", path, strict.errors, want)
		}
		for _, e := range ignore.errors {
			if !slices.Contains(warn.errors, e) && !strings.Contains(e, "missing required key") {
				t.Errorf("%s: ignore reports %q, which warn does not", path, e)
			}
		}
		for _, name := range strict.loaded {
			if !slices.Contains(warn.loaded, name) {
				t.Errorf("%s: %s loads in strict mode but not in warn mode", path, name)
			}
		}
		for _, name := range warn.loaded {
			if !slices.Contains(ignore.loaded, name) {
				t.Errorf("%s: %s loads in warn mode but not in ignore mode", path, name)
			}
		}
	}
}

func TestValidationFlag(t *testing.T) {
	for in, want := range map[string]agentfile.Validation{
		"warn": agentfile.ValidateWarn, "strict": agentfile.ValidateStrict, "ignore": agentfile.ValidateIgnore,
		"STRICT": agentfile.ValidateStrict, "true": agentfile.ValidateStrict, "false": agentfile.ValidateIgnore,
	} {
		var v agentfile.Validation
		if err := v.Set(in); err != nil || v != want {
			t.Errorf("Set(%q) = %v, %v; want %v", in, v, err, want)
		}
	}
	v := agentfile.ValidateStrict
	if err := v.Set("loose"); err == nil || !strings.Contains(err.Error(), "strict, warn or ignore") || v != agentfile.ValidateStrict {
		t.Errorf("Set(loose) = %v, left %v", err, v)
	}
	for _, m := range modes {
		var back agentfile.Validation
		if err := back.Set(m.String()); err != nil || back != m {
			t.Errorf("%v does not read back: %v %v", m, back, err)
		}
	}
	var zero agentfile.Validation
	if zero != agentfile.ValidateWarn {
		t.Error("the zero Validation is not warn")
	}
}
