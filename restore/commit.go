package restore

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/quak-photos/quak/apiclient"
	"github.com/quak-photos/quak/apiclient/catalog"
	"github.com/quak-photos/quak/apiclient/keys"
	"github.com/quak-photos/quak/download/folder"
	"github.com/quak-photos/quak/errs"
	"github.com/quak-photos/quak/retry"
)

// upload sends an intent's objects and commits it, once.
func (r *run) upload(ctx context.Context, o *original, in *folder.Intent) error {
	src := &source{r: r, o: o, in: in}
	defer src.close()
	if err := r.sendThumb(ctx, in); err != nil {
		return err
	}
	if err := r.sendFile(ctx, in, src); err != nil {
		return err
	}
	err := r.commit(ctx, in)
	if errors.Is(err, errObjectMissing) {
		// The completion was lost before the store made the object: its
		// upload can only start again, under a new key.
		if err = r.restartParts(ctx, in, src); err == nil {
			err = r.commit(ctx, in)
		}
	}
	if err != nil {
		return err
	}
	r.note(Event{Kind: Uploaded, Source: o.rec.ID, Title: o.rec.Meta.Title, Bytes: in.File.Size}, func(s *Summary) { s.Uploaded++ })
	return nil
}

// commit sends the journal's POST /files body. The album's updationTime is
// recorded first; after an attempt whose answer was lost, and in a later
// run, the album is listed since that time and the file taken as
// committed when an entry has its header and hash: only then is the same
// body sent again.
func (r *run) commit(ctx context.Context, in *folder.Intent) error {
	home := r.tgt.byID(in.Album)
	if home == nil {
		return fmt.Errorf("its album %d is no longer in the target", in.Album)
	}
	tries := 0
	if in.Cursor != 0 {
		tries = 1 // sent by an earlier run: look before sending
	} else if err := r.takeCursor(ctx, in); err != nil {
		return err
	}
	return retry.Do(ctx, r.o.Policy, func(ctx context.Context) error {
		if tries++; tries > 1 {
			id, err := r.confirm(ctx, home.Album, in)
			if err != nil || id != 0 {
				return errors.Join(err, r.committed(in, id))
			}
		}
		f, err := r.o.Target.Client.CreateFile(ctx, in.Body)
		if objectMissing(err) && in.File.Parts != nil {
			return errObjectMissing // not worth a retry: its completion was lost
		}
		if err != nil {
			return quotaRefusal(err)
		}
		return r.committed(in, f.ID)
	})
}

// takeCursor records the home album's updationTime before the first send.
func (r *run) takeCursor(ctx context.Context, in *folder.Intent) error {
	err := retry.Do(ctx, r.o.Policy, func(ctx context.Context) error {
		c, err := r.o.Target.Client.Collection(ctx, in.Album)
		if err == nil {
			in.Cursor = max(c.UpdationTime, 1)
		}
		return err
	})
	if err != nil {
		return fmt.Errorf("reading its album: %w", err)
	}
	return r.j.PutIntent(in)
}

// confirm finds the intent's file in its album since the cursor: the id
// of the entry with its header and hash, or 0.
func (r *run) confirm(ctx context.Context, home *catalog.Album, in *folder.Intent) (int64, error) {
	var id int64
	err := r.eachEntry(ctx, home, in.Cursor-1, func(it *catalog.Item) {
		if bytes.Equal(it.Header, in.File.Header) && it.Meta.Hash == in.Hash && it.Meta.FileType == in.FileType {
			id = it.FileID
		}
	})
	return id, err
}

// committed records the file id an intent's commit made, or nothing for 0.
func (r *run) committed(in *folder.Intent, id int64) error {
	if id == 0 {
		return nil
	}
	in.FileID = id
	r.tgt.putFile(contentKey(in.Hash, in.FileType, in.Title), &present{id: id, key: in.FileKey, albums: map[int64]bool{in.Album: true}})
	return r.j.PutIntent(in)
}

// errObjectMissing reports a multipart upload whose completion was lost
// before the store made the object.
var errObjectMissing = errors.New("the store has no object for it")

// objectMissing reports museum's answer to a commit whose object the
// store does not have (UP.4).
func objectMissing(err error) bool {
	var ae *errs.ApiError
	return errors.As(err, &ae) && ae.Status == 503 && ae.Code == "OBJECT_SIZE_FETCH_FAILED"
}

// restartParts starts a multipart upload again under a new object key:
// museum never saw the old one, so the body is rebuilt around the new key
// and recorded before any of it is sent.
func (r *run) restartParts(ctx context.Context, in *folder.Intent, src *source) error {
	var nf apiclient.NewFile
	if err := json.Unmarshal(in.Body, &nf); err != nil {
		return err
	}
	m := &measured{size: in.File.Size, sum: [16]byte(in.File.MD5)}
	for _, s := range in.File.Parts.MD5s {
		m.partSums = append(m.partSums, [16]byte(s))
	}
	in.File.Parts, in.File.Sent = nil, false
	if err := r.mint(ctx, &in.File, m); err != nil {
		return err
	}
	nf.File.ObjectKey = in.File.ObjectKey
	body, err := nf.Body()
	if err != nil {
		return err
	}
	in.Body = body
	if err := r.j.PutIntent(in); err != nil {
		return err
	}
	return r.sendFile(ctx, in, src)
}

// addToAlbums adds a target file to the target albums of o's source
// albums that do not hold it yet (have), sealing its key under each; a
// repeat is harmless (UP.7). in, when set, records each addition.
func (r *run) addToAlbums(ctx context.Context, o *original, id int64, fileKey []byte, have map[int64]bool, in *folder.Intent) error {
	for _, sid := range o.albums {
		sa := r.plan.albums[sid]
		a, err := r.album(ctx, sa)
		if err != nil {
			return err
		}
		if a.ID != 0 && have[a.ID] {
			continue
		}
		r.note(Event{Kind: Added, Source: o.rec.ID, Title: o.rec.Meta.Title, Album: sa.name}, func(s *Summary) { s.Added++ })
		if r.o.DryRun {
			continue
		}
		if err := r.addFile(ctx, a, id, fileKey); err != nil {
			return fmt.Errorf("adding it to album %q: %w", sa.name, err)
		}
		have[a.ID] = true
		if in != nil {
			in.Added = append(in.Added, a.ID)
			if err := r.j.PutIntent(in); err != nil {
				return err
			}
		}
	}
	return nil
}

func (r *run) addFile(ctx context.Context, a *catalog.Album, id int64, fileKey []byte) error {
	box, nonce, err := keys.SecretboxSealFresh(r.o.Rand, fileKey, a.Key)
	if err != nil {
		return err
	}
	item := []apiclient.CollectionFileItem{{ID: id, EncryptedKey: box, KeyDecryptionNonce: nonce}}
	return retry.Do(ctx, r.o.Policy, func(ctx context.Context) error {
		return r.o.Target.Client.AddFiles(ctx, a.ID, item)
	})
}
