package ptr

import "testing"

func TestValue(t *testing.T) {
	if got := Value(new("x")); got != "x" {
		t.Errorf("Value(new(%q)) = %q", "x", got)
	}
	if got := Value[string](nil); got != "" {
		t.Errorf("Value of a nil *string = %q", got)
	}
	if got := Value(new(42)); got != 42 {
		t.Errorf("Value(new(42)) = %d", got)
	}
	if got := Value[int](nil); got != 0 {
		t.Errorf("Value of a nil *int = %d", got)
	}
	type pair struct{ a, b int }
	if got := Value[pair](nil); got != (pair{}) {
		t.Errorf("Value of a nil *pair = %v", got)
	}
}
