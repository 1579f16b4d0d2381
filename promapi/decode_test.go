package promapi

import (
	"bytes"
	"encoding/json"
	"io"
	"math"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/prometheus/common/model"

	"github.com/hermes-failover/hermes/labelname"
)

// series is one series handed over by decodeAnswer.
type series struct {
	route, part string
	value       float64
}

func decodeAll(t *testing.T, code int, body string, maxSeries int) ([]series, envelope, error) {
	t.Helper()
	var got []series
	env, err := readAnswer(&http.Response{StatusCode: code, Body: io.NopCloser(strings.NewReader(body))}, maxSeries, func(route, part []byte, v float64) {
		got = append(got, series{string(route), string(part), v})
	})
	return got, env, err
}

func TestReadAnswer(t *testing.T) {
	vector := func(result string) string {
		return `{"status":"success","data":{"resultType":"vector","result":[` + result + `]}}`
	}
	cases := []struct {
		name   string
		code   int
		body   string
		want   []series
		reason string // ErrorReason of the error; "" for none
		errHas string // part of the error's text
		max    int    // prometheus.max_series_per_query
	}{
		{name: "values as Prometheus writes them", code: 200, body: vector(
			`{"metric":{"route":"a","code":"500"},"value":[1700000000.5,"0.25"]},` +
				`{"metric":{"route":"b","signal_part":"evidence"},"value":[1700000000,"1200"]},` +
				`{"metric":{"route":"nan"},"value":[1,"NaN"]},{"metric":{"route":"inf"},"value":[1,"+Inf"]},` +
				`{"metric":{"route":"ninf"},"value":[1,"-Inf"]},{"metric":{"route":"exp"},"value":[1,"1e-3"]}`),
			want: []series{{"a", "", 0.25}, {"b", "evidence", 1200}, {"nan", "", math.NaN()}, {"inf", "", math.Inf(1)}, {"ninf", "", math.Inf(-1)}, {"exp", "", 0.001}}},
		{name: "a series without the route label is skipped", code: 200, body: vector(
			`{"metric":{"job":"x"},"value":[1,"7"]},{"metric":{},"value":[1,"8"]},{"metric":{"route":"a"},"value":[1,"1"]}`),
			want: []series{{"a", "", 1}}},
		{name: "escaped label values", code: 200, body: vector(`{"metric":{"route":"a\"b\u0026c\\d"},"value":[1,"2"]}`),
			want: []series{{`a"b&c\d`, "", 2}}},
		{name: "keys in any order", code: 200,
			body: `{"data":{"result":[{"value":[1,"3"],"metric":{"route":"a"}}],"resultType":"vector"},"status":"success"}`,
			want: []series{{"a", "", 3}}},
		{name: "empty and null results", code: 200, body: vector(``)},
		{name: "null result", code: 200, body: `{"status":"success","data":{"resultType":"vector","result":null}}`},
		{name: "warnings", code: 200, body: `{"status":"success","warnings":["PromQL info: x"],"data":{"resultType":"vector","result":[]}}`},
		{name: "matrix", code: 200, body: `{"status":"success","data":{"resultType":"matrix","result":[{"metric":{"route":"a"},"values":[[1,"1"]]}]}}`,
			errHas: "instant vector, got matrix"},
		{name: "matrix before its type", code: 200, body: `{"status":"success","data":{"result":[{"metric":{"route":"a"},"values":[[1,"1"]]}],"resultType":"matrix"}}`,
			errHas: "instant vector, got matrix"},
		{name: "scalar before its type", code: 200, body: `{"data":{"result":[1,"1"],"resultType":"scalar"},"status":"success"}`,
			errHas: "instant vector, got scalar"},
		{name: "no data", code: 200, body: `{"status":"success"}`, errHas: "instant vector, got nothing"},
		{name: "malformed JSON", code: 200, body: `{"status":"success","data":{"resultType":"vector","result":[{"metric":{"route":"a"},`, reason: "bad_response"},
		{name: "not JSON", code: 200, body: `<html>proxy</html>`, reason: "bad_response"},
		{name: "data after the end", code: 200, body: vector(``) + `{}`, reason: "bad_response"},
		{name: "a value that is not a number", code: 200, body: vector(`{"metric":{"route":"a"},"value":[1,"abc"]}`), reason: "bad_response"},
		{name: "a value that is not a string", code: 200, body: vector(`{"metric":{"route":"a"},"value":[1,2]}`), reason: "bad_response"},
		{name: "a native histogram", code: 200, body: vector(`{"metric":{"route":"a"},"histogram":[1,{"count":"1","sum":"1"}]}`), reason: "bad_response"},
		{name: "error status with 200", code: 200, body: `{"status":"error","errorType":"execution","error":"boom"}`, reason: "execution"},
		{name: "bad_data", code: 400, body: `{"status":"error","errorType":"bad_data","error":"1:5: parse error"}`, reason: "bad_data", errHas: "parse error"},
		{name: "422 without a type", code: 422, body: `{"status":"error"}`, reason: "client_error", errHas: "client error: 422"},
		{name: "400 saying success", code: 400, body: vector(``), reason: "bad_response"},
		{name: "timeout with 503", code: 503, body: `{"status":"error","errorType":"timeout","error":"query timed out in expression evaluation"}`, reason: "timeout"},
		{name: "an HTTP error without a body", code: 502, body: `bad gateway`, reason: "server_error"},
		{name: "too many series", code: 200, body: vector(`{"metric":{"route":"a"},"value":[1,"1"]},{"metric":{"route":"b"},"value":[1,"1"]},{"metric":{},"value":[1,"1"]}`),
			reason: "too_many_series", errHas: "3 series", max: 2},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, _, err := decodeAll(t, c.code, c.body, c.max)
			if c.reason == "" && c.errHas == "" {
				if err != nil {
					t.Fatalf("error %v", err)
				}
				if !slices.EqualFunc(got, c.want, sameSeries) {
					t.Fatalf("series %v, want %v", got, c.want)
				}
				return
			}
			if err == nil {
				t.Fatalf("no error, want reason %q / %q (series %v)", c.reason, c.errHas, got)
			}
			if c.reason != "" && ErrorReason(err) != c.reason {
				t.Errorf("reason %q (%v), want %q", ErrorReason(err), err, c.reason)
			}
			if !strings.Contains(err.Error(), c.errHas) {
				t.Errorf("error %q, want it to say %q", err, c.errHas)
			}
		})
	}
}

