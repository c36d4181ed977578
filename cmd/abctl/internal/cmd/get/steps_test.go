package get

import (
	"testing"
	"time"

	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/cmd/abctl/internal/iostreams"
	"github.com/abctl/abctl/cmd/abctl/internal/printer"
)

// TestStepsTable: every step is a row, newest first, those of model-free
// blocks too, whose model cells stay empty.
func TestStepsTable(t *testing.T) {
	steps := []*client.RunStep{
		{Number: 2, BlockLabel: client.Ptr("sign_in"), Decision: "complete",
			Actions: []string{`click [e5] button "Sign in": ok`}, TimingsMS: client.StepTimings{Model: 812, Act: 30}, Tokens: client.StepTokens{Input: 900, Output: 20}},
		{Number: 1, BlockLabel: client.Ptr("open"), Decision: "done",
			Actions: []string{`goto_url "http://127.0.0.1/": ok`}, TimingsMS: client.StepTimings{Act: 64.7}, URL: "http://127.0.0.1/"},
	}
	for _, tc := range []struct {
		wide bool
		want string
	}{
		{false, "2\tsign_in\tcomplete\tclick [e5] button \"Sign in\": ok\t812ms\n" +
			"1\topen\tdone\tgoto_url \"http://127.0.0.1/\": ok\t\n"},
		{true, "2\tsign_in\tcomplete\tclick [e5] button \"Sign in\": ok\t812ms\t0.0ms\t0.0ms\t30ms\t900\t20\t\t\n" +
			"1\topen\tdone\tgoto_url \"http://127.0.0.1/\": ok\t\t0.0ms\t0.0ms\t65ms\t\t\thttp://127.0.0.1/\t\n"},
	} {
		ios, _, out, _ := iostreams.Test()
		if err := stepsListing("wr_1", steps, tc.wide).Print(ios, time.Now(), printer.Table); err != nil {
			t.Fatal(err)
		}
		if out.String() != tc.want {
			t.Errorf("wide %v:\n got %q\nwant %q", tc.wide, out.String(), tc.want)
		}
	}
}
