package config

import (
	"errors"
	"net/url"
	"strings"
)

// RedactURL returns s with the password of its userinfo replaced by
// "xxxxx", as url.URL.Redacted does, also when s does not parse (the case
// where error messages would otherwise echo it): every message that names
// a configured URL (check, /-/reload, logs, the audit log) goes through it.
func RedactURL(s string) string {
	if u, err := url.Parse(s); err == nil && u.Opaque == "" {
		return u.Redacted()
	}
	scheme, rest, ok := strings.Cut(s, "://")
	if !ok {
		scheme, rest = "", s
	}
	end := strings.IndexAny(rest, "/?#")
	if end < 0 {
		end = len(rest)
	}
	at := strings.LastIndexByte(rest[:end], '@')
	if at < 0 {
		return s
	}
	user, _, hasPass := strings.Cut(rest[:at], ":")
	if !hasPass {
		return s
	}
	out := user + ":xxxxx" + rest[at:]
	if ok {
		out = scheme + "://" + out
	}
	return out
}

// RedactError returns err with the URL of a *url.Error in it redacted.
func RedactError(err error) error {
	var uerr *url.Error
	if errors.As(err, &uerr) {
		return &url.Error{Op: uerr.Op, URL: RedactURL(uerr.URL), Err: uerr.Err}
	}
	return err
}
