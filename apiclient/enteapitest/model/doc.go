// Package model is the fake Ente server's state and rules, with no HTTP
// in it: accounts and their logins, albums and their shares, files and
// the trash, the object store's objects, uploads and commits, storage
// plans, thumbnail repairs and public links. Each request of museum's API
// is one method here that takes what the request says and returns what
// museum decides, in its own records (views) or as a *Refusal, museum's
// error; enteapitest puts them on the wire. Everything is encrypted for
// real, with keys the model makes.
//
// File metadata follows Ente's apps: creationTime, modificationTime and
// latitude/longitude in the sealed metadata ((0, 0) means no location, and
// ZeroLocation writes it so); edits in the public magic metadata as the
// web and mobile apps write them: editedName, editedTime (µs), caption, lat
// and long (used only when not both 0), and offsetTime, the "±HH:mm" UTC
// offset of the place a photo was taken (web/packages/media/file-metadata.ts;
// a date edit in the web app keeps it).
//
// Rules of museum it keeps (read in museum's source, a621d73, and seen on a
// running museum):
//   - A new file's updationTime is stamped when its upload request arrives;
//     the entry becomes visible only at commit, up to seconds later, and the
//     album's updationTime is then set to that stamp, overwritten rather
//     than maxed (repo/file.go; AddFileLate). An entry can appear below a
//     cursor a reader already passed.
//   - GET /collections/file: 404 FILE_NOT_FOUND_IN_ALBUM without an entry
//     or for a deleted one; 403 {} for someone else's file unless the album
//     is shared to the caller right now, which makes a collaborator's file
//     in the caller's own album 403 too (CollectionController.GetFile).
//   - Unsharing and sharing again keeps the collection id; in between the
//     sharee lists a tombstone and the album's diff answers 404.
//   - PUT /files/thumbnail compares the new object's size with the existing
//     thumbnail object's recorded size (object_keys.size), answers 500 when
//     it is larger, and records the new size there; files.info's thumbSize
//     (in the diff and POST /files/info) keeps the size at upload forever.
//     GET /files/large-thumbnails?threshold=N reads object_keys.size. An
//     exact repeat answers 500 and wedges museum until a restart (Restart).
//     Seen on a running museum (refenv, a621d73): after a 299209-byte
//     thumbnail was replaced by a 77372-byte one, /files/info still said
//     thumbSize 299209, large-thumbnails listed the file at threshold 77372
//     and not at 77373, and the object served was 77372 bytes.
//   - POST /files/info fails the whole batch when one id is another user's
//     (403), unknown or repeated (400) (repo.VerifyFileOwner); seen on a
//     running museum: a repeated id and an unknown one each answered 400 {}.
package model
