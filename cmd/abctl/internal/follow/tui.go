package follow

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"path"
	"strings"
	"sync"
	"time"

	"charm.land/bubbles/v2/spinner"
	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/term"

	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/cmd/abctl/internal/iostreams"
)

// followTUI runs the live view on stderr.
func followTUI(ctx context.Context, o Options, events <-chan event, timeout <-chan time.Time) (*Result, error) {
	out := newFrameWriter(o.IO.ErrOut)
	m := newModel(ctx, o, events, timeout)
	m.drawn = out.drawn
	p := tea.NewProgram(m,
		tea.WithInput(o.IO.In),
		tea.WithOutput(out.output()),
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
	w := o.IO.ErrOut
	// The lines the view had no time to print above itself.
	for _, l := range fm.queued {
		fmt.Fprintln(w, l)
	}
	if fm.err != nil {
		return fm.res, fmt.Errorf("follow run %s: %w", o.RunID, fm.err)
	}
	if fm.res.Left {
		if fm.res.TimedOut {
			fmt.Fprintf(w, "Stopped following after %s (--timeout). ", o.Timeout)
		}
		fmt.Fprintln(w, resumeHint(o.RunID))
		return fm.res, nil
	}
	if r := fm.res.Run; r != nil && r.IsTerminal() {
		fm.printEnd(w, r)
	}
	return fm.res, nil
}

// printEnd writes how the run ended, once the view is gone: its last step
// when the view has not shown it (its details arrive after it was
// counted), the run's id and end, and its files by name (links to the
// whole URLs where colour is on), with the command that prints the whole
// links: a signed URL is longer than most terminals are wide, and wrapped
// over two lines it is neither readable nor always openable.
func (m *model) printEnd(w io.Writer, r *client.Run) {
	if !m.noSteps {
		shown := 0
		if m.latest != nil {
			shown = m.latest.Number
		}
		if step, _ := readLatest(m.ctx, m.o); step != nil && step.Number > shown {
			fmt.Fprintln(w, m.stepLine(step))
		}
	}
	fmt.Fprintf(w, "%s Run %s %s\n", m.statusMark(r.Status), m.o.RunID, statusText(r, m.o.Now()))
	for _, l := range endLinesWith(r, m.fileLink) {
		fmt.Fprintln(w, "  "+l)
	}
	if len(r.ScreenshotURLs) > 0 || r.GetRecordingURL() != "" {
		fmt.Fprintln(w, "  "+m.cs.Gray("whole links: abctl runs artifacts "+m.o.RunID))
	}
}

// fileLink names the file of a link, linked to the whole URL where colour
// is on (OSC 8).
func (m *model) fileLink(u string) string { return m.link(u, fileName(u)) }

// firstFrameWait bounds how long printing above the view waits for its
// first frame (frameWriter), should the frame never be seen.
const firstFrameWait = time.Second

// frameWriter passes the live view's output on and tells (drawn) when the
// first frame has gone out: the first write that holds a line break (the
// view is at least two lines; the renderer's queries before it hold none).
//
// Lines printed above the view (tea.Println) must wait for that frame:
// bubbletea's renderer places them relative to the frame it drew last,
// and before the first one it takes the whole terminal's height for it,
// which moves them to the top of the screen and lets the view overwrite
// what was printed before it started ("agent/NAME created", "Run ID
// started").
type frameWriter struct {
	w     io.Writer
	once  sync.Once
	drawn chan struct{}
}

func newFrameWriter(w io.Writer) *frameWriter {
	return &frameWriter{w: w, drawn: make(chan struct{})}
}

func (f *frameWriter) Write(p []byte) (int, error) {
	n, err := f.w.Write(p)
	if bytes.IndexByte(p, '\n') >= 0 {
		f.once.Do(func() { close(f.drawn) })
	}
	return n, err
}

// output is what the program writes to: f, and the terminal's file
// behind it when there is one, which bubbletea measures and follows.
func (f *frameWriter) output() io.Writer {
	if file, ok := f.w.(term.File); ok {
		return frameFile{f, file}
	}
	return f
}

// frameFile is a frameWriter over a terminal's file.
type frameFile struct {
	*frameWriter
	file term.File
}

func (f frameFile) Read(p []byte) (int, error) { return f.file.Read(p) }
func (f frameFile) Fd() uintptr                { return f.file.Fd() }
func (f frameFile) Close() error               { return nil } // stderr is not the view's to close

// The live view's messages.
type (
	eventMsg       event
	eventsEndMsg   struct{}
	drawnMsg       struct{} // the first frame is on the terminal
	timeoutMsg     struct{}
	interruptMsg   struct{}
	cancelDoneMsg  struct{ err error }
	clockMsg       time.Time
	followStateKey int
	// latestMsg is a read of the run's steps (readLatest).
	latestMsg struct {
		step      *client.RunStep
		supported bool
	}
)

// The live view's states.
const (
	watching   followStateKey = iota
	asking                    // Ctrl-C was pressed: cancel or leave?
	canceling                 // the cancel request was sent; following to the end
	confirming                // a or r was pressed on a paused run: send that answer? (human.go)
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
	// latest is the newest of the run's steps read so far; nil
	// before one is read or when the service has no steps route (noSteps).
	latest  *client.RunStep
	noSteps bool
	// drawn is closed once the first frame is on the terminal (nil: at
	// once); until then the lines to print above the view are queued.
	drawn  <-chan struct{}
	ready  bool
	queued []string
	// question is what the paused run asks, once read (human.go);
	// approving is the answer a confirmation is asked for.
	question  *client.HumanInteraction
	approving bool
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
	return tea.Batch(m.spinner.Tick, m.nextEvent(), m.waitTimeout(), m.waitInterrupt(), clock(), m.waitDrawn())
}

// waitDrawn tells the model when the first frame is on the terminal.
func (m *model) waitDrawn() tea.Cmd {
	drawn := m.drawn
	return func() tea.Msg {
		if drawn != nil {
			t := time.NewTimer(firstFrameWait)
			defer t.Stop()
			select {
			case <-drawn:
			case <-t.C:
			}
		}
		return drawnMsg{}
	}
}

// println prints lines above the view, or queues them until its first
// frame is drawn (frameWriter).
func (m *model) println(lines ...string) tea.Cmd {
	if !m.ready {
		m.queued = append(m.queued, lines...)
		return nil
	}
	return tea.Println(strings.Join(lines, "\n"))
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
		if msg.Run.IsTerminal() {
			// followTUI prints the end once the view is gone.
			return m.quit()
		}
		var print tea.Cmd
		if msg.StatusChanged() || msg.StepsChanged() || msg.NewScreenshot() {
			print = m.println(m.statusMark(msg.Run.Status) + " " + changeLineWith(msg.RunEvent, m.o.Now(), m.fileLink))
		}
		var latest, question tea.Cmd
		if !m.noSteps && wantsLatest(msg.RunEvent) {
			latest = m.readLatest()
		}
		if paused(msg.RunEvent) {
			question = m.readQuestion()
		} else if msg.Run.Status != client.RunStatusPaused && m.state == confirming {
			m.state = watching // answered elsewhere, or the wait ended
		}
		return m, tea.Batch(print, latest, question, m.nextEvent())
	case questionMsg:
		return m, m.showQuestion(msg.q)
	case answerDoneMsg:
		m.notice = fmt.Sprintf("answered %q", m.descriptor(msg.approve))
		if msg.err != nil {
			m.notice = "could not answer: " + msg.err.Error()
		}
		return m, nil
	case drawnMsg:
		m.ready = true
		if len(m.queued) == 0 || m.state == done {
			return m, nil // followTUI prints what is queued at the end
		}
		lines := m.queued
		m.queued = nil
		return m, m.println(lines...)
	case latestMsg:
		if m.state == done {
			return m, nil // the run ended: printEnd shows its last step
		}
		if !msg.supported {
			m.noSteps = true
			return m, nil
		}
		if msg.step == nil || (m.latest != nil && msg.step.Number <= m.latest.Number) {
			return m, nil
		}
		m.latest = msg.step
		return m, m.println(m.stepLine(msg.step))
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

// readLatest reads the run's steps in the background (latestMsg).
func (m *model) readLatest() tea.Cmd {
	ctx, o := m.ctx, m.o
	return func() tea.Msg {
		step, supported := readLatest(ctx, o)
		return latestMsg{step: step, supported: supported}
	}
}

// stepLine is a step as printed above the live view.
func (m *model) stepLine(s *client.RunStep) string {
	return "  " + m.cs.Gray(fmt.Sprintf("step %d: %s", s.Number, latestText(s)))
}

func (m *model) key(k tea.KeyPressMsg) (tea.Model, tea.Cmd) {
	switch m.state {
	case watching, canceling:
		switch k.String() {
		case "ctrl+c":
			return m.interrupt()
		case "a", "r":
			if m.state == watching && m.answerable() {
				m.state, m.approving = confirming, k.String() == "a"
			}
		}
	case confirming:
		switch strings.ToLower(k.String()) {
		case "y":
			m.state, m.notice = watching, "answering..."
			return m, m.answer(m.approving)
		case "n", "esc":
			m.state = watching
		case "ctrl+c":
			m.state = watching
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

// View is the pane under the printed lines: the run's id and status, its
// latest action and its newest screenshot, each cut to the terminal's
// width. The screenshot is named by its file, a link to the whole URL
// where colour is on (OSC 8; terminals without links show the name), as
// in the lines printed above the pane and after the run; 'abctl runs
// artifacts' prints the whole URLs.
func (m *model) View() tea.View {
	if m.state == done {
		return tea.NewView("")
	}
	var lines []string
	line := func(s string) {
		lines = append(lines, ansi.Truncate(s, m.width, "…"))
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
		line("  screenshot: " + m.link(m.run.ScreenshotURLs[0], fileName(m.run.ScreenshotURLs[0])))
	}
	if m.notice != "" {
		line("  " + m.cs.Yellow(m.notice))
	}
	switch {
	case m.state == asking:
		line(m.cs.Bold("Cancel the run?") + "  y: cancel it · n: leave it running · esc: keep watching")
	case m.state == confirming:
		line(m.cs.Bold(fmt.Sprintf("Answer %q?", m.descriptor(m.approving))) + "  y: send it · n: not now")
	case m.state == watching && m.answerable():
		line(m.cs.Gray(fmt.Sprintf("  a: %s · r: %s · ctrl+c: cancel or leave the run", m.descriptor(true), m.descriptor(false))))
	default:
		line(m.cs.Gray("  ctrl+c: cancel or leave the run"))
	}
	// No line break after the last line: the renderer would count an
	// empty line below it that it never draws, and at the bottom of the
	// screen the lines printed above the view would then land a line too
	// high, over what was printed before it.
	return tea.NewView(strings.Join(lines, "\n"))
}

// link is text in cyan, and a link to url (OSC 8) where colour is on.
func (m *model) link(url, text string) string {
	if !m.cs.Enabled() {
		return text
	}
	return ansi.SetHyperlink(url) + m.cs.Cyan(text) + ansi.ResetHyperlink()
}

// fileName is the last element of a URL's path ("screenshot-0004.jpg"), or
// the URL when it has none.
func fileName(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || path.Base(u.Path) == "/" || path.Base(u.Path) == "." {
		return raw
	}
	return path.Base(u.Path)
}
