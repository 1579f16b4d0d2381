// Package dns is the `type: dns` actuator: it moves traffic by rewriting
// records in a zone through RFC 2136 dynamic updates signed with TSIG.
//
//	actuators:
//	  - name: dns
//	    type: dns
//	    server: 192.0.2.53:53          # the zone's primary, host:port
//	    zone: hermes.example.com       # trailing dot optional
//	    tsig:
//	      name: hermes-update
//	      algorithm: hmac-sha256       # default; also hmac-sha1/224/384/512
//	      secret_file: /etc/hermes/tsig.key   # or secret: <base64>
//	    timeout: 5s                    # each DNS exchange (default 5s)
//	    ttl: 30                        # of every record written (default 30)
//	    flags: true                    # keep flags in TXT records (default)
//	    records:
//	      chat:
//	        name: _chat._tcp           # relative to the zone, or an FQDN
//	        mode: srv
//	        routes:
//	          free: {target: free.llm.example.com, port: 443}
//	          paid: {target: paid.llm.example.com, port: 443, priority: 10}
//	      embed:
//	        name: embed
//	        mode: failover
//	        type: A                    # A, AAAA or CNAME
//	        order: [embed-free, embed-paid]   # tie-break; default: names sorted
//	        routes:
//	          embed-free: [192.0.2.10, 192.0.2.11]
//	          embed-paid: [198.51.100.10]
//
// Each service drives the records of one owner name, in one of two modes:
//
//   - srv: one SRV record per route, weight = the route's percentage;
//     a route at 0 % has no record (RFC 2782: weight 0 still gets a
//     little traffic). Clients that follow SRV weights split exactly;
//     weights only share traffic within one priority.
//   - failover: an A, AAAA or CNAME RRset holding the values of the route
//     with the largest share: for clients that only resolve addresses, the
//     split collapses to one route. Ties (50/50) go to the earliest route
//     of `order`. A YAML mapping reaches the actuator unordered, so the
//     order in which `routes` are written cannot be used; without `order`
//     the route names sorted decide. Either way the choice depends on the
//     split alone, never on history, so two replicas agree.
//
// With `flags` on (the default) each service's flags live in a TXT record
// at _hermes-flags.<name>: "retries_enabled=true" "degraded_mode=false",
// and with run --replica the writer's stamp the replicas lease the
// records by (lease.go).
//
// Every Apply reads the records from the primary with plain queries over
// TCP (zone transfers are usually refused), compares them with the desired
// ones and, only when something differs, sends one UPDATE that replaces
// each differing RRset (delete RRset, add records), so an unchanged state
// never bumps the SOA serial. It then reads the changed RRsets back: a
// server may accept an update yet ignore a record (RFC 2136 §3.4.2.2, a
// CNAME next to other data), and that must not pass for success.
//
// Current reads the same records back: in srv mode the SRV weights per
// route (matched by target and port), in failover mode 100 for the route
// whose values the RRset holds (so a 50/50 split reads back as 100/0).
//
// The actuator owns the RRsets it writes (its names, its types) and
// leaves everything else in the zone alone, including the records of a
// configured service missing from the desired state. Errors never hold
// the TSIG secret; unreachable servers and SERVFAIL are retryable
// (actuators.RetryableError), refusals are not.
package dns
