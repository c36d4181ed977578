package blocks

import (
	"fmt"
	"strings"

	"github.com/abctl/abctl/agentfile/script"
	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/localrun/engine/agent"
	"github.com/abctl/abctl/localrun/engine/blocks/pdf"
)

// Check checks, before any browser opens, that the engine can run
// every block of the definition.
func Check(def *client.WorkflowDefinition, hasModel bool) error {
	return CheckReplay(def, hasModel, nil)
}

// CheckReplay is Check for a run that replays the script replay: a block
// the script replays needs no model (nil replay: none does).
func CheckReplay(def *client.WorkflowDefinition, hasModel bool, replay *script.Script) error {
	c := checker{hasModel: hasModel, replay: replay}
	if def.FinallyBlockLabel != "" {
		found := false
		for _, b := range def.Blocks {
			if b != nil && b.Base().Label == def.FinallyBlockLabel {
				found = true
			}
		}
		if !found {
			return fmt.Errorf("finally_block_label %q names no top-level block", def.FinallyBlockLabel)
		}
	}
	return c.blocks(def.Blocks)
}

// checker checks blocks for a run: hasModel says whether the engine has a
// model, replay is the script the run replays (nil for none).
type checker struct {
	hasModel bool
	replay   *script.Script
}

// modelFor reports whether the block labelled label can run: the engine
// has a model, or the script replays the block without one.
func (c checker) modelFor(label string) bool {
	if c.hasModel {
		return true
	}
	if c.replay == nil {
		return false
	}
	b := c.replay.Block(label)
	return b != nil && b.Mode == script.ModeReplay
}

func (c checker) blocks(bs client.Blocks) error {
	labels := map[string]bool{}
	for _, b := range bs {
		if b != nil {
			labels[b.Base().Label] = true
		}
	}
	for i, b := range bs {
		if b == nil {
			return fmt.Errorf("blocks[%d] is empty", i)
		}
		if err := c.block(b); err != nil {
			return err
		}
		if next := b.Base().NextBlockLabel; next != "" && !labels[next] {
			return fmt.Errorf("block %q (%s): next_block_label %q names no block of the same list", b.Base().Label, b.BlockType(), next)
		}
		if c, ok := b.(*client.ConditionalBlock); ok {
			for j, bc := range c.BranchConditions {
				if bc.NextBlockLabel != "" && !labels[bc.NextBlockLabel] {
					return fmt.Errorf("block %q (%s): branch %d: next_block_label %q names no block of the same list", c.Label, c.BlockType(), j+1, bc.NextBlockLabel)
				}
			}
		}
	}
	return nil
}

func needsModel(b client.Block) error {
	return fmt.Errorf("block %q (%s) needs a language model, but %w", b.Base().Label, b.BlockType(), agent.ErrNoModel)
}

// checkBlock checks that the engine can run b: its required fields are
// there, and a model is configured when it needs one.
func checkBlock(b client.Block, hasModel bool) error {
	return checker{hasModel: hasModel}.block(b)
}

