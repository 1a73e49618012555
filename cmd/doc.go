// Package cmd is quak's command line: it parses flags and the environment,
// wires the packages together, prints, and chooses exit codes. No other
// package prints or exits.
package cmd
