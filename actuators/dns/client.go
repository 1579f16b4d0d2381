package dns

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/miekg/dns"
)

// tsigFudge is the clock skew, in seconds, a signed update tolerates.
const tsigFudge = 300

// session is one TCP connection to the primary, carrying the reads and the
// update of one Apply or Current. Errors name the server and the zone,
// never the TSIG secret.
type session struct {
	client *dns.Client
	conn   *dns.Conn
	server string
	zone   string
	tsig   TSIG
	now    func() int64
}

func (a *Actuator) dial(ctx context.Context) (*session, error) {
	c := &dns.Client{Net: "tcp", Timeout: a.cfg.Timeout}
	if a.cfg.TSIG.Enabled() {
		c.TsigSecret = map[string]string{a.cfg.TSIG.Name: string(a.cfg.TSIG.Secret)}
	}
	conn, err := c.DialContext(ctx, a.cfg.Server)
	if err != nil {
		return nil, transient(fmt.Errorf("dns: connecting to %s: %w", a.cfg.Server, err))
	}
	return &session{
		client: c,
		conn:   conn,
		server: a.cfg.Server,
		zone:   a.cfg.Zone,
		tsig:   a.cfg.TSIG,
		now:    func() int64 { return a.now().Unix() },
	}, nil
}

func (s *session) close() { s.conn.Close() }

// query reads the RRset of name and type with a plain, non-recursive
// query. A missing name or type is an empty RRset; an answer that is not
// authoritative is an error (the server is not the zone's primary).
func (s *session) query(ctx context.Context, name string, rrtype uint16) ([]dns.RR, error) {
	m := new(dns.Msg)
	m.SetQuestion(name, rrtype)
	m.RecursionDesired = false
	what := fmt.Sprintf("dns: query %s %s at %s", name, dns.TypeToString[rrtype], s.server)
	r, _, err := s.client.ExchangeWithConnContext(ctx, m, s.conn)
	switch {
	case err != nil:
		return nil, transient(fmt.Errorf("%s: %w", what, err))
	case r.Rcode == dns.RcodeServerFailure:
		return nil, transient(fmt.Errorf("%s: SERVFAIL (see the server's log)", what))
	case r.Rcode != dns.RcodeSuccess && r.Rcode != dns.RcodeNameError:
		return nil, fmt.Errorf("%s: %s (does it serve zone %s?)", what, dns.RcodeToString[r.Rcode], s.zone)
	case !r.Authoritative:
		return nil, fmt.Errorf("%s: the answer is not authoritative (is it the primary of zone %s?)", what, s.zone)
	}
	var out []dns.RR
	for _, rr := range r.Answer {
		if h := rr.Header(); h.Rrtype == rrtype && strings.EqualFold(h.Name, name) {
			out = append(out, rr)
		}
	}
	return out, nil
}

// update sends one RFC 2136 UPDATE replacing each RRset of sets (delete
// the RRset, add its records), signed when a TSIG key is configured.
func (s *session) update(ctx context.Context, sets []rrset) error {
	m := new(dns.Msg)
	m.SetUpdate(s.zone)
	for _, set := range sets {
		m.RemoveRRset([]dns.RR{&dns.ANY{Hdr: header(set.name, set.rrtype, 0)}})
		if len(set.records) > 0 {
			m.Insert(set.records)
		}
	}
	if s.tsig.Enabled() {
		m.SetTsig(s.tsig.Name, s.tsig.Algorithm, tsigFudge, s.now())
	}
	what := fmt.Sprintf("dns: update of zone %s at %s", s.zone, s.server)
	r, _, err := s.client.ExchangeWithConnContext(ctx, m, s.conn)
	switch {
	case r != nil && r.Rcode == dns.RcodeServerFailure:
		return transient(fmt.Errorf("%s failed: %s", what, s.refusal(r)))
	case r != nil && r.Rcode != dns.RcodeSuccess:
		msg := what + " refused: " + s.refusal(r)
		if err != nil {
			return fmt.Errorf("%s: %w", msg, err)
		}
		return errors.New(msg)
	case r == nil && err != nil:
		// No answer (timeout, reset): the update may or may not have
		// been applied; the next attempt reads the records again.
		return transient(fmt.Errorf("%s: %w", what, err))
	case err != nil:
		return fmt.Errorf("%s: %w", what, err)
	}
	return nil
}

// refusal explains a failed update's rcode, with the TSIG error when the
// response carries one and a hint at the usual cause.
func (s *session) refusal(r *dns.Msg) string {
	text := dns.RcodeToString[r.Rcode]
	var tsigErr int
	if t := r.IsTsig(); t != nil && t.Error != 0 {
		tsigErr = int(t.Error)
		text += ", TSIG " + dns.RcodeToString[tsigErr]
	}
	var hint string
	switch r.Rcode {
	case dns.RcodeNotAuth:
		switch {
		case !s.tsig.Enabled():
			hint = "the server wants a TSIG key: set tsig"
		case tsigErr == dns.RcodeBadSig:
			hint = "bad TSIG key? the secret does not match the server's"
		case tsigErr == dns.RcodeBadKey:
			hint = fmt.Sprintf("bad TSIG key? the server knows no key %s with algorithm %s", s.tsig.Name, strings.TrimSuffix(s.tsig.Algorithm, "."))
		case tsigErr == dns.RcodeBadTime:
			hint = "TSIG time check failed: are the clocks in sync?"
		default:
			hint = "bad TSIG key? or the server is not authoritative for the zone"
		}
	case dns.RcodeRefused:
		if s.tsig.Enabled() {
			hint = fmt.Sprintf("the server's policy refuses it: may key %s update zone %s?", s.tsig.Name, s.zone)
		} else {
			hint = "the server refuses unsigned updates from this address: set tsig"
		}
	case dns.RcodeNotZone:
		hint = "a record is outside the zone"
	case dns.RcodeServerFailure:
		hint = "see the server's log"
	}
	if hint != "" {
		text += " (" + hint + ")"
	}
	return text
}

// transient marks err as worth retrying within the tick: the server was
// unreachable, slow or failing (SERVFAIL). It satisfies
// actuators.RetryableError. Refusals (NOTAUTH, REFUSED) and the end of the
// caller's context stay permanent.
func transient(err error) error {
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	return transientError{err}
}

type transientError struct{ err error }

func (e transientError) Error() string { return e.err.Error() }
func (e transientError) Unwrap() error { return e.err }

// Retryable implements actuators.RetryableError.
func (transientError) Retryable() bool { return true }
