package blocks

// The email_inbox block: messages read from a mailbox over IMAP, signing in
// with a password credential.
//
// The server is the provider's (email_client gmail: imap.gmail.com:993,
// outlook: outlook.office365.com:993, both TLS from the start), or, for
// every block, the engine's IMAPConfig.Address (the daemon's --imap-address:
// a mail server of one's own, with TLS or STARTTLS). Gmail and Outlook
// accept a password over IMAP only as an app password, with IMAP enabled in
// the account's settings.
//
// credential_id is the key of a credential parameter of the agent, or the
// id of a password credential of the organization, which is then read
// before the run starts (WithBlockCredentials) as if a credential parameter
// named it. The password is revealed only to be sent to the server: it is
// in no output, step or error.
//
// The folder (INBOX by default) is opened read-only, so reading marks no
// message as seen. The messages whose From holds sender and whose Subject
// holds subject (both as the server matches them: case-insensitive
// substrings), received on or after the day newer_than_days ago, are taken
// newest first, at most max_results (25 by default, maxInboxResults at
// most). Each is output with its sender, recipients, subject, date, text
// (the text/plain part, or the text of the HTML part) and attachments,
// which are saved as files of the run. include_body false leaves out the
// text and the attachments. With prompt, the model answers it about the
// messages, and its answer is in the output too.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/localrun/engine/agent"
	"github.com/abctl/abctl/localrun/engine/blocks/mail"
	"github.com/abctl/abctl/localrun/engine/internal/text"
	"github.com/abctl/abctl/localrun/engine/secrets"
	"github.com/abctl/abctl/localrun/engine/steplog"
)

// Limits of email_inbox blocks.
const (
	defaultInboxResults = 25
	maxInboxResults     = 200
	// maxMailText bounds the text of one message in the output.
	maxMailText = 100_000
)

// IMAPConfig is where email_inbox blocks read mail (see package
// blocks/mail).
type IMAPConfig = mail.IMAPConfig

// imapProviders are the servers of the email clients the service knows.
var imapProviders = map[string]string{
	"gmail":   "imap.gmail.com:993",
	"outlook": "outlook.office365.com:993",
}

func checkEmailInbox(b *client.EmailInboxBlock) error {
	fail := func(format string, args ...any) error {
		return fmt.Errorf("block %q (email_inbox) "+format, append([]any{b.Label}, args...)...)
	}
	if _, ok := imapProviders[b.EmailClient]; !ok {
		return fail("has email_client %q; it must be gmail or outlook", b.EmailClient)
	}
	if strings.TrimSpace(b.CredentialID) == "" {
		return fail("has no credential_id: name a password credential (its id, or the key of a credential parameter of the agent)")
	}
	if b.MaxResults < 0 || b.MaxResults > maxInboxResults {
		return fail("has max_results %d; it must be from 1 to %d", b.MaxResults, maxInboxResults)
	}
	if b.NewerThanDays != nil && *b.NewerThanDays < 0 {
		return fail("has newer_than_days %d; it cannot be negative", *b.NewerThanDays)
	}
	return nil
}

// CheckInbox checks, before a run starts, what checkEmailInbox cannot see
// from a block alone: that a block with a prompt has a model to answer it.
func CheckInbox(def *client.WorkflowDefinition, hasModel bool) error {
	var err error
	eachInbox(def.Blocks, func(b *client.EmailInboxBlock) {
		if err == nil && strings.TrimSpace(b.Prompt) != "" && !hasModel {
			err = fmt.Errorf("block %q (email_inbox) has a prompt, which needs a language model (without a prompt it needs none), but %w", b.Label, agent.ErrNoModel)
		}
	})
	return err
}

// eachInbox calls fn with every email_inbox block of bs, in loops too.
func eachInbox(bs client.Blocks, fn func(*client.EmailInboxBlock)) {
	eachBlock(bs, func(b client.Block) {
		if x, ok := b.(*client.EmailInboxBlock); ok {
			fn(x)
		}
	})
}

// eachBlock calls fn with every block of bs, those of loops too.
func eachBlock(bs client.Blocks, fn func(client.Block)) {
	for _, b := range bs {
		fn(b)
		switch x := b.(type) {
		case *client.ForLoopBlock:
			eachBlock(x.LoopBlocks, fn)
		case *client.WhileLoopBlock:
			eachBlock(x.LoopBlocks, fn)
		}
	}
}

