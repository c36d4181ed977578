// Package ids makes the identifiers of the local daemon in the form the
// hosted service uses: a prefix, an underscore and a decimal snowflake
// (wr_490440779503358000).
//
// The snowflake is a non-negative int64 laid out as
//
//	bits 63..32  seconds since 2022-06-20T00:00:00Z (Epoch)
//	bits 31..11  worker number (21 bits)
//	bits 10..1   sequence within the second (10 bits, 1024 ids)
//	bit  0       version bit, always 0
//
// so ids of one generator sort numerically in the order they were made.
//
// The one exception is the id of an agent created with an idempotency key,
// which is derived from the key (agentid.FromKey, in package
// internal/agentid, the rule agent files use too) so that a replay finds the agent the first request
// created.
package ids

import (
	"strconv"
	"sync"
	"time"

	"github.com/abctl/abctl/internal/agentid"
)

// Id prefixes, as the hosted service spells them.
const (
	PrefixAgent             = agentid.Prefix // an agent (workflow permanent id), the same across versions
	PrefixAgentVersion      = "w"            // one version row of an agent
	PrefixFolder            = "fld"          // a folder
	PrefixCredential        = "cred"         // a credential
	PrefixTOTPCode          = "totp"         // a pushed one-time code
	PrefixBrowserProfile    = "bp"           // a browser profile
	PrefixBrowserSession    = "pbs"          // a browser session
	PrefixCustomLLM         = "cllm"         // a custom model of an organization (executor.CustomModelIDPrefix)
	PrefixScript            = "s"            // a recorded script, the same across versions
	PrefixScriptRevision    = "sr"           // one version of a script
	PrefixOrganization      = "o"            // an organization
	PrefixWorkflowParameter = "wp"           // a parameter record of type workflow
	PrefixOutputParameter   = "op"           // an output parameter record
	PrefixWorkflowRun       = "wr"           // an agent (workflow) run
	PrefixTask              = "tsk"          // a task run (v1, v3, computer-use engines)
	PrefixTaskV2            = "tsk_v2"       // a task-v2 run
	PrefixWorkflowRunBlock  = "wrb"          // one block execution of a run (its timeline)
	PrefixStep              = "stp"          // one step of a run (its screenshots name it)

	// The records of the other parameter types (aws_secret_parameter_id,
	// credential_parameter_id, ...).
	PrefixAWSSecretParameter                     = "asp"  // aws_secret
	PrefixCredentialParameter                    = "cp"   // credential
	PrefixOnePasswordCredentialParameter         = "opp"  // onepassword
	PrefixAzureVaultCredentialParameter          = "azcp" // azure_vault_credential
	PrefixBitwardenLoginCredentialParameter      = "blc"  // bitwarden_login_credential
	PrefixBitwardenSensitiveInformationParameter = "bsi"  // bitwarden_sensitive_information
	PrefixBitwardenCreditCardDataParameter       = "bccd" // bitwarden_credit_card_data
)

// Epoch is the zero of the snowflake's seconds: 2022-06-20T00:00:00Z.
const Epoch int64 = 1655683200

const (
	workerBits   = 21
	sequenceBits = 10
	workerMask   = 1<<workerBits - 1
	sequenceMax  = 1 << sequenceBits // ids per second and worker
	timeShift    = 32
	workerShift  = 11
	sequenceShft = 1
)

// Generator makes snowflake ids. It is safe for concurrent use, and the
// numbers it returns strictly increase, across all prefixes, for the life of
// the Generator.
//
// When the 1024 sequence numbers of a second are used up, the Generator
// does not wait: it borrows the next second (and the one after, if needed),
// so an id may carry a timestamp slightly ahead of the clock until the
// clock catches up. It also never goes back when the clock does: a clock
// stepped backwards keeps counting on from the last second used.
type Generator struct {
	worker int64
	now    func() time.Time

	mu      sync.Mutex
	lastSec int64 // seconds since Epoch of the last id
	seq     int64 // sequence of the last id within lastSec
	started bool
}

// New returns a Generator for the given worker number, of which the low 21
// bits are used. Processes that write to the same store at the same time
// need different workers.
func New(worker uint32) *Generator {
	return NewWithClock(worker, time.Now)
}

// NewWithClock is New with the clock that gives the ids their seconds;
// tests use it to exhaust a second without waiting. A nil clock means
// time.Now.
func NewWithClock(worker uint32, now func() time.Time) *Generator {
	if now == nil {
		now = time.Now
	}
	return &Generator{worker: int64(worker & workerMask), now: now}
}

// Worker returns the worker number the Generator puts in its ids.
func (g *Generator) Worker() uint32 { return uint32(g.worker) }

// Next returns a new id with the given prefix: prefix + "_" + snowflake.
func (g *Generator) Next(prefix string) string {
	n := g.NextInt()
	b := make([]byte, 0, len(prefix)+1+19)
	b = append(b, prefix...)
	b = append(b, '_')
	b = strconv.AppendInt(b, n, 10)
	return string(b)
}

// NextInt returns a new snowflake number.
func (g *Generator) NextInt() int64 {
	sec := g.now().Unix() - Epoch
	if sec < 0 {
		sec = 0
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	switch {
	case !g.started || sec > g.lastSec:
		g.lastSec, g.seq, g.started = sec, 0, true
	default:
		// The same second, or the clock went back: continue after the
		// last id, borrowing the next second when this one is full.
		g.seq++
		if g.seq == sequenceMax {
			g.lastSec++
			g.seq = 0
		}
	}
	return g.lastSec<<timeShift | g.worker<<workerShift | g.seq<<sequenceShft
}

// Parse splits an id into its prefix and snowflake number. The prefix is
// everything before the last underscore (so "tsk_v2" comes back whole); ok
// is false when there is no underscore or the number is not a non-negative
// decimal int64.
func Parse(id string) (prefix string, n int64, ok bool) {
	i := len(id) - 1
	for i >= 0 && id[i] != '_' {
		i--
	}
	if i <= 0 || i == len(id)-1 {
		return "", 0, false
	}
	for _, c := range id[i+1:] {
		if c < '0' || c > '9' {
			return "", 0, false
		}
	}
	n, err := strconv.ParseInt(id[i+1:], 10, 64)
	if err != nil {
		return "", 0, false
	}
	return id[:i], n, true
}

// Time returns the second a snowflake number was made in (borrowed seconds
// included, see Generator).
func Time(n int64) time.Time {
	return time.Unix(n>>timeShift+Epoch, 0).UTC()
}
