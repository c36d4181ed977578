package daemoncmd

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/abctl/abctl/cmd/abctl/internal/cmdtest"
	"github.com/abctl/abctl/daemon"
)

// daemonEndpoints runs `abctl daemon` (without serving) with args and the
// environment env, and returns the fleet it would run with, or its error.
func daemonEndpoints(t *testing.T, env map[string]string, args ...string) ([]daemon.BrowserEndpoint, error) {
	t.Helper()
	f, _ := cmdtest.NewFactory(t, env)
	var got *DaemonOptions
	err := cmdtest.Exec(NewCmdDaemon(f, func(o *DaemonOptions) error { got = o; return nil }), append([]string{"--data-dir", t.TempDir()}, args...)...)
	if err != nil {
		if got != nil {
			t.Errorf("the daemon would have started after %v", err)
		}
		if !cmdtest.IsUsage(err) {
			t.Errorf("%v is not a usage error", err)
		}
		return nil, err
	}
	return got.Config.Engine.BrowserEndpoints, nil
}

func TestBrowserEndpoints(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		env  string
		want []daemon.BrowserEndpoint
	}{
		{name: "none"},
		{name: "one URL", args: []string{"--browser-endpoint", "http://127.0.0.1:9222"},
			want: []daemon.BrowserEndpoint{{URL: "http://127.0.0.1:9222"}}},
		{name: "every option", args: []string{"--browser-endpoint", " wss://cdp.example/devtools?token=x ; capacity=10;name=hosted;header=Authorization: Bearer abc;header=X-Team:  blue ;"},
			want: []daemon.BrowserEndpoint{{URL: "wss://cdp.example/devtools?token=x", Capacity: 10, Name: "hosted",
				Headers: map[string]string{"Authorization": "Bearer abc", "X-Team": "blue"}}}},
		{name: "repeated", args: []string{"--browser-endpoint", "http://10.0.0.1:9222;name=a", "--browser-endpoint", "http://10.0.0.2:9222;name=b;capacity=1000"},
			want: []daemon.BrowserEndpoint{{URL: "http://10.0.0.1:9222", Name: "a"}, {URL: "http://10.0.0.2:9222", Name: "b", Capacity: 1000}}},
		{name: "environment", env: "# the fleet\nhttp://10.0.0.1:9222;capacity=2\r\n\n  ws://10.0.0.2:9222;name=b  \n",
			want: []daemon.BrowserEndpoint{{URL: "http://10.0.0.1:9222", Capacity: 2}, {URL: "ws://10.0.0.2:9222", Name: "b"}}},
		{name: "the flag wins over the environment", env: "http://10.0.0.1:9222", args: []string{"--browser-endpoint", "http://10.0.0.9:9222"},
			want: []daemon.BrowserEndpoint{{URL: "http://10.0.0.9:9222"}}},
		{name: "an empty environment", env: "\n  \n# nothing\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := daemonEndpoints(t, map[string]string{EnvBrowserEndpoints: tc.env}, tc.args...)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("endpoints %+v, want %+v", got, tc.want)
			}
		})
	}
}

