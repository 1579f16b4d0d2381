package main

import (
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strings"
	"time"

	toolkit "github.com/prometheus/exporter-toolkit/web"
	"golang.org/x/net/netutil"
)

// webFlags are the flags of Hermes's HTTP server. As in Prometheus,
// everything that can move traffic or reload the configuration is off until
// a flag turns it on.
type webFlags struct {
	listenAddr  string
	configFile  string
	tokenFile   string
	adminAPI    bool
	lifecycle   bool
	readTimeout time.Duration
	maxConns    int
}

func addWebFlags(fs *flag.FlagSet) *webFlags {
	w := &webFlags{}
	fs.StringVar(&w.listenAddr, "web.listen-address", ":9797", "address of the HTTP endpoints (/metrics, /api/v1/status, /-/reload, …)")
	fs.StringVar(&w.configFile, "web.config.file", "", "exporter-toolkit web configuration file enabling TLS and basic authentication")
	fs.StringVar(&w.tokenFile, "web.admin-token-file", "", "file holding a bearer token required by the admin API and /-/reload")
	fs.BoolVar(&w.adminAPI, "web.enable-admin-api", false, "enable the admin API (/api/v1/admin/*: pin, pause, clear, release)")
	fs.BoolVar(&w.lifecycle, "web.enable-lifecycle", false, "enable reloading the configuration over HTTP (/-/reload)")
	fs.DurationVar(&w.readTimeout, "web.read-timeout", 30*time.Second, "longest time to read a whole request, body included")
	fs.IntVar(&w.maxConns, "web.max-connections", 512, "most connections served at once; more wait until one closes")
	return w
}

// check validates the files the flags name, so a bad one stops Hermes at
// start-up rather than at the first request.
func (w *webFlags) check() (token string, err error) {
	if w.tokenFile != "" {
		if !w.adminAPI && !w.lifecycle {
			// The token would guard nothing: `hermes ctl` would answer
			// "the admin API is not enabled" to someone holding it.
			return "", errors.New("--web.admin-token-file is set but neither --web.enable-admin-api nor --web.enable-lifecycle is: add --web.enable-admin-api (hermes ctl) and --web.enable-lifecycle (POST /-/reload) to open what the token guards, or drop the token file")
		}
		if token, err = readToken(w.tokenFile); err != nil {
			return "", fmt.Errorf("--web.admin-token-file: %w", err)
		}
	}
	if w.maxConns < 1 {
		return "", fmt.Errorf("--web.max-connections must be at least 1, not %d", w.maxConns)
	}
	if err := toolkit.Validate(w.configFile); err != nil {
		return "", fmt.Errorf("--web.config.file %s: %w", w.configFile, err)
	}
	return token, nil
}

// readToken reads a bearer token file. A file without a token is an error:
// read as "no token" it would leave the admin API open.
func readToken(path string) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	token := strings.TrimSpace(string(b))
	if token == "" {
		return "", fmt.Errorf("%s holds no token (it is empty or only white space)", path)
	}
	return token, nil
}

// listen listens on --web.listen-address and serves at most
// --web.max-connections connections at once, as Prometheus does: a further
// one waits in the kernel's backlog until another closes, so a flood of
// clients cannot exhaust the process's file descriptors.
func (w *webFlags) listen() (net.Listener, error) {
	ln, err := net.Listen("tcp", w.listenAddr)
	if err != nil {
		return nil, fmt.Errorf("--web.listen-address: %w", err)
	}
	return netutil.LimitListener(ln, w.maxConns), nil
}

// Server timeouts: a client must send its headers and body within the read
// timeout; the longest handler (a reload, or a command waiting for its
// tick) gives up within a minute, well inside writeTimeout.
const (
	readHeaderTimeout = 10 * time.Second
	writeTimeout      = 2 * time.Minute
	idleTimeout       = 2 * time.Minute
)

// newServer returns the HTTP server with its timeouts.
func (w *webFlags) newServer(h http.Handler) *http.Server {
	return &http.Server{Handler: h, ReadHeaderTimeout: min(readHeaderTimeout, w.readTimeout), ReadTimeout: w.readTimeout,
		WriteTimeout: writeTimeout, IdleTimeout: idleTimeout}
}

// serve serves srv on ln, with TLS and basic authentication when
// --web.config.file asks for them (exporter-toolkit, as Prometheus does).
func (w *webFlags) serve(ln net.Listener, srv *http.Server, logger *slog.Logger) error {
	noSystemd := false
	err := toolkit.Serve(ln, srv, &toolkit.FlagConfig{
		WebListenAddresses: &[]string{w.listenAddr}, WebSystemdSocket: &noSystemd, WebConfigFile: &w.configFile,
	}, logger)
	if errors.Is(err, http.ErrServerClosed) {
		return nil
	}
	return err
}
