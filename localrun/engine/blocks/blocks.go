// Package blocks is the block interpreter of agent runs: it checks a
// workflow definition before any browser opens (Check, CheckModels), then
// runs its blocks in order with their retries, loops, jumps and finally
// block, rendering their templates and keeping their outputs. What each
// block does and outputs is described in docs/blocks.md.
//
// The model-free blocks act on the run's browser through package
// engine/runbrowser; the blocks a model drives hand their goal to package
// engine/agent. The blocks that reach other services call the leaf
// packages beside this one with plain values: blocks/pdf (reading,
// filling and cutting PDFs), blocks/storage (S3 and SFTP), blocks/mail
// (SMTP and IMAP), blocks/sheets (Google Sheets) and blocks/python (code
// blocks); this package renders the blocks' templates, resolves their
// parameters and credentials, and records their steps and outputs. Every
// step a block takes is in the run's step log (package engine/steplog).
package blocks

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/internal/egress"
	"github.com/abctl/abctl/localrun/engine/agent"
	"github.com/abctl/abctl/localrun/engine/internal/text"
	"github.com/abctl/abctl/localrun/engine/runbrowser"
	"github.com/abctl/abctl/localrun/engine/steplog"
	"github.com/abctl/abctl/localrun/executor"
)

// maxExecutions bounds the block executions of one run (next_block_label
// can route in circles).
const maxExecutions = 10000

// MaxBlockVisits bounds how often the routes of one list of blocks
// (next_block_label, a conditional's branches) may bring the run to the
// same block: a route back to an earlier block is a retry loop written as
// routes, so it gets the bound of the loop block it stands for, a
// while_loop's MaxWhileIterations. A block reached once more fails the run
// with a reason naming it and the bound. Each pass of a list counts afresh
// (a loop block's iteration runs its list anew), and a block's own
// max_retries are not visits.
const MaxBlockVisits = MaxWhileIterations

// Env is what the interpreter takes from the engine.
type Env struct {
	// Models are the engine's models.
	Models agent.Models
	// HTTP makes the requests of http_request blocks.
	HTTP   *http.Client
	Logger *slog.Logger
	// SelectorTimeout is how long an action block waits for its selector.
	SelectorTimeout time.Duration
	// MaxSteps is the step budget of a goal that sets none.
	MaxSteps int
	// SMTP is the server send_email blocks use when they name none.
	SMTP SMTP
	// S3 is the storage of storage blocks that name none (see storage.go).
	S3 S3Config
	// Code says whether and how code blocks run (see code.go).
	Code CodeConfig
	// SheetsEndpoint is the Google Sheets API of the Google Sheets blocks;
	// "" means DefaultSheetsEndpoint.
	SheetsEndpoint string
	// IMAP is where email_inbox blocks read mail (see inbox.go).
	IMAP IMAPConfig
}

// Run is one agent run as the interpreter sees it.
type Run struct {
	Browser *runbrowser.Browser
	Agent   *agent.Agent
	Steps   *steplog.Log
	// Definition holds the blocks; Model is the agent's model object.
	Definition *client.WorkflowDefinition
	Model      client.Model
	// Params are the run's parameter values.
	Params map[string]any
	// Human asks a person for human_interaction blocks (see human.go);
	// nil when the caller has no one to ask.
	Human HumanAsker
	// Trigger starts the agent runs of workflow_trigger blocks (see
	// trigger.go); nil when the caller cannot start runs.
	Trigger AgentStarter
	// Scripts is how the run replays and records scripts (scripts.go);
	// nil for neither.
	Scripts *Scripts
	// Guard decides what the run's blocks may reach over the network
	// (package internal/egress); nil: no policy.
	Guard *egress.Guard
	// Started is called once, when the run starts: as its first block
	// that is not a loop begins, once the run's browser is open when that
	// block works on a page (see NeedsBrowser). A run whose browser could
	// not open before any such block began never starts. Nil: no one is
	// told.
	Started func()
}

