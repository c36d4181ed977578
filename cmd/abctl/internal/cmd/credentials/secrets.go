package credentials

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/cmd/abctl/internal/cmdutil"
	"github.com/abctl/abctl/cmd/abctl/internal/iostreams"
)

// maxInput bounds what is read from stdin or a file: a credential is small.
const maxInput = 1 << 20

// Every error of this file is written never to hold a secret's value: it
// names the field, the line or the file, not what was in it.

// secretAsk is one secret to read: what it is (for errors), the prompt of
// a terminal, and where it goes. whole takes the whole of piped stdin,
// line breaks included, for a value that may span lines.
type secretAsk struct {
	what   string
	prompt string
	into   *string
	whole  bool
}

// secretSource reads secrets: at a prompt without echo when stdin is a
// terminal, else from stdin, one a line.
type secretSource struct {
	io         *iostreams.IOStreams
	readHidden func(ctx context.Context, prompt string) (string, error)
}

func (s secretSource) read(ctx context.Context, asks []secretAsk) error {
	if s.io.IsStdinTTY() {
		for _, a := range asks {
			v, err := s.readHidden(ctx, a.prompt)
			if err != nil {
				return fmt.Errorf("read %s from the terminal: %w", a.what, err)
			}
			if v == "" {
				return cmdutil.UsageErrorf("%s is empty: nothing was stored", a.what)
			}
			*a.into = v
		}
		return nil
	}
	whats := make([]string, len(asks))
	for i, a := range asks {
		whats[i] = a.what
	}
	want := strings.Join(whats, ", then ")
	b, err := readLimited(s.io.In, "stdin")
	if err != nil {
		return err
	}
	if len(b) == 0 {
		return cmdutil.UsageErrorf("stdin is empty, and it should hold %s: type it at a terminal, pipe it in "+
			"(printf '%%s\\n' \"$SECRET\" | abctl credentials ...), or use --from-file", want)
	}
	text := cmdutil.TrimNewline(string(b))
	if len(asks) == 1 && asks[0].whole {
		if text == "" {
			return cmdutil.UsageErrorf("%s read from stdin is empty: nothing was stored", asks[0].what)
		}
		*asks[0].into = text
		return nil
	}
	lines := strings.Split(text, "\n")
	if len(lines) != len(asks) {
		return cmdutil.UsageErrorf("stdin holds %d line(s), and it should hold %d, one a line: %s", len(lines), len(asks), want)
	}
	for i, a := range asks {
		v := strings.TrimSuffix(lines[i], "\r")
		if v == "" {
			return cmdutil.UsageErrorf("line %d of stdin, %s, is empty: nothing was stored", i+1, a.what)
		}
		*a.into = v
	}
	return nil
}

func readLimited(r io.Reader, what string) ([]byte, error) {
	b, err := io.ReadAll(io.LimitReader(r, maxInput+1))
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", what, err)
	}
	if len(b) > maxInput {
		return nil, cmdutil.UsageErrorf("%s holds more than %d bytes: that is not a credential", what, maxInput)
	}
	return b, nil
}

// readDataFile reads a credential of type t from the YAML or JSON file
// path ("-": stdin).
func readDataFile(t client.CredentialType, path string, ios *iostreams.IOStreams) (client.CredentialData, error) {
	var b []byte
	src := path
	if path == "-" {
		src = "stdin (--from-file -)"
		var err error
		if b, err = readLimited(ios.In, src); err != nil {
			return nil, err
		}
	} else {
		info, err := os.Stat(path)
		if err != nil {
			return nil, cmdutil.UsageErrorf("--from-file: %v", err)
		}
		if info.IsDir() {
			return nil, cmdutil.UsageErrorf("--from-file %s is a directory: give the file that holds the credential", path)
		}
		if perm := info.Mode().Perm(); runtime.GOOS != "windows" && perm&0o077 != 0 {
			fmt.Fprintf(ios.ErrOut, "warning: %s holds secrets and other users may read it (mode %04o): chmod 600 %s\n", path, perm, path)
		}
		f, err := os.Open(path)
		if err != nil {
			return nil, cmdutil.UsageErrorf("--from-file: %v", err)
		}
		defer f.Close()
		if b, err = readLimited(f, path); err != nil {
			return nil, err
		}
	}
	data, err := parseData(t, src, b)
	if err != nil {
		return nil, err
	}
	if err := checkData(data, fileNames(src)); err != nil {
		return nil, err
	}
	return data, nil
}

