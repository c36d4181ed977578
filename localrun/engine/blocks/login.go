package blocks

// The login block without a model: sign-in forms are regular enough to be
// filled by their shape. Each page of the sign-in is read and answered in
// turn, up to maxLoginPages:
//
//   - a password field: the username field before it (if the page has one)
//     gets the credential's username, the password field its password, and
//     Enter submits;
//   - a one-time code field (autocomplete="one-time-code", or a field whose
//     name, id, label or placeholder speaks of a code, OTP, 2FA or
//     verification) gets the credential's one-time code, and Enter submits;
//   - a username field alone (sign-ins that ask for the password on a
//     second page) gets the username, and Enter submits.
//
// The sign-in is done when a page has none of these. A form that comes back
// after its password or code was sent, or a page without a form that shows
// a sign-in error (an alert, or a title such as "Sign-in failed"), fails
// the block with what the page says (signInRefused): the credential was
// refused, and the model, when one is configured, is not asked to try it
// again. Secrets are typed
// as placeholders and revealed by the session at the last moment
// (engine/secrets); nothing here sees them.

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/localrun/engine/agent"
	"github.com/abctl/abctl/localrun/engine/internal/text"
	"github.com/abctl/abctl/localrun/engine/page"
	"github.com/abctl/abctl/localrun/engine/secrets"
	"github.com/abctl/abctl/localrun/engine/steplog"
)

// maxLoginPages bounds the pages of one sign-in.
const maxLoginPages = 5

var codeWords = regexp.MustCompile(`(?i)\b(otp|one[- ]?time|2fa|mfa|totp|verification|verify|security code|passcode|auth(entication)? code|code)\b`)

// login runs a login block: a goal of its own goes to the model; otherwise
// the sign-in forms are filled by their shape, and, when that fails and a
// model is configured, the model takes over with the default goal.
func (in browserBlocks) login(ctx context.Context, b *client.LoginBlock, sc *scope) (any, bool, error) {
	hasModel := in.models.Configured()
	if hasModel && strings.TrimSpace(b.NavigationGoal) != "" {
		return in.model.modelBlock(ctx, b, sc)
	}
	out, touched, err := in.loginForm(ctx, b, sc)
	var refusal *signInRefused
	if err == nil || !hasModel || ctx.Err() != nil || errors.As(err, &refusal) {
		return out, touched, err
	}
	in.logger.Info("the sign-in form could not be filled by its shape; the model takes over", "block", b.Label, "error", err)
	out, touched, merr := in.model.modelBlock(ctx, b, sc)
	if merr != nil {
		return out, touched, fmt.Errorf("%w (before the model took over, filling the sign-in form by its shape failed: %v)", merr, err)
	}
	return out, touched, nil
}

// loginForm signs in with the credential the block names, by the shape of
// the sign-in forms.
func (in browserBlocks) loginForm(ctx context.Context, b *client.LoginBlock, sc *scope) (any, bool, error) {
	key, err := in.loginCredential(b)
	if err != nil {
		return nil, false, err
	}
	in.sess.Secrets().UseIdentifier(key, b.TOTPIdentifier)
	in.sess.Secrets().UseVerificationURL(b.TOTPVerificationURL)
	touched, err := in.openBlockURL(ctx, b.Label, b.URL, sc)
	if err != nil {
		return nil, touched, err
	}
	username := ""
	if v, ok := in.params[key].(map[string]any); ok {
		username, _ = v["username"].(string)
	}
	sent := ""                     // what the previous page was answered with
	var answered *page.Observation // the previous page, as it was answered
	for range maxLoginPages {
		pg, obs, err := in.sess.LookNow(ctx)
		if err != nil {
			return nil, true, err
		}
		user, pass, code := loginFields(obs)
		var fills []fill
		var what string
		switch {
		case pass != nil:
			if sent == "password" {
				return nil, true, refused(ctx, pg, answered, obs, "the sign-in form came back after the password was sent")
			}
			if user != nil {
				fills = append(fills, fill{user, username})
			}
			fills, what = append(fills, fill{pass, secrets.Placeholder(key, "password") + "\n"}), "password"
		case code != nil:
			if sent == "code" {
				return nil, true, refused(ctx, pg, answered, obs, "the one-time code form came back after a code was sent")
			}
			fills, what = []fill{{code, secrets.Placeholder(key, "totp") + "\n"}}, "code"
		case user != nil && sent == "":
			fills, what = []fill{{user, username + "\n"}}, "username"
		case sent == "password" || sent == "code":
			// No form: signed in, unless the page that came instead is
			// an error page ("Sign-in failed").
			if says := failurePage(ctx, pg, answered, obs); says != "" {
				return nil, true, &signInRefused{what: "the site answered the " + sent + " with an error page", says: says}
			}
			fallthrough
		default:
			in.steps.AddSummary("Signed in at " + obs.URL)
			return map[string]any{"url": obs.URL, "signed_in": true}, true, nil
		}
		for _, f := range fills {
			if err := in.typeLogin(ctx, b.Label, pg, obs, f); err != nil {
				return nil, true, err
			}
		}
		sent, answered = what, obs
		touched = true
	}
	return nil, touched, fmt.Errorf("the sign-in did not finish within %d pages", maxLoginPages)
}

