package follow

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"charm.land/bubbles/v2/spinner"
	tea "charm.land/bubbletea/v2"

	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/cmd/abctl/internal/iostreams"
)

// followTUI runs the live view on stderr.
func followTUI(ctx context.Context, o Options, events <-chan event, timeout <-chan time.Time) (*Result, error) {
	m := newModel(ctx, o, events, timeout)
	p := tea.NewProgram(m,
		tea.WithInput(o.IO.In),
		tea.WithOutput(o.IO.ErrOut),
		// SIGINT reaches the command's context, which the model watches:
		// the same question as a Ctrl-C key.
		tea.WithoutSignalHandler(),
		// The size when the output is not a terminal abctl can measure (a
		// real terminal's own size takes precedence).
		tea.WithWindowSize(o.IO.Width(), 24),
	)
	final, err := p.Run()
	if err != nil && !errors.Is(err, tea.ErrProgramKilled) {
		return nil, fmt.Errorf("live view: %w", err)
	}
	fm := final.(*model)
	if fm.err != nil {
		return fm.res, fmt.Errorf("follow run %s: %w", o.RunID, fm.err)
	}
	if fm.res.Left {
		if fm.res.TimedOut {
			fmt.Fprintf(o.IO.ErrOut, "Stopped following after %s (--timeout). ", o.Timeout)
		}
		fmt.Fprintln(o.IO.ErrOut, resumeHint(o.RunID))
	}
	return fm.res, nil
}

// The live view's messages.
type (
	eventMsg       event
	eventsEndMsg   struct{}
	timeoutMsg     struct{}
	interruptMsg   struct{}
	cancelDoneMsg  struct{ err error }
	clockMsg       time.Time
	followStateKey int
	// latestMsg is a read of the run's timeline (readLatest).
	latestMsg struct {
		step      *client.TimelineStep
		supported bool
	}
)

// The live view's states.
const (
	watching  followStateKey = iota
	asking                   // Ctrl-C was pressed: cancel or leave?
	canceling                // the cancel request was sent; following to the end
	done
)

type model struct {
	ctx     context.Context
	o       Options
	cs      iostreams.ColorScheme
	events  <-chan event
	timeout <-chan time.Time

	state   followStateKey
	spinner spinner.Model
	run     *client.Run
	res     *Result
	err     error
	notice  string // a one-line message under the status (a failed cancel)
	width   int
	// latest is the newest step of the run's timeline read so far; nil
	// before one is read or when the service has no timeline (noTimeline).
	latest     *client.TimelineStep
	noTimeline bool
}

func newModel(ctx context.Context, o Options, events <-chan event, timeout <-chan time.Time) *model {
	return &model{
		ctx: ctx, o: o, cs: o.IO.ColorSchemeErr(), events: events, timeout: timeout,
		spinner: spinner.New(spinner.WithSpinner(spinner.Dot)),
		res:     &Result{},
		width:   o.IO.Width(),
	}
}

func (m *model) Init() tea.Cmd {
	return tea.Batch(m.spinner.Tick, m.nextEvent(), m.waitTimeout(), m.waitInterrupt(), clock())
}

func (m *model) nextEvent() tea.Cmd {
	return func() tea.Msg {
		ev, ok := <-m.events
		if !ok {
			return eventsEndMsg{}
		}
		return eventMsg(ev)
	}
}

func (m *model) waitTimeout() tea.Cmd {
	if m.timeout == nil {
		return nil
	}
	return func() tea.Msg { <-m.timeout; return timeoutMsg{} }
}

func (m *model) waitInterrupt() tea.Cmd {
	return func() tea.Msg { <-m.ctx.Done(); return interruptMsg{} }
}

func clock() tea.Cmd {
	return tea.Tick(time.Second, func(t time.Time) tea.Msg { return clockMsg(t) })
}

func (m *model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case eventMsg:
		if msg.err != nil {
			m.err = msg.err
			return m.quit()
		}
		m.run = msg.Run
		m.res.Run = msg.Run
		var print tea.Cmd
		if msg.StatusChanged() || msg.StepsChanged() || msg.Run.IsTerminal() {
			print = tea.Println(m.statusMark(msg.Run.Status) + " " + changeLine(msg.RunEvent, m.o.Now()))
		}
		if msg.Run.IsTerminal() {
			cmds := []tea.Cmd{print}
			if !m.noTimeline {
				cmds = append(cmds, m.printLastStep())
			}
			for _, l := range endLines(msg.Run) {
				cmds = append(cmds, tea.Println("  "+l))
			}
			m.state = done
			return m, tea.Sequence(append(cmds, tea.Quit)...)
		}
		var latest tea.Cmd
		if !m.noTimeline && wantsLatest(msg.RunEvent) {
			latest = m.readLatest()
		}
		return m, tea.Batch(print, latest, m.nextEvent())
	case latestMsg:
		if m.state == done {
			return m, nil // the run ended: printLastStep shows its last step
		}
		if !msg.supported {
			m.noTimeline = true
			return m, nil
		}
		if msg.step == nil || (m.latest != nil && msg.step.Number <= m.latest.Number) {
			return m, nil
		}
		m.latest = msg.step
		return m, tea.Println(m.stepLine(msg.step))
	case eventsEndMsg:
		return m.quit()
	case timeoutMsg:
		m.res.Left, m.res.TimedOut = true, true
		return m.quit()
	case interruptMsg:
		return m.interrupt()
	case tea.KeyPressMsg:
		return m.key(msg)
	case cancelDoneMsg:
		if msg.err != nil {
			m.state = watching
			m.notice = "could not cancel: " + msg.err.Error()
			return m, nil
		}
		m.res.Canceled = true
		m.notice = "cancel requested; waiting for the run to stop"
		return m, nil
	case clockMsg:
		return m, clock()
	case tea.WindowSizeMsg:
		m.width = msg.Width
		return m, nil
	case spinner.TickMsg:
		var cmd tea.Cmd
		m.spinner, cmd = m.spinner.Update(msg)
		return m, cmd
	}
	return m, nil
}

