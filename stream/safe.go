package stream

import (
	"errors"
	"fmt"
	"runtime"
	"runtime/debug"
	"strings"
)

// ErrChanged: the input changed while it was being read, or between two
// passes over it (its size, modification time or footer differ from what
// the first pass saw, or a memory-mapped page of it vanished).
var ErrChanged = errors.New("changed while being read")

// PanicError is a panic recovered from a decoder: damaged bytes that reached
// an assumption a decoder (streamfit's or a dependency's) does not check, or
// a memory-mapped page that could not be read because the file shrank under
// the mapping (or its disk failed). It unwraps to ErrChanged for the latter
// and to ErrCorrupt otherwise.
type PanicError struct {
	// Value is what was passed to panic.
	Value any
	// Where is the function that panicked, such as
	// "metadata.(*DictionaryPageHeader).GetNumValues".
	Where string
	// Fault is set for a memory fault at an address that is not nil's: a
	// mapped page the kernel could not supply.
	Fault bool
}

func (e *PanicError) Error() string {
	if e.Fault {
		return "changed while being read: a memory-mapped page of it could not be read (the file shrank, or its disk failed)"
	}
	return fmt.Sprintf("the decoder failed on damaged data (panic in %s: %v)", e.Where, e.Value)
}

// Unwrap classifies the panic: ErrChanged for a memory fault, else
// ErrCorrupt.
func (e *PanicError) Unwrap() error {
	if e.Fault {
		return ErrChanged
	}
	return ErrCorrupt
}

// Safe runs fn and returns its error, or a *PanicError if fn panicked.
// While fn runs, a fault on a memory-mapped page (SIGBUS when a mapped file
// was truncated) panics instead of killing the process
// (debug.SetPanicOnFault), so a decoder reading a mapping must run inside
// Safe on its own goroutine. Every goroutine that decodes input runs its
// work through Safe: a panic on another goroutine cannot be recovered and
// would end the process, leaving temporary files behind.
func Safe(fn func() error) (err error) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if p := recover(); p != nil {
			err = recovered(p)
		}
	}()
	return fn()
}

// recovered builds the PanicError of p; it must be called by the deferred
// function that recovered p, so that the panicking frame is on the stack.
func recovered(p any) *PanicError {
	e := &PanicError{Value: p, Where: "an unknown function"}
	if _, ok := p.(interface{ Addr() uintptr }); ok {
		e.Fault = true
	}
	var pcs [32]uintptr
	n := runtime.Callers(3, pcs[:]) // above Callers, recovered and the deferred function
	frames := runtime.CallersFrames(pcs[:n])
	for {
		f, more := frames.Next()
		if f.Function != "" && !strings.HasPrefix(f.Function, "runtime.") {
			e.Where = f.Function[strings.LastIndexByte(f.Function, '/')+1:]
			break
		}
		if !more {
			break
		}
	}
	return e
}

// SafeYield wraps the yield of a range function that hands values on from
// inside Safe, where the consumer's loop body runs under Safe's recover
// too. A range function may neither yield again after its body panicked
// nor swallow that panic, so it calls Resume with Safe's error before
// reporting it: a panic of the body goes on as a panic there.
type SafeYield[V any] struct {
	yield  func(V, error) bool
	inBody bool
}

// NewSafeYield wraps yield.
func NewSafeYield[V any](yield func(V, error) bool) *SafeYield[V] {
	return &SafeYield[V]{yield: yield}
}

// Yield calls the loop body with v and err and returns what it returns.
func (y *SafeYield[V]) Yield(v V, err error) bool {
	y.inBody = true
	ok := y.yield(v, err)
	y.inBody = false
	return ok
}

// Resume panics with err (what Safe recovered) when the panic was the loop
// body's; otherwise it returns.
func (y *SafeYield[V]) Resume(err error) {
	if err != nil && y.inBody {
		panic(err)
	}
}
