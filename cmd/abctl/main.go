// Command abctl is the command-line client for the v1 API of a browser-automation
// agent service, and for the local daemon that serves the same API.
package main

import (
	"os"

	"github.com/abctl/abctl/cmd/abctl/internal/cli"
)

func main() {
	os.Exit(cli.Main())
}
