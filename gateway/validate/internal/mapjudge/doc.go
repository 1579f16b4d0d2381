// Package mapjudge is gateway/validate as it was before it read replies
// with its raw-JSON navigator (rawjson.go): every reply and every stream
// event decoded by encoding/json into map[string]any. It is kept unchanged,
// for tests only, as the oracle that validate's FuzzRawEquivalence holds
// the navigator to: the same verdict, reason, detail, content, finish
// reason and usage for any body.
package mapjudge
