package httpapi

import (
	"bytes"
	"encoding/json"
	"reflect"

	"github.com/danielgtaylor/huma/v2"
)

// Removable is an optional policy rule in a request: omitted keeps it (a
// default of none on create), null removes it, a value sets it.
type Removable[T any] struct {
	// Set: the field was sent; Value nil then means null.
	Set   bool
	Value *T
}

// UnmarshalJSON records that the field was sent, and its value unless it
// is null; schema validation has already checked its type.
func (r *Removable[T]) UnmarshalJSON(b []byte) error {
	r.Set = true
	if bytes.Equal(bytes.TrimSpace(b), []byte("null")) {
		r.Value = nil
		return nil
	}
	var v T
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	r.Value = &v
	return nil
}

// Schema is T's schema, nullable.
func (Removable[T]) Schema(r huma.Registry) *huma.Schema {
	s := huma.SchemaFromType(r, reflect.TypeFor[T]())
	s.Nullable = true
	return s
}

func ptr[T any](v T) *T { return &v }
