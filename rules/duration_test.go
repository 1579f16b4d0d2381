package rules

import (
	"math/rand/v2"
	"strconv"
	"testing"
	"time"

	"github.com/prometheus/common/model"
)

// TestDurationLikeModel: FormatDuration and ParseDuration give what
// prometheus/common/model gives, the text and the error, on durations made
// of every unit and on malformed or out-of-range input.
func TestDurationLikeModel(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 5))
	units := []string{"y", "w", "d", "h", "m", "s", "ms"}
	inputs := []string{"", "0", "00", "1", "m", "1x", "1m1h", "1h1h", "1.5h", "-1m", " 1m", "1m ", "1mm",
		"99999999999999999999s", "300y", "292y", "9223372036854775807ms", "106751d23h47m16s854ms", "106751d23h47m16s855ms"}
	for range 2000 {
		s := ""
		for i, u := range units {
			if rng.IntN(3) == 0 || (s == "" && i == len(units)-1) {
				s += strconv.Itoa(rng.IntN(400)) + u
			}
		}
		if rng.IntN(10) == 0 { // out of order
			s += strconv.Itoa(rng.IntN(9)) + units[rng.IntN(len(units))]
		}
		inputs = append(inputs, s)
	}
	for _, s := range inputs {
		want, wantErr := model.ParseDuration(s)
		got, err := ParseDuration(s)
		if (err == nil) != (wantErr == nil) || err != nil && err.Error() != wantErr.Error() || got != time.Duration(want) {
			t.Errorf("ParseDuration(%q) = %v, %v; model: %v, %v", s, got, err, time.Duration(want), wantErr)
		}
	}
	durations := []time.Duration{0, time.Nanosecond, 999 * time.Microsecond, time.Millisecond, -90 * time.Second,
		90 * 24 * time.Hour, 365 * 24 * time.Hour, 366 * 24 * time.Hour, 14 * 24 * time.Hour, 1<<63 - 1}
	for range 2000 {
		durations = append(durations, time.Duration(rng.Int64N(int64(800*24*time.Hour)))/time.Millisecond*time.Millisecond)
		durations = append(durations, time.Duration(rng.IntN(500))*[]time.Duration{time.Second, time.Minute, time.Hour, 24 * time.Hour, 7 * 24 * time.Hour}[rng.IntN(5)])
	}
	for _, d := range durations {
		if got, want := FormatDuration(d), model.Duration(d).String(); got != want {
			t.Errorf("FormatDuration(%d) = %q, model: %q", d, got, want)
		}
	}
}
