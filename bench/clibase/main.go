// Command clibase is the ceiling of bench/cli.sh: it does, through the Go
// SDK and without any agent file, the requests `abctl apply` makes, so that
// the benchmark can show what the CLI adds (reading, checking and
// normalising the files, and starting a process) on top of them.
//
//	clibase gen -dir DIR -n N            write N agent files (YAML) into DIR
//	clibase create -url U -key K -n N    create the same N agents as apply does:
//	                                     POST with the Idempotency-Key of the
//	                                     file's name, then set the abctl.name tag
//	clibase list -url U -key K           read every agent and their tags, as
//	                                     apply does before it compares
//
// The agents come from bench/internal/fixture, the daemon benchmark's
// realistic agents.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"log"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/abctl/abctl/bench/internal/fixture"
	"github.com/abctl/abctl/client"
)

func main() {
	if len(os.Args) < 2 {
		log.Fatal("usage: clibase gen|create|list [flags]")
	}
	fs := flag.NewFlagSet(os.Args[1], flag.ExitOnError)
	dir := fs.String("dir", "", "directory of the agent files (gen)")
	n := fs.Int("n", 1000, "number of agents")
	base := fs.String("url", "", "the daemon's base URL (create, list)")
	key := fs.String("key", "", "API key (create, list)")
	fs.Parse(os.Args[2:])
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	switch os.Args[1] {
	case "gen":
		if err := gen(*dir, *n); err != nil {
			log.Fatal(err)
		}
	case "create":
		c := newClient(*base, *key)
		start := time.Now()
		for i := range *n {
			def, _ := fixture.Definition(i)
			name := fileName(i)
			a, err := c.Agents.Create(ctx, def, nil, client.WithIdempotencyKey("abctl:"+name))
			if err != nil {
				log.Fatalf("create %s: %v", name, err)
			}
			if _, err := c.Agents.ApplyTags(ctx, a.WorkflowPermanentID, &client.TagApplyRequest{
				Tags: []client.TagInput{{Key: "abctl.name", Value: name}}}); err != nil {
				log.Fatalf("tag %s: %v", name, err)
			}
		}
		fmt.Printf("created %d agents in %.3f s\n", *n, time.Since(start).Seconds())
	case "list":
		c := newClient(*base, *key)
		var ids []string
		for a, err := range c.Agents.All(ctx, &client.ListAgentsOptions{PageSize: 100}) {
			if err != nil {
				log.Fatal(err)
			}
			ids = append(ids, a.WorkflowPermanentID)
		}
		for i := 0; i < len(ids); i += 100 {
			if _, err := c.Agents.BatchGetTags(ctx, ids[i:min(i+100, len(ids))]); err != nil {
				log.Fatal(err)
			}
		}
	default:
		log.Fatalf("clibase: unknown command %q", os.Args[1])
	}
}

func newClient(base, key string) *client.Client {
	if u, err := url.Parse(base); err != nil || !net.ParseIP(u.Hostname()).IsLoopback() {
		log.Fatalf("clibase: -url %q is not a loopback address", base)
	}
	c, err := client.New(client.WithBaseURL(base), client.WithAPIKey(key), client.WithMaxRetries(0))
	if err != nil {
		log.Fatal(err)
	}
	return c
}

func fileName(i int) string { return fmt.Sprintf("agent-%04d", i) }

// gen writes the agents as YAML agent files named after fileName.
func gen(dir string, n int) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for i := range n {
		def, _ := fixture.Definition(i)
		js, err := json.Marshal(def)
		if err != nil {
			return err
		}
		// JSON is YAML: decoding it into a node and dropping the flow
		// style gives block YAML in the same key order.
		var node yaml.Node
		if err := yaml.Unmarshal(js, &node); err != nil {
			return err
		}
		block(&node)
		var buf bytes.Buffer
		enc := yaml.NewEncoder(&buf)
		enc.SetIndent(2)
		if err := enc.Encode(&node); err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(dir, fileName(i)+".yaml"), buf.Bytes(), 0o644); err != nil {
			return err
		}
	}
	return nil
}

func block(n *yaml.Node) {
	if n.Kind == yaml.MappingNode || n.Kind == yaml.SequenceNode {
		n.Style = 0
	}
	if n.Kind == yaml.ScalarNode && n.Tag == "!!str" {
		n.Style = 0
	}
	for _, c := range n.Content {
		block(c)
	}
}
