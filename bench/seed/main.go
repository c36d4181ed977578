// Command seed fills a running abctl daemon for bench/daemon.sh through the
// Go SDK: -folders folders, then -agents agents created by -workers
// concurrent clients (each create is its own durable write transaction in
// the daemon, so concurrency is what makes seeding quick).
//
// The agents and folders come from bench/internal/fixture: realistic
// agents, one in a hundred mentioning fixture.SearchTerm. Four agents in
// five are in a folder.
//
// It writes into -out:
//
//	agent_paths.txt   /v1/agents/<wpid>, one per agent (GET agent picks one at random)
//	folder_paths.txt  /v1/folders/<id>, one per folder
//	post_body.json    an agent request like the seeded ones, for the POST runs
//
// and prints one line saying how long seeding took.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/abctl/abctl/bench/internal/fixture"
	"github.com/abctl/abctl/client"
)

func main() {
	base := flag.String("url", "", "the daemon's base URL, http://127.0.0.1:PORT (required)")
	key := flag.String("key", "", "API key (required)")
	nAgents := flag.Int("agents", 10000, "agents to create")
	nFolders := flag.Int("folders", 20, "folders to create")
	workers := flag.Int("workers", 8, "concurrent clients")
	out := flag.String("out", ".", "directory for the path lists and the POST body")
	flag.Parse()
	if *base == "" || *key == "" || *nFolders < 1 || *workers < 1 {
		flag.Usage()
		os.Exit(2)
	}
	if u, err := url.Parse(*base); err != nil || !net.ParseIP(u.Hostname()).IsLoopback() {
		log.Fatalf("seed: -url %q is not a loopback address", *base)
	}

	hc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: *workers}}
	c, err := client.New(client.WithBaseURL(*base), client.WithAPIKey(*key), client.WithHTTPClient(hc),
		client.WithMaxRetries(0), client.WithRequestTimeout(30*time.Second))
	if err != nil {
		log.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	start := time.Now()

	folders := make([]string, *nFolders)
	for i := range folders {
		title, desc := fixture.Folder(i)
		f, err := c.Folders.Create(ctx, &client.FolderCreateRequest{Title: title, Description: desc})
		if err != nil {
			log.Fatalf("seed: create folder %d: %v", i, err)
		}
		folders[i] = f.FolderID
	}

	wpids := make([]string, *nAgents)
	var next, matches atomic.Int64
	var wg sync.WaitGroup
	var once sync.Once
	var firstErr error
	for range *workers {
		wg.Go(func() {
			for {
				i := int(next.Add(1) - 1)
				if i >= *nAgents || ctx.Err() != nil {
					return
				}
				def, match := fixture.Definition(i)
				if match {
					matches.Add(1)
				}
				var opt *client.CreateAgentOptions
				if i%5 != 0 {
					opt = &client.CreateAgentOptions{FolderID: folders[i%len(folders)]}
				}
				a, err := c.Agents.Create(ctx, def, opt)
				if err != nil {
					once.Do(func() { firstErr = fmt.Errorf("create agent %d: %w", i, err); cancel() })
					return
				}
				wpids[i] = a.WorkflowPermanentID
			}
		})
	}
	wg.Wait()
	if firstErr != nil {
		log.Fatalf("seed: %v", firstErr)
	}
	took := time.Since(start)

	writeLines(filepath.Join(*out, "agent_paths.txt"), "/v1/agents/", wpids)
	writeLines(filepath.Join(*out, "folder_paths.txt"), "/v1/folders/", folders)
	def, _ := fixture.Definition(*nAgents + 1)
	body, err := json.Marshal(&client.AgentRequest{JSONDefinition: def})
	if err != nil {
		log.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(*out, "post_body.json"), body, 0o644); err != nil {
		log.Fatal(err)
	}
	fmt.Printf("seeded %d agents and %d folders in %.1f s (%.0f agents/s, %d workers); %d agents mention %q; POST body %d bytes\n",
		*nAgents, *nFolders, took.Seconds(), float64(*nAgents)/took.Seconds(), *workers, matches.Load(), fixture.SearchTerm, len(body))
}

func writeLines(path, prefix string, ids []string) {
	var b strings.Builder
	for _, id := range ids {
		b.WriteString(prefix + id + "\n")
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		log.Fatal(err)
	}
}
