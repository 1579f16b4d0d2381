package instrument_test

import (
	"log"
	"net/http"
	"net/http/httputil"
	"net/url"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/hermes-failover/hermes/gateway/instrument"
	"github.com/hermes-failover/hermes/gateway/validate"
)

// A gateway that calls its upstream with an http.Client gets the whole
// contract from one transport per route.
func ExampleMetrics_Transport() {
	reg := prometheus.NewRegistry()
	m := instrument.MustNewMetrics(reg)
	v, err := validate.New(validate.Rules{MinLength: 20}) // p5 of a week of normal replies
	if err != nil {
		log.Fatal(err)
	}
	free := &http.Client{Transport: m.Transport("free", v, http.DefaultTransport)}
	_ = free // use free.Do(req) as before; read and close the body as usual

	http.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
}

// A gateway built on httputil.ReverseProxy wraps the proxy instead.
func ExampleMetrics_Middleware() {
	m := instrument.MustNewMetrics(prometheus.NewRegistry())
	upstream, _ := url.Parse("https://free.llm.example.com")
	proxy := httputil.NewSingleHostReverseProxy(upstream)
	proxy.FlushInterval = -1 // pass streamed events on at once
	proxy.ErrorHandler = func(w http.ResponseWriter, r *http.Request, err error) {
		switch instrument.UpstreamError(r, err) { // recorded as the Transport records it
		case "": // the caller hung up: not recorded, nothing to answer
		case instrument.CodeTimeout:
			w.WriteHeader(http.StatusGatewayTimeout)
		default:
			w.WriteHeader(http.StatusBadGateway)
		}
	}
	http.Handle("/v1/", m.Middleware("free", validate.MustNew(validate.Rules{}), proxy))
}
