package dns

import (
	"fmt"
	"maps"
	"net"
	"slices"
	"strconv"
	"strings"
)

// record decodes and checks one service's entry under records; ok is
// false when it has a problem (each is reported).
func (p *parser) record(path string, v any, zone string) (Record, bool) {
	var raw rawRecord
	n := len(p.errs)
	if !p.decode(path, v, &raw) {
		return Record{}, false
	}
	rec := Record{Mode: strings.ToLower(raw.Mode)}
	if !p.bad(path + ".name") {
		rec.Name = p.owner(path+".name", raw.Name, zone)
	}
	if len(raw.Routes) == 0 && !p.bad(path+".routes") {
		p.errorf("%s.routes: must hold at least one route", path)
	}
	switch rec.Mode {
	case ModeSRV:
		if raw.Type != "" && !strings.EqualFold(raw.Type, "SRV") {
			p.errorf("%s.type: mode srv writes SRV records; leave type out", path)
		}
		if raw.Order != nil {
			p.errorf("%s.order: only mode failover uses order (SRV weights need no tie-break)", path)
		}
		rec.Type = "SRV"
		rec.SRV = p.srvRoutes(path+".routes", raw.Routes)
	case ModeFailover:
		rec.Type = strings.ToUpper(raw.Type)
		switch rec.Type {
		case "A", "AAAA", "CNAME":
		case "":
			if !p.bad(path + ".type") {
				p.errorf("%s.type: must be set for mode failover (A, AAAA or CNAME)", path)
			}
		default:
			p.errorf("%s.type: %q is not A, AAAA or CNAME", path, raw.Type)
		}
		if rec.Type == "CNAME" && rec.Name == zone {
			p.errorf("%s.name: a CNAME cannot live at the zone apex %s", path, zone)
		}
		rec.Values = p.failoverRoutes(path+".routes", rec.Type, raw.Routes)
		rec.Order = p.order(path+".order", raw.Order, rec.Values)
	case "":
		if !p.bad(path + ".mode") {
			p.errorf("%s.mode: must be set (srv or failover)", path)
		}
	default:
		p.errorf("%s.mode: %q is not srv or failover", path, raw.Mode)
	}
	return rec, len(p.errs) == n
}

func (p *parser) srvRoutes(path string, routes map[string]any) map[string]SRVRoute {
	out := map[string]SRVRoute{}
	seen := map[string]string{} // target:port → route
	for _, route := range slices.Sorted(maps.Keys(routes)) {
		rp := path + "." + route
		var raw rawSRV
		n := len(p.errs)
		if !p.decode(rp, routes[route], &raw) {
			continue
		}
		var target string
		if !p.bad(rp + ".target") {
			target = p.hostName(rp+".target", raw.Target)
		}
		if (raw.Port < 1 || raw.Port > 65535) && !p.bad(rp+".port") {
			p.errorf("%s.port: must be 1..65535, got %d", rp, raw.Port)
		}
		prio := int64(DefaultPriority)
		if raw.Priority != nil {
			prio = *raw.Priority
		}
		if (prio < 0 || prio > 65535) && !p.bad(rp+".priority") {
			p.errorf("%s.priority: must be 0..65535, got %d", rp, prio)
		}
		if len(p.errs) > n {
			continue
		}
		key := net.JoinHostPort(target, strconv.FormatInt(raw.Port, 10))
		if other, dup := seen[key]; dup {
			p.errorf("%s: same target and port as route %s (Current could not tell them apart)", rp, other)
			continue
		}
		seen[key] = route
		out[route] = SRVRoute{Target: target, Port: uint16(raw.Port), Priority: uint16(prio)}
	}
	return out
}

func (p *parser) failoverRoutes(path, typ string, routes map[string]any) map[string][]string {
	out := map[string][]string{}
	seen := map[string]string{} // joined values → route
	for _, route := range slices.Sorted(maps.Keys(routes)) {
		rp := path + "." + route
		var vals []string
		switch v := routes[route].(type) {
		case string:
			vals = []string{v}
		case []any:
			for i, e := range v {
				s, ok := e.(string)
				if !ok {
					p.errorf("%s[%d]: must be a string, got %s", rp, i, describe(e))
					continue
				}
				vals = append(vals, s)
			}
		case []string:
			vals = v
		default:
			p.errorf("%s: must be a list of values, got %s", rp, describe(v))
			continue
		}
		n := len(p.errs)
		norm := p.values(rp, typ, vals)
		if len(p.errs) > n || norm == nil {
			continue
		}
		key := strings.Join(norm, " ")
		if other, dup := seen[key]; dup {
			p.errorf("%s: same values as route %s (Current could not tell them apart)", rp, other)
			continue
		}
		seen[key] = route
		out[route] = norm
	}
	return out
}

// values checks and normalises one failover route's values.
func (p *parser) values(path, typ string, vals []string) []string {
	if len(vals) == 0 {
		p.errorf("%s: must hold at least one value", path)
		return nil
	}
	if typ == "CNAME" && len(vals) > 1 {
		p.errorf("%s: a CNAME takes exactly one target, got %d", path, len(vals))
		return nil
	}
	var out []string
	for i, v := range vals {
		vp := fmt.Sprintf("%s[%d]", path, i)
		switch typ {
		case "A", "AAAA":
			ip := net.ParseIP(strings.TrimSpace(v))
			switch {
			case ip == nil:
				p.errorf("%s: %q is not an IP address", vp, v)
			case typ == "A" && ip.To4() == nil:
				p.errorf("%s: %q is not an IPv4 address (type A)", vp, v)
			case typ == "AAAA" && ip.To4() != nil:
				p.errorf("%s: %q is not an IPv6 address (type AAAA)", vp, v)
			default:
				out = append(out, ip.String())
			}
		case "CNAME":
			if h := p.hostName(vp, v); h != "" {
				out = append(out, h)
			}
		default:
			return nil // the type's own error is reported
		}
	}
	slices.Sort(out)
	if len(slices.Compact(slices.Clone(out))) != len(out) {
		p.errorf("%s: holds a value twice", path)
	}
	return out
}

// order checks `order`, or sorts the route names when it is absent.
func (p *parser) order(path string, order []string, routes map[string][]string) []string {
	if order == nil {
		return slices.Sorted(maps.Keys(routes))
	}
	seen := map[string]bool{}
	for _, r := range order {
		if _, ok := routes[r]; !ok {
			p.errorf("%s: %q is not a route of this record", path, r)
		} else if seen[r] {
			p.errorf("%s: %q is listed twice", path, r)
		}
		seen[r] = true
	}
	for _, r := range slices.Sorted(maps.Keys(routes)) {
		if !seen[r] {
			p.errorf("%s: must list every route; %q is missing", path, r)
		}
	}
	return order
}
