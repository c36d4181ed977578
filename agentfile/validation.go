package agentfile

import (
	"fmt"
	"strings"
)

// Validation is how strictly Load and Parse hold an agent file to what
// abctl knows of the service's definitions. The service accepts more than
// abctl can check: it ignores keys it does not know, stores blocks of
// types newer than abctl, and does not look at {{ references }} until a
// run renders them. Validation says what such things are in a file; it is
// the --validate flag of `abctl apply` and `abctl diff`, as kubectl's.
//
// Whatever the mode, what the service refuses is an error (a wrong type, a
// missing key, a duplicate label, an undefined parameter_keys name, ...),
// and so is a {{ that is not closed.
type Validation uint8

const (
	// ValidateWarn, the default, loads what the service accepts and warns
	// about what abctl cannot vouch for: a key the service ignores (left
	// out of what is sent), a block type abctl does not know (sent as
	// written), a reference to a name the agent does not define. An
	// unknown key or block type close to a known one ("navigaton_goal",
	// "wiat") is an error with a "did you mean": a typo there would drop
	// the value without a word.
	ValidateWarn Validation = iota
	// ValidateStrict makes every warning an error: only what abctl knows
	// and can check loads.
	ValidateStrict
	// ValidateIgnore loads what the service accepts without a word,
	// likely typos included, and leaves the judging to the service: for a
	// key or block type newer than abctl that happens to be close to a
	// known one, or a pipeline that wants no warnings.
	ValidateIgnore
)

// validationNames are the flag values, by mode.
var validationNames = [...]string{ValidateWarn: "warn", ValidateStrict: "strict", ValidateIgnore: "ignore"}

// String returns the mode's flag value: warn, strict or ignore.
func (v Validation) String() string {
	if int(v) < len(validationNames) {
		return validationNames[v]
	}
	return fmt.Sprintf("Validation(%d)", uint8(v))
}

// Set sets v from a flag value: strict, warn or ignore, in any case; true
// and false, which kubectl also takes, mean strict and ignore. It makes a
// *Validation a flag.Value (and, with Type, a pflag.Value).
func (v *Validation) Set(s string) error {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "warn":
		*v = ValidateWarn
	case "strict", "true":
		*v = ValidateStrict
	case "ignore", "false":
		*v = ValidateIgnore
	default:
		return fmt.Errorf("%q is not a validation mode: use strict, warn or ignore", s)
	}
	return nil
}

// Type names the flag's values in help texts.
func (v *Validation) Type() string { return "strict|warn|ignore" }
