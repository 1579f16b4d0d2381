package alerting

import (
	"maps"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/go-openapi/strfmt"
	"github.com/prometheus/alertmanager/api/v2/models"

	"github.com/hermes-failover/hermes/evaluator"
	"github.com/hermes-failover/hermes/labelname"
)

// ValidFor is how long Alertmanager keeps a firing alert without hearing of
// it again: 4 × max(evaluation interval, resend delay), as in Prometheus.
// A firing alert is sent with endsAt = now + ValidFor, so that it resolves
// by itself if Hermes goes away, but not between two sends.
func ValidFor(interval, resendDelay time.Duration) time.Duration {
	return 4 * max(interval, resendDelay)
}

// Payload converts the alerts to send at now into Alertmanager's model,
// ordered by alert key. Firing alerts start at FiredAt and end at
// now + validFor; resolved ones that had fired end at ResolvedAt and are
// sent while the core retains them (evaluator.ResolvedRetention); pending alerts are not sent.
// Labels with an empty value are left out, as Alertmanager would, so an
// alert's identity is the same on both sides. generatorURL links the alert
// to Hermes's status page under externalURL (see GeneratorURL).
func Payload(alerts map[string]*evaluator.Alert, now time.Time, validFor time.Duration, externalURL string) models.PostableAlerts {
	var out models.PostableAlerts
	for _, k := range slices.Sorted(maps.Keys(alerts)) {
		if pa := postable(alerts[k], now, validFor, externalURL); pa != nil {
			annotate(pa, alerts[k])
			out = append(out, pa)
		}
	}
	return out
}

// postable converts one alert but its annotations (annotate); nil when
// it is not to be sent.
func postable(as *evaluator.Alert, now time.Time, validFor time.Duration, externalURL string) *models.PostableAlert {
	if as == nil {
		return nil
	}
	start := as.FiredAt
	if start.IsZero() {
		start = as.ActiveAt
	}
	var end time.Time
	switch {
	case as.State == evaluator.StateFiring:
		end = now.Add(validFor)
	case !as.FiredAt.IsZero() && !as.ResolvedAt.IsZero() && as.Retained(now):
		end = as.ResolvedAt
	default:
		return nil
	}
	labels := models.LabelSet{}
	for k, v := range as.Labels {
		if v != "" {
			labels[k] = v
		}
	}
	if len(labels) == 0 { // not rendered: never the case for Step's alerts
		labels = models.LabelSet{"alertname": as.Rule, "tier": as.Tier, labelname.Service: as.Service}
		if as.Route != "" {
			labels[labelname.Route] = as.Route
		}
	}
	return &models.PostableAlert{
		Alert: models.Alert{
			Labels:       labels,
			GeneratorURL: strfmt.URI(GeneratorURL(externalURL, as.Service, as.Route)),
		},
		StartsAt: strfmt.DateTime(start.UTC()),
		EndsAt:   strfmt.DateTime(end.UTC()),
	}
}

// annotate renders the annotations of as into pa, the alert as sent:
// the core keeps an alert's rule and values, not its text
// (evaluator.Alert.Text), so only the alerts sent render theirs.
func annotate(pa *models.PostableAlert, as *evaluator.Alert) {
	ann := models.LabelSet{}
	for k, v := range as.Text() {
		if v != "" {
			ann[k] = v
		}
	}
	pa.Annotations = ann
}

// GeneratorURL links an alert to Hermes's status page at externalURL: the
// route's row (#route-NAME), or the service's section (#service-NAME) for
// a service-scope alert. An externalURL that does not parse is returned
// as it is.
func GeneratorURL(externalURL, service, route string) string {
	u, err := url.Parse(externalURL)
	if err != nil {
		return externalURL
	}
	u.Path = strings.TrimSuffix(u.Path, "/") + "/"
	u.RawPath = ""
	switch {
	case route != "":
		u.Fragment = "route-" + route
	case service != "":
		u.Fragment = "service-" + service
	default:
		u.Fragment = "" // Hermes's own alerts (e.g. an actuator failing): the status page
	}
	u.RawFragment = ""
	return u.String()
}

// fingerprint identifies an alert in Alertmanager: its sorted label set.
func fingerprint(ls models.LabelSet) string {
	var b strings.Builder
	for _, k := range slices.Sorted(maps.Keys(ls)) {
		b.WriteString(k)
		b.WriteByte(0xff)
		b.WriteString(ls[k])
		b.WriteByte(0xfe)
	}
	return b.String()
}
