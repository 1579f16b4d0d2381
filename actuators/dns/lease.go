package dns

import (
	"context"

	"github.com/miekg/dns"

	"github.com/hermes-failover/hermes/actuators"
	"github.com/hermes-failover/hermes/traffic"
)

// The replicas' lease (hermes run --replica, runner/actuation's lease.go) lives in
// the flags TXT record beside each service's records, written in the same
// UPDATE, so a replica reads the lease back from what the server serves.
// The holder renews its stamp every tick, so the TXT record, and the SOA
// serial, change every tick. Without `flags` there is no TXT record and
// no lease: CarriesStamp is false, and --replica refuses the actuator.
//
// The replica that defers writes back what it read, the holder's split
// and stamp, possibly a moment before the holder's UPDATE of this tick;
// keepNewer makes sure such a relayed, older stamp never replaces the
// holder's newer one, nor its split.

// CarriesStamp reports whether the flags TXT record, which holds the
// writer's stamp, is written.
func (a *Actuator) CarriesStamp() bool { return a.cfg.Flags }

var _ actuators.StampCarrier = (*Actuator)(nil)

// keepNewer returns st, or what the server holds for svc when st is a
// relayed write of the stamp its TXT record holds (actuators.Relayed).
func (a *Actuator) keepNewer(ctx context.Context, s *session, svc string, st traffic.Split) (traffic.Split, error) {
	if !a.cfg.Flags || st.Writer.Replica == "" {
		return st, nil
	}
	rec := a.cfg.Records[svc]
	txt, err := s.query(ctx, rec.flagsName(), dns.TypeTXT)
	if err != nil {
		return st, err
	}
	f := parseFlags(txt)
	if !actuators.Relayed(st.Writer, f.writer) {
		return st, nil
	}
	have, err := s.query(ctx, rec.Name, rec.rrtype())
	if err != nil {
		return st, err
	}
	weights := recordWeights(rec, have)
	if weights == nil {
		return st, nil // the records match no route: write st
	}
	a.logger.Debug("keeping the newer stamp the server holds", "service", svc, "writer", f.writer.Replica,
		"holds", f.writer.Tick, "given", st.Writer.Tick)
	return traffic.Split{Weights: weights, RetriesEnabled: f.retries, Degraded: f.degraded, Writer: f.writer}, nil
}
