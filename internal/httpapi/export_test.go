package httpapi

// MayRead is mayRead, for the stream's filter tests.
var MayRead = mayRead
