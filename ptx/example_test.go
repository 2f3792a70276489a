package ptx_test

import (
	"fmt"

	"github.com/rayd-go/rayd/ptx"
)

// Load returns a module only after its SHA-256 matches the manifest; the
// record carries the entry points and their parameter layouts.
func ExampleLoad() {
	m, err := ptx.Load("basic")
	if err != nil {
		fmt.Println(err)
		return
	}
	e, _ := m.Record.Entry("rayd_axpy_f32")
	for _, p := range e.Params {
		fmt.Printf("%s %s pointer=%v\n", p.Name, p.Type, p.Pointer)
	}
	// Output:
	// y u64 pointer=true
	// x u64 pointer=true
	// a f32 pointer=false
	// n u32 pointer=false
}