// Interpreter runs the blocks of one agent run. Its methods are not safe
// for concurrent use.
type Interpreter struct {
	env        Env
	sess       *runbrowser.Browser
	files      *runbrowser.Files
	agent      *agent.Agent
	steps      *steplog.Log
	def        *client.WorkflowDefinition
	agentModel client.Model
	params     map[string]any
	outputs    *outputs
	labels     []string // every block's label, loops' blocks included
	execs      int      // block executions, a guard against endless routing
	// jump is the label a conditional block chose to run next, taken by
	// the list that runs it.
	jump string
	// current is the block execution running, innermost, as reported to
	// the run's timeline (see runBlock); a loop block adds its values.
	current *executor.BlockInfo
	human   HumanAsker
	trigger AgentStarter
	scripts *Scripts
	// guard decides what the run's blocks may reach over the network
	// (nil: no policy); its refusals are logged.
	guard *egress.Guard
	// started tells that the run started (Run.Started), once; noBrowser:
	// the run's browser could not open (Execute then does not tell it).
	started   func()
	noBrowser bool

	// The block families (groups.go), each with what its blocks need.
	browser browserBlocks
	fileIO  fileBlocks
	pdf     pdfBlocks
	storage storageBlocks
	mail    mailBlocks
	sheets  sheetsBlocks
	people  peopleBlocks
}

// New returns the interpreter of a run.
func New(env Env, r Run) *Interpreter {
	if r.Scripts != nil {
		r.Scripts.labels = blockLabels(r.Definition.Blocks)
	}
	guard := r.Guard
	if guard != nil && env.Logger != nil {
		log := env.Logger
		guard = guard.WithReport(func(e *egress.Error) {
			log.Warn("a block's connection refused by the egress policy", "org_id", r.Guard.Org(), "target", e.Target, "address", e.Addr.String(), "rule", e.Rule)
		})
	}
	in := &Interpreter{
		env: env, sess: r.Browser, files: r.Browser.Files(), agent: r.Agent, steps: r.Steps,
		def: r.Definition, agentModel: r.Model, params: r.Params, outputs: newOutputs(),
		labels: blockLabels(r.Definition.Blocks), human: r.Human, trigger: r.Trigger,
		scripts: r.Scripts, guard: guard, started: r.Started,
	}
	giveFamilies(in)
	return in
}

// blockLabels returns the labels of bs and of the blocks of their loops.
func blockLabels(bs client.Blocks) []string {
	var out []string
	for _, b := range bs {
		if b == nil {
			continue
		}
		out = append(out, b.Base().Label)
		switch l := b.(type) {
		case *client.ForLoopBlock:
			out = append(out, blockLabels(l.LoopBlocks)...)
		case *client.WhileLoopBlock:
			out = append(out, blockLabels(l.LoopBlocks)...)
		}
	}
	return out
}

// Failure is why a block failed.
type Failure struct {
	Label    string
	Type     client.BlockType
	Err      error
	Attempts int
	// nextLoop: the block asked to move its loop to the next item.
	nextLoop bool
}

// Reason is the failure as the run's failure reason.
func (f *Failure) Reason() string {
	var b strings.Builder
	var term *agent.TerminatedError
	if errors.As(f.Err, &term) {
		fmt.Fprintf(&b, "Block %q (%s) was terminated: %s", f.Label, f.Type, text.UpperFirst(term.Reason))
		return b.String()
	}
	fmt.Fprintf(&b, "Block %q (%s) failed", f.Label, f.Type)
	if f.Attempts > 1 {
		fmt.Fprintf(&b, " after %d attempts", f.Attempts)
	}
	fmt.Fprintf(&b, ": %v", f.Err)
	return b.String()
}

