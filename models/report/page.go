package report

import (
	"crypto/sha256"
	_ "embed"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"html"
	"io"

	"github.com/streamfit/streamfit/stream"
)

//go:embed page.js
var pageJS string

//go:embed page.css
var pageCSS string

// hash is the CSP source expression allowing one inline script or style.
func hash(s string) string {
	h := sha256.Sum256([]byte(s))
	return "'sha256-" + base64.StdEncoding.EncodeToString(h[:]) + "'"
}

// CSP is the page's Content-Security-Policy: nothing may load or connect;
// only the page's own inline script and style (by hash) run.
var CSP = "default-src 'none'; script-src " + hash(pageJS) + "; style-src " + hash(pageCSS) +
	"; img-src 'none'; connect-src 'none'; base-uri 'none'; form-action 'none'"

// Render writes the page of d to w: one HTML document with its script, style
// and data inline. The data sit in a non-executed JSON script element;
// encoding/json escapes <, > and &, so no word of the vocabulary can close it.
func Render(w io.Writer, d *Data) error {
	data, err := json.Marshal(d)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(w, `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="%s">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>streamfit report: %s</title>
<style>%s</style>
</head>
<body>
<div id="main"></div>
<script type="application/json" id="data">%s</script>
<script>%s</script>
</body>
</html>
`, html.EscapeString(CSP), html.EscapeString(d.Title), pageCSS, data, pageJS)
	return err
}

// Write renders d to path through a temporary file renamed at the end.
func Write(path string, d *Data) error {
	f, err := stream.CreateAtomic(path)
	if err != nil {
		return err
	}
	if err := Render(f, d); err != nil {
		f.Abort()
		return fmt.Errorf("%s: %w", path, err)
	}
	return f.Commit()
}
