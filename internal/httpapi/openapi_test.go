package httpapi_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentwallet/agentwallet/internal/httpapi"
)

// The committed documents must be what the code generates: `make openapi`.
func TestOpenAPIIsCurrent(t *testing.T) {
	t.Parallel()
	v31, v30, err := httpapi.OpenAPIDocuments()
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string][]byte{"openapi.yaml": v31, "openapi-3.0.yaml": v30} {
		got, err := os.ReadFile(filepath.Join("..", "..", "openapi", name))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("openapi/%s is stale: run `make openapi`", name)
		}
	}
}

// Every schema property carries a description and an example.
func TestOpenAPIFieldsDocumented(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	status, raw := e.doRaw("GET", "/api/public/v1/openapi.json", "", nil)
	if status != 200 {
		t.Fatalf("openapi.json: %d", status)
	}
	var doc struct {
		Components struct {
			Schemas map[string]struct {
				Properties map[string]map[string]any `json:"properties"`
			} `json:"schemas"`
		} `json:"components"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Components.Schemas) < 4 {
		t.Fatalf("only %d schemas", len(doc.Components.Schemas))
	}
	for name, s := range doc.Components.Schemas {
		for prop, p := range s.Properties {
			if p["description"] == nil {
				t.Errorf("%s.%s has no description", name, prop)
			}
			_, ex := p["examples"]
			_, ref := p["$ref"]
			items, _ := p["items"].(map[string]any)
			_, itemsRef := items["$ref"]
			if !ex && !ref && !itemsRef { // a $ref'd schema documents its own fields
				t.Errorf("%s.%s has no example", name, prop)
			}
		}
	}
	if status, _ := e.doRaw("GET", "/api/public/v1/docs", "", nil); status != 200 {
		t.Fatalf("docs page: %d", status)
	}
}

// Every success answer with a body declares its schema (generated clients
// type the body from it), and every error answer references the one Error
// schema.
func TestOpenAPIAnswersHaveSchemas(t *testing.T) {
	t.Parallel()
	doc := httpapi.NewAPI(http.NewServeMux(), httpapi.Deps{}).OpenAPI()
	for path, item := range doc.Paths {
		for method, op := range operations(item) {
			for code, r := range op.Responses {
				content := r.Content["application/json"]
				switch {
				case code == "204":
				case strings.HasPrefix(code, "2") && (content == nil || content.Schema == nil):
					t.Errorf("%s %s: %s has no schema", method, path, code)
				case !strings.HasPrefix(code, "2") && (content == nil || content.Schema == nil || content.Schema.Ref != "#/components/schemas/Error"):
					t.Errorf("%s %s: %s does not answer the Error schema", method, path, code)
				}
			}
		}
	}
}

// The documents name people as the service writes them (user:<address>),
// never usr_…, and say that unkeyed requests count in a bucket.
func TestDocs_NamePeopleAsTheServiceWritesThem(t *testing.T) {
	t.Parallel()
	v31, _, err := httpapi.OpenAPIDocuments()
	if err != nil {
		t.Fatal(err)
	}
	// The decisions, one file per area.
	files, err := filepath.Glob(filepath.Join("..", "..", "docs", "decisions", "*.md"))
	if err != nil || len(files) == 0 {
		t.Fatalf("docs/decisions: %v %v", files, err)
	}
	var decisions []byte
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		decisions = append(decisions, b...)
	}
	for name, doc := range map[string]string{"the OpenAPI document": string(v31), "docs/decisions/": string(decisions)} {
		for _, stale := range []string{"usr_… (dashboard user)", "`usr_…` (dashboard user)", "usr_…, slack", "counts nowhere"} {
			if strings.Contains(doc, stale) {
				t.Errorf("%s says %q", name, stale)
			}
		}
		if !strings.Contains(doc, "user:<address>") {
			t.Errorf("%s never names a person as user:<address>", name)
		}
	}
}
