package dns

import (
	"strings"

	"github.com/miekg/dns"
)

// owner resolves a record's name: "@" is the apex, a name ending in the
// zone (with or without the trailing dot) is taken as is, any other name
// is relative to the zone.
func (p *parser) owner(path, s, zone string) string {
	n := strings.ToLower(strings.TrimSpace(s))
	switch {
	case n == "":
		p.errorf("%s: must be set (relative to the zone, or fully qualified)", path)
		return ""
	case zone == "":
		return "" // the zone's own error is reported
	case n == "@":
		return zone
	case strings.HasSuffix(n, "."):
		if !dns.IsSubDomain(zone, n) {
			p.errorf("%s: %s is not in zone %s", path, n, zone)
			return ""
		}
	case dns.IsSubDomain(zone, n+"."):
		n += "."
	default:
		n += "." + zone
	}
	if !isDomainName(n) || !isDomainName("_hermes-flags."+n) {
		p.errorf("%s: %q is not a valid owner name", path, s)
		return ""
	}
	return n
}

// hostName checks an absolute host name (trailing dot optional) and
// returns it fully qualified and lower case.
func (p *parser) hostName(path, s string) string {
	h := strings.ToLower(strings.TrimSuffix(strings.TrimSpace(s), "."))
	if !isHostName(h) {
		if s == "" {
			p.errorf("%s: must be set (a host name)", path)
		} else {
			p.errorf("%s: must be a host name, got %q", path, s)
		}
		return ""
	}
	return h + "."
}

// isHostName reports whether s (without trailing dot) is a host name:
// letters, digits and hyphens, labels of 1..63, at most 253 in all, and
// a last label that is not all digits (an IPv4 address is no host name).
func isHostName(s string) bool {
	if s == "" || len(s) > 253 {
		return false
	}
	last := s[strings.LastIndexByte(s, '.')+1:]
	if strings.Trim(last, "0123456789") == "" {
		return false
	}
	for label := range strings.SplitSeq(s, ".") {
		if label == "" || len(label) > 63 || label[0] == '-' || label[len(label)-1] == '-' {
			return false
		}
		for _, c := range []byte(label) {
			if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-') {
				return false
			}
		}
	}
	return true
}

func isDomainName(s string) bool {
	_, ok := dns.IsDomainName(s)
	return ok
}