// Execute runs the top-level blocks, then the finally block. It returns
// the failure that ends the run, nil when it completes. A failure is
// matched against the error codes of its block and of the definition when
// its own handling did not, and a matched code is the output's "error".
func (in *Interpreter) Execute(ctx context.Context) *Failure {
	def := in.def
	top := &scope{in: in}
	fail := in.runList(ctx, def.Blocks, top, def.FinallyBlockLabel)
	if def.FinallyBlockLabel != "" && ctx.Err() == nil && (fail == nil || !errors.Is(fail.Err, steplog.ErrLimit)) {
		for _, b := range def.Blocks {
			if b.Base().Label == def.FinallyBlockLabel {
				if f := in.runBlock(ctx, b, top); f != nil && fail == nil && !b.Base().ContinueOnFailure {
					fail = f
				}
				break
			}
		}
	}
	if !in.noBrowser {
		// A run of loops over no items started too.
		in.start()
	}
	if fail != nil && ctx.Err() == nil {
		in.codeFailure(ctx, fail)
	}
	var coded *agent.CodedError
	if fail != nil && errors.As(fail.Err, &coded) {
		in.outputs.set("error", coded.Code)
	}
	return fail
}

// Output is the run's output object: each block's output as
// <label>_output, in the order they were first set; nil when there is
// none.
func (in *Interpreter) Output() json.RawMessage { return in.outputs.json() }

// codeFailure matches a failed block against the error codes of the
// block and of the definition, when the block's own handling did not.
func (in *Interpreter) codeFailure(ctx context.Context, fail *Failure) {
	var coded *agent.CodedError
	if errors.As(fail.Err, &coded) || !agent.Classifiable(ctx, fail.Err) || len(in.def.ErrorCodeMapping) == 0 {
		return
	}
	m, err := in.env.Models.Pick(in.agentModel)
	if err != nil {
		return
	}
	code := in.agent.Classify(ctx, m, in.def.ErrorCodeMapping, agent.FailureInfo{Goal: "block " + fail.Label + " of the agent", Reason: fail.Err.Error(), Label: fail.Label})
	if code != "" {
		fail.Err = &agent.CodedError{Err: fail.Err, Code: code}
	}
}

// runList runs a list of blocks in order, following next_block_label. skip
// names a block left out (the finally block).
func (in *Interpreter) runList(ctx context.Context, bs client.Blocks, sc *scope, skip string) *Failure {
	index := make(map[string]int, len(bs))
	for i, b := range bs {
		if _, dup := index[b.Base().Label]; !dup {
			index[b.Base().Label] = i
		}
	}
	visits := make([]int, len(bs))
	for i := 0; i < len(bs); {
		b := bs[i]
		base := b.Base()
		if skip != "" && base.Label == skip {
			i++
			continue
		}
		if ctx.Err() != nil {
			return &Failure{Label: base.Label, Type: b.BlockType(), Err: ctx.Err()}
		}
		if visits[i]++; visits[i] > MaxBlockVisits {
			return &Failure{Label: base.Label, Type: b.BlockType(), Err: fmt.Errorf(
				"the routes (next_block_label) brought the run to it more than %d times, the most a block runs in one pass of its list (end the retry loop with a branch that goes on, or use a while_loop block)",
				MaxBlockVisits)}
		}
		if fail := in.runBlock(ctx, b, sc); fail != nil {
			if errors.Is(fail.Err, steplog.ErrLimit) || ctx.Err() != nil {
				return fail
			}
			switch {
			case base.ContinueOnFailure:
				in.env.Logger.Info("block failed; continuing", "block", base.Label, "reason", fail.Err)
			case base.NextLoopOnFailure && sc.inLoop():
				fail.nextLoop = true
				return fail
			default:
				return fail
			}
		}
		if jump := in.jump; jump != "" {
			in.jump = ""
			k, ok := index[jump]
			if !ok {
				return &Failure{Label: base.Label, Type: b.BlockType(), Err: fmt.Errorf("next_block_label %q names no block of the same list", jump)}
			}
			i = k
			continue
		}
		if next := base.NextBlockLabel; next != "" {
			i = index[next]
		} else {
			i++
		}
	}
	return nil
}