// fileFields maps the keys a file may hold for a credential of type t to
// the data's fields; billing is the billing address's, nil but for cards.
func fileFields(data client.CredentialData) (fields map[string]*string, billing func() map[string]*string) {
	switch d := data.(type) {
	case *client.PasswordCredential:
		return map[string]*string{"username": &d.Username, "password": &d.Password, "totp": &d.TOTP,
			"totp_type": (*string)(&d.TOTPType), "totp_identifier": &d.TOTPIdentifier}, nil
	case *client.CreditCardCredential:
		return map[string]*string{"card_number": &d.CardNumber, "card_cvv": &d.CardCVV, "card_exp_month": &d.CardExpMonth,
				"card_exp_year": &d.CardExpYear, "card_brand": &d.CardBrand, "card_holder_name": &d.CardHolderName,
				"billing_email": &d.BillingEmail, "billing_phone": &d.BillingPhone},
			func() map[string]*string {
				if d.BillingAddress == nil {
					d.BillingAddress = &client.CreditCardBillingAddress{}
				}
				a := d.BillingAddress
				return map[string]*string{"line1": &a.Line1, "line2": &a.Line2, "city": &a.City, "state": &a.State,
					"state_code": &a.StateCode, "postal_code": &a.PostalCode, "country": &a.Country, "country_code": &a.CountryCode}
			}
	case *client.SecretCredential:
		return map[string]*string{"secret_value": &d.SecretValue, "secret_label": &d.SecretLabel}, nil
	}
	return nil, nil
}

func newData(t client.CredentialType) client.CredentialData {
	switch t {
	case client.CredentialTypePassword:
		return &client.PasswordCredential{}
	case client.CredentialTypeCreditCard:
		return &client.CreditCardCredential{}
	}
	return &client.SecretCredential{}
}

// parseData reads the mapping of a credential's fields. Every value is
// taken as the text written in the file, so that a CVV of 012 or a card
// number stays what it was rather than becoming a number.
func parseData(t client.CredentialType, src string, b []byte) (client.CredentialData, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(b, &doc); err != nil {
		return nil, cmdutil.UsageErrorf("%s is not YAML or JSON: %v", src, err)
	}
	if len(doc.Content) == 0 {
		return nil, cmdutil.UsageErrorf("%s is empty: it should hold the %s credential's fields (%s)", src, t, strings.Join(keysOf(t), ", "))
	}
	root := doc.Content[0]
	if root.Kind != yaml.MappingNode {
		return nil, cmdutil.UsageErrorf("%s:%d: the file should be a mapping of the %s credential's fields (%s), not %s",
			src, root.Line, t, strings.Join(keysOf(t), ", "), nodeKind(root))
	}
	data := newData(t)
	fields, billing := fileFields(data)
	if err := readMapping(src, root, fields, billing, t); err != nil {
		return nil, err
	}
	return data, nil
}

