package accel

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/rayd-go/rayd/launch"
)

// WarmUpOptiX creates, on one goroutine per device and concurrently, each
// device's OptiX context (creation is serialised process-wide by launch)
// and compiles the OptiX backend's module and pipelines (serialised only
// per device), so that the first query on a device pays no build cost. It
// returns the seconds each device took, in the order given, and the joined
// per-device errors. Call it before any timed region. ctx is checked before
// each device starts; a build already under way runs to completion.
func WarmUpOptiX(ctx context.Context, devices ...*launch.Device) ([]float64, error) {
	secs := make([]float64, len(devices))
	errs := make([]error, len(devices))
	var wg sync.WaitGroup
	for i, d := range devices {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := ctx.Err(); err != nil {
				errs[i] = err
				return
			}
			start := time.Now()
			if _, _, err := loadOptiXPipelines(d); err != nil {
				errs[i] = fmt.Errorf("accel: OptiX warm-up of %v: %w", d, err)
			}
			secs[i] = time.Since(start).Seconds()
		}()
	}
	wg.Wait()
	return secs, errors.Join(errs...)
}
