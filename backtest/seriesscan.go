package backtest

import (
	"bytes"
	"strings"

	"github.com/prometheus/common/model"
)

// scanShortForm reads the short form of a series file when it is laid out
// exactly as machines write it (internal/benchfleet's WriteSeries, the
// scenario generator): optional whole-line comments and blank lines, an
// optional `interval: D` line, an `input_series:` line, then for every
// series the two lines
//
//   - series: '…'
//     values: '…'
//
// each value a single-quoted scalar on its line, printable ASCII only. ok
// is false for anything else, and for anything it is unsure of (a bad
// interval, a quote left open); yaml.v3 then decodes the file and reports
// its errors, so this path never decides that a file is wrong.
//
// Hand-written because yaml.v3's scanner spent 1.1 s of CPU on the 47 MB
// file of a 24 h, 100-route backtest (`hermes backtest --series`), before
// anything else could start: a quarter of the serial time ahead of the
// first tick. What it accepts is a strict subset of YAML whose meaning
// has no choice in it; TestScanShortFormMatchesYAML compares the two.
func scanShortForm(data []byte) (raw seriesFile, ok bool) {
	const (
		seriesKey = "  - series: '"
		valuesKey = "    values: '"
	)
	seenInterval, seenInput := false, false
	for len(data) > 0 {
		line := data
		rest := []byte(nil)
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			line, rest = data[:i], data[i+1:]
		}
		switch {
		case len(line) == 0 || line[0] == '#':
			// A blank line or a whole-line comment.
		case bytes.HasPrefix(line, []byte("interval: ")):
			if seenInterval || seenInput {
				return seriesFile{}, false
			}
			v := line[len("interval: "):]
			if len(v) == 0 || !isDurationText(v) {
				return seriesFile{}, false
			}
			d, err := model.ParseDuration(string(v))
			if err != nil {
				return seriesFile{}, false
			}
			raw.Interval, seenInterval = d, true
		case string(line) == "input_series:":
			if seenInput {
				return seriesFile{}, false
			}
			seenInput = true
		case bytes.HasPrefix(line, []byte(seriesKey)):
			if !seenInput {
				return seriesFile{}, false
			}
			series, ok := singleQuoted(line[len(seriesKey):])
			if !ok {
				return seriesFile{}, false
			}
			// The values line must follow at once.
			line, rest = rest, nil
			if i := bytes.IndexByte(line, '\n'); i >= 0 {
				line, rest = line[:i], line[i+1:]
			}
			if !bytes.HasPrefix(line, []byte(valuesKey)) {
				return seriesFile{}, false
			}
			values, ok := singleQuoted(line[len(valuesKey):])
			if !ok {
				return seriesFile{}, false
			}
			raw.InputSeries = append(raw.InputSeries, inputSeries{Series: series, Values: values})
		default:
			return seriesFile{}, false
		}
		data = rest
	}
	return raw, seenInput && len(raw.InputSeries) > 0
}

// isDurationText says whether b holds only the letters and digits of a
// Prometheus duration, so that YAML reads it as that text.
func isDurationText(b []byte) bool {
	for _, c := range b {
		if (c < '0' || c > '9') && (c < 'a' || c > 'z') {
			return false
		}
	}
	return true
}

// singleQuoted returns the value of the YAML single-quoted scalar that b
// holds whole: the text between the quotes, ” read as ', nothing after
// the closing quote, every byte printable ASCII.
func singleQuoted(b []byte) (string, bool) {
	escaped := false
	for i := 0; i < len(b); i++ {
		c := b[i]
		if c < 0x20 || c > 0x7e {
			return "", false
		}
		if c != '\'' {
			continue
		}
		if i+1 < len(b) && b[i+1] == '\'' {
			escaped = true
			i++
			continue
		}
		if i != len(b)-1 {
			return "", false
		}
		s := string(b[:i])
		if escaped {
			s = strings.ReplaceAll(s, "''", "'")
		}
		return s, true
	}
	return "", false // the quote is left open
}
