package model

import "fmt"

// Kind is the class of one of museum's errors (server/ente/errors.go),
// which its handlers turn into a status.
type Kind int

// museum's error classes.
const (
	BadRequest Kind = iota + 1
	Unauthorized
	PaymentRequired
	Forbidden
	NotFound
	Conflict
	Gone
	TooLarge
	StorageFull
	TooMany
	Internal
	Unavailable
)

// Shape is how museum writes an error's body.
type Shape int

// museum's error bodies.
const (
	// Typed is {"code", "message"}, or {} when Code is empty.
	Typed Shape = iota
	// Middleware is {"error": Message}.
	Middleware
	// EmptyError is {"error": {}}: a password link's missing JWT.
	EmptyError
)

// Refusal is museum refusing a request.
type Refusal struct {
	Kind    Kind
	Shape   Shape
	Code    string
	Message string
}

func (r *Refusal) Error() string {
	return fmt.Sprintf("museum refuses (%d): %s %s", r.Kind, r.Code, r.Message)
}

// refuse is a typed refusal; code "" gives museum's {}.
func refuse(k Kind, code, msg string) *Refusal { return &Refusal{Kind: k, Code: code, Message: msg} }

// plain is a refusal with museum's empty body {}.
func plain(k Kind) *Refusal { return &Refusal{Kind: k} }

// middleware is a refusal in museum's middleware shape {"error": msg}.
func middleware(k Kind, msg string) *Refusal {
	return &Refusal{Kind: k, Shape: Middleware, Message: msg}
}

// RateLimited is museum's rate limiter: 429 {"error":"Rate limit breached,
// try later"}, never with a Retry-After.
var RateLimited = middleware(TooMany, "Rate limit breached, try later")
