package runner

import (
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/hermes-failover/hermes/actuators"
	"github.com/hermes-failover/hermes/actuators/file"
	"github.com/hermes-failover/hermes/actuators/nginx"
	"github.com/hermes-failover/hermes/internal/testenv"
	"github.com/hermes-failover/hermes/rules"
	"github.com/hermes-failover/hermes/traffic"
)

// sharedBackends are a real nginx (one worker, so weighted round robin
// splits exactly) in front of one HTTP server per route of chat, each
// answering its route's name, and a split file: the two backends two
// replicas write.
type sharedBackends struct {
	config string // the replicas' configuration, at one-second ticks
	split  string // the file actuator's path
	addr   string // nginx's proxy
	state  string // the nginx actuator's state_listen
	client *http.Client
}

func startSharedBackends(t *testing.T) *sharedBackends {
	t.Helper()
	bin := testenv.Binary(t, "nginx")
	dir := t.TempDir()
	b := &sharedBackends{split: filepath.Join(dir, "split.json"), addr: testenv.FreeAddr(t), state: testenv.FreeAddr(t),
		client: &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}}
	ngDir := filepath.Join(dir, "nginx")
	conf := testenv.NginxConf(t, ngDir, b.addr, "proxy_pass http://hermes_chat;", "hermes/*.conf")
	errLog := filepath.Join(ngDir, "error.log")
	var ups strings.Builder
	for _, route := range []string{"free", "paid-standard", "paid-premium"} {
		s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, route) }))
		t.Cleanup(s.Close)
		fmt.Fprintf(&ups, "        %s: [%s]\n", route, s.Listener.Addr())
	}
	acts := fmt.Sprintf("actuators:\n  - type: file\n    path: %s\n  - type: nginx\n    include_path: %s\n    upstreams:\n      chat:\n%s"+
		"    nginx_binary: %s\n    prefix: %s\n    config_file: %s\n    test_args: [-t, -q, -e, %s]\n    reload_args: [-s, reload, -e, %s]\n"+
		"    command_timeout: 5s\n    state_listen: %s\n",
		b.split, filepath.Join(ngDir, "hermes", "{service}.conf"), ups.String(), bin, ngDir, conf, errLog, errLog, b.state)
	body := strings.Replace(string(rules.DefaultYAML), "actuators: []\n", acts, 1)
	body = strings.Replace(body, "evaluation_interval: 15s\n  query_timeout: 10s", "evaluation_interval: 1s\n  query_timeout: 500ms", 1)
	if !strings.Contains(body, "evaluation_interval: 1s") || !strings.Contains(body, "state_listen") {
		t.Fatal("the shipped policy changed: cannot set the actuators and a one-second interval")
	}
	b.config = filepath.Join(dir, "hermes.yaml")
	if err := os.WriteFile(b.config, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	// The include file first, as `hermes check --write-initial` writes it.
	kinds := b.kinds()
	r, _ := newFileRunner(t, &fakeProm{}, dir, Options{ConfigPath: b.config, Actuators: kinds})
	initial := actuators.Splits{"chat": {Weights: map[string]int{"free": 100, "paid-standard": 0, "paid-premium": 0}}}
	if _, err := actuators.WriteInitial(r.acts, initial); err != nil {
		t.Fatal(err)
	}
	testenv.StartNginx(t, bin, ngDir, conf, errLog, b.addr)
	return b
}

func (b *sharedBackends) kinds() *actuators.Registry {
	kinds := &actuators.Registry{}
	file.Register(kinds)
	nginx.Register(kinds)
	return kinds
}

// replica is a runner named name writing both backends, querying fp,
// reading the wall clock skewed by skew.
func (b *sharedBackends) replica(t *testing.T, fp *fakeProm, name string, skew time.Duration) (*Runner, *prometheus.Registry) {
	t.Helper()
	reg := prometheus.NewRegistry()
	r, _ := newFileRunner(t, fp, t.TempDir(), Options{ConfigPath: b.config, Actuators: b.kinds(), Registerer: reg, Replica: name,
		Now: func() time.Time { return time.Now().Add(skew) }})
	return r, reg
}

// served is the split nginx answers on state_listen for chat, and who
// stamped it.
func (b *sharedBackends) served() (traffic.Split, error) {
	var s traffic.Split
	req, err := http.NewRequest(http.MethodGet, "http://"+b.state+"/hermes-state", nil)
	if err != nil {
		return s, err
	}
	req.Host = "hermes-state.hermes_chat"
	resp, err := b.client.Do(req)
	if err != nil {
		return s, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return s, fmt.Errorf("nginx state: %s", resp.Status)
	}
	return s, json.NewDecoder(resp.Body).Decode(&s)
}