// runBlock runs one block with its retries, stores its output, and takes a
// screenshot when it touched the page. The block's execution is reported
// to the run's timeline as it starts and ends.
func (in *Interpreter) runBlock(ctx context.Context, b client.Block, sc *scope) (fail *Failure) {
	base := b.Base()
	// Before the block's execution begins on the timeline: a block waiting
	// for the run's browser has not begun.
	err := in.begin(ctx, b)
	ready := err == nil
	info := in.steps.BeginBlock(blockInfo(b, sc))
	prev := in.current
	in.current = &info
	var out any
	defer func() {
		in.current = prev
		info.Status = blockStatus(ctx, fail)
		if fail != nil {
			info.FailureReason = fail.Reason()
		}
		if out != nil {
			info.Output, _ = json.Marshal(out)
		}
		in.steps.EndBlock(info)
	}()
	attempts := 1 + max(0, maxRetries(b))
	n := 0
	for ready && n < attempts {
		n++
		in.execs++
		if in.execs > maxExecutions {
			err = fmt.Errorf("the run executed %d blocks; next_block_label may route in a circle", maxExecutions)
			break
		}
		var touched bool
		out, touched, err = in.exec(ctx, b, sc)
		if touched {
			in.sess.Screenshot(ctx)
		}
		if out != nil {
			in.setOutput(base.Label, out, sc)
		}
		if err == nil || ctx.Err() != nil || !retryable(err) {
			break
		}
		if n < attempts {
			in.env.Logger.Info("block failed; retrying", "block", base.Label, "attempt", n, "reason", err)
		}
	}
	if err != nil {
		return &Failure{Label: base.Label, Type: b.BlockType(), Err: err, Attempts: max(n, 1)}
	}
	return nil
}

// begin readies the run for block b before its first attempt: the run's
// browser when b works on a page (NeedsBrowser), opened now, then the
// run's start. A loop block does neither: the blocks it runs do.
func (in *Interpreter) begin(ctx context.Context, b client.Block) error {
	switch b.(type) {
	case *client.ForLoopBlock, *client.WhileLoopBlock:
		return nil
	}
	if NeedsBrowser(b) {
		if in.sess == nil {
			in.noBrowser = true
			return errors.New("the run has no browser")
		}
		if err := in.sess.Acquire(ctx); err != nil {
			in.noBrowser = true
			return err
		}
	}
	in.start()
	return nil
}

// start tells, once, that the run started.
func (in *Interpreter) start() {
	if in.started != nil {
		in.started()
		in.started = nil
	}
}

// NeedsBrowser reports whether block b works on the run's page, so that
// the run's browser must be open when it starts: the blocks that navigate,
// act, read the page, download through it, sign in or print it, the blocks
// a model drives on the page, and a conditional block with a criterion in
// prose (judged against the page). The others (conditional expressions,
// http_request, text_prompt, code, wait, send_email, file parsing, PDFs,
// storage, mail, Google Sheets, human_interaction, workflow_trigger) never
// open it; a loop block needs what its blocks need, as each starts.
func NeedsBrowser(b client.Block) bool {
	switch x := b.(type) {
	case *client.GotoURLBlock, *client.ActionBlock, *client.FileDownloadBlock, *client.LoginBlock,
		*client.NavigationBlock, *client.ExtractionBlock, *client.TaskBlock, *client.ValidationBlock,
		*client.TaskV2Block, *client.PrintPageBlock:
		return true
	case *client.ConditionalBlock:
		for _, bc := range x.BranchConditions {
			if c, err := criteriaOf(bc); err == nil && !bc.IsDefault && c.CriteriaType == "prompt" {
				return true
			}
		}
	}
	return false
}

