package agentfile_test

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/abctl/abctl/agentfile"
)

// FuzzParse: no input makes Parse panic; it returns agents or Problems,
// each problem with its file and a message; and a loaded agent normalizes
// to a form that loads back to itself.
func FuzzParse(f *testing.F) {
	// Small seeds: the fuzzer mutates and minimizes them quickly.
	for _, pattern := range []string{"testdata/agents/*", "testdata/problems/*.yaml", "testdata/problems/*.json", "testdata/hosted/*.yaml", "testdata/real/*.yaml"} {
		paths, err := filepath.Glob(pattern)
		if err != nil {
			f.Fatal(err)
		}
		for _, p := range paths {
			data, err := os.ReadFile(p)
			if err != nil {
				f.Fatal(err)
			}
			if len(data) <= 2048 {
				f.Add(data)
			}
		}
	}
	f.Add([]byte("a: &a [*a, *a]\nb: &b [*a, *a]\nc: &c [*b, *b]\n"))
	f.Add([]byte("title: t\nworkflow_definition: {blocks: [{<<: {label: x}, block_type: wait}]}\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > 64<<10 {
			return
		}
		agents, err := agentfile.Parse("fuzz.yaml", data)
		if err != nil {
			var ps agentfile.Problems
			if !errors.As(err, &ps) || len(ps) == 0 {
				t.Fatalf("error %v is not Problems", err)
			}
			for _, p := range ps {
				if p.File != "fuzz.yaml" || p.Msg == "" {
					t.Fatalf("problem %+v", p)
				}
			}
		}
		for _, a := range agents {
			norm, err := agentfile.Normalize(a.Definition)
			if err != nil {
				t.Fatalf("Normalize of a loaded agent: %v", err)
			}
			again, err := agentfile.Parse("normalized.yaml", append([]byte("name: x\n"), norm...))
			if err != nil || len(again) != 1 {
				t.Fatalf("the normalized form does not load: %v\n%s", err, norm)
			}
			norm2, err := agentfile.Normalize(again[0].Definition)
			if err != nil || string(norm2) != string(norm) {
				t.Fatalf("normalizing twice: %v\n%s", err, agentfile.Diff("once", "twice", norm, norm2))
			}
		}
	})
}
