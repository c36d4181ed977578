package blocks

import (
	"context"
	"log/slog"
	"net/http"
	"time"

	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/localrun/engine/agent"
	"github.com/abctl/abctl/localrun/engine/runbrowser"
	"github.com/abctl/abctl/localrun/engine/steplog"
	"github.com/abctl/abctl/localrun/llm"
)

// The blocks' work is done by the methods of a type per family, each of
// which holds only what its blocks need; the Interpreter keeps the flow
// (lists, loops, branches, retries, outputs) and hands each block to its
// family (exec in blocks.go). The integrations themselves (PDF, storage,
// mail, Google Sheets, code) are leaf packages beside this one, which the
// families call with plain values.
type (
	// browserBlocks drives the browser without a model: goto_url, wait,
	// action, file_download, and login by the shape of its forms. It falls
	// back on the blocks a model drives.
	browserBlocks struct {
		sess            *runbrowser.Browser
		files           *runbrowser.Files
		steps           *steplog.Log
		logger          *slog.Logger
		models          agent.Models
		selectorTimeout time.Duration
		params          map[string]any
		model           modelFallback
	}
	// fileBlocks fetches and parses files: http_request, print_page,
	// file_url_parser and pdf_parser.
	fileBlocks struct {
		runAccess
		http *http.Client
		tabs activeTab
	}
	// pdfBlocks fills PDF forms and splits PDFs (pdf_fill, split_pdf).
	pdfBlocks struct {
		runAccess
		models     agent.Models
		agent      *agent.Agent
		agentModel client.Model
	}
	// storageBlocks writes files to S3 and SFTP (upload_to_s3,
	// download_to_s3, file_upload).
	storageBlocks struct {
		runAccess
		s3 S3Config
	}
	// mailBlocks sends mail and reads a mailbox (send_email,
	// email_inbox).
	mailBlocks struct {
		runAccess
		smtp       SMTP
		imap       IMAPConfig
		agent      *agent.Agent
		blockModel func(client.Block) (llm.Model, error)
	}
	// sheetsBlocks reads and writes Google Sheets.
	sheetsBlocks struct {
		runAccess
		http     *http.Client
		endpoint string
	}
	// peopleBlocks reaches people, other agents and code:
	// human_interaction, workflow_trigger, code.
	peopleBlocks struct {
		runAccess
		logger   *slog.Logger
		smtp     SMTP
		codeConf CodeConfig
		human    HumanAsker
		trigger  AgentStarter
	}
)

// modelFallback is what the model-free browser blocks fall back on: the
// blocks a model drives (model.go), which the Interpreter runs.
type modelFallback interface {
	modelBlock(ctx context.Context, b client.Block, sc *scope) (any, bool, error)
	modelAction(ctx context.Context, b *client.ActionBlock, intention string, touched bool) (any, bool, error)
	modelDownload(ctx context.Context, b *client.FileDownloadBlock, sc *scope) (any, bool, error)
}

// activeTab is the browser tab print_page prints.
type activeTab interface {
	ActiveTab(ctx context.Context) (runbrowser.Tab, error)
}

// giveFamilies gives each block family of in what its blocks need.
func giveFamilies(in *Interpreter) {
	run := runAccess{steps: in.steps, files: in.files, guard: in.guard, params: in.params}
	if in.sess != nil {
		run.secrets = in.sess.Secrets()
	}
	in.browser = browserBlocks{sess: in.sess, files: in.files, steps: in.steps, logger: in.env.Logger, models: in.env.Models,
		selectorTimeout: in.env.SelectorTimeout, params: in.params, model: in}
	in.fileIO = fileBlocks{runAccess: run, http: in.env.HTTP, tabs: in.sess}
	in.pdf = pdfBlocks{runAccess: run, models: in.env.Models, agent: in.agent, agentModel: in.agentModel}
	in.storage = storageBlocks{runAccess: run, s3: in.env.S3}
	in.mail = mailBlocks{runAccess: run, smtp: in.env.SMTP, imap: in.env.IMAP, agent: in.agent, blockModel: in.blockModel}
	in.sheets = sheetsBlocks{runAccess: run, http: in.env.HTTP, endpoint: in.env.SheetsEndpoint}
	in.people = peopleBlocks{runAccess: run, logger: in.env.Logger, smtp: in.env.SMTP, codeConf: in.env.Code, human: in.human, trigger: in.trigger}
}
