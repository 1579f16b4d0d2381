package unleash

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// Error is a failed request to Unleash's Admin API. It never holds the
// admin token.
type Error struct {
	Method string
	Path   string // the API path, e.g. /api/admin/projects/default/features
	// StatusCode is Unleash's HTTP status, or 0 when no response arrived.
	StatusCode int
	// Message is Unleash's explanation ("message" and "details" of its JSON
	// error body, or the start of a non-JSON body).
	Message string
	// Err is the transport error when no response arrived.
	Err error
}

func (e *Error) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "unleash: %s %s: ", e.Method, e.Path)
	if e.StatusCode == 0 {
		if e.Err != nil {
			b.WriteString(e.Err.Error())
		} else {
			b.WriteString("no response")
		}
		return b.String()
	}
	fmt.Fprintf(&b, "%d %s", e.StatusCode, http.StatusText(e.StatusCode))
	switch e.StatusCode {
	case http.StatusUnauthorized:
		b.WriteString(" (is the admin token valid?)")
	case http.StatusForbidden:
		b.WriteString(" (is it an admin token with access to the project and environment?)")
	}
	if e.Message != "" {
		b.WriteString(": ")
		b.WriteString(e.Message)
	}
	return b.String()
}

func (e *Error) Unwrap() error { return e.Err }

// Temporary reports whether retrying may help: no response (connection
// refused, timeout), 429 or a 5xx status.
func (e *Error) Temporary() bool {
	return e.StatusCode == 0 || e.StatusCode == http.StatusTooManyRequests || e.StatusCode >= 500
}

// Retryable is Temporary, for retry wrappers that look for a
// Retryable() bool method (as actuators.Retry does).
func (e *Error) Retryable() bool { return e.Temporary() }

// IsRetryable reports whether err, or any error joined into it, is a
// temporary failure of Unleash (see Error.Temporary).
func IsRetryable(err error) bool {
	if err == nil {
		return false
	}
	if e, ok := err.(interface{ Retryable() bool }); ok && e.Retryable() {
		return true
	}
	switch u := err.(type) {
	case interface{ Unwrap() []error }:
		for _, e := range u.Unwrap() {
			if IsRetryable(e) {
				return true
			}
		}
	case interface{ Unwrap() error }:
		return IsRetryable(u.Unwrap())
	}
	return false
}

// client speaks Unleash's Admin API for one project and environment.
type client struct {
	http    *http.Client
	base    string // URL without the trailing slash
	token   string
	project string
	env     string
	timeout time.Duration
}

// maxBody bounds what is read of a response.
const maxBody = 4 << 20

// do sends one request. A 404 with want404 set returns (false, nil).
func (c *client) do(ctx context.Context, method, path string, in, out any, want404 bool) (found bool, err error) {
	if err := ctx.Err(); err != nil {
		return false, err
	}
	var body io.Reader
	if in != nil {
		data, err := json.Marshal(in)
		if err != nil {
			return false, err
		}
		body = bytes.NewReader(data)
	}
	rctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(rctx, method, c.base+path, body)
	if err != nil {
		return false, &Error{Method: method, Path: path, Err: err}
	}
	req.Header.Set("Authorization", c.token)
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", "hermes-unleash-actuator")
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.http.Do(req)
	if err != nil {
		if ctx.Err() != nil { // the caller gave up: not ours to retry
			return false, fmt.Errorf("unleash: %s %s: %w", method, path, ctx.Err())
		}
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err // *url.Error repeats method and URL
		}
		if errors.Is(err, context.DeadlineExceeded) {
			err = fmt.Errorf("no response within %v: %w", c.timeout, err)
		}
		return false, &Error{Method: method, Path: path, Err: err}
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxBody))
	if err != nil {
		return false, &Error{Method: method, Path: path, Err: fmt.Errorf("reading the response: %w", err)}
	}
	switch {
	case resp.StatusCode == http.StatusNotFound && want404:
		return false, nil
	case resp.StatusCode >= 300:
		return false, &Error{Method: method, Path: path, StatusCode: resp.StatusCode, Message: c.message(data)}
	}
	if out != nil {
		if err := json.Unmarshal(data, out); err != nil {
			return false, &Error{Method: method, Path: path, StatusCode: resp.StatusCode,
				Message: fmt.Sprintf("unexpected response: %v", err)}
		}
	}
	return true, nil
}

