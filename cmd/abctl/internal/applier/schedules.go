package applier

import (
	"bytes"
	"context"
	"fmt"

	"github.com/abctl/abctl/agentfile"
	"github.com/abctl/abctl/client"
)

// Schedules in agent files. A file with a schedules key owns its agent's
// schedules: applying it creates the listed ones that are missing,
// updates those that differ (matched by name) and deletes the agent's
// others. A file without the key leaves them alone.

// scheduleComparison is the file's schedules against the agent's; nil
// when the file has no schedules key.
type scheduleComparison struct {
	want   []agentfile.Schedule
	have   []agentfile.Schedule
	remote []*client.Schedule // the agent's, as listed
}

// compareSchedules lists the schedules of agent id when fa has a
// schedules key.
func (a *Applier) compareSchedules(ctx context.Context, fa *agentfile.Agent, id string) (*scheduleComparison, error) {
	if !fa.HasSchedules {
		return nil, nil
	}
	list, err := a.c.Schedules.List(ctx, id)
	if err != nil {
		return nil, fmt.Errorf("list the agent's schedules: %w", err)
	}
	sc := &scheduleComparison{want: fa.Schedules, remote: list, have: make([]agentfile.Schedule, 0, len(list))}
	for _, s := range list {
		sc.have = append(sc.have, fileSchedule(s))
	}
	return sc, nil
}

// fileSchedule is a schedule of the service as a file would write it.
func fileSchedule(s *client.Schedule) agentfile.Schedule {
	fs := agentfile.Schedule{Cron: s.CronExpression, Timezone: s.Timezone, Enabled: s.Enabled, Parameters: s.Parameters}
	if s.Name != nil {
		fs.Name = *s.Name
	}
	if s.Description != nil {
		fs.Description = *s.Description
	}
	if len(fs.Parameters) == 0 {
		fs.Parameters = nil
	}
	return fs
}

func (sc *scheduleComparison) same() bool {
	return sc == nil || bytes.Equal(sc.wantText(), sc.haveText())
}

func (sc *scheduleComparison) wantText() []byte {
	if sc == nil {
		return nil
	}
	return agentfile.ScheduleText(sc.want)
}

func (sc *scheduleComparison) haveText() []byte {
	if sc == nil {
		return nil
	}
	return agentfile.ScheduleText(sc.have)
}

func scheduleRequest(s agentfile.Schedule) *client.ScheduleRequest {
	req := &client.ScheduleRequest{CronExpression: s.Cron, Timezone: s.Timezone, Enabled: &s.Enabled, Parameters: s.Parameters}
	if s.Name != "" {
		req.Name = &s.Name
	}
	if s.Description != "" {
		req.Description = &s.Description
	}
	return req
}

// applySchedules makes agent id's schedules the file's: by name, the
// missing ones created, those that differ updated, the others deleted.
func (a *Applier) applySchedules(ctx context.Context, id string, sc *scheduleComparison) error {
	if sc == nil || sc.same() {
		return nil
	}
	byName := map[string]*client.Schedule{}
	var others []*client.Schedule
	for _, s := range sc.remote {
		if s.Name != nil && *s.Name != "" && byName[*s.Name] == nil {
			byName[*s.Name] = s
		} else {
			others = append(others, s)
		}
	}
	for _, want := range sc.want {
		cur := byName[want.Name]
		delete(byName, want.Name)
		switch {
		case cur == nil:
			if _, err := a.c.Schedules.Create(ctx, id, scheduleRequest(want)); err != nil {
				return fmt.Errorf("create schedule %s: %w", want.Name, err)
			}
		case !bytes.Equal(agentfile.ScheduleText([]agentfile.Schedule{fileSchedule(cur)}), agentfile.ScheduleText([]agentfile.Schedule{want})):
			if _, err := a.c.Schedules.Update(ctx, id, cur.WorkflowScheduleID, scheduleRequest(want)); err != nil {
				return fmt.Errorf("update schedule %s: %w", want.Name, err)
			}
		}
	}
	for _, s := range byName {
		others = append(others, s)
	}
	for _, s := range others {
		if err := a.c.Schedules.Delete(ctx, id, s.WorkflowScheduleID); err != nil {
			return fmt.Errorf("delete schedule %s, which the file does not list: %w", s.WorkflowScheduleID, err)
		}
	}
	return nil
}
