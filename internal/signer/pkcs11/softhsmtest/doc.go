// Package softhsmtest gives tests a fresh SoftHSM2 token each: its own
// label and random PINs, in a token directory private to the test process.
// It is built with the pkcs11 tag only (the backend it serves needs cgo).
package softhsmtest
