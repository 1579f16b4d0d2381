package nginx

import (
	"fmt"
	"strings"

	"github.com/hermes-failover/hermes/actuators"
	"github.com/hermes-failover/hermes/traffic"
)

// The replicas' lease (hermes run --replica, runner/actuation's lease.go) lives in
// the state line: render writes each split's writer's stamp there, and
// with state_listen nginx answers it from the configuration its workers
// loaded, so a replica reads the lease back from what nginx serves, not
// from its own memory. The holder renews its stamp every tick, so its
// include file changes, and nginx is tested and reloaded, every tick.
//
// The replica that defers writes back what it read, the holder's split
// and stamp; it may have read them a moment before the holder's write of
// this tick took effect. keepNewer makes sure such a relayed, older
// stamp never replaces the holder's newer one, nor its split.

// CarriesStamp reports true: the writer's stamp is in the include file's
// state line, which nginx serves with state_listen.
func (a *Actuator) CarriesStamp() bool { return true }

var _ actuators.StampCarrier = (*Actuator)(nil)

// keepNewer returns st, or the split the include file at path holds when
// st is a relayed write of that file's stamp (actuators.Relayed).
func (a *Actuator) keepNewer(path, service string, st traffic.Split) (traffic.Split, error) {
	if st.Writer.Replica == "" {
		return st, nil
	}
	data, ok, err := readFile(path)
	if err != nil || !ok {
		return st, err
	}
	name, have, err := parseState(data)
	if err != nil || !strings.EqualFold(name, service) {
		return st, nil // not Hermes's state: rewritten
	}
	if !actuators.Relayed(st.Writer, have.Writer) {
		return st, nil
	}
	a.logger.Debug("keeping the newer stamp of the include file", "service", service,
		"file", fmt.Sprintf("%s@%s", have.Writer.Replica, have.Writer.Tick.Format("15:04:05")),
		"given", st.Writer.Tick.Format("15:04:05"))
	return have, nil
}

// serves reports whether got holds every split of want, each Equal and
// with the same writer's stamp: a renewed lease is a change nginx must
// serve too.
func serves(got, want actuators.Splits) bool {
	for svc, w := range want {
		g, ok := got[svc]
		if !ok || !g.Equal(w) || !g.Writer.Equal(w.Writer) {
			return false
		}
	}
	return true
}
