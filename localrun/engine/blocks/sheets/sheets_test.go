package sheets

import "testing"

func TestSpreadsheetID(t *testing.T) {
	for in, want := range map[string]string{
		"https://docs.google.com/spreadsheets/d/abc_12-3/edit#gid=0": "abc_12-3",
		" abc123 ": "abc123",
	} {
		if got, err := SpreadsheetID(in); err != nil || got != want {
			t.Errorf("%q: %q %v, want %q", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "https://example.com/sheet", "a b"} {
		if got, err := SpreadsheetID(bad); err == nil {
			t.Errorf("%q: %q, want an error", bad, got)
		}
	}
}

func TestA1Range(t *testing.T) {
	for _, tc := range []struct{ sheet, rng, want string }{
		{"", "", "A:ZZ"},
		{"", "B2:C3", "B2:C3"},
		{"Q1", "", "'Q1'"},
		{"Bob's", "A1", "'Bob''s'!A1"},
	} {
		if got := A1Range(tc.sheet, tc.rng); got != tc.want {
			t.Errorf("A1Range(%q, %q) = %q, want %q", tc.sheet, tc.rng, got, tc.want)
		}
	}
}

func TestParseKey(t *testing.T) {
	key, ok := ParseKey(`{"type": "service_account", "client_email": "robot@p.iam.gserviceaccount.com", "private_key": "-----BEGIN"}`)
	if !ok || key.ClientEmail != "robot@p.iam.gserviceaccount.com" || key.TokenURI != googleTokenURL {
		t.Errorf("%+v %v", key, ok)
	}
	for _, bad := range []string{``, `{}`, `{"type": "authorized_user", "client_email": "a", "private_key": "b"}`, `{"type": "service_account", "client_email": "a"}`} {
		if _, ok := ParseKey(bad); ok {
			t.Errorf("%s: accepted", bad)
		}
	}
}
