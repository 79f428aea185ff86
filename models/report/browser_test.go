package report

// A headless Chromium driven over the DevTools protocol on a pipe
// (--remote-debugging-pipe: commands on fd 3, replies and events on fd 4,
// each message JSON ended by a NUL byte), so the acceptance test needs no
// WebSocket client and no dependency beyond the standard library.

import (
	"bufio"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"
)

// requireChromium is the environment variable that turns a missing Chromium
// into a test failure (set by .ci/run, which installs it).
const requireChromium = "STREAMFIT_REQUIRE_CHROMIUM"

// findChromium returns the browser's path, or skips the test (fails it when
// requireChromium is set).
func findChromium(t *testing.T) string {
	t.Helper()
	if p := os.Getenv("STREAMFIT_CHROMIUM"); p != "" {
		return p
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	msg := "no Chromium found (chromium, chromium-browser, google-chrome or $STREAMFIT_CHROMIUM): the report is not rendered in a browser; install it with `apt-get install -y chromium`"
	if os.Getenv(requireChromium) != "" {
		t.Fatalf("%s, and %s is set", msg, requireChromium)
	}
	t.Skip(msg)
	return ""
}

// browser is one headless Chromium with one page attached.
type browser struct {
	t       *testing.T
	cmd     *exec.Cmd
	toPipe  *os.File
	session string

	mu      sync.Mutex
	next    int
	pending map[int]chan cdpMsg
	events  []cdpMsg
	changed chan struct{} // closed and replaced when an event arrives
	dead    error
}

type cdpMsg struct {
	ID        int                       `json:"id,omitempty"`
	Method    string                    `json:"method,omitempty"`
	Params    json.RawMessage           `json:"params,omitempty"`
	Result    json.RawMessage           `json:"result,omitempty"`
	Error     *struct{ Message string } `json:"error,omitempty"`
	SessionID string                    `json:"sessionId,omitempty"`
}

// startBrowser launches Chromium and attaches to a new blank page of the
// given size.
func startBrowser(t *testing.T, width, height int) *browser {
	bin := findChromium(t)
	cmdR, cmdW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	evR, evW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
		"--no-first-run", "--disable-background-networking", "--disable-component-update",
		"--disable-sync", "--disable-extensions", "--user-data-dir="+t.TempDir(),
		"--remote-debugging-pipe", "about:blank")
	cmd.ExtraFiles = []*os.File{cmdR, evW} // fd 3, fd 4
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting %s: %v", bin, err)
	}
	cmdR.Close()
	evW.Close()
	b := &browser{t: t, cmd: cmd, toPipe: cmdW, pending: map[int]chan cdpMsg{}, changed: make(chan struct{})}
	go b.read(evR)
	t.Cleanup(func() {
		b.call("", "Browser.close", nil)
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
			<-done
		}
		if t.Failed() {
			// D-Bus complaints of a machine without a session bus are noise.
			var lines []string
			for _, l := range strings.Split(stderr.String(), "\n") {
				if !strings.Contains(l, "dbus") {
					lines = append(lines, l)
				}
			}
			t.Logf("chromium stderr:\n%s", tail(strings.Join(lines, "\n"), 3000))
		}
	})
	var target struct{ TargetID string }
	b.decode(b.call("", "Target.createTarget", map[string]any{"url": "about:blank"}), &target)
	var att struct{ SessionID string }
	b.decode(b.call("", "Target.attachToTarget", map[string]any{"targetId": target.TargetID, "flatten": true}), &att)
	b.session = att.SessionID
	for _, m := range []string{"Page.enable", "Runtime.enable", "Log.enable", "Network.enable"} {
		b.call(b.session, m, nil)
	}
	b.call(b.session, "Emulation.setDeviceMetricsOverride", map[string]any{"width": width, "height": height, "deviceScaleFactor": 1, "mobile": false})
	return b
}

func tail(s string, n int) string {
	if len(s) > n {
		return "…" + s[len(s)-n:]
	}
	return s
}

// read delivers replies to their callers and keeps events.
func (b *browser) read(r *os.File) {
	br := bufio.NewReaderSize(r, 1<<20)
	for {
		line, err := br.ReadBytes(0)
		if err != nil {
			b.mu.Lock()
			b.dead = fmt.Errorf("the browser closed its pipe: %v", err)
			for _, ch := range b.pending {
				close(ch)
			}
			b.pending = map[int]chan cdpMsg{}
			close(b.changed)
			b.changed = make(chan struct{})
			b.mu.Unlock()
			return
		}
		var m cdpMsg
		if err := json.Unmarshal(line[:len(line)-1], &m); err != nil {
			continue
		}
		b.mu.Lock()
		if m.ID != 0 {
			if ch, ok := b.pending[m.ID]; ok {
				ch <- m
				delete(b.pending, m.ID)
			}
		} else {
			b.events = append(b.events, m)
			close(b.changed)
			b.changed = make(chan struct{})
		}
		b.mu.Unlock()
	}
}

