package executor

// ActionErrorKind says why an action could not be run as asked, in the
// engine's terms; the API maps each kind to its HTTP status (package
// daemon/api), so that the engine knows nothing of HTTP.
type ActionErrorKind int

// The kinds of action errors. The zero value is no kind: an ActionError
// without one is answered as ActionFailed.
const (
	// ActionInvalid: the request cannot be run as given, whatever the page
	// holds: an unknown action type, a missing field, a model the engine
	// does not have, a url or file_url that cannot be loaded, a browser
	// session that has ended, a browser_address that may not be used.
	ActionInvalid ActionErrorKind = iota + 1
	// ActionConflict: the run's browser is taken: the workflow run already
	// has a session, or the kept browser session cannot be used by it.
	ActionConflict
	// ActionUnavailable: nothing can serve the action now: no browser can
	// be started or reached, or the model does not answer.
	ActionUnavailable
	// ActionFailed: the action was tried and could not be done on the page:
	// no element matches, the model found none, the browser closed.
	ActionFailed
)

// ActionError is the error of Actions.RunAction for an action that cannot
// be done as asked: the request's fault or the page's, never the daemon's.
// Msg is the detail the caller is shown, as it reads.
type ActionError struct {
	Kind ActionErrorKind
	Msg  string
}

func (e *ActionError) Error() string { return e.Msg }