func (c checker) block(b client.Block) error {
	label, typ := b.Base().Label, b.BlockType()
	missing := func(what string) error {
		return fmt.Errorf("block %q (%s) has no %s", label, typ, what)
	}
	model := func() error {
		if !c.modelFor(label) {
			return needsModel(b)
		}
		return nil
	}
	blank := func(s string) bool { return strings.TrimSpace(s) == "" }
	switch x := b.(type) {
	case *client.GotoURLBlock:
		if strings.TrimSpace(x.URL) == "" {
			return fmt.Errorf("block %q (%s) has no url", label, typ)
		}
	case *client.WaitBlock:
	case *client.ActionBlock:
		if blank(x.Selector) {
			if blank(x.NavigationGoal) && blank(x.Title) {
				return missing("selector and no navigation_goal saying what to act on")
			}
			return model()
		}
		if x.AIFallback == "proactive" && !blank(x.NavigationGoal) {
			return model()
		}
	case *client.NavigationBlock:
		if blank(x.NavigationGoal) {
			return missing("navigation_goal")
		}
		return model()
	case *client.ExtractionBlock:
		if blank(x.DataExtractionGoal) && agent.ParseSchema(x.DataSchema) == nil {
			return missing("data_extraction_goal")
		}
		return model()
	case *client.TaskBlock:
		if blank(x.NavigationGoal) && blank(x.Prompt) && blank(x.DataExtractionGoal) {
			return missing("navigation_goal, prompt or data_extraction_goal")
		}
		return model()
	case *client.ValidationBlock:
		if blank(x.CompleteCriterion) && blank(x.TerminateCriterion) {
			return missing("complete_criterion or terminate_criterion")
		}
		return model()
	case *client.TaskV2Block:
		if blank(x.Prompt) {
			return missing("prompt")
		}
		return model()
	case *client.TextPromptBlock:
		if blank(x.Prompt) {
			return missing("prompt")
		}
		return model()
	case *client.LoginBlock:
		// Without a model, the sign-in form is filled by its shape
		// (login.go); a goal of its own needs the model.
		if !blank(x.NavigationGoal) && !c.modelFor(label) {
			return needsModel(b)
		}
	case *client.ForLoopBlock:
		if x.LoopOver == nil && x.LoopOverParameterKey == "" && strings.TrimSpace(x.LoopVariableReference) == "" {
			return fmt.Errorf("block %q (%s) has nothing to loop over: set loop_over_parameter_key or loop_variable_reference", label, typ)
		}
		return c.blocks(x.LoopBlocks)
	case *client.HTTPRequestBlock:
		if strings.TrimSpace(x.URL) == "" {
			return fmt.Errorf("block %q (%s) has no url", label, typ)
		}
		if len(x.Files) > 0 && string(x.Files) != "null" && string(x.Files) != "{}" {
			return fmt.Errorf("block %q (%s): files (multipart uploads) are not supported by this daemon's engine yet", label, typ)
		}
	case *client.PrintPageBlock:
		switch x.Format {
		case "", "A4", "Letter", "Legal", "Tabloid":
		default:
			return fmt.Errorf("block %q (%s): format %q is not one of A4, Letter, Legal, Tabloid", label, typ, x.Format)
		}
	case *client.ConditionalBlock:
		return checkConditional(x, c.hasModel)
	case *client.SendEmailBlock:
		if len(x.Recipients) == 0 {
			return missing("recipients")
		}
		if blank(x.Sender) {
			return missing("sender")
		}
		if p := x.CustomSMTPPort; p < 0 || p > 65535 {
			return fmt.Errorf("block %q (%s): custom_smtp_port %d is not a port (1 to 65535)", label, typ, p)
		}
	case *client.FileURLParserBlock:
		if strings.TrimSpace(x.FileURL) == "" {
			return missing("file_url")
		}
		switch strings.ToLower(x.FileType) {
		case "", "auto_detect", "csv", "excel", "json", "docx", "text", "tsv":
		case "pdf":
			if err := pdf.HavePdftotext(); err != nil {
				return fmt.Errorf("block %q (%s): %w", label, typ, err)
			}
		case "image", "zip":
			return fmt.Errorf("block %q (%s): file_type %s is not read by this daemon's engine yet (csv, tsv, excel, json, docx, pdf and text files are)", label, typ, x.FileType)
		default:
			return fmt.Errorf("block %q (%s): file_type %q is not one of auto_detect, csv, excel, pdf, image, docx, zip", label, typ, x.FileType)
		}
	case *client.WhileLoopBlock:
		if err := checkWhile(x); err != nil {
			return err
		}
		return c.blocks(x.LoopBlocks)
	case *client.FileDownloadBlock:
		if x.DownloadTarget != "" && x.DownloadTarget != "website" {
			return fmt.Errorf("block %q (%s): download_target %q is not supported by this daemon's engine", label, typ, x.DownloadTarget)
		}
		if strings.TrimSpace(x.URL) == "" {
			if blank(x.NavigationGoal) {
				return missing("url and no navigation_goal saying how to find the download")
			}
			return model()
		}
	case *client.UploadToS3Block, *client.DownloadToS3Block, *client.FileUploadBlock:
		return checkStorage(b)
	case *client.PDFParserBlock, *client.PDFFillBlock, *client.SplitPDFBlock:
		return checkPDF(b, c.hasModel)
	case *client.EmailInboxBlock:
		return checkEmailInbox(x)
	case *client.CodeBlock:
		return checkCode(x)
	case *client.HumanInteractionBlock:
		return checkHumanInteraction(x)
	case *client.WorkflowTriggerBlock:
		return checkWorkflowTrigger(x)
	case *client.GoogleSheetsReadBlock, *client.GoogleSheetsWriteBlock:
		return checkSheets(b)
	default:
		return fmt.Errorf("block %q (%s) is not supported by this daemon's engine", label, typ)
	}
	return nil
}

// CheckModels resolves the models an agent and its blocks name, so that a
// misnamed model fails the run before it starts.
func CheckModels(a *client.Agent, models agent.Models) error {
	if !models.Configured() {
		return nil
	}
	if a.Model.Name() != "" {
		if _, err := models.Pick(a.Model); err != nil {
			return err
		}
	}
	var walk func(bs client.Blocks) error
	walk = func(bs client.Blocks) error {
		for _, b := range bs {
			if b == nil {
				continue
			}
			if m := b.Base().Model; m.Name() != "" {
				if _, err := models.Pick(m); err != nil {
					return fmt.Errorf("block %q: %w", b.Base().Label, err)
				}
			}
			var inner client.Blocks
			switch l := b.(type) {
			case *client.ForLoopBlock:
				inner = l.LoopBlocks
			case *client.WhileLoopBlock:
				inner = l.LoopBlocks
			}
			if err := walk(inner); err != nil {
				return err
			}
		}
		return nil
	}
	return walk(a.WorkflowDefinition.Blocks)
}