// blockCredentialID is the credential_id of a block that signs in to a
// service with one (email_inbox, the Google Sheets blocks), "" for others.
func blockCredentialID(b client.Block) string {
	switch x := b.(type) {
	case *client.EmailInboxBlock:
		return x.CredentialID
	case *client.GoogleSheetsReadBlock:
		return x.CredentialID
	case *client.GoogleSheetsWriteBlock:
		return x.CredentialID
	}
	return ""
}

// WithBlockCredentials returns the parameters of def, and, for each
// credential id a block names in its credential_id (email_inbox, the
// Google Sheets blocks) that is not the key of one of them, a credential
// parameter of that id (its key: blockCredentialKey), so that the run
// reads the credential before it starts, as it reads those of its
// parameters.
func WithBlockCredentials(def *client.WorkflowDefinition) []client.Parameter {
	ps := slices.Clone(def.Parameters)
	keys := map[string]bool{}
	for _, p := range def.Parameters {
		keys[p.Key] = true
	}
	eachBlock(def.Blocks, func(b client.Block) {
		id := parameterRef(blockCredentialID(b))
		if id == "" || keys[id] || strings.Contains(id, "{{") {
			return
		}
		key := blockCredentialKey(id)
		if keys[key] {
			return
		}
		keys[key] = true
		ps = append(ps, client.Parameter{Key: key, ParameterType: client.ParameterTypeCredential, CredentialID: id,
			Description: fmt.Sprintf("the credential of %s block %s", b.BlockType(), b.Base().Label)})
	})
	return ps
}

var notKeyChars = regexp.MustCompile(`[^A-Za-z0-9_]`)

// blockCredentialKey is the key of the parameter WithBlockCredentials
// adds for the credential id.
func blockCredentialKey(id string) string {
	return "credential_" + notKeyChars.ReplaceAllString(id, "_")
}

// parameterRef is a field that names a parameter, without the braces of
// a template that is only that name ("{{ mail_login }}").
func parameterRef(s string) string {
	s = strings.TrimSpace(s)
	if strings.HasPrefix(s, "{{") && strings.HasSuffix(s, "}}") {
		inner := strings.TrimSpace(s[2 : len(s)-2])
		if pythonName.MatchString(inner) {
			return inner
		}
	}
	return s
}

func (in mailBlocks) emailInbox(ctx context.Context, b *client.EmailInboxBlock, sc *scope) (any, error) {
	q := mail.Query{Folder: "INBOX", Max: defaultInboxResults, WithBody: b.IncludeBody == nil || *b.IncludeBody}
	folder, sender, subject := b.Folder, b.Sender, b.Subject // the block stays as written
	if err := sc.renderAll(&folder, &sender, &subject); err != nil {
		return nil, err
	}
	if f := strings.TrimSpace(folder); f != "" {
		q.Folder = f
	}
	q.Sender, q.Subject = strings.TrimSpace(sender), strings.TrimSpace(subject)
	if b.MaxResults > 0 {
		q.Max = min(b.MaxResults, maxInboxResults)
	}
	if d := b.NewerThanDays; d != nil && *d > 0 {
		q.Since = time.Now().AddDate(0, 0, -*d)
	}
	acct, err := in.mailAccount(ctx, b)
	if err != nil {
		return nil, err
	}
	what := q.Folder
	if q.Sender != "" {
		what += fmt.Sprintf(", from %q", q.Sender)
	}
	if q.Subject != "" {
		what += fmt.Sprintf(", subject %q", q.Subject)
	}
	rec, err := in.steps.Start(b.Label, steplog.Action{Type: "read_email", Text: acct.Username + " at " + acct.Address + ": " + what})
	if err != nil {
		return nil, err
	}
	msgs, err := mail.ReadMailbox(ctx, acct, q)
	if err != nil {
		// The server's words, never the password.
		err = errors.New(in.secrets.Scrub(err.Error()))
		in.steps.End(rec, "", "", err)
		return nil, err
	}
	emails, err := in.mailOutput(msgs, q.WithBody)
	result := fmt.Sprintf("read %d messages", len(emails))
	in.steps.End(rec, "", result, err)
	if err != nil {
		return nil, err
	}
	out := map[string]any{"folder": q.Folder, "count": len(emails), "emails": emails}
	if strings.TrimSpace(b.Prompt) == "" {
		return out, nil
	}
	answer, err := in.mailPrompt(ctx, b, sc, emails)
	if err != nil {
		return out, err
	}
	out["llm_response"] = answer
	return out, nil
}