type fill struct {
	el   *page.Element
	text string
}

// typeLogin types one field as one step; the step records what was typed
// as secrets.Shown shows it (the username as it is, a secret as the mask).
func (in browserBlocks) typeLogin(ctx context.Context, label string, pg *page.Page, obs *page.Observation, f fill) error {
	shown := secrets.Shown(strings.TrimSuffix(f.text, "\n"), f.el.Type == "password")
	rec, err := in.steps.Start(label, steplog.Action{Type: "input_text", ID: f.el.ID, Text: shown, Element: agent.ElementLine(obs, f.el)})
	if err != nil {
		return err
	}
	actx, cancel := context.WithTimeout(ctx, agent.ActionTimeout)
	res, err := in.sess.TypeText(actx, pg, f.el.ID, f.text)
	cancel()
	if err == nil && !res.OK {
		err = errors.New(res.Reason)
	}
	in.steps.End(rec, res.URL, res.Detail, err)
	if err != nil {
		return fmt.Errorf("typing into %s: %w", fieldName(f.el), err)
	}
	return nil
}

// loginCredential is the credential parameter a login block signs in
// with: the one its parameter_keys name, else the run's only one.
func (in browserBlocks) loginCredential(b *client.LoginBlock) (string, error) {
	keys := in.sess.Secrets().Keys()
	for _, k := range b.ParameterKeys {
		for _, c := range keys {
			if k == c {
				return k, nil
			}
		}
	}
	switch len(keys) {
	case 0:
		return "", errors.New("the login block has no credential: add a credential parameter to the agent and name it in the block's parameter_keys")
	case 1:
		return keys[0], nil
	}
	return "", fmt.Errorf("the run has %d credential parameters (%s): name the one to sign in with in the block's parameter_keys", len(keys), strings.Join(keys, ", "))
}

// loginFields finds, among the visible fields of a page, the password
// field, the username field before it (or alone), and a one-time code
// field.
func loginFields(obs *page.Observation) (user, pass, code *page.Element) {
	var lastText *page.Element
	for i := range obs.Elements {
		e := &obs.Elements[i]
		if e.Tag != "input" || e.Disabled || e.ReadOnly || e.Rect[2] < 1 || e.Rect[3] < 1 {
			continue
		}
		ac := strings.ToLower(e.Attrs["autocomplete"])
		switch {
		case e.Type == "password":
			if pass == nil {
				pass = e
				if user == nil {
					user = lastText
				}
			}
		case ac == "one-time-code" || isCodeField(e):
			if code == nil {
				code = e
			}
		case ac == "username" || ac == "email" || e.Type == "email" || e.Type == "text" || e.Type == "tel" || e.Type == "":
			if ac == "username" || ac == "email" || e.Type == "email" || looksLikeUser(e) {
				if pass == nil {
					user = e
				}
			}
			lastText = e
		}
	}
	if pass != nil && user == nil {
		user = lastText
	}
	return user, pass, code
}

func isCodeField(e *page.Element) bool {
	if e.Type != "text" && e.Type != "tel" && e.Type != "number" && e.Type != "" {
		return false
	}
	return codeWords.MatchString(strings.Join([]string{e.Name, e.Label, e.Placeholder, e.Attrs["id"]}, " ")) &&
		!looksLikeUser(e)
}

var userWords = regexp.MustCompile(`(?i)user|login|e-?mail|account|phone`)

func looksLikeUser(e *page.Element) bool {
	return userWords.MatchString(strings.Join([]string{e.Name, e.Label, e.Placeholder}, " "))
}

func fieldName(e *page.Element) string {
	for _, s := range []string{e.Label, e.Name, e.Placeholder} {
		if s != "" {
			return fmt.Sprintf("the field %q", text.Clip(s, 60))
		}
	}
	return "the field [" + e.ID + "]"
}

// signInRefused is the error of a sign-in the site refused: the form came
// back, or an error page came instead. It is final: the model, when one is
// configured, does not try the same credential again.
type signInRefused struct {
	what string // what happened, for people
	says string // what the page says about it; "" when it says nothing found
}

func (e *signInRefused) Error() string {
	msg := e.what
	if e.says != "" {
		msg += "; the page says: " + e.says
	}
	return msg + " (the credential may be wrong)"
}

