package enteapitest

// User is the user of that email, or nil.
func (s *Server) User(email string) *User {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.userByEmail(email)
}

// Server is the server u is a user of.
func (u *User) Server() *Server { return u.s }
