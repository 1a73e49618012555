package sidecars

import (
	"bytes"
	"encoding/xml"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"
)

// XMP namespaces, as Adobe's XMP specification and the Exif-for-XMP
// specification name them (exiftool writes the same).
const (
	nsRDF       = "http://www.w3.org/1999/02/22-rdf-syntax-ns#"
	nsDC        = "http://purl.org/dc/elements/1.1/"
	nsExif      = "http://ns.adobe.com/exif/1.0/"
	nsPhotoshop = "http://ns.adobe.com/photoshop/1.0/"
	nsXMP       = "http://ns.adobe.com/xap/1.0/"
	nsDigiKam   = "http://www.digikam.org/ns/1.0/"
)

// XMPPacket renders in as a standalone XMP packet: the time taken as
// exif:DateTimeOriginal, xmp:CreateDate and photoshop:DateCreated with its
// UTC offset; the title as dc:title, the caption as dc:description; the
// location as exif:GPSLatitude and exif:GPSLongitude in XMP's
// "DDD,MM.mmmmmmmmK" notation; a favourite as xmp:Rating 5; the album names
// as dc:subject keywords and digiKam:TagsList tags. Characters XML cannot hold (most control
// characters) become U+FFFD; newlines and tabs are kept.
func XMPPacket(in Info) []byte {
	var b bytes.Buffer
	b.WriteString("<?xpacket begin=\"\ufeff\" id=\"W5M0MpCehiHzreSzNTczkc9d\"?>\n")
	b.WriteString(`<x:xmpmeta xmlns:x="adobe:ns:meta/" x:xmptk="quak">` + "\n")
	b.WriteString(` <rdf:RDF xmlns:rdf="` + nsRDF + `">` + "\n")
	b.WriteString(`  <rdf:Description rdf:about=""` + "\n")
	b.WriteString(`    xmlns:dc="` + nsDC + `"` + "\n")
	b.WriteString(`    xmlns:exif="` + nsExif + `"` + "\n")
	b.WriteString(`    xmlns:digiKam="` + nsDigiKam + `"` + "\n")
	b.WriteString(`    xmlns:photoshop="` + nsPhotoshop + `"` + "\n")
	b.WriteString(`    xmlns:xmp="` + nsXMP + `">` + "\n")
	if d, ok := xmpDate(in.Taken); ok {
		for _, tag := range []string{"exif:DateTimeOriginal", "xmp:CreateDate", "photoshop:DateCreated"} {
			element(&b, tag, d)
		}
	}
	if in.Lat != nil && in.Lon != nil {
		element(&b, "exif:GPSLatitude", gpsCoordinate(*in.Lat, 'N', 'S'))
		element(&b, "exif:GPSLongitude", gpsCoordinate(*in.Lon, 'E', 'W'))
	}
	if in.Favorite {
		element(&b, "xmp:Rating", "5")
	}
	if in.Title != "" {
		langAlt(&b, "dc:title", in.Title)
	}
	if in.Caption != "" {
		langAlt(&b, "dc:description", in.Caption)
	}
	if albums := keywords(in.Albums); len(albums) > 0 {
		list(&b, "dc:subject", "rdf:Bag", albums)
		// digiKam's own tag list, which Immich reads tags from: "/" would
		// nest a tag there, so an album's name keeps none.
		tags := make([]string, len(albums))
		for i, a := range albums {
			tags[i] = strings.ReplaceAll(a, "/", "_")
		}
		list(&b, "digiKam:TagsList", "rdf:Seq", tags)
	}
	b.WriteString("  </rdf:Description>\n </rdf:RDF>\n</x:xmpmeta>\n")
	b.WriteString(`<?xpacket end="w"?>` + "\n")
	return b.Bytes()
}

func list(b *bytes.Buffer, tag, kind string, items []string) {
	b.WriteString("   <" + tag + ">\n    <" + kind + ">\n")
	for _, it := range items {
		b.WriteString("     <rdf:li>")
		escape(b, it)
		b.WriteString("</rdf:li>\n")
	}
	b.WriteString("    </" + kind + ">\n   </" + tag + ">\n")
}

func element(b *bytes.Buffer, tag, text string) {
	b.WriteString("   <" + tag + ">")
	escape(b, text)
	b.WriteString("</" + tag + ">\n")
}

// langAlt writes a language alternative with only the default language,
// the form dc:title and dc:description take.
func langAlt(b *bytes.Buffer, tag, text string) {
	b.WriteString("   <" + tag + ">\n    <rdf:Alt>\n     <rdf:li xml:lang=\"x-default\">")
	escape(b, text)
	b.WriteString("</rdf:li>\n    </rdf:Alt>\n   </" + tag + ">\n")
}

func escape(b *bytes.Buffer, s string) {
	_ = xml.EscapeText(b, []byte(s)) // a bytes.Buffer never fails to write
}

// keywords are the album names, sorted, without repeats or empty names.
func keywords(albums []string) []string {
	out := make([]string, 0, len(albums))
	seen := map[string]bool{}
	for _, a := range albums {
		if a != "" && !seen[a] {
			seen[a] = true
			out = append(out, a)
		}
	}
	sort.Strings(out)
	return out
}

// xmpDate formats t as an XMP date with its offset from UTC, down to the
// microsecond when there is a fraction. XMP years have four digits: times
// outside years 1 to 9999 are not written. An offset with seconds (local
// mean time before 1900 in some zones) cannot be written, so the time is
// shown at the offset's whole minutes instead, naming the same instant.
func xmpDate(t time.Time) (string, bool) {
	if _, off := t.Zone(); off%60 != 0 {
		t = t.In(time.FixedZone("", off-off%60))
	}
	if y := t.Year(); y < 1 || y > 9999 {
		return "", false
	}
	return t.Format("2006-01-02T15:04:05.999999-07:00"), true
}

// gpsCoordinate writes a coordinate as XMP's GPSCoordinate: whole degrees,
// a comma, decimal minutes (8 places: far below 1e-6 of a degree) and the
// hemisphere letter.
func gpsCoordinate(v float64, pos, neg byte) string {
	hemi := pos
	if v < 0 {
		hemi = neg
	}
	v = math.Abs(v)
	deg := math.Floor(v)
	minutes := strconv.FormatFloat((v-deg)*60, 'f', 8, 64)
	if minutes == "60.00000000" {
		deg, minutes = deg+1, "0.00000000"
	}
	return strconv.FormatFloat(deg, 'f', 0, 64) + "," + minutes + string(hemi)
}
