package launch_test

import (
	"fmt"

	"github.com/rayd-go/rayd/launch"
)

// A typical launch: open a device, allocate, upload, launch a kernel of an
// embedded PTX module on a non-blocking stream and download the result.
// Without a GPU, Open returns an error matching driver.ErrNoDriver.
func Example() {
	d, err := launch.Open(0)
	if err != nil {
		fmt.Println("no GPU:", err)
		return
	}
	defer d.Close()
	s, _ := d.NewStream()
	defer s.Close()
	const n = 1 << 20
	y, _ := launch.Alloc[float32](d, n)
	defer y.Close()
	fill, _ := d.Kernel("basic", "rayd_fill_f32")
	if err := fill.Launch(s, launch.Blocks(n, 256), launch.Threads(256), 0, y, uint32(n), float32(1.5)); err != nil {
		fmt.Println(err)
		return
	}
	out := make([]float32, n)
	_ = y.Download(s, out)
	fmt.Println(out[0], out[n-1])
}

// Blocks sizes a 1-D grid.
func ExampleBlocks() {
	fmt.Println(launch.Blocks(1000, 256), launch.Threads(256))
	// Output: {4 1 1} {256 1 1}
}

// A grid of whole waves: as many blocks as every multiprocessor holds at
// once (the driver's occupancy for this kernel, block size and shared
// memory), on every multiprocessor, for a grid-stride kernel.
func ExampleKernel_ResidentBlocksPerSM() {
	d, err := launch.Open(0)
	if err != nil {
		fmt.Println("no GPU:", err)
		return
	}
	defer d.Close()
	fill, err := d.Kernel("basic", "rayd_fill_f32")
	if err != nil {
		fmt.Println(err)
		return
	}
	per, err := fill.ResidentBlocksPerSM(launch.Threads(256), 0)
	if err != nil {
		fmt.Println(err)
		return
	}
	info, err := launch.DeviceInfo(0)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(per*info.SMs, "blocks of 256 threads in one wave")
}
