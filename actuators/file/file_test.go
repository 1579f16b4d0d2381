package file

import (
	"bytes"
	"context"
	"crypto/sha256"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hermes-failover/hermes/actuators"
	"github.com/hermes-failover/hermes/actuators/actuatortest"
	"github.com/hermes-failover/hermes/rules/config"
	"github.com/hermes-failover/hermes/traffic"
)

func newActuator(t *testing.T, path string) *Actuator {
	t.Helper()
	a, err := New(actuatortest.Settings(Kind, map[string]any{"path": path}))
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return a
}

// fileState identifies one version of a file: its inode (a rename brings a
// new one), mtime and content.
type fileState struct {
	info fs.FileInfo
	sum  [sha256.Size]byte
}

func stat(t *testing.T, path string) fileState {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		return fileState{}
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return fileState{info: fi, sum: sha256.Sum256(data)}
}

func (s fileState) same(o fileState) bool {
	if s.info == nil || o.info == nil {
		return s.info == o.info
	}
	return os.SameFile(s.info, o.info) && s.info.ModTime().Equal(o.info.ModTime()) && s.sum == o.sum
}

func TestSuite(t *testing.T) {
	var dir, path string
	var last fileState
	actuatortest.Run(t, actuatortest.Harness{
		New: func(t *testing.T) actuators.Actuator {
			dir = filepath.Join(t.TempDir(), "state")
			if err := os.Mkdir(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			path = filepath.Join(dir, "routes.json")
			last = stat(t, path)
			return newActuator(t, path)
		},
		Changed: func(t *testing.T) bool {
			now := stat(t, path)
			changed := !now.same(last)
			last = now
			return changed
		},
		// Tests run as root, which ignores permissions: break the backend by
		// turning its directory into a regular file (ENOTDIR for everyone).
		Break: func(t *testing.T) {
			if err := os.Rename(dir, dir+".saved"); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(dir, []byte("not a directory"), 0o644); err != nil {
				t.Fatal(err)
			}
		},
		Repair: func(t *testing.T) {
			if err := os.Remove(dir); err != nil {
				t.Fatal(err)
			}
			if err := os.Rename(dir+".saved", dir); err != nil {
				t.Fatal(err)
			}
		},
		// The file backend holds no credentials.
	})
}

func TestApplyWritesIndentedJSON(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "routes.json")
	b := newActuator(t, path)
	b.now = func() time.Time { return time.Date(2025, 1, 2, 3, 4, 5, 600, time.FixedZone("CET", 3600)) }
	a := actuators.Scope(b, []string{"chat"})
	if err := a.Apply(context.Background(), actuatortest.Shed()); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	want := `{
  "services": {
    "chat": {
      "weights": {
        "free": 50,
        "paid": 50
      },
      "retries_enabled": true,
      "degraded_mode": false,
      "levels": {
        "free": "shed",
        "paid": "normal"
      },
      "reasons": [
        "free: score 72 < 75 for 2m"
      ]
    }
  },
  "updated_at": "2025-01-02T02:04:05Z"
}
`
	if string(got) != want {
		t.Errorf("file =\n%s\nwant\n%s", got, want)
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != DefaultMode {
		t.Errorf("mode = %v, want %v", fi.Mode().Perm(), DefaultMode)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("directory holds %d entries, want only the state file (temporary files left behind?)", len(entries))
	}
}

func TestApplyUnchangedKeepsMtime(t *testing.T) {
	path := filepath.Join(t.TempDir(), "routes.json")
	a := newActuator(t, path)
	ctx := context.Background()
	if err := a.Apply(ctx, actuatortest.Shed()); err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-time.Hour).Truncate(time.Second)
	if err := os.Chtimes(path, old, old); err != nil {
		t.Fatal(err)
	}
	d := actuatortest.Shed()
	chat := d["chat"]
	chat.Reasons = []string{"only the reason differs"}
	d["chat"] = chat
	if err := a.Apply(ctx, d); err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Stat(path); !fi.ModTime().Equal(old) {
		t.Errorf("mtime moved to %v on an unchanged state", fi.ModTime())
	}
	if err := a.Apply(ctx, actuatortest.Failover()); err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Stat(path); fi.ModTime().Equal(old) {
		t.Error("mtime unchanged after a new split")
	}
}

