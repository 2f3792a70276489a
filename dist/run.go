package dist

import (
	"context"
	"fmt"
)

// Run is a rank's whole life with a communicator: Init, fn, Close. When fn
// fails (an error or a panic) the communicator is aborted first, so that the
// other ranks' pending collectives fail at once with this rank's reason
// instead of waiting for a timeout; a panic is raised again after the abort.
// A Close failure is returned when fn succeeded.
func Run(ctx context.Context, env Env, opt Options, fn func(ctx context.Context, c *Comm) error) (err error) {
	c, err := Init(ctx, env, opt)
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			c.Abort(err.Error())
		} else if p := recover(); p != nil {
			c.Abort(fmt.Sprint("panic: ", p))
			_ = c.Close()
			panic(p)
		}
		if cerr := c.Close(); err == nil && cerr != nil {
			err = fmt.Errorf("closing the communicator: %w", cerr)
		}
	}()
	return fn(ctx, c)
}
