package config

import (
	"path/filepath"
	"testing"
	"time"
)

func TestAlertingConfig(t *testing.T) {
	cfg, err := Load(filepath.Join(fixtures, "alerting.good.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	al := cfg.Alerting
	if al.ExternalURL != "https://hermes.example.com/" || al.ResendDelay != time.Minute || al.QueueCapacity != 5000 {
		t.Errorf("alerting = %+v", al)
	}
	if len(al.Alertmanagers) != 2 {
		t.Fatalf("alertmanagers = %+v", al.Alertmanagers)
	}
	am0, am1 := al.Alertmanagers[0], al.Alertmanagers[1]
	if am0.Timeout != 5*time.Second || am1.Timeout != DefaultAlertmanagerTimeout {
		t.Errorf("timeouts = %s, %s", am0.Timeout, am1.Timeout)
	}
	hc := am0.HTTPClient
	if hc.BasicAuth == nil || hc.BasicAuth.Username != "hermes" {
		t.Errorf("basic_auth = %+v", hc.BasicAuth)
	}
	// Relative to the configuration file, as prometheus.http_config.
	if want := filepath.Join(fixtures, "certs/ca.pem"); hc.TLSConfig.CAFile != want {
		t.Errorf("ca_file = %q, want %q", hc.TLSConfig.CAFile, want)
	}
	if want := filepath.Join(fixtures, "secrets/alertmanager-password"); hc.BasicAuth.PasswordFile != want {
		t.Errorf("password_file = %q, want %q", hc.BasicAuth.PasswordFile, want)
	}
	// A list item without http_config still gets prometheus/common's defaults.
	for i, am := range al.Alertmanagers {
		if !am.HTTPClient.FollowRedirects || !am.HTTPClient.EnableHTTP2 {
			t.Errorf("alertmanagers[%d].http_config lacks the defaults: %+v", i, am.HTTPClient)
		}
	}
}

func TestAlertingDefaults(t *testing.T) {
	t.Setenv("HERMES_GLOBAL_EVALUATION_INTERVAL", "30s")
	cfg, err := Load(filepath.Join(fixtures, "minimal.good.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	al := cfg.Alerting
	if len(al.Alertmanagers) != 0 || al.ExternalURL != DefaultExternalURL || al.QueueCapacity != DefaultQueueCapacity {
		t.Errorf("alerting = %+v", al)
	}
	if al.ResendDelay != 30*time.Second {
		t.Errorf("resend_delay = %s, want the evaluation interval", al.ResendDelay)
	}
	t.Setenv("HERMES_ALERTING_EXTERNAL_URL", "https://hermes.internal:9797")
	if cfg, err = Load(filepath.Join(fixtures, "minimal.good.yaml")); err != nil {
		t.Fatal(err)
	}
	if cfg.Alerting.ExternalURL != "https://hermes.internal:9797" {
		t.Errorf("external_url = %q, want the environment's", cfg.Alerting.ExternalURL)
	}
}
