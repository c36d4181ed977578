package agentfile_test

import (
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/abctl/abctl/agentfile"
)

var update = flag.Bool("update", false, "rewrite the golden files of testdata/problems")

// TestProblemsGolden loads each file of testdata/problems, which holds
// several problems of one kind or more, and compares the report with the
// file's .golden: every problem, placed and worded as a user sees it,
// followed by the agents that loaded without an error, with their
// warnings.
func TestProblemsGolden(t *testing.T) {
	inputs, err := filepath.Glob("testdata/problems/*")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, path := range inputs {
		if strings.HasSuffix(path, ".golden") {
			continue
		}
		n++
		t.Run(filepath.Base(path), func(t *testing.T) {
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			agents, err := agentfile.Parse(path, data)
			var problems agentfile.Problems
			if !errors.As(err, &problems) || len(problems) == 0 {
				t.Fatalf("Parse(%s) = %v, want Problems", path, err)
			}
			for _, p := range problems {
				if p.File != path || p.Msg == "" {
					t.Errorf("problem without its file or message: %+v", p)
				}
			}
			var got strings.Builder
			got.WriteString(err.Error())
			got.WriteString("\n")
			writeLoaded(&got, agents)
			checkGolden(t, path+".golden", got.String(), "TestProblemsGolden")
		})
	}
	if n < 8 {
		t.Fatalf("only %d problem files in testdata/problems", n)
	}
}
