package blocks

// Scripts in an agent run: the blocks a model drives replay their
// recorded steps (package script) instead of asking the model, and record
// what the model did for the next runs.
//
// A navigation, task, task_v2 or login block (the agent loop) with a
// recording in mode replay replays it (agent.Replay); without one, or with
// a recording in mode model, the model drives it and, when the run
// records, what it did becomes the block's recording. An extraction block,
// and the extraction at the end of a task block, read the recorded places
// on the page (agent.ReplayExtract), and the model extracts when they are
// gone; a recorded extraction keeps where each value was read
// (agent.RecordExtract). Validation blocks, action blocks without a
// selector and file_download blocks without a url are the model's every
// time, and recorded as such.

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/abctl/abctl/agentfile/script"
	"github.com/abctl/abctl/localrun/engine/agent"
	"github.com/abctl/abctl/localrun/engine/steplog"
)

// Scripts is how a run uses scripts. Set it in Run; nil runs every block
// as the definition says, recording nothing.
type Scripts struct {
	// Replay is the script to replay; nil when there is none yet (the run
	// then records one, if Record).
	Replay *script.Script
	// Record records what the model-driven blocks did, in Recorded.
	Record bool
	// AIFallback lets the model take over a step that cannot be replayed
	// (and a block the script lacks); without it such a step fails the
	// run.
	AIFallback bool
	// Agent and CacheKey go into the recorded script.
	Agent, CacheKey string

	recorded *script.Script
	fallback bool
	replayed int
	// labels are the labels of the run's blocks (New sets them): a
	// recording keeps no block the agent no longer has.
	labels []string
}

// Recorded is the script this run recorded: the blocks it replayed, as
// they ran, those the model drove, and those of the script replayed that
// the run did not reach (another branch), as long as the agent still has
// them; nil when it recorded nothing.
func (s *Scripts) Recorded() *script.Script {
	if s == nil || s.recorded == nil {
		return nil
	}
	s.recorded.Blocks = slices.DeleteFunc(s.recorded.Blocks, func(b script.Block) bool { return !slices.Contains(s.labels, b.Label) })
	if len(s.recorded.Blocks) == 0 {
		return nil
	}
	return s.recorded
}

// FallbackTriggered reports whether the model had to take over something
// the script should have replayed.
func (s *Scripts) FallbackTriggered() bool { return s != nil && s.fallback }

// Replayed counts the blocks that replayed (wholly or until the model took
// over).
func (s *Scripts) Replayed() int {
	if s == nil {
		return 0
	}
	return s.replayed
}

// keep records b in the recorded script.
func (s *Scripts) keep(b script.Block) {
	if s == nil || !s.Record {
		return
	}
	if s.recorded == nil {
		// The blocks this run does not reach (another branch) keep their
		// recordings.
		s.recorded = &script.Script{Format: script.Format, Agent: s.Agent, CacheKey: s.CacheKey}
		if s.Replay != nil {
			s.recorded.Blocks = slices.Clone(s.Replay.Blocks)
		}
	}
	s.recorded.Set(b)
}

// replays reports whether the script replays the block of the label.
func (s *Scripts) replays(label string) bool {
	b := s.recording(label)
	return b != nil && b.Mode == script.ModeReplay
}

// recording is a block's recording in the script replayed, nil for none.
func (s *Scripts) recording(label string) *script.Block {
	if s == nil || s.Replay == nil {
		return nil
	}
	return s.Replay.Block(label)
}

// recordingParams are the values a recording writes as references: the
// run's parameters and the loop variables in scope, as text.
func (sc *scope) recordingParams() map[string]string {
	out := map[string]string{}
	for k, v := range sc.in.params {
		if t := script.ParamText(jsonValue(v)); t != "" {
			out[k] = t
		}
	}
	for s := sc; s != nil; s = s.parent {
		for k, v := range s.vals {
			if _, ok := out[k]; !ok {
				if t := script.ParamText(jsonValue(v)); t != "" {
					out[k] = t
				}
			}
		}
	}
	return out
}

// unscripted says whether the model may drive a block the script to
// replay has no recording of: it may when there is no script (the run
// records one) or ai_fallback is on, which counts as a fallback.
func (s *Scripts) unscripted(label string) error {
	if s == nil || s.Replay == nil || s.Replay.Block(label) != nil {
		return nil
	}
	if !s.AIFallback {
		return fmt.Errorf("the script has no recording of block %q, and ai_fallback is off", label)
	}
	s.fallback = true
	return nil
}

// keepModel records a block that calls the model every time.
func (s *Scripts) keepModel(label, reason string) {
	s.keep(script.Block{Label: label, Mode: script.ModeModel, Reason: reason})
}

