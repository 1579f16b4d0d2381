package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/hermes-failover/hermes/web"
	"github.com/hermes-failover/hermes/web/api"
)

// apiClient talks to a running Hermes's status and admin API.
type apiClient struct {
	base  string
	token string
	http  *http.Client
}

// clientWait is how long ctl and explain wait for an answer: longer than
// the server may hold a command for its tick (web.HandlerWait), so that a
// command ctl reports as failed never applies afterwards.
const clientWait = web.HandlerWait + 15*time.Second

func newAPIClient(url, tokenFile string) (*apiClient, error) {
	c := &apiClient{base: strings.TrimRight(url, "/"), http: &http.Client{Timeout: clientWait}}
	if tokenFile != "" {
		token, err := readToken(tokenFile)
		if err != nil {
			return nil, fmt.Errorf("--token-file: %w", err)
		}
		c.token = token
	}
	return c, nil
}

func (c *apiClient) do(ctx context.Context, method, path string, body any, out any) error {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, rd)
	if err != nil {
		return err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return fmt.Errorf("cannot reach Hermes at %s: %w", c.base, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 8<<20))
	if err != nil {
		return err
	}
	if resp.StatusCode/100 != 2 {
		var e api.ErrorReply
		if json.Unmarshal(b, &e) == nil && e.Status == api.StatusError && e.Error != "" {
			return &apiError{method: method, path: path, code: resp.StatusCode, reply: e, hint: c.hint(resp.StatusCode)}
		}
		return fmt.Errorf("%s %s: %s: %s", method, path, resp.Status, strings.TrimSpace(string(b)))
	}
	if out != nil {
		if err := json.Unmarshal(b, out); err != nil {
			return fmt.Errorf("%s %s: bad JSON: %w", method, path, err)
		}
	}
	return nil
}

// command sends an admin command and returns what became of it (applied,
// or queued: Outcome says which). An error reply of the server is an
// *apiError.
func (c *apiClient) command(ctx context.Context, method, path string, body any) (api.CommandReply, error) {
	var r api.Response[api.CommandReply]
	if err := c.do(ctx, method, path, body, &r); err != nil {
		return api.CommandReply{}, err
	}
	if r.Status != api.StatusSuccess {
		return api.CommandReply{}, fmt.Errorf("%s %s: not an admin API reply (status %q): is %s a Hermes of this version?", method, path, r.Status, c.base)
	}
	return r.Data, nil
}

// apiError is an error reply of the admin API: its words, with a hint of
// the flag that would have avoided it.
type apiError struct {
	method, path string
	code         int // HTTP
	reply        api.ErrorReply
	hint         string
}

func (e *apiError) Error() string {
	return fmt.Sprintf("%s %s: %s%s", e.method, e.path, e.reply.Error, e.hint)
}

// hint says which flag would have avoided an answer of code: the token
// for a 401, and for a 403 the server flag that opens the API.
func (c *apiClient) hint(code int) string {
	switch {
	case code == http.StatusUnauthorized && c.token == "":
		return "; give --token-file FILE (or set " + envTokenFile + ") with the token of hermes run's --web.admin-token-file"
	case code == http.StatusUnauthorized:
		return "; the token in --token-file (or " + envTokenFile + ") is not the one of hermes run's --web.admin-token-file"
	}
	return ""
}

// status returns what /api/v1/status says, or an error when Hermes cannot
// be reached or has not evaluated a tick yet (see notReady).
func (c *apiClient) status(ctx context.Context) (api.Status, error) {
	var st api.Status
	if err := c.do(ctx, http.MethodGet, "/api/v1/status", nil, &st); err != nil {
		return st, err
	}
	return st, notReady(st)
}
