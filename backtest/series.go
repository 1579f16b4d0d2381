package backtest

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/promql/parser"
	"go.yaml.in/yaml/v3"
)

// DefaultInterval is the gap between samples when a file sets none, as in promtool.
const DefaultInterval = time.Minute

// File is a set of expanded input series: every sample has its timestamp.
type File struct {
	// Interval is the gap between two values of a series.
	Interval time.Duration
	Series   []Series
}

// Series is one labelled series and its samples in time order.
type Series struct {
	Labels  labels.Labels
	Samples []Sample
}

// Sample is one float sample; T is in milliseconds since the Unix epoch.
// A stale marker has F == math.Float64frombits(value.StaleNaN).
type Sample struct {
	T int64
	F float64
}

// inputSeries is one `input_series` entry in promtool notation.
type inputSeries struct {
	Series string `yaml:"series"`
	Values string `yaml:"values"`
}

// seriesFile is the top level of a series file: either Hermes's short form
// (interval and input_series) or a promtool unit-test file (tests).
type seriesFile struct {
	Interval    model.Duration `yaml:"interval"`
	InputSeries []inputSeries  `yaml:"input_series"`

	RuleFiles          []string       `yaml:"rule_files"`
	EvaluationInterval model.Duration `yaml:"evaluation_interval"`
	GroupEvalOrder     []string       `yaml:"group_eval_order"`
	FuzzyCompare       bool           `yaml:"fuzzy_compare"`
	Tests              []testGroup    `yaml:"tests"`
}

// testGroup is one promtool test; only its series are used.
type testGroup struct {
	Interval        model.Duration `yaml:"interval"`
	InputSeries     []inputSeries  `yaml:"input_series"`
	StartTimestamp  string         `yaml:"start_timestamp"`
	Name            string         `yaml:"name"`
	AlertRuleTests  []any          `yaml:"alert_rule_test"`
	PromqlExprTests []any          `yaml:"promql_expr_test"`
	ExternalLabels  map[string]any `yaml:"external_labels"`
	ExternalURL     string         `yaml:"external_url"`
}

// ParseFile reads and parses a series file; see Parse.
func ParseFile(path string) (*File, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading series file: %w", err)
	}
	f, err := Parse(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return f, nil
}

// Parse decodes series in promtool's unit-test notation and expands their
// values. The input is either `interval` (default 1m) and `input_series`, or
// a whole promtool test file, of which the first test is taken (its interval
// defaulting to evaluation_interval, its start to start_timestamp). Samples
// start at Unix time 0, Interval apart; `_` leaves a gap and `stale` writes a
// stale marker. Unknown keys are errors; native histograms are not supported.
func Parse(data []byte) (*File, error) {
	f := &File{}
	interval, err := parse(data, func(s Series) Series { return s }, func(s Series) error {
		f.Series = append(f.Series, s)
		return nil
	})
	if err != nil {
		return nil, err
	}
	f.Interval = interval
	return f, nil
}

