package fakeprovider

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"
)

func (s *Server) getFaults(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, s.Faults())
}

func (s *Server) putFault(w http.ResponseWriter, r *http.Request) {
	var f Fault
	dec := json.NewDecoder(io.LimitReader(r.Body, 4096))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&f); err != nil {
		writeJSON(w, http.StatusBadRequest, apiError("invalid_request_error", "", "fault: "+err.Error()))
		return
	}
	kind, err := ParseKind(string(f.Kind))
	if err == nil {
		f.Kind = kind
		err = f.Validate()
	}
	if err != nil {
		writeJSON(w, http.StatusBadRequest, apiError("invalid_request_error", "", err.Error()))
		return
	}
	route := r.PathValue("route")
	s.SetFault(route, f)
	writeJSON(w, http.StatusOK, map[string]Fault{route: f})
}

func (s *Server) deleteFault(w http.ResponseWriter, r *http.Request) {
	s.Heal(r.PathValue("route"))
	w.WriteHeader(http.StatusNoContent)
}

// Client sets and clears the faults of a provider over HTTP.
type Client struct {
	// URL is the provider's base URL (http://127.0.0.1:19793).
	URL  string
	HTTP *http.Client
}

// NewClient returns a client of the provider at base.
func NewClient(base string) *Client {
	return &Client{URL: strings.TrimSuffix(base, "/"), HTTP: &http.Client{Timeout: 5 * time.Second}}
}

// SetFault sets route's fault.
func (c *Client) SetFault(ctx context.Context, route string, f Fault) error {
	body, err := json.Marshal(f)
	if err != nil {
		return err
	}
	return c.do(ctx, http.MethodPut, "/-/faults/"+url.PathEscape(route), body, nil)
}

// Heal clears route's fault.
func (c *Client) Heal(ctx context.Context, route string) error {
	return c.do(ctx, http.MethodDelete, "/-/faults/"+url.PathEscape(route), nil, nil)
}

// Faults lists the faults set, by route.
func (c *Client) Faults(ctx context.Context) (map[string]Fault, error) {
	var out map[string]Fault
	return out, c.do(ctx, http.MethodGet, "/-/faults", nil, &out)
}

func (c *Client) do(ctx context.Context, method, path string, body []byte, out any) error {
	req, err := http.NewRequestWithContext(ctx, method, c.URL+path, bytes.NewReader(body))
	if err != nil {
		return err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.HTTP.Do(req)
	if err != nil {
		return fmt.Errorf("fake provider: %w", err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	if resp.StatusCode/100 != 2 {
		var e struct {
			Error struct{ Message string } `json:"error"`
		}
		if json.Unmarshal(b, &e) == nil && e.Error.Message != "" {
			return fmt.Errorf("fake provider: %s %s: %s", method, path, e.Error.Message)
		}
		return fmt.Errorf("fake provider: %s %s: %s", method, path, resp.Status)
	}
	if out != nil {
		if err := json.Unmarshal(b, out); err != nil {
			return fmt.Errorf("fake provider: decoding %s: %w", path, err)
		}
	}
	return nil
}