// readLatest reads the run's timeline in the background (latestMsg).
func (m *model) readLatest() tea.Cmd {
	ctx, o := m.ctx, m.o
	return func() tea.Msg {
		step, supported := readLatest(ctx, o)
		return latestMsg{step: step, supported: supported}
	}
}

// printLastStep reads the timeline once the run has ended and prints its
// newest step when it is one the view has not printed yet (the last step's
// details arrive after it was counted).
func (m *model) printLastStep() tea.Cmd {
	ctx, o, shown := m.ctx, m.o, 0
	if m.latest != nil {
		shown = m.latest.Number
	}
	line := m.stepLine
	return func() tea.Msg {
		step, _ := readLatest(ctx, o)
		if step == nil || step.Number <= shown {
			return nil
		}
		return tea.Println(line(step))()
	}
}

// stepLine is a step as printed above the live view.
func (m *model) stepLine(s *client.TimelineStep) string {
	return "  " + m.cs.Gray(fmt.Sprintf("step %d: %s", s.Number, latestText(s)))
}

func (m *model) key(k tea.KeyPressMsg) (tea.Model, tea.Cmd) {
	switch m.state {
	case watching, canceling:
		if k.String() == "ctrl+c" {
			return m.interrupt()
		}
	case asking:
		switch strings.ToLower(k.String()) {
		case "y", "c":
			m.state = canceling
			m.notice = "canceling..."
			return m, func() tea.Msg { return cancelDoneMsg{err: cancelRun(m.ctx, m.o)} }
		case "n", "l", "ctrl+c":
			m.res.Left = true
			return m.quit()
		case "esc":
			m.state = watching
			return m, nil
		}
	}
	return m, nil
}

// interrupt asks what to do with the run; a second interrupt while asking
// leaves it running.
func (m *model) interrupt() (tea.Model, tea.Cmd) {
	if m.state == asking {
		m.res.Left = true
		return m.quit()
	}
	m.state = asking
	return m, nil
}

func (m *model) quit() (tea.Model, tea.Cmd) {
	m.state = done
	return m, tea.Quit
}

func (m *model) statusMark(s client.RunStatus) string {
	switch s {
	case client.RunStatusCompleted:
		return m.cs.Green("✓")
	case client.RunStatusFailed, client.RunStatusTerminated, client.RunStatusCanceled:
		return m.cs.Red("✗")
	case client.RunStatusTimedOut:
		return m.cs.Yellow("✗")
	}
	return m.cs.Gray("•")
}

func (m *model) View() tea.View {
	if m.state == done {
		return tea.NewView("")
	}
	var b strings.Builder
	line := func(s string) {
		b.WriteString(truncateLine(s, m.width))
		b.WriteByte('\n')
	}
	status := "waiting for the first answer"
	if m.run != nil {
		status = fmt.Sprintf("%s · %s · %s", m.cs.Bold(string(m.run.Status)), stepsText(m.run.GetStepCount()),
			formatDuration(elapsed(m.run, m.o.Now())))
	}
	line(fmt.Sprintf("%s %s %s", m.spinner.View(), m.o.RunID, status))
	if m.latest != nil {
		line("  latest: " + latestText(m.latest))
	}
	if m.run != nil && len(m.run.ScreenshotURLs) > 0 {
		line("  screenshot " + m.cs.Cyan(m.run.ScreenshotURLs[0]))
	}
	if m.notice != "" {
		line("  " + m.cs.Yellow(m.notice))
	}
	switch m.state {
	case asking:
		line(m.cs.Bold("Cancel the run?") + "  y: cancel it · n: leave it running · esc: keep watching")
	default:
		line(m.cs.Gray("  ctrl+c: cancel or leave the run"))
	}
	return tea.NewView(b.String())
}

// truncateLine cuts s to width visible columns. Colour codes are not
// counted, so a coloured line may be cut a little early; never late.
func truncateLine(s string, width int) string {
	if width <= 0 {
		return s
	}
	visible := 0
	inEscape := false
	for i, r := range s {
		switch {
		case r == '\x1b':
			inEscape = true
		case inEscape:
			if r == 'm' {
				inEscape = false
			}
		default:
			visible++
			if visible > width {
				if strings.Contains(s[:i], "\x1b[") {
					return s[:i] + "\x1b[0m" // end a colour cut midway
				}
				return s[:i]
			}
		}
	}
	return s
}
