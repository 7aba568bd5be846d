package httpapi

import "net/http"

// OpenAPIDocuments renders the public API's OpenAPI 3.1 document and its
// 3.0 downgrade, as committed under openapi/.
func OpenAPIDocuments() (v31, v30 []byte, err error) {
	api := NewAPI(http.NewServeMux(), Deps{})
	if v31, err = api.OpenAPI().YAML(); err != nil {
		return nil, nil, err
	}
	if v30, err = api.OpenAPI().DowngradeYAML(); err != nil {
		return nil, nil, err
	}
	return v31, v30, nil
}
