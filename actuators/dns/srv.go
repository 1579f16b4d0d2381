package dns

import (
	"errors"
	"fmt"
	"strings"

	"github.com/miekg/dns"
)

// srvRecords returns the SRV RRset for a split: one record per route with
// traffic, weight = its percentage. A route at 0 % gets no record: RFC 2782
// gives weight 0 a small chance of selection when other records exist.
// Weights only split traffic within one priority; routes of a lower
// priority number are tried first.
func srvRecords(rec Record, weights map[string]int, ttl uint32) ([]dns.RR, error) {
	if err := unknownRoutes(weights, func(r string) bool { _, ok := rec.SRV[r]; return ok }); err != nil {
		return nil, err
	}
	var rrs []dns.RR
	for _, route := range rec.routes() {
		w := weights[route]
		switch {
		case w < 0 || w > 65535:
			return nil, fmt.Errorf("route %s: weight %d is not a valid SRV weight (0..65535)", route, w)
		case w == 0:
			continue
		}
		t := rec.SRV[route]
		rrs = append(rrs, &dns.SRV{
			Hdr:      header(rec.Name, dns.TypeSRV, ttl),
			Priority: t.Priority,
			Weight:   uint16(w),
			Port:     t.Port,
			Target:   t.Target,
		})
	}
	if len(rrs) == 0 {
		return nil, errors.New("every route is at 0 %; refusing to remove every SRV record")
	}
	return rrs, nil
}

// recordWeights is the split that the records have of rec show, read
// as rec's mode writes them (srvWeights, failoverWeights); nil when they
// match no route.
func recordWeights(rec Record, have []dns.RR) map[string]int {
	switch rec.Mode {
	case ModeSRV:
		return srvWeights(rec, have)
	case ModeFailover:
		return failoverWeights(rec, have)
	}
	return nil
}

// srvWeights turns an SRV RRset back into weights: each record counts for
// the route with its target and port. It returns nil when no record
// matches a route; every configured route is present, at 0 when it has
// no record.
func srvWeights(rec Record, have []dns.RR) map[string]int {
	weights := map[string]int{}
	for route := range rec.SRV {
		weights[route] = 0
	}
	matched := false
	for _, rr := range have {
		srv, ok := rr.(*dns.SRV)
		if !ok {
			continue
		}
		for route, t := range rec.SRV {
			if srv.Port == t.Port && strings.EqualFold(srv.Target, t.Target) {
				weights[route] += int(srv.Weight)
				matched = true
			}
		}
	}
	if !matched {
		return nil
	}
	return weights
}
