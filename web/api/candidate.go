package api

import (
	"time"

	"github.com/hermes-failover/hermes/evaluator"
)

// Candidate is the candidate policy Hermes evaluates beside the live one
// (`hermes run --candidate.file`), never applied nor sent: where it
// stands now and where its decisions differed from live's.
type Candidate struct {
	File string `json:"file"`
	// LoadedAt is its last good load; Error the last load's failure, when
	// the previous candidate keeps running.
	LoadedAt time.Time `json:"loaded_at"`
	Error    string    `json:"error,omitempty"`
	// SeededAt is the tick whose live state seeded the candidate's: the
	// first tick, or the first after the last reload.
	SeededAt time.Time `json:"seeded_at,omitzero"`
	LastTick time.Time `json:"last_tick,omitzero"`
	// Routes are the routes whose level, failback stage or share of a
	// service differ now between the candidate and live.
	Routes []CandidateRoute `json:"routes"`
	// Differences are the latest decisions one policy made at a tick that
	// the other did not, newest first (evaluator.Difference, as
	// `hermes backtest --compare` reports them over history).
	Differences []CandidateDifference `json:"differences"`
}

// CandidateRoute is one route of a service under both policies.
type CandidateRoute struct {
	Service string `json:"service"`
	Route   string `json:"route"`
	// Level, Stage, Score and Traffic (the percent of the service's
	// traffic) under the candidate; Live* under the live policy.
	Level       string  `json:"level"`
	LiveLevel   string  `json:"live_level"`
	Stage       int     `json:"stage,omitempty"`
	LiveStage   int     `json:"live_stage,omitempty"`
	Score       float64 `json:"score"`
	LiveScore   float64 `json:"live_score"`
	Traffic     int     `json:"traffic"`
	LiveTraffic int     `json:"live_traffic"`
}

// CandidateDifference is one differing decision, with its line for people:
// "candidate: chat/free warm at 12:03:00 (live stayed normal): score …".
type CandidateDifference struct {
	evaluator.Difference
	Text string `json:"text"`
}