// mailAccount is the server and the sign-in of a block: the password is
// revealed here, for the server only.
func (in mailBlocks) mailAccount(ctx context.Context, b *client.EmailInboxBlock) (mail.Account, error) {
	// The provider's server: the run's organization's guard decides.
	acct := mail.Account{Address: imapProviders[b.EmailClient], TLS: in.imap.TLS, Dial: in.dialer()}
	if a := in.imap.Address; a != "" {
		// The operator's server (the daemon's flags): trusted.
		acct.Address, acct.StartTLS, acct.Dial = a, in.imap.StartTLS, nil
	}
	if acct.Address == "" {
		return acct, fmt.Errorf("email_client %q is not gmail or outlook", b.EmailClient)
	}
	ref, key, cred, err := in.blockCredential(b.CredentialID)
	if err != nil {
		return acct, err
	}
	username, _ := cred["username"].(string)
	if username == "" || cred["password"] == nil {
		return acct, fmt.Errorf("credential_id %q is not a password credential (a username and a password are needed to sign in to the mailbox)", ref)
	}
	password, _, err := in.secrets.Reveal(ctx, secrets.Placeholder(key, "password"))
	if err != nil {
		return acct, err
	}
	acct.Username, acct.Password = username, password
	return acct, nil
}

// mailOutput turns messages into the block's output, saving their
// attachments as files of the run.
func (in mailBlocks) mailOutput(msgs []mail.Message, withBody bool) ([]any, error) {
	emails := make([]any, 0, len(msgs))
	for _, m := range msgs {
		e := map[string]any{
			"uid": m.UID, "from": strings.Join(m.From, ", "), "to": orEmpty(m.To), "cc": orEmpty(m.CC),
			"subject": m.Subject, "message_id": m.MessageID,
		}
		if !m.Date.IsZero() {
			e["date"] = m.Date.UTC().Format(time.RFC3339)
		}
		switch {
		case !withBody:
		case m.TooLarge:
			e["body"] = ""
			e["attachments"] = []any{}
			e["note"] = fmt.Sprintf("the message is larger than %d MiB: its text and attachments were not read", mail.MaxMessageBytes>>20)
		default:
			e["body"] = text.Clip(m.Text, maxMailText)
			files := []any{}
			for _, a := range m.Attachments {
				saved, err := in.files.Save(a.Name, "attachment", a.Data)
				if err != nil {
					return nil, fmt.Errorf("saving the attachment %q of %q: %v", a.Name, m.Subject, err)
				}
				info := in.files.Info(saved)
				info["name"], info["content_type"] = a.Name, a.ContentType
				files = append(files, info)
			}
			e["attachments"] = files
		}
		emails = append(emails, e)
	}
	return emails, nil
}

func orEmpty(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// mailPrompt asks the block's model its prompt about the messages.
func (in mailBlocks) mailPrompt(ctx context.Context, b *client.EmailInboxBlock, sc *scope, emails []any) (string, error) {
	m, err := in.blockModel(b)
	if err != nil {
		return "", err
	}
	prompt, err := sc.render(b.Prompt)
	if err != nil {
		return "", err
	}
	details, err := sc.details(b.ParameterKeys)
	if err != nil {
		return "", err
	}
	data, _ := json.MarshalIndent(emails, "", " ")
	prompt += "\n\nThe emails (JSON, newest first):\n" + string(data)
	if len(b.ParameterKeys) > 0 && len(details) > 0 {
		prompt += "\n\nValues (JSON):\n" + agent.DetailsJSON(details)
	}
	answer, _, err := in.agent.Prompt(ctx, m, prompt, nil, b.Label)
	if err != nil {
		return "", err
	}
	var s string
	json.Unmarshal(answer, &s)
	return s, nil
}