func readMapping(src string, m *yaml.Node, fields map[string]*string, billing func() map[string]*string, t client.CredentialType) error {
	seen := map[string]bool{}
	for i := 0; i+1 < len(m.Content); i += 2 {
		k, v := m.Content[i], m.Content[i+1]
		key := k.Value
		if seen[key] {
			return cmdutil.UsageErrorf("%s:%d: %s is given twice", src, k.Line, key)
		}
		seen[key] = true
		if key == "billing_address" && billing != nil {
			if isNull(v) {
				continue
			}
			if v.Kind != yaml.MappingNode {
				return cmdutil.UsageErrorf("%s:%d: billing_address should be a mapping (line1, city, postal_code, country_code, ...), not %s", src, v.Line, nodeKind(v))
			}
			if err := readMapping(src, v, billing(), nil, ""); err != nil {
				return err
			}
			continue
		}
		into, ok := fields[key]
		if !ok {
			known := slices.Sorted(mapKeys(fields))
			if billing != nil {
				known = append(known, "billing_address")
				slices.Sort(known)
			}
			hint := ""
			switch key {
			case "name", "credential_type", "type", "credential":
				hint = " (the file holds the credential's fields only: its name is the argument of the command, its kind --type)"
			}
			if t == "" {
				return cmdutil.UsageErrorf("%s:%d: unknown field %q of a billing address; its fields are %s", src, k.Line, key, strings.Join(known, ", "))
			}
			return cmdutil.UsageErrorf("%s:%d: unknown field %q of a %s credential%s; its fields are %s", src, k.Line, key, t, hint, strings.Join(known, ", "))
		}
		if isNull(v) {
			continue
		}
		if v.Kind != yaml.ScalarNode {
			return cmdutil.UsageErrorf("%s:%d: %s should be text, not %s", src, v.Line, key, nodeKind(v))
		}
		*into = v.Value
	}
	return nil
}

func mapKeys(m map[string]*string) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

func isNull(n *yaml.Node) bool { return n.Kind == yaml.ScalarNode && n.Tag == "!!null" }

func nodeKind(n *yaml.Node) string {
	switch n.Kind {
	case yaml.SequenceNode:
		return "a list"
	case yaml.MappingNode:
		return "a mapping"
	}
	return "a single value"
}

// keysOf lists the keys of a credential of type t, for errors.
func keysOf(t client.CredentialType) []string {
	fields, billing := fileFields(newData(t))
	keys := slices.Sorted(mapKeys(fields))
	if billing != nil {
		keys = append(keys, "billing_address")
	}
	return keys
}

// flagNames and fileNames name a field of the data in errors: as the flag
// or the stdin line that gives it, or as the file's key.
func flagNames(field string) string {
	switch field {
	case "password":
		return "the password"
	case "totp":
		return "the TOTP secret"
	case "card_number":
		return "the card number"
	case "card_cvv":
		return "the CVV"
	case "secret_value":
		return "the secret value"
	}
	return "--" + strings.ReplaceAll(field, "_", "-")
}

func fileNames(src string) func(string) string {
	return func(field string) string { return field + " (in " + src + ")" }
}

