// Package apiclient talks to Ente's API server (museum) and its object
// store, for an account or for a public album link. Each call makes one
// attempt and turns any non-2xx answer into *errs.ApiError (or *LinkError
// when museum refuses a link); retrying is the caller's choice, made with
// package retry.
package apiclient