// refused is the error of a form that came back: what went wrong and what
// the page says (pageSays).
func refused(ctx context.Context, pg *page.Page, before, after *page.Observation, what string) error {
	return &signInRefused{what: what, says: pageSays(ctx, pg, before, after)}
}

// alertSelectors find the elements where pages put the message of a form
// that failed: ARIA alerts and live regions, and the class names the
// common frameworks give error messages.
var alertSelectors = []string{
	`[role="alert"]:not([hidden])`, `[aria-live="assertive"]:not([hidden])`, `[aria-live="polite"]:not([hidden])`,
	`.alert-danger`, `.alert-error`, `.error:not([hidden]):not(input)`, `.errors`, `.error-message`, `.form-error`,
	`.invalid-feedback`, `.field-error`, `.help-block.error`, `.notification.is-danger`,
}

// errorWords are the words of a sign-in error message.
var errorWords = regexp.MustCompile(`(?i)\b(wrong|incorrect|invalid|not right|fail(ed|ure)?|try again|denied|not recogni[sz]ed|(does ?n[o']t|did ?n[o']t|do ?n[o']t) match|unknown|locked|error|could ?n[o']t|unable|not valid|expired)\b`)

// pageSays is what a page that answered a sign-in says about it, for a
// failure reason: the visible text of its alert elements (those that
// were not there before the form was sent first), else the lines of
// text that appeared since and read like an error, else the first line
// of the page that reads like one; "" when there is none. Only text the
// observation shows is used: hidden alerts are left out, and so is any
// text where the observation masked a secret.
func pageSays(ctx context.Context, pg *page.Page, before, after *page.Observation) string {
	visible := squash(after.Text)
	var shown, fresh []string
	if reads, err := pg.ReadTexts(ctx, alertSelectors); err == nil {
		for _, r := range reads {
			t := squash(r.Text)
			if !r.Found || t == "" || !strings.Contains(visible, t) || slices.Contains(shown, t) {
				continue
			}
			shown = append(shown, t)
			if before == nil || !strings.Contains(squash(before.Text), t) {
				fresh = append(fresh, t)
			}
		}
	}
	switch {
	case len(fresh) > 0:
		return text.Clip(strings.Join(fresh, " "), 300)
	case len(shown) > 0:
		return text.Clip(strings.Join(shown, " "), 300)
	}
	if lines := newErrorLines(before, after); len(lines) > 0 {
		return text.Clip(strings.Join(lines, " "), 300)
	}
	return alertText(after)
}

// failurePage is what a page without a sign-in form says when it is the
// error page of a refused sign-in: an alert (pageSays' alert elements)
// that reads like an error, with the page's title first when it reads
// like one too ("Sign-in failed"); "" for any other page, which is taken
// for the page behind the sign-in.
func failurePage(ctx context.Context, pg *page.Page, before, after *page.Observation) string {
	title := strings.TrimSpace(after.Title)
	titleFailed := signInWords.MatchString(title) && errorWords.MatchString(title)
	says := ""
	if reads, err := pg.ReadTexts(ctx, alertSelectors); err == nil {
		visible := squash(after.Text)
		for _, r := range reads {
			if t := squash(r.Text); r.Found && t != "" && strings.Contains(visible, t) && errorWords.MatchString(t) {
				says = text.Clip(t, 300)
				break
			}
		}
	}
	switch {
	case titleFailed && says != "":
		return title + ": " + says
	case titleFailed:
		if lines := newErrorLines(before, after); len(lines) > 0 {
			return title + ": " + text.Clip(strings.Join(lines, " "), 300)
		}
		return title
	}
	return says
}

var signInWords = regexp.MustCompile(`(?i)(sign|log)[- ]?(in|on)|authenticat|credential|password`)

// newErrorLines are the lines of text of after that before did not show
// and that read like an error message.
func newErrorLines(before, after *page.Observation) []string {
	old := map[string]bool{}
	if before != nil {
		for _, l := range strings.Split(before.Text, "\n") {
			old[squash(l)] = true
		}
	}
	var out []string
	for _, l := range strings.Split(after.Text, "\n") {
		if l = squash(l); l != "" && !old[l] && errorWords.MatchString(l) {
			out = append(out, l)
			if len(out) == 3 {
				break
			}
		}
	}
	return out
}

// squash collapses the white space of s.
func squash(s string) string { return strings.Join(strings.Fields(s), " ") }

// alertText is the page's first line that reads like an error message.
func alertText(obs *page.Observation) string {
	for _, line := range strings.Split(obs.Text, "\n") {
		l := strings.TrimSpace(line)
		low := strings.ToLower(l)
		if l != "" && (strings.Contains(low, "wrong") || strings.Contains(low, "incorrect") || strings.Contains(low, "invalid") ||
			strings.Contains(low, "not right") || strings.Contains(low, "failed") || strings.Contains(low, "try again")) {
			return text.Clip(l, 200)
		}
	}
	return ""
}
