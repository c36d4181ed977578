package buildinfo

import (
	"runtime/debug"
	"testing"
)

func TestResolve(t *testing.T) {
	vcs := &debug.BuildInfo{
		Main: debug.Module{Path: "github.com/abctl/abctl", Version: "v1.4.0"},
		Settings: []debug.BuildSetting{
			{Key: "-trimpath", Value: "true"},
			{Key: "vcs", Value: "git"},
			{Key: "vcs.revision", Value: "0123456789abcdef0123456789abcdef01234567"},
			{Key: "vcs.time", Value: "2026-01-31T15:20:42Z"},
			{Key: "vcs.modified", Value: "false"},
		},
	}
	tests := []struct {
		name                  string
		version, commit, date string
		bi                    *debug.BuildInfo
		want                  Info
	}{
		{
			name:    "injected values win over build info",
			version: "2.0.0", commit: "abc1234", date: "2026-02-01T00:00:00Z",
			bi:   vcs,
			want: Info{"2.0.0", "abc1234", "2026-02-01T00:00:00Z"},
		},
		{
			name: "build info fills what was not injected",
			bi:   vcs,
			want: Info{"1.4.0", "0123456789abcdef0123456789abcdef01234567", "2026-01-31T15:20:42Z"},
		},
		{
			name:    "each field falls back on its own",
			version: "2.0.0",
			bi:      vcs,
			want:    Info{"2.0.0", "0123456789abcdef0123456789abcdef01234567", "2026-01-31T15:20:42Z"},
		},
		{
			name: "devel main module and no vcs settings",
			bi:   &debug.BuildInfo{Main: debug.Module{Path: "github.com/abctl/abctl", Version: "(devel)"}},
			want: Info{DevVersion, Unknown, Unknown},
		},
		{
			name: "empty main module version",
			bi:   &debug.BuildInfo{},
			want: Info{DevVersion, Unknown, Unknown},
		},
		{
			name: "no build info at all",
			want: Info{DevVersion, Unknown, Unknown},
		},
		{
			name: "pseudo-version loses only its leading v",
			bi:   &debug.BuildInfo{Main: debug.Module{Version: "v0.0.0-20260131152042-0123456789ab"}},
			want: Info{"0.0.0-20260131152042-0123456789ab", Unknown, Unknown},
		},
		{
			name:    "injected version with a leading v",
			version: "v3.1.0",
			want:    Info{"3.1.0", Unknown, Unknown},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := resolve(tt.version, tt.commit, tt.date, tt.bi)
			if got != tt.want {
				t.Errorf("resolve() = %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestInfoString(t *testing.T) {
	got := Info{"1.2.3", "abc1234", "2026-01-31T15:20:42Z"}.String()
	want := "1.2.3 (commit abc1234, built 2026-01-31T15:20:42Z)"
	if got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
}

func TestGetUsesInjectedVariables(t *testing.T) {
	saved := [3]string{Version, Commit, Date}
	t.Cleanup(func() { Version, Commit, Date = saved[0], saved[1], saved[2] })
	Version, Commit, Date = "9.9.9", "feedface", "2026-03-01T12:00:00Z"

	want := Info{"9.9.9", "feedface", "2026-03-01T12:00:00Z"}
	if got := Get(); got != want {
		t.Errorf("Get() = %+v, want %+v", got, want)
	}
}
