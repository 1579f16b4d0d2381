package unleash

import (
	"context"
	"time"

	"github.com/hermes-failover/hermes/actuators"
	"github.com/hermes-failover/hermes/traffic"
)

// The replicas' lease (hermes run --replica, runner/actuation's lease.go) lives in
// the parameters of Hermes' strategy on the routes flag, beside the
// variants that are the split:
//
//	"parameters": {"rollout": "100", "stickiness": "default", "groupId": "hermes-chat-route",
//	               "hermesWriter": "hermes-a", "hermesWriterTick": "2026-11-30T07:12:15Z"}
//
// Why there: the parameters belong to the one object that holds the split,
// in the one environment Hermes drives, so a single PUT of the strategy
// writes the split and its stamp together, and the Admin API gives both
// back in the same read. Unleash keeps a strategy's parameters as a map
// of strings and returns keys it does not know unchanged (the round trip
// is tested against the real server); SDKs evaluate flexibleRollout by
// rollout, stickiness and groupId only, so the extra keys route nothing.
// The flag's description is shared by every environment and changed by
// another request, and a variant's payload is what gateways read from
// getVariant, once per route.
//
// The holder renews its stamp every tick: one strategy PUT per tick. The
// replica that defers writes back the holder's split and stamp as it read
// them, possibly a moment before the holder's PUT of this tick; keepNewer
// makes sure such a relayed, older stamp never replaces the holder's
// newer one, nor its split.

// Keys of the writer's stamp among the strategy's parameters.
const (
	paramWriter     = "hermesWriter"
	paramWriterTick = "hermesWriterTick"
)

// CarriesStamp reports true: the writer's stamp is in the parameters of
// the strategy that holds the split.
func (a *Actuator) CarriesStamp() bool { return true }

var _ actuators.StampCarrier = (*Actuator)(nil)

// stampParams adds w to a strategy's parameters; a zero stamp adds
// nothing.
func stampParams(ps map[string]any, w traffic.Stamp) {
	if w.IsZero() {
		return
	}
	ps[paramWriter] = w.Replica
	ps[paramWriterTick] = w.Tick.UTC().Format(time.RFC3339Nano)
}

// stampOf reads the writer's stamp back from s's parameters; a missing
// writer or a tick that does not parse is no stamp.
func stampOf(s strategy) traffic.Stamp {
	r := param(s.Parameters, paramWriter)
	tick, err := time.Parse(time.RFC3339Nano, param(s.Parameters, paramWriterTick))
	if r == "" || err != nil {
		return traffic.Stamp{}
	}
	return traffic.Stamp{Replica: r, Tick: tick}
}

// sameStamp reports whether s carries the stamp parameters want does,
// none when want has none.
func (s strategy) sameStamp(want strategy) bool {
	for _, k := range []string{paramWriter, paramWriterTick} {
		if param(s.Parameters, k) != param(want.Parameters, k) {
			return false
		}
	}
	return true
}

// keepNewer returns st, or what Unleash holds for service when st is a
// relayed write of the stamp the routes flag's strategy holds
// (actuators.Relayed).
func (a *Actuator) keepNewer(ctx context.Context, c *client, service string, st traffic.Split) (traffic.Split, error) {
	if st.Writer.Replica == "" {
		return st, nil
	}
	have, ok, err := a.currentService(ctx, c, service)
	if err != nil || !ok || !actuators.Relayed(st.Writer, have.Writer) {
		return st, err
	}
	a.logger.Debug("keeping the newer stamp Unleash holds", "service", service, "writer", have.Writer.Replica,
		"holds", have.Writer.Tick, "given", st.Writer.Tick)
	return have, nil
}
