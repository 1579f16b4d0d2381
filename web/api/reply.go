package api

import (
	"net/http"
	"time"

	"github.com/hermes-failover/hermes/evaluator"
)

// Response is the envelope every admin API reply comes in, success or
// error, after Prometheus's web/api/v1 Response: Status says which, Data
// holds a success's payload, ErrorType and Error an error's class and
// words. The HTTP code goes with the outcome: 200 for a command a tick
// applied, 202 for one still queued, and the code of the ErrorType
// otherwise.
//
// Prometheus's Warnings and Infos are left out: no admin command has a
// partial success to warn of, and a field no one sets would only document
// something that never happens.
//
// GET /api/v1/status answers its Status bare, not in the envelope: it is
// a document read by the page, scripts and dashboards, and it has no error
// of its own to report.
type Response[T any] struct {
	Status    ResponseStatus `json:"status"`
	Data      T              `json:"data,omitzero"`
	ErrorType ErrorType      `json:"errorType,omitempty"`
	Error     string         `json:"error,omitempty"`
}

// ResponseStatus is a Response's outcome: success or error.
type ResponseStatus string

// The outcomes of a Response.
const (
	StatusSuccess ResponseStatus = "success"
	StatusError   ResponseStatus = "error"
)

// ErrorType is the class of an error reply; each comes with one HTTP code.
type ErrorType string

// The classes of error replies, with their HTTP codes.
const (
	// ErrorBadData (400): the request is malformed: a body that does not
	// decode, a bad duration, a missing reason.
	ErrorBadData ErrorType = "bad_data"
	// ErrorRefused (400): the request is well formed, but the command
	// cannot apply to the state (evaluator.Check): a release of a route
	// that is not manual, a pause over a pin without replace.
	ErrorRefused ErrorType = "refused"
	// ErrorUnauthorized (401): the admin token is missing or wrong.
	ErrorUnauthorized ErrorType = "unauthorized"
	// ErrorForbidden (403): the endpoint's group is not enabled, or a
	// browser sent the request from another origin.
	ErrorForbidden ErrorType = "forbidden"
	// ErrorUnsupportedMediaType (415): a body not declared as
	// application/json.
	ErrorUnsupportedMediaType ErrorType = "unsupported_media_type"
	// ErrorNotFound (404): what the request names does not exist: the
	// service of GET /api/v1/status?service=.
	ErrorNotFound ErrorType = "not_found"
)

// HTTPCode is the HTTP code an error reply of class t is sent with.
func (t ErrorType) HTTPCode() int {
	switch t {
	case ErrorUnauthorized:
		return http.StatusUnauthorized
	case ErrorForbidden:
		return http.StatusForbidden
	case ErrorUnsupportedMediaType:
		return http.StatusUnsupportedMediaType
	case ErrorNotFound:
		return http.StatusNotFound
	}
	return http.StatusBadRequest
}

// ErrorReply is an error Response: its Data is empty.
type ErrorReply = Response[struct{}]

// CommandReply is the Data of every admin command's reply: what became of
// the command. A command a tick applied is answered 200, with the fields
// of its kind; one still queued when the request could not wait any longer
// is answered 202 with Outcome OutcomeQueued, Command and Tick.
//
// The runner reports a command as its own runner.CommandResult rather than
// as this type: the loop may not import web/... (TestLayout keeps the shell
// from depending on its front end), and what the loop did is not what the
// API says of it. web converts it in one place (commandReply), and ctl
// decodes this type.
type CommandReply struct {
	// Command is the command's kind: release, pin, pause, clear, drill or
	// end-drill (evaluator.CommandKind).
	Command evaluator.CommandKind `json:"command"`
	// Outcome says what the command did, or that it is queued.
	Outcome Outcome `json:"outcome"`
	// Tick is the tick that applied the command or, when it is queued, the
	// tick it will apply at.
	Tick time.Time `json:"tick"`
	// Service is the service of a pin, pause or clear.
	Service string `json:"service,omitempty"`
	// Route is the route of a release or a drill.
	Route string `json:"route,omitempty"`
	// Override is the override a pin or pause set.
	Override *evaluator.Override `json:"override,omitempty"`
	// DrillKind says what a drill sets (evaluator.DrillKind), DryRun
	// whether the actuators keep the split from before it, Until when it
	// ends by itself.
	DrillKind string    `json:"kind,omitempty"`
	DryRun    bool      `json:"dry_run,omitempty"`
	Until     time.Time `json:"until,omitzero"`
	// SplitUnknown is the service's Service.SplitUnknown after a pin,
	// pause or clear: Hermes does not know its split and writes nothing
	// for it. SplitUnknownAfterOverride is its
	// Service.SplitUnknownAfterOverride: the pin gives the split, which
	// is unknown again once the pin ends.
	SplitUnknown              bool `json:"split_unknown,omitempty"`
	SplitUnknownAfterOverride bool `json:"split_unknown_after_override,omitempty"`
	// Note says in words what the command leaves undone, when it leaves
	// something: "the split of chat is unknown …: Hermes writes nothing
	// for chat until it knows one".
	Note string `json:"note,omitempty"`
}

// Outcome is what an admin command did.
type Outcome string

// The outcomes of admin commands, one per command applied, and queued.
const (
	OutcomeReleased Outcome = "released" // release
	OutcomeSet      Outcome = "set"      // pin, pause
	OutcomeCleared  Outcome = "cleared"  // clear
	OutcomeStarted  Outcome = "started"  // drill
	OutcomeStopped  Outcome = "stopped"  // end-drill
	// OutcomeQueued: the command waits for its tick (HTTP 202).
	OutcomeQueued Outcome = "queued"
)
