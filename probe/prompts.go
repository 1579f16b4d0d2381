package probe

import "github.com/hermes-failover/hermes/gateway/validate"

// summaryText is the fixed long text the summary probe asks to condense.
const summaryText = `Cheap or free routes to a model provider rarely fail loudly. During the
incidents that shaped this project, the HTTP status stayed 200 and the error rate
stayed near zero while replies were cut in the middle of a sentence, JSON came back
broken, answers were replaced by canned phrases such as "the system is busy", and
tail latency crept up hour after hour until the free quota ran dry. Breakers that
count consecutive 5xx answers never tripped. What caught the problem was judging
the content of replies and comparing each route with its own recent past, then
moving traffic to a paid route step by step and bringing it back carefully.`

// cityCountrySchema is what the json_output probe's reply must meet.
const cityCountrySchema = `{
  "type": "object",
  "required": ["city", "country"],
  "properties": {"city": {"type": "string", "minLength": 1}, "country": {"type": "string", "minLength": 1}}
}`

// DefaultPrompts is the built-in e2e prompt set: a short answer, a
// structured JSON output, a long-text summary (streamed) and a multi-turn
// conversation. Each answer is short, so a probe costs about a hundred
// tokens.
func DefaultPrompts() []Prompt {
	return []Prompt{
		{
			Name:       "short_answer",
			Messages:   []Message{{Role: "user", Content: "What is the capital of France? Answer in one short sentence."}},
			MaxTokens:  40,
			Validation: validate.Rules{MinLength: 3},
		},
		{
			Name: "json_output",
			Messages: []Message{
				{Role: "system", Content: "You reply with a JSON object only."},
				{Role: "user", Content: `Give the capital of France as JSON with the keys "city" and "country".`},
			},
			MaxTokens:      60,
			ResponseFormat: "json_object",
			Validation:     validate.Rules{Schema: cityCountrySchema},
		},
		{
			Name:       "summary",
			Messages:   []Message{{Role: "user", Content: "Summarise the following text in two sentences.\n\n" + summaryText}},
			MaxTokens:  200,
			Stream:     true,
			Validation: validate.Rules{MinLength: 40},
		},
		{
			Name: "multi_turn",
			Messages: []Message{
				{Role: "user", Content: "Hello, my name is Ada."},
				{Role: "assistant", Content: "Nice to meet you, Ada. How can I help?"},
				{Role: "user", Content: "What is my name? Answer in a few words."},
			},
			MaxTokens:  20,
			Validation: validate.Rules{MinLength: 3},
		},
	}
}

// boundaryCase is one edge-value request of the boundary layer.
type boundaryCase struct {
	name        string
	maxTokens   int
	temperature *float64
	topP        *float64
}

func f(v float64) *float64 { return &v }

// boundaryCases are the parameters at their documented edges: a provider
// that starts refusing them (HTTP 400/422) changed its validation. The
// Messages API's temperature goes to anthropicMaxTemperature, not 2; the
// Responses API's max_output_tokens down to responsesMinOutputTokens,
// not 1.
var boundaryCases = []boundaryCase{
	{name: "max_tokens_min", maxTokens: 1},
	{name: "temperature_min", maxTokens: 16, temperature: f(0)},
	{name: "temperature_max", maxTokens: 16, temperature: f(2)},
	{name: "top_p_min", maxTokens: 16, topP: f(0)},
	{name: "top_p_max", maxTokens: 16, topP: f(1)},
}

const boundaryPrompt = "Say hello."

// anthropicMaxTemperature is the top of the Messages API's temperature.
const anthropicMaxTemperature = 1

// responsesMinOutputTokens is the least max_output_tokens the Responses
// API takes: its max_tokens_min case asks for that.
const responsesMinOutputTokens = 16
