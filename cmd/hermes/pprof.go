package main

import (
	"net/http"
	"net/http/pprof"
)

// withPprof serves Go's runtime profiles under /debug/pprof/ next to h when
// on (flag --web.enable-pprof), for measuring Hermes's memory and CPU at
// scale; off by default, as a profile reveals internals and costs CPU.
func withPprof(h http.Handler, on bool) http.Handler {
	if !on {
		return h
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	mux.Handle("/", h)
	return mux
}