// message extracts Unleash's explanation from an error body: its message
// and, when they add something, its details. The token is scrubbed.
func (c *client) message(body []byte) string {
	var e struct {
		Message string `json:"message"`
		Details []struct {
			Message     string `json:"message"`
			Description string `json:"description"`
		} `json:"details"`
	}
	var msg string
	if json.Unmarshal(body, &e) == nil && e.Message != "" {
		parts := []string{e.Message}
		for _, d := range e.Details {
			for _, m := range []string{d.Message, d.Description} {
				if m != "" && !strings.Contains(e.Message, m) {
					parts = append(parts, m)
				}
			}
		}
		msg = strings.Join(parts, "; ")
	} else {
		msg = strings.TrimSpace(string(body))
		if len(msg) > 200 {
			msg = msg[:200] + "…"
		}
	}
	if c.token != "" {
		msg = strings.ReplaceAll(msg, c.token, "[REDACTED]")
	}
	return msg
}

// The Admin API's objects, as far as Hermes reads or writes them.
type (
	feature struct {
		Name         string        `json:"name"`
		Type         string        `json:"type,omitempty"`
		Description  string        `json:"description,omitempty"`
		Environments []environment `json:"environments,omitempty"`
	}
	environment struct {
		Name       string     `json:"name"`
		Enabled    bool       `json:"enabled"`
		Strategies []strategy `json:"strategies"`
	}
	strategy struct {
		ID          string            `json:"id,omitempty"`
		Name        string            `json:"name"`
		Title       string            `json:"title,omitempty"`
		Disabled    bool              `json:"disabled"`
		Constraints []json.RawMessage `json:"constraints"`
		Parameters  map[string]any    `json:"parameters"`
		Segments    []int             `json:"segments"`
		Variants    []variant         `json:"variants"`
	}
	variant struct {
		Name       string `json:"name"`
		Weight     int    `json:"weight"` // per mille
		WeightType string `json:"weightType"`
		Stickiness string `json:"stickiness"`
	}
)

func (c *client) featurePath(name string) string {
	return "/api/admin/projects/" + url.PathEscape(c.project) + "/features/" + url.PathEscape(name)
}

func (c *client) envPath(name string) string {
	return c.featurePath(name) + "/environments/" + url.PathEscape(c.env)
}

// getFeature reads a flag with its environments; a missing flag is nil.
func (c *client) getFeature(ctx context.Context, name string) (*feature, error) {
	var f feature
	found, err := c.do(ctx, http.MethodGet, c.featurePath(name), nil, &f, true)
	if err != nil || !found {
		return nil, err
	}
	return &f, nil
}

// environment returns the flag's environment, or an error when the project does
// not have it.
func (c *client) environment(f *feature) (*environment, error) {
	for i := range f.Environments {
		if f.Environments[i].Name == c.env {
			return &f.Environments[i], nil
		}
	}
	return nil, fmt.Errorf("unleash: flag %q has no environment %q: is the environment enabled for project %q?", f.Name, c.env, c.project)
}

// listFeatures names the project's flags.
func (c *client) listFeatures(ctx context.Context) ([]string, error) {
	var out struct {
		Features []feature `json:"features"`
	}
	path := "/api/admin/projects/" + url.PathEscape(c.project) + "/features"
	if _, err := c.do(ctx, http.MethodGet, path, nil, &out, false); err != nil {
		return nil, err
	}
	names := make([]string, 0, len(out.Features))
	for _, f := range out.Features {
		names = append(names, f.Name)
	}
	return names, nil
}

func (c *client) createFeature(ctx context.Context, f feature) error {
	path := "/api/admin/projects/" + url.PathEscape(c.project) + "/features"
	_, err := c.do(ctx, http.MethodPost, path, f, nil, false)
	return err
}

func (c *client) createStrategy(ctx context.Context, flag string, s strategy) error {
	_, err := c.do(ctx, http.MethodPost, c.envPath(flag)+"/strategies", s, nil, false)
	return err
}

func (c *client) updateStrategy(ctx context.Context, flag, id string, s strategy) error {
	s.ID = ""
	_, err := c.do(ctx, http.MethodPut, c.envPath(flag)+"/strategies/"+url.PathEscape(id), s, nil, false)
	return err
}

func (c *client) deleteStrategy(ctx context.Context, flag, id string) error {
	_, err := c.do(ctx, http.MethodDelete, c.envPath(flag)+"/strategies/"+url.PathEscape(id), nil, nil, false)
	return err
}

// setEnabled switches the flag on or off in the environment.
func (c *client) setEnabled(ctx context.Context, flag string, on bool) error {
	op := "/off"
	if on {
		op = "/on"
	}
	_, err := c.do(ctx, http.MethodPost, c.envPath(flag)+op, nil, nil, false)
	return err
}