// blockInfo describes an execution of b in sc for the run's timeline,
// before it starts: the goals as the definition writes them, and the loop
// iteration it runs in.
func blockInfo(b client.Block, sc *scope) executor.BlockInfo {
	base := b.Base()
	info := executor.BlockInfo{Label: base.Label, Type: b.BlockType(), ContinueOnFailure: base.ContinueOnFailure}
	switch x := b.(type) {
	case *client.GotoURLBlock:
		info.URL = x.URL
	case *client.NavigationBlock:
		info.URL, info.NavigationGoal = x.URL, x.NavigationGoal
	case *client.ExtractionBlock:
		info.URL, info.DataExtractionGoal = x.URL, x.DataExtractionGoal
	case *client.TaskBlock:
		info.URL, info.NavigationGoal, info.DataExtractionGoal = x.URL, x.NavigationGoal, x.DataExtractionGoal
	case *client.LoginBlock:
		info.URL, info.NavigationGoal = x.URL, x.NavigationGoal
	case *client.ActionBlock:
		info.URL, info.NavigationGoal = x.URL, x.NavigationGoal
	case *client.FileDownloadBlock:
		info.URL, info.NavigationGoal = x.URL, x.NavigationGoal
	case *client.TaskV2Block:
		info.URL, info.Prompt = x.URL, x.Prompt
	case *client.TextPromptBlock:
		info.Prompt = x.Prompt
	case *client.HumanInteractionBlock:
		info.Prompt = x.Instructions
	}
	if sc != nil && sc.inLoop() {
		info.CurrentValue = sc.vals["current_value"]
		if i, ok := sc.vals["current_index"].(int); ok {
			info.CurrentIndex = &i
		}
	}
	return info
}

// blockStatus is how a block execution that ended with fail ended.
func blockStatus(ctx context.Context, fail *Failure) executor.BlockStatus {
	var term *agent.TerminatedError
	switch {
	case fail == nil:
		return executor.BlockCompleted
	case errors.As(fail.Err, &term):
		return executor.BlockTerminated
	case errors.Is(fail.Err, steplog.ErrLimit), errors.Is(ctx.Err(), context.DeadlineExceeded):
		return executor.BlockTimedOut
	case ctx.Err() != nil:
		return executor.BlockCanceled
	}
	return executor.BlockFailed
}

func (in *Interpreter) setOutput(label string, v any, sc *scope) {
	key := label + "_output"
	in.outputs.set(key, v)
	if sc.iter != nil {
		sc.iter.set(key, v)
	}
}

// retryable reports whether a block that failed with err may be tried
// again: only a failure, not a template that cannot render, a goal judged
// unreachable, a step limit or a model that cannot be reached.
func retryable(err error) bool {
	var te *templateError
	var term *agent.TerminatedError
	var me *agent.ModelError
	return !errors.Is(err, steplog.ErrLimit) && !errors.As(err, &te) && !errors.As(err, &term) && !errors.As(err, &me)
}

func maxRetries(b client.Block) int {
	switch x := b.(type) {
	case *client.ActionBlock:
		return x.MaxRetries
	case *client.FileDownloadBlock:
		return x.MaxRetries
	case *client.NavigationBlock:
		return x.MaxRetries
	case *client.ExtractionBlock:
		return x.MaxRetries
	case *client.TaskBlock:
		return x.MaxRetries
	case *client.LoginBlock:
		return x.MaxRetries
	}
	return 0
}

