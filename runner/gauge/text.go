package gauge

import (
	"bufio"
	"bytes"
	"cmp"
	"math"
	"slices"
	"strconv"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// TextScrape is one scrape of a Registry gathered for the text format
// (GatherText): the registry's families, and the Vecs, whose series Write
// reads as it writes them.
type TextScrape struct {
	families []*dto.MetricFamily
	vecs     []*Vec
}

// GatherText gathers a scrape of r for the text format: the registry's
// families (its Gather, whose error it returns) and r's Vecs.
func (r *Registry) GatherText() (TextScrape, error) {
	mfs, err := r.Registry.Gather()
	if err != nil {
		return TextScrape{}, err
	}
	r.mu.Lock()
	vecs := slices.Clone(r.vecs)
	r.mu.Unlock()
	slices.SortFunc(vecs, func(a, b *Vec) int { return cmp.Compare(a.name, b.name) })
	return TextScrape{families: mfs, vecs: vecs}, nil
}

// Write writes the scrape to w in format, a text format (its FormatType is
// expfmt.TypeTextPlain), as promhttp's handler writes what Gather returns
// in that format: the families in the order of their names, each Vec's as
// expfmt writes its family().
//
// Why not through expfmt for the Vecs too: at 10,000 routes they are
// 40,000 series, and expfmt spent most of a scrape on them (a dto.Metric
// per series, each checked for escaping, its name checked and its labels
// escaped again at every scrape; BenchmarkScrapeHTTP's profile). A Vec's
// series are written with the text of their name and labels that expfmt
// itself wrote once when the series was created (seriesText), and their
// value as expfmt writes a float (appendFloat). TestWriteTextAsExpfmt and
// telemetry.TestHandlerScrapesAsPromhttp hold it to expfmt byte for byte.
func (s TextScrape) Write(w *bufio.Writer, format expfmt.Format) error {
	enc := expfmt.NewEncoder(w, format)
	mfs := s.families
	var num []byte
	for _, v := range s.vecs {
		for len(mfs) > 0 && mfs[0].GetName() < v.name {
			if err := enc.Encode(mfs[0]); err != nil {
				return err
			}
			mfs = mfs[1:]
		}
		var err error
		if num, err = v.writeText(w, enc, num); err != nil {
			return err
		}
	}
	for _, mf := range mfs {
		if err := enc.Encode(mf); err != nil {
			return err
		}
	}
	return nil
}

// writeText writes the Vec's family as enc writes family(), nothing when
// it has no series; num is a buffer for the values, returned grown.
func (v *Vec) writeText(w *bufio.Writer, enc expfmt.Encoder, num []byte) ([]byte, error) {
	if v.head == nil { // a name expfmt may escape: its own way
		if mf := v.family(); mf != nil {
			return num, enc.Encode(mf)
		}
		return num, nil
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	v.sort()
	if len(v.series) == 0 {
		return num, nil
	}
	if _, err := w.Write(v.head); err != nil {
		return num, err
	}
	for _, e := range v.series {
		num = appendFloat(append(num[:0], e.text...), math.Float64frombits(e.bits.Load()))
		num = append(num, '\n')
		if _, err := w.Write(num); err != nil {
			return num, err
		}
	}
	return num, nil
}

// appendFloat appends f as expfmt's text format writes a sample's value.
func appendFloat(b []byte, f float64) []byte {
	switch {
	case f == 1:
		return append(b, '1')
	case f == 0:
		return append(b, '0')
	case f == -1:
		return append(b, "-1"...)
	case math.IsNaN(f):
		return append(b, "NaN"...)
	case math.IsInf(f, +1):
		return append(b, "+Inf"...)
	case math.IsInf(f, -1):
		return append(b, "-Inf"...)
	}
	return strconv.AppendFloat(b, f, 'g', -1, 64)
}

// textHead is the HELP and TYPE lines expfmt writes for a gauge family of
// name and help, nil when expfmt might escape the name or a label name
// (one that is not a legacy name): writeText then leaves the Vec to
// expfmt.
func textHead(name, help string, labels []string) []byte {
	if !model.IsValidLegacyMetricName(name) {
		return nil
	}
	for _, l := range labels {
		if !model.LegacyValidation.IsValidLabelName(l) {
			return nil
		}
	}
	head, _ := sampleText(name, help, nil)
	return head
}

// sampleText is what expfmt writes for a gauge family of name and help
// with one series of labels and the value 0: its HELP and TYPE lines, and
// the series' line up to its value (its name and labels, and a space).
func sampleText(name, help string, labels []*dto.LabelPair) (head, series []byte) {
	zero := 0.0
	mf := &dto.MetricFamily{Name: &name, Help: &help, Type: dto.MetricType_GAUGE.Enum(),
		Metric: []*dto.Metric{{Label: labels, Gauge: &dto.Gauge{Value: &zero}}}}
	var b bytes.Buffer
	if _, err := expfmt.MetricFamilyToText(&b, mf); err != nil {
		return nil, nil
	}
	text := b.Bytes()
	text = text[:len(text)-len("0\n")]
	line := bytes.LastIndexByte(text, '\n') + 1
	return slices.Clip(text[:line]), slices.Clip(text[line:])
}
