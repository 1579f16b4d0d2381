package actuators

import (
	"cmp"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"os"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/go-viper/mapstructure/v2"
	"github.com/prometheus/common/model"

	"github.com/hermes-failover/hermes/rules/config"
)

// Settings is what Build hands a backend's factory: the actuator's
// configuration, resolved.
type Settings struct {
	// Name is the actuator's `name:`, or its type when unset.
	Name string
	// Type is the actuator's `type:`.
	Type string
	// Services are the services the actuator handles (nil: all). The
	// wrapper Build puts around the backend (see Scope) already keeps only
	// these in Apply's desired state and in Current's answer: a backend
	// reads them only to check its options against them.
	Services []string
	// Options are the type-specific keys, without the reserved keys of
	// WrapOptions; the factory decodes them (see DecodeOptions).
	Options map[string]any
	// Logger is never nil and already carries the actuator's name.
	Logger *slog.Logger
}

// Factory builds one actuator from its settings. It decodes s.Options
// itself (see DecodeOptions) and reports every problem it finds.
type Factory func(s Settings) (Actuator, error)

// Registry maps actuator kinds (the `type:` of an actuator) to their
// factories. Backends are wired explicitly: the binary calls each backend
// package's Register with one Registry. The zero value is ready to use.
type Registry struct {
	factories map[string]Factory
}

// Register adds a kind. It panics on an empty kind, a nil factory or a kind
// registered twice: all three are wiring mistakes, not configuration errors.
func (r *Registry) Register(kind string, f Factory) {
	if kind == "" || f == nil {
		panic("actuators: Register needs a kind and a factory")
	}
	if _, dup := r.factories[kind]; dup {
		panic(fmt.Sprintf("actuators: kind %q registered twice", kind))
	}
	if r.factories == nil {
		r.factories = map[string]Factory{}
	}
	r.factories[kind] = f
}

// Kinds lists the registered kinds, sorted.
func (r *Registry) Kinds() []string {
	return slices.Sorted(maps.Keys(r.factories))
}

// Build builds every configured actuator, picking the factory by type. It
// returns every problem at once, each prefixed with its place in the
// configuration ("actuators[1] (dns): zone must be set") and made with
// config.ProblemAt, so that config.Config.Locate adds its file:line; on any
// problem it returns no actuators. Two actuators writing one target (see
// Targeter) are a problem. What the machine must provide is checked
// separately, by Preflight.
//
// The keys every actuator accepts (dry_run, retry; see WrapOptions) are
// taken out of the options before the factory sees them, and each backend
// comes back wrapped by Wrap: always in Safety, and in Retry and DryRun as
// configured. Backend unwraps it. (max_shift_per_tick is decoded by rules
// into ActuatorConfig.MaxShiftPerTick, and the core plans its steps.)
func (r *Registry) Build(cfgs []config.ActuatorConfig, logger *slog.Logger) ([]Actuator, error) {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	var (
		out  []Actuator
		errs []error
	)
	for i, cfg := range cfgs {
		s := Settings{Name: cmp.Or(cfg.Name, cfg.Type), Type: cfg.Type, Services: slices.Clone(cfg.Services)}
		s.Logger = logger.With("actuator", s.Name)
		a, err := r.build(s, cfg.Options)
		if err != nil {
			for _, e := range flatten(err) {
				errs = append(errs, problemAt(i, s.Name, e))
			}
			continue
		}
		out = append(out, a)
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	if err := checkTargets(out); err != nil {
		return nil, err
	}
	return out, nil
}

// build builds and wraps one actuator; opts are all its keys.
func (r *Registry) build(s Settings, opts map[string]any) (Actuator, error) {
	known := strings.Join(r.Kinds(), ", ")
	if s.Type == "" {
		return nil, fmt.Errorf("type must be set (known types: %s)", known)
	}
	f, ok := r.factories[s.Type]
	if !ok {
		return nil, fmt.Errorf("unknown type %q (known types: %s)", s.Type, known)
	}
	wrap, rest, werr := SplitWrapOptions(opts)
	s.Options = rest
	a, err := f(s)
	if err == nil && a == nil {
		err = errors.New("factory returned no actuator")
	}
	if err := errors.Join(err, werr); err != nil {
		return nil, err
	}
	wrap.Services = s.Services
	return Wrap(a, wrap, s.Logger), nil
}

// flatten splits joined errors so that each problem gets its own prefix.
func flatten(err error) []error {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		var out []error
		for _, e := range j.Unwrap() {
			out = append(out, flatten(e)...)
		}
		return out
	}
	return []error{err}
}

