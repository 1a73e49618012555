// Package takeout reads a Google Photos Takeout in place (its zip or tgz
// parts, or the folders they were unpacked into, all at once) and gives
// restore's import each photo once, with the date, place, caption, albums,
// favourite and archived state Google's metadata JSON records for it.
package takeout