func TestBrowserEndpointErrors(t *testing.T) {
	for _, tc := range []struct {
		args []string
		env  string
		want string
	}{
		{args: []string{"--browser-endpoint", "http://a:9222;capacity=zero"},
			want: `--browser-endpoint "http://a:9222;capacity=zero": capacity must be a whole number from 1 to 1000`},
		{args: []string{"--browser-endpoint", "http://a:9222;capacity=0"}, want: "capacity must be a whole number from 1 to 1000"},
		{args: []string{"--browser-endpoint", "http://a:9222;capacity=1001"}, want: "capacity must be a whole number from 1 to 1000"},
		{args: []string{"--browser-endpoint", "http://a:9222;capacity=2;capacity=3"}, want: "capacity is given twice"},
		{args: []string{"--browser-endpoint", "http://a:9222;weight=2"},
			want: `--browser-endpoint "http://a:9222;weight=2": unknown option "weight" (want capacity=N, name=NAME or header=Name: value)`},
		{args: []string{"--browser-endpoint", "http://a:9222;fast"}, want: `option "fast" is not key=value`},
		{args: []string{"--browser-endpoint", "127.0.0.1:9222"}, want: `--browser-endpoint "127.0.0.1:9222": the URL is not a URL with a host`},
		{args: []string{"--browser-endpoint", "ftp://a:9222"}, want: `the URL's scheme must be http, https, ws or wss, not "ftp"`},
		{args: []string{"--browser-endpoint", "http://"}, want: "the URL is not a URL with a host"},
		{args: []string{"--browser-endpoint", ";name=a"}, want: "the URL is missing"},
		{args: []string{"--browser-endpoint", "http://a:9222;name="}, want: "name is empty"},
		{args: []string{"--browser-endpoint", "http://a:9222;name=eu west"}, want: `name "eu west": only letters, digits`},
		{args: []string{"--browser-endpoint", "http://a:9222;name=" + strings.Repeat("n", 65)}, want: "name has 65 characters; at most 64"},
		{args: []string{"--browser-endpoint", "http://a:9222;name=x", "--browser-endpoint", "http://b:9222;name=x"},
			want: `--browser-endpoint "http://b:9222;name=x": the name "x" is already that of --browser-endpoint "http://a:9222;name=x"`},
		{args: []string{"--browser-endpoint", "http://a:9222;name=a", "--browser-endpoint", "http://a:9222;name=b"},
			want: `--browser-endpoint "http://a:9222;name=b": the same browser as --browser-endpoint "http://a:9222;name=a"; give it once`},
		{args: []string{"--browser-endpoint", "http://a:9222", "--browser-endpoint", "http://u:p@a:9222?x=1"},
			want: `--browser-endpoint "http://a:9222": the name "http://a:9222" is already that of --browser-endpoint "http://a:9222"`},
		{args: []string{"--browser-endpoint", "http://a:9222;header=Authorization"}, want: `"http://a:9222;header=... (set)": a header must be written header=Name: value`},
		{args: []string{"--browser-endpoint", "http://a:9222;header=Bad Name: v"}, want: `header name "Bad Name" is not a valid HTTP header name`},
		{args: []string{"--browser-endpoint", "http://a:9222;header=X-Token:"}, want: "header X-Token has no value"},
		{args: []string{"--browser-endpoint", "http://a:9222;header=X-Token: a;header=x-token: b"}, want: "header x-token is given twice"},
		{args: []string{"--browser-endpoint", "http://a:9222", "--browser-address", "http://b:9222"},
			want: "--browser-endpoint and --browser-address cannot be combined"},
		{args: []string{"--browser-endpoint", "http://a:9222", "--chromium", "/bin/sh"},
			want: "--browser-endpoint and --chromium cannot be combined"},
		{env: "http://a:9222", args: []string{"--browser-address", "http://b:9222"},
			want: EnvBrowserEndpoints + " (set in the environment) and --browser-address cannot be combined"},
		{env: "http://a:9222", args: []string{"--chromium", "/bin/sh"},
			want: "unset " + EnvBrowserEndpoints + " to use --chromium"},
		{env: "# fleet\nhttp://a:9222\n\nhttp://b:9222;capacity=-1",
			want: EnvBrowserEndpoints + ` line 4 "http://b:9222;capacity=-1": capacity must be`},
		{env: "http://a:9222;name=x\nhttp://b:9222;name=x",
			want: EnvBrowserEndpoints + ` line 2 "http://b:9222;name=x": the name "x" is already that of ` + EnvBrowserEndpoints + ` line 1`},
	} {
		_, err := daemonEndpoints(t, map[string]string{EnvBrowserEndpoints: tc.env}, tc.args...)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q, env %q: %v, want %q", tc.args, tc.env, err, tc.want)
		}
	}
}

// TestBrowserEndpointSecrets: the errors never show a header's value, nor
// the URL's password or query.
func TestBrowserEndpointSecrets(t *testing.T) {
	const secret = "s3cr3t"
	for _, value := range []string{
		"http://a:9222;header=Authorization: Bearer " + secret + ";capacity=none",
		"http://a:9222;header=Authorization: Bearer " + secret + ";bogus=1",
		"http://a:9222;header=Authorization " + secret,
		"http://a:9222;header=X-Key: " + secret + "\x01",
		"ftp://user:" + secret + "@a:9222",
		"wss://a:9222/devtools?token=" + secret + ";capacity=0",
		"a:9222?token=" + secret,
		"user:" + secret + "@a:9222",
	} {
		_, err := daemonEndpoints(t, nil, "--browser-endpoint", value)
		if err == nil {
			t.Errorf("%q: no error", value)
			continue
		}
		if strings.Contains(err.Error(), secret) {
			t.Errorf("%q: the error shows the secret: %v", value, err)
		}
	}
	_, err := daemonEndpoints(t, nil, "--browser-endpoint", "http://a:9222;header=Authorization: Bearer "+secret+";capacity=none")
	if want := `"http://a:9222;header=Authorization (set);capacity=none"`; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("%v, want the value quoted as %s", err, want)
	}
}

