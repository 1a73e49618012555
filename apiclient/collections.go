package apiclient

import (
	"context"
	"net/url"
	"strconv"
)

// All calls here are reads and safe to repeat.

// Collections lists the collections changed after sinceTime (µs), owned and
// shared, in no particular order, tombstones included.
func (c *Client) Collections(ctx context.Context, sinceTime int64) ([]Collection, error) {
	var out struct {
		Collections []Collection `json:"collections"`
	}
	err := c.do(ctx, "GET", "/collections/v2", url.Values{"sinceTime": {itoa(sinceTime)}}, nil, &out)
	return out.Collections, err
}

// CollectionsCursor is the next sinceTime after a listing: the largest
// updationTime in it (the list is unordered), or since when it is empty.
func CollectionsCursor(since int64, cs []Collection) int64 {
	for _, c := range cs {
		since = max(since, c.UpdationTime)
	}
	return since
}

// Diff fetches one page of a collection's file entries changed after
// sinceTime. A deleted collection answers 404.
func (c *Client) Diff(ctx context.Context, collectionID, sinceTime int64) (*DiffPage, error) {
	var out DiffPage
	q := url.Values{"collectionID": {itoa(collectionID)}, "sinceTime": {itoa(sinceTime)}}
	err := c.do(ctx, "GET", "/collections/v2/diff", q, nil, &out)
	return &out, err
}

// DiffCursor is the next sinceTime after a page: the largest updationTime
// in it. museum never splits one updationTime across pages.
func DiffCursor(since int64, files []File) int64 {
	for _, f := range files {
		since = max(since, f.UpdationTime)
	}
	return since
}

// CollectionFile fetches one file entry of a collection.
func (c *Client) CollectionFile(ctx context.Context, collectionID, fileID int64) (*File, error) {
	var out struct {
		File File `json:"file"`
	}
	q := url.Values{"collectionID": {itoa(collectionID)}, "fileID": {itoa(fileID)}}
	err := c.do(ctx, "GET", "/collections/file", q, nil, &out)
	return &out.File, err
}

// TrashDiff fetches one page of trash changes after sinceTime.
func (c *Client) TrashDiff(ctx context.Context, sinceTime int64) (*TrashPage, error) {
	var out TrashPage
	err := c.do(ctx, "GET", "/trash/v2/diff", url.Values{"sinceTime": {itoa(sinceTime)}}, nil, &out)
	return &out, err
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }
