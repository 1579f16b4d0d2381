package dns

import (
	"fmt"
	"net"
	"slices"
	"strings"

	"github.com/miekg/dns"
)

// pick returns the route with the largest share; ties go to the earliest in
// rec.Order. It returns "" when no route has traffic.
func pick(rec Record, weights map[string]int) string {
	best := ""
	for _, r := range rec.Order {
		if weights[r] > 0 && (best == "" || weights[r] > weights[best]) {
			best = r
		}
	}
	return best
}

// failoverRecords returns the A, AAAA or CNAME RRset of the route picked
// for a split: one route takes all the traffic the name resolves to.
func failoverRecords(rec Record, weights map[string]int, ttl uint32) ([]dns.RR, error) {
	if err := unknownRoutes(weights, func(r string) bool { _, ok := rec.Values[r]; return ok }); err != nil {
		return nil, err
	}
	route := pick(rec, weights)
	if route == "" {
		return nil, fmt.Errorf("every route is at 0 %%; refusing to remove the %s records", rec.Type)
	}
	var rrs []dns.RR
	for _, v := range rec.Values[route] {
		hdr := header(rec.Name, rec.rrtype(), ttl)
		switch rec.Type {
		case "A":
			rrs = append(rrs, &dns.A{Hdr: hdr, A: net.ParseIP(v).To4()})
		case "AAAA":
			rrs = append(rrs, &dns.AAAA{Hdr: hdr, AAAA: net.ParseIP(v)})
		case "CNAME":
			rrs = append(rrs, &dns.CNAME{Hdr: hdr, Target: v})
		}
	}
	return rrs, nil
}

// failoverWeights turns an RRset back into weights: the route whose values
// are exactly those of the RRset has 100, every other route 0. It returns
// nil when no route matches.
func failoverWeights(rec Record, have []dns.RR) map[string]int {
	var vals []string
	for _, rr := range have {
		switch rr := rr.(type) {
		case *dns.A:
			vals = append(vals, rr.A.String())
		case *dns.AAAA:
			vals = append(vals, rr.AAAA.String())
		case *dns.CNAME:
			vals = append(vals, strings.ToLower(rr.Target))
		}
	}
	if len(vals) == 0 {
		return nil
	}
	slices.Sort(vals)
	var weights map[string]int
	for _, route := range rec.Order {
		if slices.Equal(vals, rec.Values[route]) {
			weights = map[string]int{}
			for _, r := range rec.Order {
				weights[r] = 0
			}
			weights[route] = 100
			break
		}
	}
	return weights
}
