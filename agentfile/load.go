package agentfile

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
)

// LoadOptions are the settings of Load.
type LoadOptions struct {
	// Recursive loads the agent files of subdirectories too (-R).
	Recursive bool
	// Stdin is read for the path "-".
	Stdin io.Reader
	// Validation is how strictly the files are checked (--validate); the
	// zero value is ValidateWarn.
	Validation Validation
}

// agentFileExts are the extensions of the files a directory is searched
// for.
var agentFileExts = map[string]bool{".yaml": true, ".yml": true, ".json": true}

// Load reads the agents of paths: files, directories (their *.yaml,
// *.yml and *.json files; subdirectories only with Recursive) and "-" for
// opts.Stdin. Paths are taken in the order given, the files of a directory
// in lexical order; names starting with "." are skipped in directories.
//
// Every problem of every file is collected and returned together as
// Problems, a name used by two agents included (both places are named):
// the errors, and the warnings of the agents that do not load. The agents
// returned are the ones with no error of their own, in file order, each
// with its warnings in Agent.Warnings; with Problems, the caller decides
// whether to go on with them.
func Load(paths []string, opts LoadOptions) ([]*Agent, error) {
	var problems Problems
	var files []string
	seen := map[string]bool{}
	// order is the rank of each path in the order paths and files come,
	// which is the order of the problems.
	order := map[string]int{}
	rank := func(p string) {
		if _, ok := order[p]; !ok {
			order[p] = len(order)
		}
	}
	addFile := func(p string) {
		key := p
		if p != "-" {
			key = filepath.Clean(p)
		}
		if !seen[key] {
			seen[key] = true
			files = append(files, p)
			rank(shownName(p))
		}
	}
	for _, p := range paths {
		if p == "-" {
			addFile(p)
			continue
		}
		rank(p)
		info, err := os.Stat(p)
		if err != nil {
			problems = append(problems, Problem{File: p, Msg: describeFSError(err)})
			continue
		}
		if !info.IsDir() {
			addFile(p)
			continue
		}
		found, ps := listDir(p, opts.Recursive)
		problems = append(problems, ps...)
		for _, f := range found {
			addFile(f)
		}
	}

	var agents, named []*Agent
	for _, r := range readAll(files, opts.Stdin, opts.Validation) {
		agents = append(agents, r.valid...)
		named = append(named, r.named...)
		problems = append(problems, r.problems...)
	}
	agents, ps := withoutDuplicateNames(agents, named)
	problems = append(problems, ps...)
	return agents, inFileOrder(problems, order).errorOrNil()
}

// inFileOrder sorts problems by the rank of their file and by position in
// each file.
func inFileOrder(ps Problems, order map[string]int) Problems {
	sort.SliceStable(ps, func(i, j int) bool {
		a, b := ps[i], ps[j]
		if order[a.File] != order[b.File] {
			return order[a.File] < order[b.File]
		}
		if a.Line != b.Line {
			return a.Line < b.Line
		}
		return a.Column < b.Column
	})
	return ps
}

// fileResult is what one file gave.
type fileResult struct {
	valid, named []*Agent
	problems     Problems
}

// readAll reads and parses files on as many goroutines as there are
// processors (a repository of agents is many small files, each parsed on
// its own), and returns the results in the order of files.
func readAll(files []string, stdin io.Reader, v Validation) []fileResult {
	results := make([]fileResult, len(files))
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0), len(files)) {
		wg.Go(func() {
			for {
				i := int(next.Add(1) - 1)
				if i >= len(files) {
					return
				}
				data, err := readAgentFile(files[i], stdin)
				if err != nil {
					results[i].problems = Problems{{File: shownName(files[i]), Msg: err.Error()}}
					continue
				}
				results[i].valid, results[i].named, results[i].problems = parseFile(files[i], data, v)
			}
		})
	}
	wg.Wait()
	return results
}

