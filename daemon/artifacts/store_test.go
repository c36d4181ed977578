package artifacts

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/daemon/ids"
	"github.com/abctl/abctl/localrun/executor"
)

var badNames = []string{
	"", ".", "..", "../x", "x/..", "a/b", `a\b`, "/abs", `C:\x`, "c:x", ".hidden", ".png",
	"a\x00b", "x..y", "trailing.", "trailing ", "ctl\x01.txt", "tab\t.txt", "nl\n.txt", "del\x7f",
	"bidi\u202egnp.exe", "lrm\u200e.png", "c1\u0085.txt", "\xff.png", "ok\xc0\xae.png",
	strings.Repeat("a", executor.MaxFileNameLen+1),
}

var goodNames = []string{
	"a", "shot.png", "a b.png", "ümlaut ☃.txt", "100%.txt", "q?x#y.json", "name-with_all.sorts+of~chars!",
	"%2e%2e", "x.y.z", "日本語.pdf", strings.Repeat("a", executor.MaxFileNameLen),
}

var badIDs = []string{
	"", ".", "..", "../o_1", "o_1/..", "a/b", `a\b`, "o 1", "o-1", "o.1", "ö", "o_1\x00", "o_1\n",
	strings.Repeat("a", MaxIDLen+1),
}

func TestValidID(t *testing.T) {
	for _, id := range badIDs {
		if ValidID(id) {
			t.Errorf("ValidID(%q) = true", id)
		}
	}
	for _, id := range []string{"o_1", "wr_490440779503358000", "tsk_v2_1", "A", "_", strings.Repeat("z", MaxIDLen)} {
		if !ValidID(id) {
			t.Errorf("ValidID(%q) = false", id)
		}
	}
}

func TestRecordRejectsBadNames(t *testing.T) {
	e := newEnv(t)
	e.plantOutside(t)
	for _, n := range badNames {
		if _, err := e.store.Record(testOrg, testRun, n, client.ArtifactDownload); !errors.Is(err, ErrInvalidName) {
			t.Errorf("Record(%q): %v", n, err)
		}
	}
	for _, n := range goodNames {
		e.record(t, testOrg, testRun, n, client.ArtifactDownload, []byte("x"))
	}
}

func TestRecordRejectsNonRegular(t *testing.T) {
	e := newEnv(t)
	if err := e.mkdirIn(testOrg, testRun, "dir.png"); err != nil {
		t.Fatal(err)
	}
	if _, err := e.store.Record(testOrg, testRun, "dir.png", client.ArtifactScreenshot); !errors.Is(err, ErrNotRegular) {
		t.Errorf("directory: %v", err)
	}
	if _, err := e.store.Record(testOrg, testRun, "missing.png", client.ArtifactScreenshot); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing: %v", err)
	}
	if _, err := e.store.Record(testOrg, "wr_none", "x.png", client.ArtifactScreenshot); err == nil {
		t.Error("missing run directory accepted")
	}
	e.write(t, testOrg, testRun, "real.png", nil)
	runDir, _ := e.store.RunDir(testOrg, testRun)
	if err := os.Symlink("real.png", filepath.Join(runDir, "link.png")); err == nil {
		if _, err := e.store.Record(testOrg, testRun, "link.png", client.ArtifactScreenshot); !errors.Is(err, ErrNotRegular) {
			t.Errorf("symlink: %v", err)
		}
	}
	testSpecialFiles(t, e, runDir)
}