// call sends one command and waits for its result.
func (b *browser) call(session, method string, params any) json.RawMessage {
	b.t.Helper()
	b.mu.Lock()
	if b.dead != nil {
		b.mu.Unlock()
		if method == "Browser.close" {
			return nil
		}
		b.t.Fatalf("%s: %v", method, b.dead)
	}
	b.next++
	id := b.next
	ch := make(chan cdpMsg, 1)
	b.pending[id] = ch
	b.mu.Unlock()
	msg := map[string]any{"id": id, "method": method}
	if params != nil {
		msg["params"] = params
	}
	if session != "" {
		msg["sessionId"] = session
	}
	buf, _ := json.Marshal(msg)
	if _, err := b.toPipe.Write(append(buf, 0)); err != nil {
		if method == "Browser.close" {
			return nil
		}
		b.t.Fatalf("%s: %v", method, err)
	}
	select {
	case m, ok := <-ch:
		if !ok {
			if method == "Browser.close" {
				return nil
			}
			b.t.Fatalf("%s: the browser went away", method)
		}
		if m.Error != nil {
			b.t.Fatalf("%s: %s", method, m.Error.Message)
		}
		return m.Result
	case <-time.After(60 * time.Second):
		if method == "Browser.close" {
			return nil
		}
		b.t.Fatalf("%s: no answer in 60 s", method)
	}
	return nil
}

func (b *browser) decode(raw json.RawMessage, v any) {
	b.t.Helper()
	if err := json.Unmarshal(raw, v); err != nil {
		b.t.Fatalf("decoding %s: %v", raw, err)
	}
}

// waitEvent waits for an event of the page's session named method, seen
// after the first `from` events.
func (b *browser) waitEvent(method string, from int) {
	b.t.Helper()
	deadline := time.After(60 * time.Second)
	for {
		b.mu.Lock()
		for _, e := range b.events[from:] {
			if e.Method == method && e.SessionID == b.session {
				b.mu.Unlock()
				return
			}
		}
		ch := b.changed
		dead := b.dead
		b.mu.Unlock()
		if dead != nil {
			b.t.Fatalf("waiting for %s: %v", method, dead)
		}
		select {
		case <-ch:
		case <-deadline:
			b.t.Fatalf("no %s in 60 s", method)
		}
	}
}

func (b *browser) eventCount() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.events)
}

// navigate loads url and waits for its load event.
func (b *browser) navigate(url string) {
	b.t.Helper()
	from := b.eventCount()
	var nav struct{ ErrorText string }
	b.decode(b.call(b.session, "Page.navigate", map[string]any{"url": url}), &nav)
	if nav.ErrorText != "" {
		b.t.Fatalf("navigating to %s: %s", url, nav.ErrorText)
	}
	b.waitEvent("Page.loadEventFired", from)
}

// eval evaluates a JavaScript expression in the page and decodes its value
// into v; an exception fails the test.
func (b *browser) eval(expr string, v any) {
	b.t.Helper()
	var r struct {
		Result           struct{ Value json.RawMessage }
		ExceptionDetails *struct {
			Text      string
			Exception *struct{ Description string }
		}
	}
	b.decode(b.call(b.session, "Runtime.evaluate", map[string]any{"expression": expr, "returnByValue": true, "awaitPromise": true}), &r)
	if r.ExceptionDetails != nil {
		desc := r.ExceptionDetails.Text
		if r.ExceptionDetails.Exception != nil {
			desc = r.ExceptionDetails.Exception.Description
		}
		b.t.Fatalf("evaluating %q: %s", expr, desc)
	}
	if v != nil {
		b.decode(r.Result.Value, v)
	}
}

// click presses and releases the left mouse button at (x, y), as a person
// would: the page sees real mouse events at that point.
func (b *browser) click(x, y float64) {
	for _, typ := range []string{"mouseMoved", "mousePressed", "mouseReleased"} {
		b.call(b.session, "Input.dispatchMouseEvent", map[string]any{"type": typ, "x": x, "y": y, "button": "left", "clickCount": 1})
	}
}

// screenshot returns a PNG of the whole page.
func (b *browser) screenshot() []byte {
	var r struct{ Data string }
	b.decode(b.call(b.session, "Page.captureScreenshot", map[string]any{"format": "png", "captureBeyondViewport": true}), &r)
	png, err := base64.StdEncoding.DecodeString(r.Data)
	if err != nil {
		b.t.Fatal(err)
	}
	return png
}

// problems lists what the page's session reported as going wrong: console
// errors and warnings, uncaught exceptions, log entries of level error or
// warning (Content-Security-Policy violations among them), and any network
// request for a URL other than allowed.
func (b *browser) problems(allowed string) []string { return b.problemsSince(0, allowed) }

// problemsSince is problems for the events after the first from.
func (b *browser) problemsSince(from int, allowed string) []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []string
	for _, e := range b.events[from:] {
		if e.SessionID != b.session {
			continue
		}
		switch e.Method {
		case "Runtime.consoleAPICalled":
			var p struct {
				Type string
				Args []struct {
					Value       any
					Description string
				}
			}
			json.Unmarshal(e.Params, &p)
			if p.Type == "error" || p.Type == "warning" || p.Type == "assert" {
				out = append(out, fmt.Sprintf("console.%s: %s", p.Type, e.Params))
			}
		case "Runtime.exceptionThrown":
			out = append(out, "exception: "+string(e.Params))
		case "Log.entryAdded":
			var p struct {
				Entry struct{ Level, Source, Text, URL string }
			}
			json.Unmarshal(e.Params, &p)
			if p.Entry.Level == "error" || p.Entry.Level == "warning" {
				out = append(out, fmt.Sprintf("log %s (%s): %s %s", p.Entry.Level, p.Entry.Source, p.Entry.Text, p.Entry.URL))
			}
		case "Network.requestWillBeSent":
			var p struct{ Request struct{ URL string } }
			json.Unmarshal(e.Params, &p)
			if p.Request.URL != allowed {
				out = append(out, "network request: "+p.Request.URL)
			}
		}
	}
	return out
}
