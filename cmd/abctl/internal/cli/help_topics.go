package cli

import (
	"github.com/spf13/cobra"

	"github.com/abctl/abctl/daemon/datadir"
	"github.com/abctl/abctl/localrun/llm"
)

// Help topics are commands without a Run: cobra lists them under
// "Additional help topics" and 'abctl help <topic>' prints their text.
func helpTopics() []*cobra.Command {
	return []*cobra.Command{
		{
			Use:   "environment",
			Short: "Environment variables and the configuration file",
			Long:  environmentHelp,
		},
		{
			Use:   "exit-codes",
			Short: "What abctl's exit statuses mean",
			Long:  exitCodesHelp,
		},
	}
}

// localBaseURL is the base URL of the local daemon's default address.
const localBaseURL = "http://" + datadir.DefaultAddr

// environmentHelp takes its defaults from the constants the code uses, so
// that it cannot drift from them.
var environmentHelp = `Settings come from, in order of precedence: flags, environment variables, the
configuration file's current profile, and the defaults.

ABCTL_PROFILE      the profile to use (flag --profile). Default: the file's
                   current_profile, else "local".
ABCTL_BASE_URL     the service's base URL (flag --base-url). Default: the
                   profile's base_url; for "local", ` + localBaseURL + `.
                   A base URL given explicitly is used as given: abctl starts
                   the local daemon inside a command only at its own address.
ABCTL_API_KEY      the API key. Default: the profile's api_key, or the variable
                   its api_key_env names; for a local daemon's profile, the key
                   the daemon wrote in <data-dir>/api-key. There is no flag, so
                   that keys stay out of shell history and process lists.
ABCTL_DATA_DIR     the data directory of the local daemon's profile. Default:
                   $XDG_DATA_HOME/abctl, else ~/.local/share/abctl.
ABCTL_EMBED        false: never start the local daemon inside a command when
                   it is not running (default true for local profiles).
ABCTL_CONFIG_DIR   where config.yaml lives. Default: $XDG_CONFIG_HOME/abctl, else
                   ~/.config/abctl (%AppData%\abctl on Windows).
ABCTL_CHROMIUM     the Chromium binary of the local daemon (abctl daemon
                   --chromium).
ABCTL_LLM_*        the language model of the local daemon (see abctl daemon
                   --help); over the file's llm section, under --llm-* flags.
                   Default: a local Ollama at ` + llm.DefaultOllamaBaseURL + `
                   with ` + llm.DefaultOllamaModel + `, no key needed.

NO_COLOR           set: no colour anywhere.
CLICOLOR           0: no colour.
CLICOLOR_FORCE     set (not 0): colour even when the output is not a terminal.
TERM               dumb: no colour.
ABCTL_FORCE_TTY    set: behave as on a terminal (a number sets the width).
CI                 set: 'abctl run' prints plain lines instead of the live view.

The configuration file (config.yaml):

  current_profile: local
  profiles:
    local:                        # a daemon on this machine
      base_url: ` + localBaseURL + `
      data_dir: /home/me/.local/share/abctl
    cloud:                        # the hosted service
      base_url: https://api.skyvern.com
      api_key_env: SKYVERN_API_KEY
  llm:                            # the local daemon's language model (the default)
    provider: ` + string(llm.ProviderOllama) + `
    base_url: ` + llm.DefaultOllamaBaseURL + `
    model: ` + llm.DefaultOllamaModel + `

'abctl config view' shows each resolved setting and where it came from, the
model's included, never a key; 'abctl config set-profile' and 'abctl config
use-profile' edit the file, keeping its comments.
`

const exitCodesHelp = `abctl exits with:

  0    success (also when a list is empty)
  1    the command failed; for 'abctl run' and 'abctl runs watch', the run
       ended failed, terminated or canceled
  2    the command line or an agent file was wrong (nothing was changed)
  3    'abctl run' / 'abctl runs watch': the run ended timed_out
  4    the service refused the API key (403), or no key was found
  8    'abctl run' / 'abctl runs watch': the run was still going when
       --timeout expired, or you chose to leave it running
  130  interrupted (Ctrl-C) before anything could be reported

'abctl diff' is different, as diff(1): 0 no differences, 1 differences,
2 or more an error.
`