func TestIDsValidated(t *testing.T) {
	e := newEnv(t)
	e.plantOutside(t)
	for _, id := range badIDs {
		if _, err := e.store.RunDir(id, testRun); !errors.Is(err, ErrInvalidID) {
			t.Errorf("RunDir(org %q): %v", id, err)
		}
		if _, err := e.store.RunDir(testOrg, id); !errors.Is(err, ErrInvalidID) {
			t.Errorf("RunDir(run %q): %v", id, err)
		}
		if _, err := e.store.Record(id, testRun, "secret.txt", client.ArtifactDownload); !errors.Is(err, ErrInvalidID) {
			t.Errorf("Record(org %q): %v", id, err)
		}
		if _, err := e.store.Record(testOrg, id, "secret.txt", client.ArtifactDownload); !errors.Is(err, ErrInvalidID) {
			t.Errorf("Record(run %q): %v", id, err)
		}
		if err := e.store.RemoveRun(id, testRun); !errors.Is(err, ErrInvalidID) {
			t.Errorf("RemoveRun(org %q): %v", id, err)
		}
		if err := e.store.RemoveRun(testOrg, id); !errors.Is(err, ErrInvalidID) {
			t.Errorf("RemoveRun(run %q): %v", id, err)
		}
	}
	// Nothing was created or removed outside the run directories.
	if b, err := os.ReadFile(filepath.Join(e.store.Dir(), testOrg, "secret.txt")); err != nil || string(b) != outsideMarker {
		t.Fatalf("org-level file: %v", err)
	}
	ents, _ := os.ReadDir(e.store.Dir())
	for _, d := range ents {
		if d.Name() != testOrg && d.Name() != "secret.txt" {
			t.Errorf("unexpected entry %q in root", d.Name())
		}
	}
}

func TestRunDirAndRemove(t *testing.T) {
	e := newEnv(t)
	d, err := e.store.RunDir(testOrg, testRun)
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(e.dir, "artifacts", testOrg, testRun); d != want || !filepath.IsAbs(d) {
		t.Fatalf("RunDir %q, want %q", d, want)
	}
	fi, err := os.Stat(d)
	if err != nil || !fi.IsDir() {
		t.Fatal(err)
	}
	if runtime.GOOS != "windows" && fi.Mode().Perm() != 0o700 {
		t.Errorf("mode %v", fi.Mode().Perm())
	}
	if d2, err := e.store.RunDir(testOrg, testRun); err != nil || d2 != d {
		t.Fatalf("second RunDir: %q %v", d2, err)
	}
	e.write(t, testOrg, testRun, "a.png", nil)
	e.write(t, testOrg, "wr_2", "b.png", nil)
	if err := e.store.RemoveRun(testOrg, testRun); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(d); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("run directory still there: %v", err)
	}
	if _, err := os.Stat(filepath.Join(e.dir, "artifacts", testOrg, "wr_2", "b.png")); err != nil {
		t.Fatalf("other run removed: %v", err)
	}
	if err := e.store.RemoveRun(testOrg, testRun); err != nil {
		t.Fatalf("removing twice: %v", err)
	}
	if err := e.store.RemoveRun("o_none", "wr_none"); err != nil {
		t.Fatalf("removing a run that never existed: %v", err)
	}
}

func TestRecordIDs(t *testing.T) {
	dir := t.TempDir()
	g := ids.New(7)
	st, err := NewStore(filepath.Join(dir, "a"), WithIDs(g))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	d, _ := st.RunDir(testOrg, testRun)
	os.WriteFile(filepath.Join(d, "x.png"), []byte("x"), 0o600)
	seen := map[string]bool{}
	for range 100 {
		f, err := st.Record(testOrg, testRun, "x.png", client.ArtifactScreenshot)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(f.ID, "a_") || seen[f.ID] || !ValidID(f.ID) {
			t.Fatalf("id %q", f.ID)
		}
		seen[f.ID] = true
		if f.SHA256 != "2d711642b726b04401627ca9fbac32f5c8530fb1903cc4db02258717921a4881" || f.Size != 1 {
			t.Fatalf("record %+v", f)
		}
	}
	// The root is created 0700.
	if fi, err := os.Stat(filepath.Join(dir, "a")); err != nil || (runtime.GOOS != "windows" && fi.Mode().Perm() != 0o700) {
		t.Fatalf("root: %v %v", fi.Mode(), err)
	}
}