func TestApplyRewritesOnServiceSetOrMode(t *testing.T) {
	path := filepath.Join(t.TempDir(), "routes.json")
	ctx := context.Background()
	a := newActuator(t, path)
	if err := a.Apply(ctx, actuatortest.Shed()); err != nil {
		t.Fatal(err)
	}
	// Dropping a service rewrites the file without it.
	chatOnly := actuators.Filter(actuatortest.Shed(), []string{"chat"})
	if err := a.Apply(ctx, chatOnly); err != nil {
		t.Fatal(err)
	}
	if got, _ := a.Current(ctx); len(got) != 1 {
		t.Errorf("Current = %v, want only chat", got)
	}
	// A new mode is applied even when the state is unchanged.
	b, err := New(actuatortest.Settings(Kind, map[string]any{"path": path, "mode": "0600"}))
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Apply(ctx, chatOnly); err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o600 {
		t.Errorf("mode = %v, want 0600", fi.Mode().Perm())
	}
}

func TestServicesFilter(t *testing.T) {
	path := filepath.Join(t.TempDir(), "routes.json")
	ctx := context.Background()
	if err := newActuator(t, path).Apply(ctx, actuatortest.Failover()); err != nil {
		t.Fatal(err)
	}
	a := actuators.Scope(newActuator(t, path), []string{"embed", "absent"})
	got, err := a.Current(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || !got["embed"].Degraded {
		t.Fatalf("Current = %+v, want embed only, degraded", got)
	}
	if err := a.Apply(ctx, actuatortest.Failover()); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(path)
	if bytes.Contains(data, []byte(`"chat"`)) {
		t.Errorf("file still holds chat, a service the actuator does not handle:\n%s", data)
	}
}

func TestCurrent(t *testing.T) {
	path := filepath.Join(t.TempDir(), "routes.json")
	a := newActuator(t, path)
	ctx := context.Background()
	got, err := a.Current(ctx)
	if err != nil || got == nil || len(got) != 0 {
		t.Fatalf("Current of a missing file = %v, %v; want empty, nil", got, err)
	}
	if err := os.WriteFile(path, []byte(`{"services": {"chat": `), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Current(ctx); err == nil || !strings.Contains(err.Error(), path) {
		t.Fatalf("Current of a corrupt file: err = %v, want one naming %s", err, path)
	}
	// The desired state is authoritative: Apply replaces a corrupt file.
	if err := a.Apply(ctx, actuatortest.Normal()); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Current(ctx); err != nil {
		t.Fatal(err)
	}
}

func TestApplyCanceled(t *testing.T) {
	path := filepath.Join(t.TempDir(), "routes.json")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := newActuator(t, path).Apply(ctx, actuatortest.Normal()); err == nil {
		t.Fatal("Apply with a canceled context: nil error")
	}
	if _, err := os.Stat(path); err == nil {
		t.Error("Apply with a canceled context wrote the file")
	}
}

func TestParseConfig(t *testing.T) {
	actuatortest.ParseCases(t, ParseConfig, []actuatortest.ParseCase[Config]{
		{Name: "defaults", Opts: map[string]any{"path": "/x"}, Want: Config{Path: "/x", Mode: 0o644}},
		{Name: "yaml octal", Opts: map[string]any{"path": "/x", "mode": 0o600}, Want: Config{Path: "/x", Mode: 0o600}},
		{Name: "string octal", Opts: map[string]any{"path": "/x", "mode": "0640"}, Want: Config{Path: "/x", Mode: 0o640}},
		{Name: "0o prefix", Opts: map[string]any{"path": "/x", "mode": "0o600"}, Want: Config{Path: "/x", Mode: 0o600}},
		{Name: "decimal 644", Opts: map[string]any{"path": "/x", "mode": 644}, Errs: []string{"mode: 01204 is not a permission"}},
		{Name: "bad string", Opts: map[string]any{"path": "/x", "mode": "rw-r--r--"}, Errs: []string{`mode: invalid file mode "rw-r--r--"`}},
		{Name: "empty", Opts: nil, Errs: []string{"path must be set"}},
		{
			Name: "every problem",
			Opts: map[string]any{"mode": "9", "colour": "red", "pth": "/x"},
			Errs: []string{"mode: invalid file mode", "colour: unknown key", "pth: unknown key"},
		},
		{Name: "wrong type", Opts: map[string]any{"path": []any{"a"}}, Errs: []string{"path: "}},
	})
}

func TestRegistryBuild(t *testing.T) {
	var r actuators.Registry
	Register(&r)
	path := filepath.Join(t.TempDir(), "routes.json")
	acts, err := r.Build([]config.ActuatorConfig{
		{Name: "state", Type: "file", Services: []string{"chat"}, Options: map[string]any{"path": path}},
	}, nil)
	if err != nil || len(acts) != 1 || acts[0].Name() != "state" {
		t.Fatalf("Build = %v, %v; want the state actuator", acts, err)
	}
	acts, err = r.Build([]config.ActuatorConfig{
		{Type: "file", Options: map[string]any{"path": path}},
		{Type: "dns"},
		{Name: "nopath", Type: "file", Options: map[string]any{"mode": "0x"}},
		{Name: "notype"},
	}, nil)
	if acts != nil {
		t.Errorf("Build returned actuators %v along with an error", acts)
	}
	want := `actuators[1] (dns): unknown type "dns" (known types: file)
actuators[2] (nopath): mode: invalid file mode "0x" (want an octal number such as 0644)
actuators[3] (notype): type must be set (known types: file)`
	if err == nil || err.Error() != want {
		t.Errorf("Build error =\n%v\nwant\n%s", err, want)
	}
}

func TestDecodeOptions(t *testing.T) {
	type opts struct {
		Timeout time.Duration `mapstructure:"timeout"`
		Count   int           `mapstructure:"count"`
	}
	for _, tc := range []struct {
		in   any
		want time.Duration
		err  string
	}{
		{in: "5s", want: 5 * time.Second},
		{in: "1m30s", want: 90 * time.Second},
		{in: "1d", want: 24 * time.Hour},
		{in: 0, want: 0},
		{in: 5, err: `timeout: duration 5 needs a unit, e.g. "5s"`},
		{in: "soon", err: `timeout: invalid duration "soon"`},
	} {
		var o opts
		err := actuators.DecodeOptions(map[string]any{"timeout": tc.in, "count": 3}, &o)
		switch {
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
			t.Errorf("DecodeOptions(%v): err = %v, want %q", tc.in, err, tc.err)
		case tc.err == "" && (err != nil || o.Timeout != tc.want || o.Count != 3):
			t.Errorf("DecodeOptions(%v) = %+v, %v; want timeout %v", tc.in, o, err, tc.want)
		}
	}
}

func TestFilter(t *testing.T) {
	d := actuatortest.Failover()
	if got := actuators.Filter(d, nil); len(got) != 2 {
		t.Errorf("Filter(nil) = %v, want every service", got)
	}
	got := actuators.Filter(d, []string{"embed", "absent"})
	if len(got) != 1 || !got["embed"].Equal(d["embed"]) {
		t.Errorf("Filter(embed, absent) = %v", got)
	}
	got["chat"] = traffic.Split{}
	if len(d) != 2 || !d["chat"].Equal(actuatortest.Failover()["chat"]) {
		t.Error("Filter's result aliases its input")
	}
}

// TestFromConfigFile goes through config.Parse, as the binary does: YAML
// octal modes and unknown keys reach the actuator as expected.
func TestFromConfigFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "routes.json")
	cfgs := actuatortest.ParseActuators(t, `
actuators:
  - {type: file, services: [chat], path: `+path+`, mode: 0600}
  - {name: typo, type: file, path: `+path+`, colour: red}
`)
	var r actuators.Registry
	Register(&r)
	_, err := r.Build(cfgs, nil)
	if want := "actuators[1] (typo): colour: unknown key"; err == nil || err.Error() != want {
		t.Fatalf("Build error = %v, want %q", err, want)
	}
	acts, err := r.Build(cfgs[:1], nil)
	if err != nil {
		t.Fatal(err)
	}
	if mode := actuators.Backend(acts[0]).(*Actuator).cfg.Mode; mode != 0o600 {
		t.Errorf("mode = %#o, want 0600", mode)
	}
}

