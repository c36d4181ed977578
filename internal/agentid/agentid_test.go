package agentid

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"testing"
)

// TestFromKey: the ids below were made by the two derivations this
// package replaces (the daemon's and the agent files'), before they became
// this one, so a change of the rule shows here.
func TestFromKey(t *testing.T) {
	for _, c := range []struct{ org, key, want string }{
		{"o_485917350850524254", "key-1", "wpid_5688f0a4dfa9a82d744e6f228d0182499152df63e220cf500d27fe8bae5fac99"},
		{"o_485917350850524254", "", "wpid_3b73b00540dd6e2f2348f7911206c5f3dffd4080a863cbbcbdb4be6ee1fcad84"},
		{"o_485917350850524254", "c", "wpid_7ac497718a98b981dd062c1f2165fe176f0cd239e28ff3e07bcb53a62c43c170"},
		{"o_485917350850524254", "abctl:contact-form", "wpid_61404b43464512dd753e2ead89cc112a2268e51bf5e6e176a36ef40d19ff2a1d"},
		{"o_485917350850524254", "agents/one.yaml", "wpid_f1b6df90b8fe6d6df44938b81eeea97147e654c0b009348dc1293759f0525dd9"},
		{"o_485917350850524254", "ü\x00x", "wpid_d21e5703dd8a743227e39ca4db9c1914a570575563c937bba9418f4647bb03dc"},
		{"o_1", "key-1", "wpid_2868ca6bc2f5c70fd06a5ddb48e2472b47d7c499ab6abecc58a4776a53e00667"},
		{"o_1", "", "wpid_0fbe4679d50ef516dbbb304e3557a49a0df7a6507d173e953da0822f1ea7325c"},
		{"o_1", "c", "wpid_2a76085ebb95288e8e099344bea195406121c8c650ea9081b65bc94e775b67f1"},
		{"o_1", "abctl:contact-form", "wpid_47fdabecf93848d78517c0bd383f8a0726c19fc1a7f5efa0116221d6e00f5d91"},
		{"o_1", "agents/one.yaml", "wpid_0ec78bd3300583829c7e20d2279f71f7cebbbcb4db709054ce200753a9eff4d1"},
		{"o_1", "ü\x00x", "wpid_7f792d0991eb3b1ae41e966c8038ace2af2c887fa7b66735a291b406f368c9a7"},
		{"", "key-1", "wpid_263f7a875e31ca26f00f38bf68a0069d528e6b9c90dd985c00d38c2f2e7584ee"},
		{"", "", "wpid_0d727dd55e6816e0b298a1daff4fd52713cde7b69d24760cda18d62dd5d219fb"},
		{"", "c", "wpid_fbe0a4335cac1db0536227948c0515920397784dcf6e8315f3fe103fe75289a4"},
		{"", "abctl:contact-form", "wpid_1204b7994942eb85cae3e61485717e7349b30e519d27dc552f51a97d5d1d0c4f"},
		{"", "agents/one.yaml", "wpid_51c00408142eaa9bcb7ed24d8c6f65d3544d33146f6986ef8fbca846eaaa05ea"},
		{"", "ü\x00x", "wpid_34d53ddc3924f6e53457b275866aef5a3b0701a3c39d77ef3bc9a35309069daf"},
		{"ab", "c", "wpid_89f74de2e431e5e709fe5746be516abc8693fca104f521d17a1557acbfecddeb"},
		{"ab", "bc", "wpid_bfa53766d71a41f709a0d81229f0f4b33c63d50b7d135f644d76ab9b28a3b2b8"},
		{"a", "c", "wpid_c92f0306ef5da4fb37981576ad6b75873cb81bdff5ef9d6a090dd21018a562c9"},
		{"a", "bc", "wpid_f29a647b8d3ee394b990f4938514e1d7893f81152f3f823890afbcd8d02de53b"},
	} {
		if got := FromKey(c.org, c.key); got != c.want {
			t.Errorf("FromKey(%q, %q) = %s, want %s", c.org, c.key, got, c.want)
		}
	}
}

// TestFromKeyRule checks the rule as written, independently of the table.
func TestFromKeyRule(t *testing.T) {
	sum := sha256.Sum256([]byte("create_workflow\x00o_485917350850524254\x00key-1"))
	want := "wpid_" + hex.EncodeToString(sum[:])
	if got := FromKey("o_485917350850524254", "key-1"); got != want {
		t.Fatalf("got %s, want %s", got, want)
	}
	if got := FromKey("o_1", strings.Repeat("k", 255)); !strings.HasPrefix(got, Prefix+"_") || len(got) != len(Prefix)+1+64 {
		t.Errorf("FromKey of a long key = %s: want wpid_ and 64 hex digits", got)
	}
	if FromKey("ab", "c") == FromKey("a", "bc") {
		t.Error("the organization and the key are not kept apart")
	}
}