// TestBrowserEndpointsFile: --browser-endpoints-file reads one endpoint a
// line, wins over the environment, loses to the flags, and its errors name
// the file and the line.
func TestBrowserEndpointsFile(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "fleet.conf")
	os.WriteFile(good, []byte("# the fleet\nhttp://10.0.0.1:9222;capacity=2;name=a\n\nws://10.0.0.2:9222;name=b\n"), 0o600)
	got, err := daemonEndpoints(t, map[string]string{EnvBrowserEndpoints: "http://10.0.0.9:9222"}, "--browser-endpoints-file", good)
	if err != nil {
		t.Fatal(err)
	}
	if want := []daemon.BrowserEndpoint{{URL: "http://10.0.0.1:9222", Capacity: 2, Name: "a"}, {URL: "ws://10.0.0.2:9222", Name: "b"}}; !reflect.DeepEqual(got, want) {
		t.Errorf("endpoints %+v, want %+v", got, want)
	}
	got, err = daemonEndpoints(t, nil, "--browser-endpoints-file", good, "--browser-endpoint", "http://10.0.0.7:9222")
	if err != nil || len(got) != 1 || got[0].URL != "http://10.0.0.7:9222" {
		t.Errorf("the flag does not win over the file: %+v %v", got, err)
	}
	bad := filepath.Join(dir, "bad.conf")
	os.WriteFile(bad, []byte("http://10.0.0.1:9222\nhttp://10.0.0.2:9222;capacity=lots\n"), 0o600)
	empty := filepath.Join(dir, "empty.conf")
	os.WriteFile(empty, []byte("# nothing yet\n"), 0o600)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--browser-endpoints-file", bad}, bad + ` line 2 "http://10.0.0.2:9222;capacity=lots": capacity must be`},
		{[]string{"--browser-endpoints-file", filepath.Join(dir, "missing.conf")}, "--browser-endpoints-file: open " + filepath.Join(dir, "missing.conf")},
		{[]string{"--browser-endpoints-file", empty}, "names no endpoint"},
		{[]string{"--browser-endpoints-file", good, "--chromium", "/bin/sh"}, "--browser-endpoints-file and --chromium cannot be combined"},
	} {
		_, err := daemonEndpoints(t, nil, tc.args...)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: %v, want %q", tc.args, err, tc.want)
		}
	}
}

// TestBrowserQueueFlags: the fleet's queue bounds reach the engine's
// configuration; bad values, and the flags without a fleet, are refused.
func TestBrowserQueueFlags(t *testing.T) {
	f, _ := cmdtest.NewFactory(t, nil)
	var got *DaemonOptions
	err := cmdtest.Exec(NewCmdDaemon(f, func(o *DaemonOptions) error { got = o; return nil }),
		"--data-dir", t.TempDir(), "--browser-endpoint", "http://10.0.0.1:9222", "--browser-queue-timeout", "45s", "--browser-queue-max", "10")
	if err != nil {
		t.Fatal(err)
	}
	if e := got.Config.Engine; e.BrowserQueueTimeout != 45*time.Second || e.BrowserQueueMax != 10 {
		t.Errorf("queue timeout %s and max %d, want 45s and 10", e.BrowserQueueTimeout, e.BrowserQueueMax)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--browser-endpoint", "http://10.0.0.1:9222", "--browser-queue-timeout", "-5s"}, "--browser-queue-timeout -5s: give a positive duration"},
		{[]string{"--browser-endpoint", "http://10.0.0.1:9222", "--browser-queue-max", "-1"}, "--browser-queue-max -1: give a positive number"},
		{[]string{"--browser-queue-max", "3"}, "apply to a fleet of browsers: give --browser-endpoint too"},
	} {
		_, err := daemonEndpoints(t, nil, tc.args...)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: %v, want %q", tc.args, err, tc.want)
		}
	}
}
