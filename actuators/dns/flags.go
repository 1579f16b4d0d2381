package dns

import (
	"strconv"
	"strings"
	"time"

	"github.com/miekg/dns"

	"github.com/hermes-failover/hermes/traffic"
)

// Keys of the flags TXT record.
const (
	flagRetries    = "retries_enabled"
	flagDegraded   = "degraded_mode"
	flagWriter     = "writer"
	flagWriterTick = "writer_tick"
)

// flagsRecord is the TXT record holding a service's flags, one
// "key=value" string each, and, with run --replica, the writer's stamp
// that two replicas lease the records by (see keepNewer):
//
//	_hermes-flags.chat.hermes.test. 30 IN TXT "retries_enabled=true" "degraded_mode=false"
//	    "writer=hermes-a" "writer_tick=2026-11-30T07:12:15Z"
func flagsRecord(name string, st traffic.Split, ttl uint32) dns.RR {
	txt := []string{
		flagRetries + "=" + strconv.FormatBool(st.RetriesEnabled),
		flagDegraded + "=" + strconv.FormatBool(st.Degraded),
	}
	if !st.Writer.IsZero() {
		txt = append(txt, flagWriter+"="+st.Writer.Replica, flagWriterTick+"="+st.Writer.Tick.UTC().Format(time.RFC3339Nano))
	}
	return &dns.TXT{Hdr: header(name, dns.TypeTXT, ttl), Txt: txt}
}

// flags is what the flags TXT record holds.
type flags struct {
	retries, degraded bool
	writer            traffic.Stamp
}

// parseFlags reads the flags back; a missing record or key reads false
// (and no stamp), unknown keys and a tick that does not parse are
// ignored.
func parseFlags(rrs []dns.RR) flags {
	var f flags
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
				f.retries = b
			case flagDegraded:
				f.degraded = b
			case flagWriter:
				f.writer.Replica = v
			case flagWriterTick:
				if tick, err := time.Parse(time.RFC3339Nano, v); err == nil {
					f.writer.Tick = tick
				}
			}
		}
	}
	return f
}
