package iostreams

// ColorScheme paints text with ANSI colours, or returns it unchanged when
// colour is off, so that call sites need no conditionals.
type ColorScheme struct{ on bool }

// ColorScheme returns the scheme for stdout.
func (s *IOStreams) ColorScheme() ColorScheme { return ColorScheme{on: s.color} }

// ColorSchemeErr returns the scheme for stderr.
func (s *IOStreams) ColorSchemeErr() ColorScheme { return ColorScheme{on: s.colorErr} }

func (c ColorScheme) paint(code, s string) string {
	if !c.on || s == "" {
		return s
	}
	return "\x1b[" + code + "m" + s + "\x1b[0m"
}

// Enabled reports whether the scheme paints.
func (c ColorScheme) Enabled() bool { return c.on }

func (c ColorScheme) Bold(s string) string   { return c.paint("1", s) }
func (c ColorScheme) Gray(s string) string   { return c.paint("90", s) }
func (c ColorScheme) Red(s string) string    { return c.paint("31", s) }
func (c ColorScheme) Green(s string) string  { return c.paint("32", s) }
func (c ColorScheme) Yellow(s string) string { return c.paint("33", s) }
func (c ColorScheme) Cyan(s string) string   { return c.paint("36", s) }
