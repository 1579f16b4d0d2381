package config

import (
	"bytes"
	"fmt"
	"reflect"
	"strings"

	"github.com/go-viper/mapstructure/v2"
	"github.com/spf13/viper"
	yaml "go.yaml.in/yaml/v3"
)

// ParseStrict decodes the YAML document data into dst, which holds its
// defaults, with the conventions of the Hermes configuration: unknown keys
// are errors, durations in Prometheus or Go notation ("30s", "1d"),
// numbers refused when they would be truncated, http_config blocks decoded
// as prometheus/common's HTTPClientConfig. It then calls validate
// (when not nil), whose problems are made with Problem. Every problem is
// returned, one per line, as "source:line: path: message", ordered by line,
// as Parse does. Other configuration files of the project (the prober's)
// use it so that `hermes check` reports them alike. Environment variables
// do not override keys of such files.
func ParseStrict(data []byte, source string, dst any, validate func() error) error {
	var root yaml.Node
	if err := yaml.Unmarshal(data, &root); err != nil {
		return yamlError(source, err)
	}
	v := viper.New()
	v.SetConfigType("yaml")
	if err := v.ReadConfig(bytes.NewReader(data)); err != nil {
		return locate(source, &root, err)
	}
	hooks := mapstructure.ComposeDecodeHookFunc(durationHook, numberHook, httpClientConfigHook)
	if err := v.UnmarshalExact(dst, viper.DecodeHook(hooks)); err != nil {
		return locate(source, &root, rootless(err, reflect.TypeOf(dst).Elem().String()))
	}
	if validate == nil {
		return nil
	}
	if err := validate(); err != nil {
		return locate(source, &root, err)
	}
	return nil
}

// Problem is a configuration problem at path ("targets[1].e2e.interval"),
// for the validate function given to ParseStrict: its line is looked up
// in the file. The message is shown as "path: message".
func Problem(path, format string, args ...any) error {
	return &problem{path: path, msg: path + ": " + fmt.Sprintf(format, args...)}
}

// rootless turns mapstructure's problems about the top level of a type
// other than Config, named after the type, into problems without a path.
func rootless(err error, typeName string) error {
	var out []error
	for _, e := range problems(err) {
		if p, ok := e.(*problem); ok && (p.path == typeName || strings.HasPrefix(p.path, typeName+".")) {
			path := strings.TrimPrefix(strings.TrimPrefix(p.path, typeName), ".")
			msg := strings.TrimPrefix(strings.TrimPrefix(p.msg, typeName), ".")
			msg = strings.TrimPrefix(msg, ": ")
			e = &problem{path: path, msg: msg}
		}
		out = append(out, e)
	}
	return joinErrs(out)
}

func joinErrs(errs []error) error {
	if len(errs) == 0 {
		return nil
	}
	return multi(errs)
}

// multi is a joined error that problems can flatten.
type multi []error

func (m multi) Error() string {
	s := make([]string, len(m))
	for i, e := range m {
		s[i] = e.Error()
	}
	return strings.Join(s, "\n")
}

func (m multi) Unwrap() []error { return m }
