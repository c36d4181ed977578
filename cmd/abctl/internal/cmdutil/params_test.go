package cmdutil

import (
	"errors"
	"reflect"
	"testing"
)

func TestParams(t *testing.T) {
	got, err := Params(nil)
	if got != nil || err != nil {
		t.Errorf("no flag: %v, %v; want nil, nil", got, err)
	}
	got, err = Params([]string{"query=shoes", "n=3", "empty=", "eq=a=b"})
	want := map[string]any{"query": "shoes", "n": "3", "empty": "", "eq": "a=b"}
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("got %v, %v; want %v", got, err, want)
	}
	for _, bad := range []string{"query", "=shoes"} {
		_, err := Params([]string{"a=1", bad})
		var ue *UsageError
		if !errors.As(err, &ue) || err.Error() != `--param "`+bad+`": write key=value` {
			t.Errorf("%q: %v, want a usage error", bad, err)
		}
	}
}
