package httpapi_test

import (
	"fmt"
	"maps"
	"net/http"
	"strings"
	"testing"
)

// Every text an approver reads beside a payment refuses invisible and
// direction-changing characters (422 naming the field, nothing recorded):
// wallet labels, key labels, allowlist labels and webhook descriptions.
func TestLabels_RefuseInvisibleCharacters(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	hook := newReceiver(t, nil)
	wallet, _ := e.agent(nil, 0)
	epID, _ := e.createEndpoint(hook.URL, "tx.sent")
	chars := map[string]string{
		"LRE U+202A": "\u202a", "RLE U+202B": "\u202b", "PDF U+202C": "\u202c", "LRO U+202D": "\u202d", "RLO U+202E": "\u202e",
		"LRI U+2066": "\u2066", "RLI U+2067": "\u2067", "FSI U+2068": "\u2068", "PDI U+2069": "\u2069",
		"ZWSP U+200B": "\u200b", "ZWNJ U+200C": "\u200c", "ZWJ U+200D": "\u200d", "LRM U+200E": "\u200e", "RLM U+200F": "\u200f",
		"BOM U+FEFF": "\ufeff", "soft hyphen U+00AD (Cf)": "\u00ad", "ALM U+061C (Cf)": "\u061c", "word joiner U+2060 (Cf)": "\u2060",
		"line separator U+2028": "\u2028", "newline": "\n", "DEL": "\x7f",
	}
	fields := []struct {
		name, method, path, field string
		body                      func(label string) map[string]any
	}{
		{"wallet label", "POST", agentsPath, "label", func(l string) map[string]any { return map[string]any{"label": l} }},
		{"key label", "POST", keysPath, "label", func(l string) map[string]any { return map[string]any{"label": l} }},
		{"allowlist label", "PATCH", agentsPath + "/" + wallet + "/policy", "allowlist_labels",
			func(l string) map[string]any {
				to := newAddress()
				return map[string]any{"allowlist": []string{to}, "allowlist_labels": map[string]string{to: l}}
			}},
		{"new endpoint's description", "POST", endpointsPath, "description",
			func(l string) map[string]any {
				return map[string]any{"url": hook.URL, "events": []string{"tx.sent"}, "description": l}
			}},
		{"endpoint description", "PATCH", endpointsPath + "/" + epID, "description",
			func(l string) map[string]any { return map[string]any{"description": l} }},
	}
	for _, f := range fields {
		before := e.stableSnapshot()
		for name, c := range chars {
			label := "Acme " + c + "invoices"
			status, body := e.do(f.method, f.path, e.key, f.body(label))
			if status != http.StatusUnprocessableEntity || !strings.Contains(fmt.Sprint(body["error"]), f.field) ||
				!strings.Contains(fmt.Sprint(body["error"]), "invisible") {
				t.Errorf("%s with %s: %d %v", f.name, name, status, body)
			}
		}
		if after := e.stableSnapshot(); !maps.Equal(before, after) {
			t.Errorf("%s: refusals changed %v into %v", f.name, before, after)
		}
		// The same text without them is fine.
		if status, body := e.do(f.method, f.path, e.key, f.body("Acme invoices — März")); status/100 != 2 {
			t.Errorf("%s, plain: %d %v", f.name, status, body)
		}
	}
}
