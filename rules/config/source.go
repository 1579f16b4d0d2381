package config

import yaml "go.yaml.in/yaml/v3"

// configSource is the file a Config was parsed from, kept so that problems found
// after Parse (an actuator that cannot be built) get their file:line too.
type configSource struct {
	name string
	doc  *yaml.Node
}

// ProblemAt is a configuration problem at path, the plain location of a key
// ("actuators[1].path"); msg is its whole text as shown, starting with the
// location. Config.Locate gives it its file:line.
func ProblemAt(path, msg string) error { return &problem{path: path, msg: msg} }

// Locate prefixes every problem in err with the file c was parsed from and,
// for problems made by ProblemAt, the line of their path, as Parse does for
// its own problems; one per line, ordered by line. A Config not made by
// Parse returns err unchanged.
func (c *Config) Locate(err error) error {
	if err == nil || c.src == nil {
		return err
	}
	return locate(c.src.name, c.src.doc, err)
}