// exec runs one attempt of a block. touched says whether it acted on the
// page (a screenshot follows).
func (in *Interpreter) exec(ctx context.Context, b client.Block, sc *scope) (out any, touched bool, err error) {
	switch x := b.(type) {
	case *client.GotoURLBlock:
		return in.browser.gotoURL(ctx, x, sc)
	case *client.WaitBlock:
		return in.browser.wait(ctx, x)
	case *client.ActionBlock:
		return in.browser.action(ctx, x, sc)
	case *client.ForLoopBlock:
		out, err := in.forLoop(ctx, x, sc)
		return out, false, err
	case *client.HTTPRequestBlock:
		out, err := in.fileIO.httpRequest(ctx, x, sc)
		return out, false, err
	case *client.PrintPageBlock:
		out, err := in.fileIO.printPage(ctx, x, sc)
		return out, false, err
	case *client.ConditionalBlock:
		out, err := in.conditional(ctx, x, sc)
		return out, false, err
	case *client.WhileLoopBlock:
		out, err := in.whileLoop(ctx, x, sc)
		return out, false, err
	case *client.SendEmailBlock:
		out, err := in.mail.sendEmail(ctx, x, sc)
		return out, false, err
	case *client.FileURLParserBlock:
		out, err := in.fileIO.fileParser(ctx, x.Label, x.FileURL, x.FileType, x.JSONSchema, sc)
		return out, false, err
	case *client.PDFParserBlock:
		out, err := in.fileIO.fileParser(ctx, x.Label, x.FileURL, "pdf", x.JSONSchema, sc)
		return out, false, err
	case *client.FileDownloadBlock:
		return in.browser.fileDownload(ctx, x, sc)
	case *client.UploadToS3Block:
		out, err := in.storage.uploadToS3(ctx, x, sc)
		return out, false, err
	case *client.DownloadToS3Block:
		out, err := in.storage.downloadToS3(ctx, x, sc)
		return out, false, err
	case *client.FileUploadBlock:
		out, err := in.storage.fileUpload(ctx, x, sc)
		return out, false, err
	case *client.PDFFillBlock:
		out, err := in.pdf.pdfFill(ctx, x, sc)
		return out, false, err
	case *client.SplitPDFBlock:
		out, err := in.pdf.splitPDF(ctx, x, sc)
		return out, false, err
	case *client.EmailInboxBlock:
		out, err := in.mail.emailInbox(ctx, x, sc)
		return out, false, err
	case *client.CodeBlock:
		out, err := in.people.code(ctx, x, sc)
		return out, false, err
	case *client.HumanInteractionBlock:
		out, err := in.people.humanInteraction(ctx, x, sc)
		return out, false, err
	case *client.WorkflowTriggerBlock:
		out, err := in.people.workflowTrigger(ctx, x, sc)
		return out, false, err
	case *client.GoogleSheetsReadBlock:
		out, err := in.sheets.sheetsRead(ctx, x, sc)
		return out, false, err
	case *client.GoogleSheetsWriteBlock:
		out, err := in.sheets.sheetsWrite(ctx, x, sc)
		return out, false, err
	case *client.LoginBlock:
		return in.browser.login(ctx, x, sc)
	case *client.NavigationBlock, *client.ExtractionBlock, *client.TaskBlock, *client.ValidationBlock,
		*client.TaskV2Block:
		return in.modelBlock(ctx, b, sc)
	case *client.TextPromptBlock:
		out, err := in.textPrompt(ctx, x, sc)
		return out, false, err
	}
	return nil, false, checkBlock(b, in.env.Models.Configured())
}

func (in *Interpreter) forLoop(ctx context.Context, b *client.ForLoopBlock, sc *scope) (any, error) {
	items, err := sc.loopValues(b)
	if err != nil {
		return nil, err
	}
	if in.current != nil {
		in.current.LoopValues = items
	}
	if len(items) == 0 {
		if b.CompleteIfEmpty {
			return []any{}, nil
		}
		return []any{}, errors.New("the list to loop over is empty (set complete_if_empty to accept that)")
	}
	results := make([]any, 0, len(items))
	for i, item := range items {
		if err := ctx.Err(); err != nil {
			return results, err
		}
		inner := sc.loop(b.Label, map[string]any{"current_value": item, "current_item": item, "current_index": i})
		fail := in.runList(ctx, b.LoopBlocks, inner, "")
		if results, err = endIteration(results, inner, i, fail); err != nil {
			return results, err
		}
	}
	return results, nil
}

// endIteration appends the outputs of iteration i (its current_index) of
// a loop block, run in inner, to results; err is why the loop stops after
// it, nil when it goes on (a block that failed may ask for the next item).
func endIteration(results []any, inner *scope, i int, fail *Failure) ([]any, error) {
	// Kept as ordered JSON: templates read it (tmpl decodes it on the
	// way) and the run's output keeps the blocks' order.
	results = append(results, inner.iter.rawObject())
	if fail != nil && !fail.nextLoop {
		return results, fmt.Errorf("iteration %d (current_index %d): block %q (%s) failed: %w", i+1, i, fail.Label, fail.Type, fail.Err)
	}
	return results, nil
}
