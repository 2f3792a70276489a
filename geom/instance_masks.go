package geom

import "fmt"

// SetMask sets the visibility mask of instance i. Errors: an
// *InstanceError (ErrInstanceGeometry) for i outside [0, Len()); on error
// nothing changes. Callers serialize it against readers.
func (x *Instances) SetMask(i int, mask uint8) error {
	if i < 0 || i >= x.Len() {
		return &InstanceError{Instance: i, Kind: ErrInstanceGeometry,
			Reason: fmt.Sprintf("instance %d not in [0,%d)", i, x.Len())}
	}
	x.Records[i].Mask = mask
	return nil
}

// MasksDefault reports whether every instance has DefaultMask: the
// instance level then filters nothing.
func (x *Instances) MasksDefault() bool {
	for i := range x.Records {
		if x.Records[i].Mask != DefaultMask {
			return false
		}
	}
	return true
}
