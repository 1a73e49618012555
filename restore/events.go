package restore

import "time"

// Kind is what an Event reports.
type Kind string

// Event kinds.
const (
	AlbumCreated Kind = "album-created" // an album made in the target (would be, in a dry run)
	Uploaded     Kind = "uploaded"      // an original uploaded and committed (would be, in a dry run)
	Present      Kind = "present"       // the target already has it: not uploaded
	Added        Kind = "added"         // a file added to one more target album
	Placeholder  Kind = "placeholder"   // no thumbnail could be made: Ente's placeholder was sent
	Failed       Kind = "failed"        // an original that could not be restored this run
	Restarted    Kind = "restarted"     // a journal record dropped (Err says why): the original starts afresh
	Waiting      Kind = "waiting"       // the server refuses upload URLs for now (its limit a minute): asked again every Wait until it takes them
)

// Event is one thing a restore did.
type Event struct {
	Kind   Kind
	Source int64         // the original's file id in the backup
	Title  string        // its title
	Where  string        // an import's original: where its source holds it
	Album  string        // the album's name, for AlbumCreated and Added
	Bytes  int64         // the original's ciphertext bytes, for Uploaded
	Err    error         // for Failed, and why a Placeholder was sent
	Wait   time.Duration // for Waiting
}
