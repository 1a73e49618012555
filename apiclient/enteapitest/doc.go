// Package enteapitest is a fake Ente server for tests and demos: an API
// server that answers like museum, byte for byte in museum's own JSON
// (package wire), for everything quak uses, with real SRP, real encryption
// of everything it serves, 307 redirects to a separate fake object store,
// sharing, trash, thumbnail updates with museum's rules, and fault
// injection per request. It counts every request.
//
// It is three layers. The model (package model) is the state and museum's
// rules, with no HTTP in it. The handlers, one file per group of routes
// (users.go, collections.go, files.go, uploads.go, links.go, public.go,
// store.go), read a request, ask the model and write museum's answer;
// every route of an account goes through one auth wrapper (auth.go). The
// middleware around them (count.go, faults.go, wan.go, gate.go) counts
// requests, holds them for a test's script, paces and limits them like a
// distant server, and breaks them as a test scripts; timers.go is the fake
// clock a test gives the client.
package enteapitest
