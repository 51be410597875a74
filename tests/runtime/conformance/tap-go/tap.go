// SPDX-License-Identifier: MIT

// Package tap stands in for github.com/mndrix/tap-go, which the OCI runtime-tools validation
// programs import and Debian does not package (runtime-tools.sh builds them offline against
// Debian's golang-*-dev sources). Written here for that use only: the calls the programs make,
// printing TAP version 13 (a YAML block is written as indented JSON, which is valid YAML).
package tap

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
)

// T writes one TAP stream.
type T struct {
	Writer io.Writer
	last   *int // shared with the streams Todo returns
	todo   bool
}

// New returns a stream on standard output.
func New() *T {
	return &T{Writer: os.Stdout, last: new(int)}
}

// Todo returns the same stream whose results are marked TODO (expected to fail, counted as
// neither pass nor failure).
func (t *T) Todo() *T {
	todo := *t
	todo.todo = true
	return &todo
}

func (t *T) printf(format string, a ...interface{}) {
	fmt.Fprintf(t.Writer, format, a...)
}

// Header writes the version line and, for a count above 0, the plan.
func (t *T) Header(count int) {
	t.printf("TAP version 13\n")
	if count > 0 {
		t.printf("1..%d\n", count)
	}
}

// Ok writes one result.
func (t *T) Ok(ok bool, description string) {
	*t.last++
	state, directive := "ok", ""
	if !ok {
		state = "not ok"
	}
	if t.todo {
		directive = " # TODO"
	}
	t.printf("%s %d - %s%s\n", state, *t.last, strings.ReplaceAll(description, "\n", " "), directive)
}

// Pass writes a passed result.
func (t *T) Pass(description string) { t.Ok(true, description) }

// Fail writes a failed result.
func (t *T) Fail(description string) { t.Ok(false, description) }

// Count is the number of results written so far.
func (t *T) Count() int { return *t.last }

// AutoPlan writes the plan after the results.
func (t *T) AutoPlan() { t.printf("1..%d\n", *t.last) }

// Skip writes count skipped results.
func (t *T) Skip(count int, description string) {
	for i := 0; i < count; i++ {
		*t.last++
		t.printf("ok %d # SKIP %s\n", *t.last, strings.ReplaceAll(description, "\n", " "))
	}
}

// Diagnostic writes a comment, one "# " line per line of message.
func (t *T) Diagnostic(message string) {
	for _, line := range strings.Split(strings.TrimRight(message, "\n"), "\n") {
		t.printf("# %s\n", line)
	}
}

// Diagnosticf formats a comment.
func (t *T) Diagnosticf(format string, a ...interface{}) { t.Diagnostic(fmt.Sprintf(format, a...)) }

// YAML writes a YAML block about the last result.
func (t *T) YAML(message interface{}) error {
	text, err := json.MarshalIndent(message, "  ", "  ")
	if err != nil {
		return err
	}
	t.printf("  ---\n  %s\n  ...\n", text)
	return nil
}
