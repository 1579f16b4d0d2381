package runner

import (
	"fmt"
	"regexp"
	"time"

	"github.com/hermes-failover/hermes/actuators"
	"github.com/hermes-failover/hermes/traffic"
)

// leaseIntervals is how many evaluation intervals a replica's stamp holds
// a backend: the holder renews it every tick, so a holder that stopped,
// or went blind, loses the lease after four intervals (a minute at 15 s).
// Four, not two: a holder whose tick overran its interval on a loaded
// machine (a skipped tick) must not lose the lease to the other replica,
// or the two would fight over the backend the lease is there to spare;
// as Kubernetes' leader election leases for several renew periods.
const leaseIntervals = 4

// fresh reports whether stamp st, read back from a backend at tick now,
// is another replica's live lease: not me, at most leaseIntervals old
// and not more than one interval ahead (a clock far ahead holds nothing).
func fresh(st traffic.Stamp, me string, now time.Time, interval time.Duration) bool {
	if st.Replica == "" || st.Replica == me {
		return false
	}
	age := now.Sub(st.Tick)
	return age > -interval && age < leaseIntervals*interval
}

// lease turns out, what this replica would write to one backend, into
// what it may write, given cur, what the backend holds. A service whose
// split another replica stamped freshly keeps that split: when it differs
// from this replica's, the service is reported in disagree; when it is
// the same, the holder renews it. Every other service is stamped with me
// and the tick. Services in withheld (already cur's) and the ones in operator
// (a person's pin or pause, which takes the lease) are not deferred.
func lease(me string, out, cur actuators.Splits, withheld map[string]string, operator map[string]bool, now time.Time, interval time.Duration) (disagree []string) {
	for svc, want := range out {
		if _, ok := withheld[svc]; ok {
			continue
		}
		have, ok := cur[svc]
		if ok && !operator[svc] && fresh(have.Writer, me, now, interval) {
			out[svc] = have
			if !have.Equal(want) {
				disagree = append(disagree, svc)
			}
			continue
		}
		want.Writer = traffic.Stamp{Replica: me, Tick: now}
		out[svc] = want
	}
	return disagree
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