// TestStampIsWrittenAndReadBack: a split stamped by a replica is written
// with its stamp and read back with it, and a new stamp on an unchanged
// split rewrites the file (the holder renews its lease every tick).
func TestStampIsWrittenAndReadBack(t *testing.T) {
	path := filepath.Join(t.TempDir(), "split.json")
	a := newActuator(t, path)
	tick := time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
	want := actuators.Splits{"chat": {Weights: map[string]int{"free": 100}, Writer: traffic.Stamp{Replica: "a", Tick: tick}}}
	if err := a.Apply(t.Context(), want); err != nil {
		t.Fatal(err)
	}
	got, err := a.Current(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if w := got["chat"].Writer; !w.Equal(want["chat"].Writer) {
		t.Fatalf("read back stamp %+v, want %+v", w, want["chat"].Writer)
	}
	before := stat(t, path)
	renewed := actuators.Splits{"chat": want["chat"]}
	sp := renewed["chat"]
	sp.Writer.Tick = tick.Add(time.Second)
	renewed["chat"] = sp
	if err := a.Apply(t.Context(), renewed); err != nil {
		t.Fatal(err)
	}
	if stat(t, path).same(before) {
		t.Error("a renewed stamp did not rewrite the file")
	}
	if got, _ := a.Current(t.Context()); !got["chat"].Writer.Equal(sp.Writer) {
		t.Errorf("stamp after renewal %+v, want %+v", got["chat"].Writer, sp.Writer)
	}
}

// TestRelayedOlderStampKeepsTheNewer: the replica that defers writes back
// the holder's split as it read it, possibly a tick old. Such a relayed
// write, the same replica's stamp but older, must leave the holder's
// newer split and stamp in the file (and not rewrite it when nothing else
// changed), while the other services of the same Apply are written; a
// write stamped by another replica (a lease that expired, or a person's
// pin) is written.
func TestRelayedOlderStampKeepsTheNewer(t *testing.T) {
	path := filepath.Join(t.TempDir(), "split.json")
	a := newActuator(t, path)
	t1 := time.Date(2026, 11, 30, 7, 12, 15, 0, time.UTC)
	t2 := t1.Add(15 * time.Second)
	stamped := func(route, replica string, tick time.Time) traffic.Split {
		return traffic.Split{Weights: map[string]int{route: 100}, Writer: traffic.Stamp{Replica: replica, Tick: tick}}
	}
	held := stamped("paid", "hermes-a", t2)
	if err := a.Apply(t.Context(), actuators.Splits{"chat": held}); err != nil {
		t.Fatal(err)
	}
	before := stat(t, path)

	relayed := actuators.Splits{"chat": stamped("free", "hermes-a", t1)}
	if err := a.Apply(t.Context(), relayed); err != nil {
		t.Fatalf("relayed Apply: %v", err)
	}
	got, err := a.Current(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if !got["chat"].Equal(held) || !got["chat"].Writer.Equal(held.Writer) {
		t.Errorf("after a relayed older write the file holds %v by %+v, want the newer paid=100 by %+v", got["chat"].Weights, got["chat"].Writer, held.Writer)
	}
	if !stat(t, path).same(before) {
		t.Error("a relayed older write rewrote the file")
	}
	if relayed["chat"].Weights["free"] != 100 {
		t.Errorf("Apply changed the caller's splits: %v", relayed)
	}

	embed := stamped("free", "hermes-b", t1)
	if err := a.Apply(t.Context(), actuators.Splits{"chat": stamped("free", "hermes-a", t1), "embed": embed}); err != nil {
		t.Fatal(err)
	}
	if got, _ := a.Current(t.Context()); !got["chat"].Writer.Equal(held.Writer) || !got["embed"].Writer.Equal(embed.Writer) {
		t.Errorf("relayed chat with a new embed: file holds chat by %+v, embed by %+v; want %+v and %+v", got["chat"].Writer, got["embed"].Writer, held.Writer, embed.Writer)
	}

	other := stamped("free", "hermes-b", t1)
	if err := a.Apply(t.Context(), actuators.Splits{"chat": other}); err != nil {
		t.Fatal(err)
	}
	if got, _ := a.Current(t.Context()); !got["chat"].Equal(other) || !got["chat"].Writer.Equal(other.Writer) {
		t.Errorf("another replica's write: file holds %v by %+v, want free=100 by hermes-b", got["chat"].Weights, got["chat"].Writer)
	}
}

// TestHeldServicesAreNamed: the services the runner holds are written
// under "held" with the reason, next to their split; the file is
// rewritten when the held set changes and only then; Current reads the
// splits alone.
func TestHeldServicesAreNamed(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "split.json")
	a := newActuator(t, path)
	d := actuatortest.Normal()
	a.Hold(map[string]string{"chat": "no_data"})
	if err := a.Apply(ctx, d); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(data), "\"held\": {\n    \"chat\": \"no_data\"\n  }") {
		t.Errorf("the file does not name chat as held:\n%s", data)
	}
	if cur, err := a.Current(ctx); err != nil || !cur["chat"].Equal(d["chat"]) {
		t.Errorf("Current = %v, %v; want the splits", cur, err)
	}
	before := stat(t, path)
	if err := a.Apply(ctx, d); err != nil {
		t.Fatal(err)
	}
	if !stat(t, path).same(before) {
		t.Error("an unchanged state and held set rewrote the file")
	}
	a.Hold(nil)
	if err := a.Apply(ctx, d); err != nil {
		t.Fatal(err)
	}
	if data, _ := os.ReadFile(path); strings.Contains(string(data), "held") {
		t.Errorf("nothing held any more, yet:\n%s", data)
	}
}

