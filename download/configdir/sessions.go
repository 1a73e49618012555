package configdir

import (
	"fmt"
	"strings"

	"github.com/quak-photos/quak/apiclient/account"
	"github.com/quak-photos/quak/errs"
)

// Sessions is every session kept in one file, at most one per account
// (email) and server.
type Sessions struct {
	List []account.Account
}

// AmbiguousError reports an email logged in on several servers.
type AmbiguousError struct {
	Email     string
	Endpoints []string
}

func (e *AmbiguousError) Error() string {
	return fmt.Sprintf("%s is logged in on several servers (%s)", e.Email, strings.Join(e.Endpoints, ", "))
}

func (s *Sessions) index(email, endpoint string) int {
	for i, a := range s.List {
		if account.SameEmail(a.Email, email) && account.SameEndpoint(a.Endpoint, endpoint) {
			return i
		}
	}
	return -1
}

// Put adds a, replacing the session of the same email and server.
func (s *Sessions) Put(a *account.Account) {
	if i := s.index(a.Email, a.Endpoint); i >= 0 {
		s.List[i] = *a
		return
	}
	s.List = append(s.List, *a)
}

// Delete drops the session of email on endpoint and reports whether there
// was one.
func (s *Sessions) Delete(email, endpoint string) bool {
	i := s.index(email, endpoint)
	if i < 0 {
		return false
	}
	s.List = append(s.List[:i], s.List[i+1:]...)
	return true
}

// Find returns the session of email (case-insensitive) on endpoint, or on
// any server when endpoint is "". Errors: errs.ErrNotLoggedIn when there is
// none, *AmbiguousError when endpoint is "" and email is logged in on
// several servers.
func (s *Sessions) Find(email, endpoint string) (*account.Account, error) {
	var found []int
	for i, a := range s.List {
		if account.SameEmail(a.Email, email) && (endpoint == "" || account.SameEndpoint(a.Endpoint, endpoint)) {
			found = append(found, i)
		}
	}
	switch len(found) {
	case 0:
		where := ""
		if endpoint != "" {
			where = " on " + endpoint
		}
		return nil, fmt.Errorf("%w (no session for %s%s)", errs.ErrNotLoggedIn, email, where)
	case 1:
		a := s.List[found[0]]
		return &a, nil
	}
	e := &AmbiguousError{Email: email}
	for _, i := range found {
		e.Endpoints = append(e.Endpoints, s.List[i].Endpoint)
	}
	return nil, e
}
