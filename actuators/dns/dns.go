package dns

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/miekg/dns"

	"github.com/hermes-failover/hermes/actuators"
	"github.com/hermes-failover/hermes/traffic"
)

// Kind is the `type:` of this actuator.
const Kind = "dns"

// Actuator drives DNS records through dynamic updates.
type Actuator struct {
	actuators.Named
	services []string // handled services, each with a record
	cfg      Config
	logger   *slog.Logger
	now      func() time.Time // TSIG signing time

	mu sync.Mutex // serialises Apply
}

// New builds a dns actuator from its settings. The services it handles
// are s.Services when set (each needs an entry under records), else every
// service under records.
func New(s actuators.Settings) (*Actuator, error) {
	c, err := ParseConfig(s.Options)
	if err != nil {
		return nil, err
	}
	services := slices.Clone(s.Services)
	var errs []error
	for _, svc := range services {
		if _, ok := c.Records[svc]; !ok {
			errs = append(errs, fmt.Errorf("services: %q has no entry under records", svc))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	if len(services) == 0 {
		services = sortedKeys(c.Records)
	}
	return &Actuator{Named: actuators.Named(s.Name), services: services, cfg: c, logger: s.Logger, now: time.Now}, nil
}

// Register adds the dns actuator to r.
func Register(r *actuators.Registry) { r.Register(Kind, actuators.FactoryOf(New)) }

// rrset is the content of one owner name and type.
type rrset struct {
	name    string
	rrtype  uint16
	records []dns.RR
}

func (s rrset) String() string {
	return s.name + " " + dns.TypeToString[s.rrtype]
}

// Apply makes the records of the desired services match, with at most one
// UPDATE. A service whose desired state cannot be written (a route with
// traffic but no record, every route at 0 %) is reported and skipped; the
// others are still applied.
func (a *Actuator) Apply(ctx context.Context, desired actuators.Splits) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	want := actuators.Filter(desired, a.services) // those with a record
	var (
		errs    []error
		sets    []rrset
		changes []rrset
	)
	var ok []string // the services whose desired state can be written
	for _, svc := range sortedKeys(want) {
		if _, err := a.wanted(svc, want[svc]); err != nil {
			errs = append(errs, fmt.Errorf("dns: service %s: %w", svc, err))
			continue
		}
		ok = append(ok, svc)
	}
	if len(ok) == 0 {
		return errors.Join(errs...)
	}
	s, err := a.dial(ctx)
	if err != nil {
		return errors.Join(append(errs, err)...)
	}
	defer s.close()
	for _, svc := range ok {
		st, err := a.keepNewer(ctx, s, svc, want[svc])
		if err != nil {
			return errors.Join(append(errs, err)...)
		}
		ss, err := a.wanted(svc, st)
		if err != nil {
			errs = append(errs, fmt.Errorf("dns: service %s: %w", svc, err))
			continue
		}
		sets = append(sets, ss...)
	}
	for _, set := range sets {
		have, err := s.query(ctx, set.name, set.rrtype)
		if err != nil {
			return errors.Join(append(errs, err)...)
		}
		if !sameRRset(have, set.records) {
			changes = append(changes, set)
		}
	}
	if len(changes) == 0 {
		a.logger.Debug("dns records up to date", "zone", a.cfg.Zone)
		return errors.Join(errs...)
	}
	if err := s.update(ctx, changes); err != nil {
		return errors.Join(append(errs, err)...)
	}
	names := make([]string, len(changes))
	for i, c := range changes {
		names[i] = c.String()
	}
	a.logger.Info("updated dns records", "zone", a.cfg.Zone, "server", a.cfg.Server, "rrsets", names)
	// Read back: an accepted update may still have been ignored in part.
	for _, set := range changes {
		have, err := s.query(ctx, set.name, set.rrtype)
		if err != nil {
			return errors.Join(append(errs, err)...)
		}
		if !sameRRset(have, set.records) {
			errs = append(errs, fmt.Errorf("dns: %s: update accepted but not applied: the server holds %d record(s), want %d (conflicting data at the name, e.g. a CNAME?)", set, len(have), len(set.records)))
		}
	}
	return errors.Join(errs...)
}

// wanted returns the RRsets that express one service's desired state.
func (a *Actuator) wanted(svc string, st traffic.Split) ([]rrset, error) {
	rec := a.cfg.Records[svc]
	var (
		rrs []dns.RR
		err error
	)
	switch rec.Mode {
	case ModeSRV:
		rrs, err = srvRecords(rec, st.Weights, a.cfg.TTL)
	case ModeFailover:
		rrs, err = failoverRecords(rec, st.Weights, a.cfg.TTL)
	}
	if err != nil {
		return nil, err
	}
	sets := []rrset{{name: rec.Name, rrtype: rec.rrtype(), records: rrs}}
	if a.cfg.Flags {
		sets = append(sets, rrset{name: rec.flagsName(), rrtype: dns.TypeTXT, records: []dns.RR{flagsRecord(rec.flagsName(), st, a.cfg.TTL)}})
	}
	return sets, nil
}

// Current reads each handled service's records back. A service without
// records, or whose records match no route (failover mode), is absent.
// Weights hold every configured route; in failover mode the route the
// records point at has 100. Flags are false unless `flags` is on and the
// TXT record says otherwise.
func (a *Actuator) Current(ctx context.Context) (actuators.Splits, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s, err := a.dial(ctx)
	if err != nil {
		return nil, err
	}
	defer s.close()
	out := actuators.Splits{}
	for _, svc := range a.services {
		rec := a.cfg.Records[svc]
		have, err := s.query(ctx, rec.Name, rec.rrtype())
		if err != nil {
			return nil, err
		}
		weights := recordWeights(rec, have)
		if weights == nil {
			if len(have) > 0 {
				a.logger.Warn("dns records match no route", "service", svc, "rrset", rrset{name: rec.Name, rrtype: rec.rrtype()}.String())
			}
			continue
		}
		st := traffic.Split{Weights: weights}
		if a.cfg.Flags {
			txt, err := s.query(ctx, rec.flagsName(), dns.TypeTXT)
			if err != nil {
				return nil, err
			}
			f := parseFlags(txt)
			st.RetriesEnabled, st.Degraded, st.Writer = f.retries, f.degraded, f.writer
		}
		out[svc] = st
	}
	return out, nil
}

// sameRRset reports whether two RRsets hold the same records with the same
// TTLs (names compare case-insensitively).
func sameRRset(have, want []dns.RR) bool {
	if len(have) != len(want) {
		return false
	}
	for _, w := range want {
		if !slices.ContainsFunc(have, func(h dns.RR) bool {
			return dns.IsDuplicate(h, w) && h.Header().Ttl == w.Header().Ttl
		}) {
			return false
		}
	}
	return true
}

// header is the header of a record the actuator writes.
func header(name string, rrtype uint16, ttl uint32) dns.RR_Header {
	return dns.RR_Header{Name: name, Rrtype: rrtype, Class: dns.ClassINET, Ttl: ttl}
}

// unknownRoutes reports the routes of a state that have traffic but no
// record.
func unknownRoutes(weights map[string]int, known func(string) bool) error {
	var missing []string
	for _, r := range sortedKeys(weights) {
		if weights[r] != 0 && !known(r) {
			missing = append(missing, fmt.Sprintf("%s (%d %%)", r, weights[r]))
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("route %s has traffic but no entry under routes", strings.Join(missing, ", "))
	}
	return nil
}

func sortedKeys[V any](m map[string]V) []string {
	return slices.Sorted(maps.Keys(m))
}