// checkData checks a credential's data before it is sent, as far as can be
// known here: the required fields, the form of a card's number, CVV and
// expiry, and a TOTP secret's base32. It tidies what is unambiguous: the
// spaces and dashes of a card number, the spaces and case of a TOTP
// secret as sites print it in groups.
func checkData(data client.CredentialData, name func(string) string) error {
	required := func(pairs ...string) error {
		var missing []string
		for i := 0; i+1 < len(pairs); i += 2 {
			if strings.TrimSpace(pairs[i+1]) == "" {
				missing = append(missing, name(pairs[i]))
			}
		}
		if len(missing) > 0 {
			return cmdutil.UsageErrorf("a %s credential needs %s", data.CredentialType(), strings.Join(missing, " and "))
		}
		return nil
	}
	switch d := data.(type) {
	case *client.PasswordCredential:
		if err := required("username", d.Username, "password", d.Password); err != nil {
			return err
		}
		switch d.TOTPType {
		case "", client.TOTPTypeNone, client.TOTPTypeAuthenticator, client.TOTPTypeEmail, client.TOTPTypeText, client.TOTPTypePasskey:
		default:
			return cmdutil.UsageErrorf("%s is %q, which is not a second factor: use authenticator, email, text or none", name("totp_type"), d.TOTPType)
		}
		if d.TOTP != "" {
			if d.TOTPType == "" {
				d.TOTPType = client.TOTPTypeAuthenticator
			}
			if d.TOTPType != client.TOTPTypeAuthenticator {
				return cmdutil.UsageErrorf("%s is given, so the second factor is an authenticator's codes, but %s is %q", name("totp"), name("totp_type"), d.TOTPType)
			}
			totp, err := normalizeTOTP(d.TOTP)
			if err != nil {
				return cmdutil.UsageErrorf("%s %v", name("totp"), err)
			}
			d.TOTP = totp
		} else if d.TOTPType == client.TOTPTypeAuthenticator {
			return cmdutil.UsageErrorf("with an authenticator as second factor, a password credential needs %s: the base32 key the site showed when the authenticator was set up", name("totp"))
		}
		if d.TOTPIdentifier != "" && d.TOTPType != client.TOTPTypeEmail && d.TOTPType != client.TOTPTypeText {
			return cmdutil.UsageErrorf("%s is where email or text codes are sent: set %s to email or text", name("totp_identifier"), name("totp_type"))
		}
	case *client.CreditCardCredential:
		if err := required("card_number", d.CardNumber, "card_cvv", d.CardCVV, "card_exp_month", d.CardExpMonth,
			"card_exp_year", d.CardExpYear, "card_brand", d.CardBrand, "card_holder_name", d.CardHolderName); err != nil {
			return err
		}
		number := strings.NewReplacer(" ", "", "-", "").Replace(d.CardNumber)
		if !digits(number) || len(number) < 12 || len(number) > 19 {
			return cmdutil.UsageErrorf("%s is not a card number: it should be 12 to 19 digits (spaces and dashes between them are fine)", name("card_number"))
		}
		d.CardNumber = number
		if cvv := strings.TrimSpace(d.CardCVV); !digits(cvv) || len(cvv) < 3 || len(cvv) > 4 {
			return cmdutil.UsageErrorf("%s is not a CVV: it should be the 3 or 4 digits printed on the card", name("card_cvv"))
		}
		d.CardCVV = strings.TrimSpace(d.CardCVV)
		d.CardExpMonth, d.CardExpYear = strings.TrimSpace(d.CardExpMonth), strings.TrimSpace(d.CardExpYear)
		if m, err := strconv.Atoi(d.CardExpMonth); err != nil || m < 1 || m > 12 || !digits(d.CardExpMonth) {
			return cmdutil.UsageErrorf("%s is %q, not a month: give a number from 1 to 12", name("card_exp_month"), d.CardExpMonth)
		}
		if y := d.CardExpYear; !digits(y) || (len(y) != 2 && len(y) != 4) {
			return cmdutil.UsageErrorf("%s is %q, not a year: give it as 2028 or 28", name("card_exp_year"), y)
		}
		if d.BillingAddress != nil && *d.BillingAddress == (client.CreditCardBillingAddress{}) {
			d.BillingAddress = nil
		}
	case *client.SecretCredential:
		if err := required("secret_value", d.SecretValue); err != nil {
			return err
		}
	}
	return nil
}

func digits(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}

const base32Alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"

// normalizeTOTP checks an authenticator secret: base32, as sites show it
// (in groups, in either case, with or without padding), tidied into one
// upper-case word; or the otpauth:// URI of a QR code, kept as it is,
// since it may also set the codes' digits, period and algorithm.
func normalizeTOTP(s string) (string, error) {
	s = strings.TrimSpace(s)
	uri := ""
	if strings.HasPrefix(strings.ToLower(s), "otpauth://") {
		u, err := url.Parse(s)
		if err != nil || u.Query().Get("secret") == "" {
			return "", errors.New("is an otpauth:// URI without a secret= parameter: give the URI of the QR code whole, or the base32 key itself")
		}
		uri, s = s, u.Query().Get("secret")
	}
	key := strings.TrimRight(strings.ToUpper(strings.NewReplacer(" ", "", "-", "").Replace(s)), "=")
	if key == "" || strings.Trim(key, base32Alphabet) != "" {
		return "", errors.New("is not a base32 key (the letters A to Z and the digits 2 to 7, as the site shows it when you set up an authenticator app)")
	}
	if uri != "" {
		return uri, nil
	}
	return key, nil
}