// TestKeysInAnyCase: the envelope's keys match as encoding/json matches
// them (client_golang reads the same answer so), whatever their case.
func TestKeysInAnyCase(t *testing.T) {
	var got []series
	env, err := decodeAnswer(strings.NewReader(`{"Status":"success","DATA":{"resulttype":"vector","Result":[{"Metric":{"route":"a"},"Value":[1,"2"]}]}}`), 0,
		func(route, part []byte, v float64) { got = append(got, series{string(route), string(part), v}) })
	if err != nil || env.status != "success" || env.resultType != "vector" || len(got) != 1 || got[0].route != "a" || got[0].value != 2 {
		t.Fatalf("decoded %+v, %v: %v", env, got, err)
	}
}

func TestReadAnswerWarnings(t *testing.T) {
	_, env, err := decodeAll(t, 200, `{"status":"success","warnings":["a","b"],"data":{"resultType":"vector","result":[]}}`, 0)
	if err != nil || !slices.Equal(env.warnings, []string{"a", "b"}) {
		t.Fatalf("warnings %q, err %v", env.warnings, err)
	}
}

func sameSeries(a, b series) bool {
	return a.route == b.route && a.part == b.part && (a.value == b.value || math.IsNaN(a.value) && math.IsNaN(b.value))
}

// FuzzDecodeAnswer: decodeAnswer reads untrusted bytes without panicking,
// and where client_golang's decoding reads an instant vector, it hands
// over the same series.
func FuzzDecodeAnswer(f *testing.F) {
	for _, s := range []string{
		`{"status":"success","data":{"resultType":"vector","result":[{"metric":{"route":"a","signal_part":"value"},"value":[1,"0.5"]}]}}`,
		`{"status":"success","data":{"result":[{"metric":{"route":"a"},"value":[1,"NaN"]},{"metric":{},"value":[1,"+Inf"]}],"resultType":"vector"}}`,
		`{"status":"success","data":{"resultType":"matrix","result":[]}}`,
		`{"status":"error","errorType":"bad_data","error":"x","warnings":["w"]}`,
		// Keys in another case (or another folding), as encoding/json and
		// so client_golang accept them; label names stay exact.
		`{"status":"success","data":{"resultType":"vector","result":[{"metriC":{"route":"a","Route":"b"},"value":[1,"2"]}]}}`,
		`{"status":"success","data":{"resultType":"vector","result":[{"metric":{"route":"a"},"value":[1,"3"]},{"Metric":{"route":"b"},"value":[1,"4"]},{"metric":{"route":"c"},"vaLue":[1,"5"]}]}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		var got []series
		env, err := decodeAnswer(bytes.NewReader(body), 0, func(route, part []byte, v float64) { got = append(got, series{string(route), string(part), v}) })
		var ref struct {
			Status string `json:"status"`
			Data   struct {
				ResultType string          `json:"resultType"`
				Result     json.RawMessage `json:"result"`
			} `json:"data"`
		}
		// Through a buffer of a few bytes, every token spans reads: the
		// same answer must come out.
		var small []series
		envSmall, errSmall := decodeAnswerSize(bytes.NewReader(body), 1+len(body)%13, 0, func(route, part []byte, v float64) {
			small = append(small, series{string(route), string(part), v})
		})
		if (err == nil) != (errSmall == nil) || !slices.EqualFunc(got, small, sameSeries) || envSmall.series != env.series || envSmall.status != env.status {
			t.Fatalf("buffer %d: %v, %+v, %v; buffer %d: %v, %+v, %v", readBufferSize, got, env, err, 1+len(body)%13, small, envSmall, errSmall)
		}
		if err != nil || env.resultType != "vector" || env.floatless || json.Unmarshal(body, &ref) != nil || ref.Data.ResultType != "vector" {
			return
		}
		var vec model.Vector
		if json.Unmarshal(ref.Data.Result, &vec) != nil {
			return
		}
		var want []series
		for _, s := range vec {
			if r, ok := s.Metric[labelname.Route]; ok {
				want = append(want, series{string(r), string(s.Metric["signal_part"]), float64(s.Value)})
			}
		}
		if !slices.EqualFunc(got, want, sameSeries) {
			t.Fatalf("decoded %v, client_golang %v", got, want)
		}
	})
}
