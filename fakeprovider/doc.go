// Package fakeprovider is an OpenAI-compatible model provider that
// answers from memory, with a fault knob per route: the lab's provider
// (`hermes lab`), usable by demos and tests alike.
//
// It speaks the chat-completions API, plain and streamed as server-sent
// events, and /v1/models, for any number of routes: a client of route
// free uses the base URL SERVER/free/v1, and SERVER/v1 is a route of its
// own (""). Every route is healthy until a [Fault] is set on it: then a
// share of its requests, spread evenly, is answered as the fault's [Kind]
// (an error template inside HTTP 200, a truncated stream, a 503, a reset
// connection…). Faults are set in Go ([Server.SetFault], [Server.Heal]) or
// over HTTP on the same listener ([Server.Handler]):
//
//	GET    /-/faults         every route's fault, as JSON
//	PUT    /-/faults/ROUTE   {"kind": "error_in_200", "percent": 30}
//	DELETE /-/faults/ROUTE   the route is healthy again
//
// [Client] is the Go side of those endpoints.
package fakeprovider