// Filter keeps the services an actuator handles; an empty list keeps all.
// The result is a new map; the states themselves are shared.
func Filter(desired Splits, services []string) Splits {
	if len(services) == 0 {
		return maps.Clone(desired)
	}
	out := Splits{}
	for _, s := range services {
		if st, ok := desired[s]; ok {
			out[s] = st
		}
	}
	return out
}

// DecodeOptions decodes an actuator's type-specific keys into the struct
// pointed to by into, matching `mapstructure` tags. Unknown keys are errors.
// Durations are given as strings ("5s", "1m30s", "1d"), file modes as
// integers (0644 in YAML) or octal strings ("0644"). Fields absent from opts
// keep their value, so set defaults before decoding. Every problem is
// returned, joined, each naming its key.
func DecodeOptions(opts map[string]any, into any) error {
	dec, err := mapstructure.NewDecoder(&mapstructure.DecoderConfig{
		DecodeHook:  mapstructure.ComposeDecodeHookFunc(durationHook, fileModeHook),
		ErrorUnused: true,
		Result:      into,
		TagName:     "mapstructure",
	})
	if err != nil {
		return err
	}
	if opts == nil {
		return nil
	}
	if err := dec.Decode(opts); err != nil {
		root := reflect.TypeOf(into).Elem().String()
		return errors.Join(decodeErrors(err, root)...)
	}
	return nil
}

// durationHook parses durations in Go ("1.5s", "500ms") or Prometheus
// ("1d", "1w") notation. A bare number other than 0 is refused: it would
// silently mean nanoseconds.
func durationHook(from, to reflect.Type, data any) (any, error) {
	if to != reflect.TypeFor[time.Duration]() {
		return data, nil
	}
	switch v := reflect.ValueOf(data); {
	case from.Kind() == reflect.String:
		s := strings.TrimSpace(v.String())
		if d, err := time.ParseDuration(s); err == nil {
			return d, nil
		}
		if d, err := model.ParseDuration(s); err == nil {
			return time.Duration(d), nil
		}
		return nil, fmt.Errorf("invalid duration %q (want e.g. 5s, 1m30s, 1d)", s)
	case v.CanInt() || v.CanUint() || v.CanFloat():
		if v.IsZero() {
			return time.Duration(0), nil
		}
		return nil, fmt.Errorf("duration %v needs a unit, e.g. \"%vs\"", data, data)
	}
	return data, nil
}

// fileModeHook parses file modes given as octal strings ("0644", "0o644").
func fileModeHook(from, to reflect.Type, data any) (any, error) {
	if to != reflect.TypeFor[os.FileMode]() || from.Kind() != reflect.String {
		return data, nil
	}
	s := strings.TrimSpace(data.(string))
	m, err := strconv.ParseUint(strings.TrimPrefix(s, "0o"), 8, 32)
	if err != nil {
		return nil, fmt.Errorf("invalid file mode %q (want an octal number such as 0644)", s)
	}
	return os.FileMode(m), nil
}

// invalidKeys starts mapstructure's message for unknown keys.
const invalidKeys = "has invalid keys: "

// decodeErrors turns a mapstructure error into one error per problem, each
// "key: message"; root is how mapstructure names the top-level struct.
func decodeErrors(err error, root string) []error {
	if isJoined(err) {
		var out []error
		for _, e := range err.(interface{ Unwrap() []error }).Unwrap() {
			out = append(out, decodeErrors(e, root)...)
		}
		return out
	}
	if de, ok := err.(*mapstructure.DecodeError); ok {
		inner, name := de.Unwrap(), de.Name()
		if name == root {
			name = ""
		}
		if keys, ok := strings.CutPrefix(inner.Error(), invalidKeys); ok {
			var out []error
			for k := range strings.SplitSeq(keys, ", ") {
				if name != "" {
					k = name + "." + k
				}
				out = append(out, fmt.Errorf("%s: unknown key", k))
			}
			return out
		}
		if isJoined(inner) || name == "" {
			return decodeErrors(inner, root)
		}
		return []error{fmt.Errorf("%s: %w", name, inner)}
	}
	// Several problems arrive wrapped in one "decoding failed" error.
	if inner := errors.Unwrap(err); isJoined(inner) {
		return decodeErrors(inner, root)
	}
	return []error{err}
}

func isJoined(err error) bool {
	_, ok := err.(interface{ Unwrap() []error })
	return ok
}

// FactoryOf adapts a backend's constructor to a Factory. On error it
// returns a nil Actuator, never a typed nil wrapped in the interface. Its
// type parameter has the compiler check that the backend is an Actuator,
// so a backend's Register needs no other assertion.
func FactoryOf[T Actuator](newFn func(Settings) (T, error)) Factory {
	return func(s Settings) (Actuator, error) {
		a, err := newFn(s)
		if err != nil {
			return nil, err
		}
		return a, nil
	}
}
