// Package redirect keeps HTTP clients that send configured secrets in
// headers (API keys, tenant headers) from sending them to another host:
// net/http drops Authorization and Cookie on a redirect to another host,
// but carries every other header along.
package redirect

import (
	"errors"
	"fmt"
	"net/http"
)

// maxRedirects is net/http's own bound.
const maxRedirects = 10

// SameHost is an http.Client CheckRedirect that follows a redirect only to
// the scheme and host of the first request, and at most 10 of them.
func SameHost(req *http.Request, via []*http.Request) error {
	if len(via) >= maxRedirects {
		return errors.New("stopped after 10 redirects")
	}
	first := via[0].URL
	if req.URL.Scheme != first.Scheme || req.URL.Host != first.Host {
		return fmt.Errorf("refusing a redirect to another host (%s://%s): the configured headers would go with it", req.URL.Scheme, req.URL.Host)
	}
	return nil
}
