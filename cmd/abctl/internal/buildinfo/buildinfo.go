// Package buildinfo reports which build of abctl is running.
//
// Release builds set the variables below at link time, for example:
//
//	go build -ldflags "-X github.com/abctl/abctl/cmd/abctl/internal/buildinfo.Version=1.2.3"
//
// A variable left empty is filled from the build information the Go toolchain
// embeds in the binary (the main module's version, vcs.revision and vcs.time), so
// that `go install github.com/abctl/abctl/cmd/abctl@v1.2.3` and builds from a git
// checkout still say where they came from. What is known from neither source is
// reported as "dev" (the version) or "unknown" (the commit and the date).
package buildinfo

import (
	"fmt"
	"runtime/debug"
	"strings"
)

// Set through -ldflags -X by release builds; empty otherwise.
var (
	Version string
	Commit  string
	Date    string
)

// Placeholders for what could not be determined.
const (
	DevVersion = "dev"
	Unknown    = "unknown"
)

// Info is the resolved description of the running build.
type Info struct {
	Version string // "1.2.3", without a leading "v"; DevVersion when unknown
	Commit  string // the VCS revision; Unknown when unknown
	Date    string // when the commit (or the build) was made; Unknown when unknown
}

// String formats the build as "<version> (commit <commit>, built <date>)".
func (i Info) String() string {
	return fmt.Sprintf("%s (commit %s, built %s)", i.Version, i.Commit, i.Date)
}

// Get returns the description of the running binary.
func Get() Info {
	bi, _ := debug.ReadBuildInfo()
	return resolve(Version, Commit, Date, bi)
}

// resolve prefers the injected values, then the embedded build information bi
// (which may be nil), then the placeholders.
func resolve(version, commit, date string, bi *debug.BuildInfo) Info {
	var modVersion, revision, vcsTime string
	if bi != nil {
		// "(devel)" is what the toolchain reports when it knows no version.
		if v := bi.Main.Version; v != "" && v != "(devel)" {
			modVersion = v
		}
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				revision = s.Value
			case "vcs.time":
				vcsTime = s.Value
			}
		}
	}
	// goreleaser's {{.Version}} has no leading "v" while module versions do; drop
	// it so both kinds of build print the same thing.
	v := strings.TrimPrefix(first(version, modVersion), "v")
	return Info{
		Version: first(v, DevVersion),
		Commit:  first(commit, revision, Unknown),
		Date:    first(date, vcsTime, Unknown),
	}
}

func first(values ...string) string {
	for _, v := range values {
		if v != "" {
			return v
		}
	}
	return ""
}