// pursue reaches a loop block's goal: by its recording when the script
// has one to replay, else with the model; recording what happened when
// the run records.
func (in *Interpreter) pursue(ctx context.Context, s *blockSpec, sc *scope) (*agent.Outcome, error) {
	sx := in.scripts
	if sx == nil {
		return in.agent.Pursue(ctx, s.g)
	}
	label := s.g.Label
	if sx.Record {
		s.g.Record = &agent.Recording{Params: sc.recordingParams()}
	}
	rec := sx.recording(label)
	if rec == nil || rec.Mode != script.ModeReplay {
		if err := sx.unscripted(label); err != nil {
			return nil, err
		}
		o, err := in.agent.Pursue(ctx, s.g)
		if err == nil && o != nil {
			in.recordOutcome(ctx, s, o, rec)
		}
		return o, err
	}
	sx.replayed++
	o, err := in.agent.Replay(ctx, s.g, agent.Replay{Block: rec, Render: sc.render, Fallback: in.canFallBack(), NoFallback: in.noFallback()})
	if o != nil && o.FallbackTriggered {
		sx.fallback = true
	}
	if err != nil || o == nil {
		return o, err
	}
	if !o.FallbackTriggered && rec.Extract != nil {
		data, fell, err := in.replayExtract(ctx, s, rec.Extract, sc)
		if err != nil {
			return nil, err
		}
		o.Data = data
		if !fell {
			sx.keep(*rec)
			return o, nil
		}
	}
	if !o.FallbackTriggered && rec.Extract == nil && (s.g.Extraction != "" || s.g.Schema != nil) {
		// Recorded without its data: the model extracts.
		if o.Data, err = in.modelExtract(ctx, s); err != nil {
			return nil, err
		}
	}
	in.recordOutcome(ctx, s, o, nil)
	return o, nil
}

// recordOutcome records a loop block from its outcome: the steps that
// reached the goal and where its data was read; rec is the block's
// recording in the script replayed (a model block stays one).
func (in *Interpreter) recordOutcome(ctx context.Context, s *blockSpec, o *agent.Outcome, rec *script.Block) {
	sx := in.scripts
	if !sx.Record {
		return
	}
	label := s.g.Label
	switch {
	case rec != nil && rec.Mode == script.ModeModel:
		sx.keep(*rec)
	case o.Unreplayable != "":
		sx.keepModel(label, o.Unreplayable)
	case o.Data != nil:
		ext, reason := in.agent.RecordExtract(ctx, o.Data, s.g.Schema, s.g.Record)
		if ext == nil {
			sx.keepModel(label, reason)
			return
		}
		sx.keep(script.Block{Label: label, Mode: script.ModeReplay, Steps: o.Steps, Extract: ext})
	default:
		sx.keep(script.Block{Label: label, Mode: script.ModeReplay, Steps: o.Steps})
	}
}

// scriptedExtract is an extraction block's data: read from the places
// its recording keeps, else extracted by the model; recorded when the run
// records.
func (in *Interpreter) scriptedExtract(ctx context.Context, s *blockSpec, sc *scope) (data json.RawMessage, err error) {
	sx := in.scripts
	label := s.g.Label
	rec := sx.recording(label)
	if rec != nil && rec.Mode == script.ModeReplay && rec.Extract != nil {
		sx.replayed++
		var fell bool
		data, fell, err = in.replayExtract(ctx, s, rec.Extract, sc)
		if err != nil {
			return nil, err
		}
		if !fell {
			sx.keep(*rec)
			return data, nil
		}
	} else {
		if err := sx.unscripted(label); err != nil {
			return nil, err
		}
		if data, err = in.modelExtract(ctx, s); err != nil {
			return nil, err
		}
	}
	if sx.Record {
		if rec != nil && rec.Mode == script.ModeModel {
			sx.keep(*rec)
		} else if ext, reason := in.agent.RecordExtract(ctx, data, s.g.Schema, &agent.Recording{Params: sc.recordingParams()}); ext != nil {
			sx.keep(script.Block{Label: label, Mode: script.ModeReplay, Extract: ext})
		} else {
			sx.keepModel(label, reason)
		}
	}
	return data, nil
}

// canFallBack reports whether the model may take over what a replay
// cannot do: ai_fallback is on and there is a model.
func (in *Interpreter) canFallBack() bool {
	return in.scripts.AIFallback && in.env.Models.Configured()
}

// noFallback says why the model may not take over ("" when it may).
func (in *Interpreter) noFallback() string {
	switch {
	case !in.scripts.AIFallback:
		return "ai_fallback is off"
	case !in.env.Models.Configured():
		return "no language model is configured"
	}
	return ""
}

// replayExtract reads a recorded extraction; when the places are gone,
// the model extracts (ai_fallback; fell is then set) and the block is
// recorded again.
func (in *Interpreter) replayExtract(ctx context.Context, s *blockSpec, ext *script.Extract, sc *scope) (data json.RawMessage, fell bool, err error) {
	rec, err := in.steps.Start(s.g.Label, steplog.Action{Type: "extract", Text: "from the places the script recorded"})
	if err != nil {
		return nil, false, err
	}
	data, rerr := in.agent.ReplayExtract(ctx, ext, s.g.Schema, sc.render)
	if rerr == nil {
		in.steps.End(rec, in.sess.CurrentURL(ctx), "read without the model", nil)
		return data, false, nil
	}
	in.steps.End(rec, in.sess.CurrentURL(ctx), "", rerr)
	if !in.canFallBack() {
		return nil, false, fmt.Errorf("the recorded extraction could not be replayed: %w; the model did not take over: %s", rerr, in.noFallback())
	}
	in.scripts.fallback = true
	if data, err = in.modelExtract(ctx, s); err != nil {
		return nil, true, fmt.Errorf("the recorded extraction could not be replayed (%v), and the model that took over failed: %w", rerr, err)
	}
	return data, true, nil
}