// TestUnreadableFileIsLoggedOnce corrupts the state file before every
// Apply, as a sidecar that keeps writing junk would: the warning is one
// line when the condition starts, one when its error changes and one when
// the file reads again, not a line per tick; a reminder comes after
// remindEvery.
func TestUnreadableFileIsLoggedOnce(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.json")
	var logs bytes.Buffer
	s := actuatortest.Settings(Kind, map[string]any{"path": path})
	s.Logger = slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelInfo}))
	a, err := New(s)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 12, 6, 10, 0, 0, 0, time.UTC)
	a.now = func() time.Time { return now }
	want := actuators.Splits{"chat": {Weights: map[string]int{"free": 100}}}
	apply := func(junk string) {
		t.Helper()
		if junk != "" {
			if err := os.WriteFile(path, []byte(junk), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		if err := a.Apply(context.Background(), want); err != nil {
			t.Fatal(err)
		}
		now = now.Add(15 * time.Second)
	}
	count := func(msg string) int {
		n := 0
		for _, l := range strings.Split(logs.String(), "\n") {
			if strings.Contains(l, `msg="`+msg) {
				n++
			}
		}
		return n
	}
	for range 5 {
		apply("not json")
	}
	if n := count("state file unreadable"); n != 1 {
		t.Errorf("after 5 ticks over a corrupt file: %d warnings, want 1\n%s", n, logs.String())
	}
	for range 3 {
		apply("{")
	}
	if n := count("changed: state file unreadable"); n != 1 {
		t.Errorf("after another error: %d change lines, want 1\n%s", n, logs.String())
	}
	now = now.Add(remindEvery)
	apply("{")
	if n := count("still: state file unreadable"); n != 1 {
		t.Errorf("after %s: %d reminders, want 1\n%s", remindEvery, n, logs.String())
	}
	apply("")
	apply("")
	if n := count("ended: state file unreadable"); n != 1 {
		t.Errorf("after the file reads again: %d end lines, want 1\n%s", n, logs.String())
	}
	if n := strings.Count(logs.String(), "state file unreadable"); n != 4 {
		t.Errorf("%d lines about the unreadable file over 11 ticks, want 4\n%s", n, logs.String())
	}
}
