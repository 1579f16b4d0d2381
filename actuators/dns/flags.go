package dns

import (
	"strconv"
	"strings"

	"github.com/miekg/dns"

	"github.com/hermes-failover/hermes/traffic"
)

// Keys of the flags TXT record.
const (
	flagRetries  = "retries_enabled"
	flagDegraded = "degraded_mode"
)

// flagsRecord is the TXT record holding a service's flags, one
// "key=value" string each:
//
//	_hermes-flags.chat.hermes.test. 30 IN TXT "retries_enabled=true" "degraded_mode=false"
func flagsRecord(name string, st traffic.Split, ttl uint32) dns.RR {
	return &dns.TXT{
		Hdr: header(name, dns.TypeTXT, ttl),
		Txt: []string{
			flagRetries + "=" + strconv.FormatBool(st.RetriesEnabled),
			flagDegraded + "=" + strconv.FormatBool(st.Degraded),
		},
	}
}

// parseFlags reads the flags back; a missing record or key reads false,
// unknown keys are ignored.
func parseFlags(rrs []dns.RR) (retries, degraded bool) {
	for _, rr := range rrs {
		txt, ok := rr.(*dns.TXT)
		if !ok {
			continue
		}
		for _, s := range txt.Txt {
			k, v, _ := strings.Cut(s, "=")
			b, _ := strconv.ParseBool(v)
			switch k {
			case flagRetries:
				retries = b
			case flagDegraded:
				degraded = b
			}
		}
	}
	return retries, degraded
}
