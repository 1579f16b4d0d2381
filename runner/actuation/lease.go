package actuation

import (
	"fmt"
	"regexp"
	"time"

	"github.com/hermes-failover/hermes/actuators"
	"github.com/hermes-failover/hermes/traffic"
)

// leaseIntervals is how many evaluation intervals a replica's stamp keeps
// its lease on a backend: the owner renews it every tick, so an owner
// that stopped, or went blind, loses the lease after four intervals (a
// minute at 15 s). Four, not two: an owner whose tick overran its
// interval on a loaded machine (a skipped tick) must not lose the lease
// to the other replica, or the two would fight over the backend the lease
// is there to spare; as Kubernetes' leader election leases for several
// renew periods.
const leaseIntervals = 4

// sighting is another replica's stamp as this replica first read it from
// one backend for one service, and when: a reading of this replica's own
// monotonic clock (Options.Elapsed).
type sighting struct {
	stamp traffic.Stamp
	at    time.Duration
}

// leases are the other replicas' stamps this replica has seen, by
// actuator, then service. A lease is judged the way Kubernetes' leader
// election judges its record's observedTime: a stamp is a generation the
// owner changes at every renewal, never a time to compare with this
// replica's clock. The lease lives while the stamp changes; it expires
// once the same stamp has been read back for leaseIntervals of this
// replica's own monotonic time. So two replicas whose wall clocks
// disagree, by any amount, still agree on whose lease a backend is under.
type leases map[string]map[string]sighting

// live reports whether st, the stamp actuator's backend holds for
// service, read at monotonic time at, is another replica's live lease:
// not me, and either new to this replica (a renewal, or a stamp never
// seen before: its age is unknown, so it is given a whole lease) or seen
// unchanged for less than leaseIntervals intervals. seen are the
// sightings of the actuator this tick, which live fills in.
func (l leases) live(actuator, service string, st traffic.Stamp, me string, at, interval time.Duration, seen map[string]sighting) bool {
	if st.Replica == "" || st.Replica == me {
		return false
	}
	s, ok := l[actuator][service]
	if !ok || !s.stamp.Equal(st) {
		s = sighting{stamp: st, at: at}
	}
	seen[service] = s
	return at-s.at < leaseIntervals*interval
}

// lease turns out, what this replica would write to one backend, into
// what it may write, given cur, what the backend holds, read at
// monotonic time at. A service under another replica's live lease
// (leases.live) keeps that replica's split: when it differs from this
// replica's, the service is reported in disagree; when it is the same,
// the owner renews it. Every other service is stamped with me and the tick (see
// ownStamp). Services in withheld (already cur's) and the ones in
// operator (a person's pin or pause, which takes the lease) are not
// deferred. The sightings of this actuator are replaced by this read's.
func (l leases) lease(actuator, me string, out, cur actuators.Splits, withheld map[string]string, operator map[string]bool, now time.Time, at, interval time.Duration) (disagree []string) {
	seen := map[string]sighting{}
	defer func() { l[actuator] = seen }()
	for svc, want := range out {
		have, ok := cur[svc]
		if _, w := withheld[svc]; w {
			if ok { // not written, but read: the sighting goes on
				l.live(actuator, svc, have.Writer, me, at, interval, seen)
			}
			continue
		}
		if ok && !operator[svc] && l.live(actuator, svc, have.Writer, me, at, interval, seen) {
			out[svc] = have
			if !have.Equal(want) {
				disagree = append(disagree, svc)
			}
			continue
		}
		want.Writer = ownStamp(me, have.Writer, now, interval)
		out[svc] = want
	}
	return disagree
}

// ownStamp is the stamp this replica writes at tick now over have, the
// stamp the backend holds: me and the tick, unless have is this
// replica's own stamp at or after now. Then this replica's clock went
// back (a wall-clock jump, or a restart after one), and its stamp goes on
// one interval past have instead: the backends keep a replica's later
// stamp over an earlier one (actuators.Relayed), which would otherwise
// keep the split stamped have until the clock caught up, and the other
// replica must see the stamp change to know the lease renewed.
func ownStamp(me string, have traffic.Stamp, now time.Time, interval time.Duration) traffic.Stamp {
	if have.Replica == me && !have.Tick.Before(now) {
		return traffic.Stamp{Replica: me, Tick: have.Tick.Add(interval)}
	}
	return traffic.Stamp{Replica: me, Tick: now}
}

// replicaNameRE is what a --replica name may hold: it is written into
// backends (a JSON file, a string nginx returns, a DNS TXT record), so
// letters, digits, '.', '_' and '-', starting with a letter or digit.
var replicaNameRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$`)

// CheckReplicaName reports a --replica name that backends cannot carry.
// The empty name (one writer) is fine.
func CheckReplicaName(name string) error {
	if name == "" || replicaNameRE.MatchString(name) {
		return nil
	}
	return fmt.Errorf("--replica %q: a replica name is 1 to 63 letters, digits, '.', '_' or '-', starting with a letter or digit (backends store it)", name)
}
