package agentfile

import "testing"

func TestIsJSONNumber(t *testing.T) {
	for s, want := range map[string]bool{
		"0": true, "-0": true, "12": true, "1.5": true, "-1.5e+3": true, "2E-2": true,
		"": false, "-": false, "01": false, "1.": false, ".5": false, "1e": false, "+1": false,
		" 1": false, "1 ": false, "1\n": false, "0x10": false, "NaN": false, "1_000": false, "\"1\"": false,
	} {
		if got := isJSONNumber(s); got != want {
			t.Errorf("isJSONNumber(%q) = %v, want %v", s, got, want)
		}
	}
}