// route sends one request through nginx and returns the route that answered.
func (b *sharedBackends) route() (string, error) {
	resp, err := b.client.Get("http://" + b.addr + "/")
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	return string(body), err
}

// both are chat's split in the file and in what nginx serves, with
// their writers, for a failure message.
func (b *sharedBackends) both(t *testing.T) (inFile, inNginx traffic.Split, detail string) {
	inFile = stamped(t, b.split)
	inNginx, err := b.served()
	detail = fmt.Sprintf("file %v by %q, nginx %v by %q", inFile.Weights, inFile.Writer.Replica, inNginx.Weights, inNginx.Writer.Replica)
	if err != nil {
		detail += " (" + err.Error() + ")"
	}
	return inFile, inNginx, detail
}

// TestLeaseHoldsUnderClockSkewOnNginxAndFile is
// TestLeaseHoldsUnderClockSkew against the real backends: two replicas
// at one-second ticks write one real nginx (its state line, which nginx
// answers on state_listen, carries the lease) and one split file. a
// sees every route healthy; b sees free failing and its wall clock is
// 2 s behind, or 10 s ahead. While a renews its lease, both backends
// hold a's split and stamp on every poll and every request through nginx
// reaches free; b holds (replicas_disagree). Once a stops, b's split
// reaches both backends and the requests leave free.
func TestLeaseHoldsUnderClockSkewOnNginxAndFile(t *testing.T) {
	for _, skew := range []time.Duration{-2 * time.Second, 10 * time.Second} {
		t.Run(skew.String(), func(t *testing.T) {
			b := startSharedBackends(t)
			a, _ := b.replica(t, &fakeProm{soft: 0.02}, "a", 0)
			stopA := start(t, a)
			testenv.EventuallyDetail(t, 30*time.Second, "a writes free=100 to both backends", func() (bool, string) {
				f, n, detail := b.both(t)
				return f.Writer.Replica == "a" && n.Writer.Replica == "a" && f.Weights["free"] == 100 && n.Weights["free"] == 100, detail
			})
			rb, regB := b.replica(t, &fakeProm{soft: 0.5}, "b", skew)
			stopB := start(t, rb)
			held := map[string]string{"service": "chat", "reason": HeldReplicasDisagree}
			testenv.EventuallyDetail(t, 30*time.Second, "b fails free over in its own view", func() (bool, string) {
				own := rb.View().State.Services["chat"]
				return own != nil && own.Weights["free"] == 0, fmt.Sprintf("b decided %v", own)
			})
			// Watch ten more of b's ticks and five renewals of a's stamp in
			// nginx, however long a loaded machine takes for them: a holder
			// that stops renewing never reaches five (and its lease lapses
			// to b, which the checks on every poll catch first).
			first := rb.View().LastTick
			polls, renewed := 0, 0
			var lastStamp traffic.Stamp
			testenv.EventuallyDetail(t, 2*time.Minute, "ten of b's ticks and five renewals of a's stamp in nginx", func() (bool, string) {
				bTicks := rb.View().LastTick.Sub(first)
				f, n, detail := b.both(t)
				if f.Writer.Replica != "a" || n.Writer.Replica != "a" || !maps.Equal(f.Weights, n.Weights) || f.Weights["free"] != 100 {
					t.Fatalf("poll %d: %s, want a's free=100 in both (b's clock off by %s)", polls, detail, skew)
				}
				// Only a stamp later than any seen is a renewal: right after
				// a reload an old nginx worker may still answer the one
				// before.
				if n.Writer.Tick.After(lastStamp.Tick) {
					if !lastStamp.IsZero() {
						renewed++
					}
					lastStamp = n.Writer
				}
				if got, err := b.route(); err != nil || got != "free" {
					t.Fatalf("poll %d: a request through nginx reached %q (%v), want free", polls, got, err)
				}
				polls++
				return bTicks >= 10*time.Second && renewed >= 5,
					fmt.Sprintf("b ticked %s past its first failover view; a's stamp in nginx renewed %d times over %d polls, now %s", bTicks, renewed, polls, detail)
			})
			if v := testenv.Metric(t, regB, "hermes_service_actuation_held", held); v != 1 {
				t.Errorf("replica b: held{reason=%q} = %v, want 1", HeldReplicasDisagree, v)
			}
			stopA()
			testenv.EventuallyDetail(t, 30*time.Second, "b's split in both backends once a's lease expired", func() (bool, string) {
				f, n, detail := b.both(t)
				return f.Writer.Replica == "b" && n.Writer.Replica == "b" && f.Weights["free"] == 0 && n.Weights["free"] == 0, detail
			})
			testenv.EventuallyDetail(t, 10*time.Second, "requests through nginx leave free", func() (bool, string) {
				got, err := b.route()
				return err == nil && got != "free", fmt.Sprint(got, err)
			})
			stopB()
		})
	}
}