// listDir returns the agent files of dir in lexical order, descending into
// subdirectories when recursive. Without it, a directory that has
// subdirectories is a problem, so that files in them are not silently left
// out.
func listDir(dir string, recursive bool) ([]string, Problems) {
	var files, subdirs []string
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if path == dir {
			return nil
		}
		if strings.HasPrefix(d.Name(), ".") {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if d.IsDir() {
			if !recursive {
				subdirs = append(subdirs, d.Name())
				return filepath.SkipDir
			}
			return nil
		}
		if agentFileExts[strings.ToLower(filepath.Ext(path))] {
			files = append(files, path)
		}
		return nil
	})
	var problems Problems
	if err != nil {
		problems = append(problems, Problem{File: dir, Msg: describeFSError(err)})
	}
	if len(subdirs) > 0 {
		sort.Strings(subdirs)
		problems = append(problems, Problem{File: dir, Msg: fmt.Sprintf(
			"is a directory with subdirectories (%s): add -R to load the agent files in them too", strings.Join(subdirs, ", "))})
	}
	if len(files) == 0 && err == nil && len(subdirs) == 0 {
		problems = append(problems, Problem{File: dir, Msg: "is a directory with no agent file (*.yaml, *.yml, *.json)"})
	}
	return files, problems
}

// maxFileSize bounds what is read from one file or from standard input:
// an agent file is a few kilobytes, and a mistake (a log, a binary) should
// not be read whole.
const maxFileSize = 16 << 20

func readAgentFile(path string, stdin io.Reader) ([]byte, error) {
	var r io.Reader
	if path == "-" {
		if stdin == nil {
			return nil, errors.New("no standard input to read the agents from")
		}
		r = stdin
	} else {
		f, err := os.Open(path)
		if err != nil {
			return nil, errors.New(describeFSError(err))
		}
		defer f.Close()
		r = f
	}
	data, err := io.ReadAll(io.LimitReader(r, maxFileSize+1))
	if err != nil {
		return nil, errors.New(describeFSError(err))
	}
	if len(data) > maxFileSize {
		return nil, fmt.Errorf("is larger than %d MiB, too large for an agent file", maxFileSize>>20)
	}
	return data, nil
}

// describeFSError words a file system error without repeating the path,
// which the problem already names.
func describeFSError(err error) string {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		err = pe.Err
	}
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return "no such file or directory"
	case errors.Is(err, fs.ErrPermission):
		return "permission denied"
	}
	return err.Error()
}

// withoutDuplicateNames reports every name used by more than one of the
// named agents, at each use after the first, naming the first; it returns
// the valid agents without the ones of such names, whose warnings join
// the problems.
func withoutDuplicateNames(valid, named []*Agent) ([]*Agent, Problems) {
	first := map[string]*Agent{}
	firstID := map[string]*Agent{}
	dups := map[string]bool{}
	var problems Problems
	for _, a := range named {
		if a.ID != "" {
			if f, ok := firstID[a.ID]; ok {
				dups[a.Name], dups[f.Name] = true, true
				problems = append(problems, Problem{File: a.File, Line: a.Line, Agent: a.Name, Path: "id",
					Msg: fmt.Sprintf("the id %s is also the id of the agent at %s:%d; two agent files cannot define one agent", a.ID, f.File, f.Line)})
			} else {
				firstID[a.ID] = a
			}
		}
		f, ok := first[a.Name]
		if !ok {
			first[a.Name] = a
			continue
		}
		dups[a.Name] = true
		problems = append(problems, Problem{File: a.File, Line: a.Line, Agent: a.Name, Path: "name",
			Msg: fmt.Sprintf("the name %q is also the name of the agent at %s:%d; names must be unique", a.Name, f.File, f.Line)})
	}
	if len(dups) == 0 {
		return valid, nil
	}
	kept := valid[:0:0]
	for _, a := range valid {
		if dups[a.Name] {
			problems = append(problems, a.Warnings...)
		} else {
			kept = append(kept, a)
		}
	}
	return kept, problems
}
