package download

// SegmentAllocs is how many segment buffers the package has allocated.
func SegmentAllocs() int64 { return segmentAllocs.Load() }