// parse decodes data as Parse does, makes each series into a T with conv
// (on several cores at once) and hands the Ts to each in file order,
// returning the interval.
func parse[T any](data []byte, conv func(Series) T, each func(T) error) (time.Duration, error) {
	raw, err := decodeSeriesFile(data)
	if err != nil {
		return 0, err
	}

	interval, input, start := raw.Interval, raw.InputSeries, time.Unix(0, 0).UTC()
	prefix := ""
	if len(raw.Tests) > 0 {
		if len(raw.InputSeries) > 0 || raw.Interval != 0 {
			return 0, errors.New("a file with tests must not set interval or input_series at the top level")
		}
		tg := raw.Tests[0]
		interval, input, prefix = tg.Interval, tg.InputSeries, "tests[0]."
		if interval == 0 {
			interval = raw.EvaluationInterval
		}
		if tg.StartTimestamp != "" {
			t, err := parseTimestamp(tg.StartTimestamp)
			if err != nil {
				return 0, fmt.Errorf("tests[0].start_timestamp: %w", err)
			}
			start = t
		}
	}
	if interval == 0 {
		interval = model.Duration(DefaultInterval)
	}
	if interval < 0 {
		return 0, fmt.Errorf("%sinterval must be positive, got %s", prefix, interval)
	}

	if len(input) == 0 {
		return 0, fmt.Errorf("%sinput_series: no series", prefix)
	}

	seen := make(map[string]int, len(input))
	// Count first, so that nothing is expanded from a file that is too big.
	var samples int64
	for i, in := range input {
		n := countValues(seriesTail(in.Series) + " " + in.Values)
		if n > MaxSeriesSamples {
			return 0, fmt.Errorf("%sinput_series[%d]: the series describes %d samples, more than the %d one series may have", prefix, i, n, MaxSeriesSamples)
		}
		if samples += n; samples > MaxSamples {
			return 0, fmt.Errorf("%sinput_series[%d]: the file describes more than %d samples (%d so far), the most a backtest loads", prefix, i, MaxSamples, samples)
		}
	}
	// Parsing the values is most of the work of loading a file, and
	// what conv makes of them (the chunks of OpenFile) the next most: the
	// cores parse and convert the series at once (a parser each, a series
	// at a time), and each is handed on in file order, so that memory
	// holds a series expanded per core, never the file. Each core takes
	// the next series as it is done, rather than a batch of one series per
	// core waiting for the slowest.
	type done struct {
		labels labels.Labels
		key    string
		v      T
		err    error
	}
	results := make([]done, len(input))
	var next atomic.Int64
	var wg sync.WaitGroup
	for range runtime.GOMAXPROCS(0) {
		wg.Go(func() {
			p := parser.NewParser(parser.Options{})
			for i := int(next.Add(1) - 1); i < len(input); i = int(next.Add(1) - 1) {
				s, err := expand(p, input[i], start, time.Duration(interval))
				if err != nil {
					results[i].err = err
					continue
				}
				results[i] = done{labels: s.Labels, key: s.Labels.String(), v: conv(s)}
			}
		})
	}
	wg.Wait()
	for i := range results {
		r := &results[i]
		if r.err != nil {
			return 0, fmt.Errorf("%sinput_series[%d]: %w", prefix, i, r.err)
		}
		if j, dup := seen[r.key]; dup {
			return 0, fmt.Errorf("%sinput_series[%d]: series %s repeats input_series[%d]", prefix, i, r.labels, j)
		}
		seen[r.key] = i
		if err := each(r.v); err != nil {
			return 0, err
		}
		*r = done{}
	}
	return time.Duration(interval), nil
}

// decodeSeriesFile decodes the top level of a series file: through
// scanShortForm when the file is laid out as machines write it, else
// through yaml.v3, which also reports what is wrong with a file.
func decodeSeriesFile(data []byte) (seriesFile, error) {
	if raw, ok := scanShortForm(data); ok {
		return raw, nil
	}
	var raw seriesFile
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&raw); err != nil {
		if errors.Is(err, io.EOF) {
			return seriesFile{}, errors.New("empty series file")
		}
		return seriesFile{}, fmt.Errorf("decoding series file: %w", err)
	}
	return raw, nil
}

// expand parses one series description and lays its values out in time.
func expand(p parser.Parser, in inputSeries, start time.Time, interval time.Duration) (Series, error) {
	if strings.TrimSpace(in.Series) == "" {
		return Series{}, errors.New("series is empty")
	}
	lbls, vals, err := seriesDesc(p, in.Series, in.Values)
	if err != nil {
		return Series{}, fmt.Errorf("parsing %q: %w", in.Series+" "+in.Values, err)
	}
	s := Series{Labels: lbls, Samples: make([]Sample, 0, len(vals))}
	for j, v := range vals {
		if v.Omitted {
			continue
		}
		if v.Histogram != nil {
			return Series{}, fmt.Errorf("value %d: native histograms are not supported", j)
		}
		if at := float64(start.Unix()) + float64(j)*interval.Seconds(); at > maxUnixSeconds {
			return Series{}, fmt.Errorf("value %d would be at Unix time %.0f, after 9999-12-31: interval %s is too long", j, at, model.Duration(interval))
		}
		t := start.Add(time.Duration(j) * interval)
		s.Samples = append(s.Samples, Sample{T: t.UnixMilli(), F: v.Value})
	}
	return s, nil
}

// parseTimestamp reads an RFC 3339 time or Unix seconds, as promtool does.
func parseTimestamp(s string) (time.Time, error) {
	if sec, err := strconv.ParseFloat(s, 64); err == nil {
		if math.IsNaN(sec) || sec < 0 || sec > maxUnixSeconds {
			return time.Time{}, fmt.Errorf("%q is outside 0 (1970) .. %d (9999-12-31) Unix seconds", s, int64(maxUnixSeconds))
		}
		whole, frac := math.Modf(sec)
		return time.Unix(int64(whole), int64(frac*float64(time.Second))).UTC(), nil
	}
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		if t.Unix() < 0 {
			return time.Time{}, fmt.Errorf("%q is before 1970", s)
		}
		return t, nil
	}
	return time.Time{}, fmt.Errorf("cannot parse %q as Unix seconds or an RFC 3339 time", s)
}
