package shard

// Shard is the contiguous range [Start, Stop) of rows (or lanes) that one
// replica runs. Replica is the replica's position in the layer's device
// list (0: the master); Device is its device ordinal. They differ only in
// meaning unless the layer holds several replicas on one device
// (Options.AllowSameDevice), where Replica tells them apart.
type Shard struct {
	Device  int `json:"device"`
	Replica int `json:"replica"`
	Start   int `json:"start"`
	Stop    int `json:"stop"`
}

// Len is Stop − Start.
func (s Shard) Len() int { return s.Stop - s.Start }

// equal returns n weights of 1.
func equal(n int) []float64 {
	w := make([]float64, n)
	for i := range w {
		w[i] = 1
	}
	return w
}

// RowShards splits total rows across devices by weights (nil: equal). Each
// non-last boundary is the float64 product total·carried/W truncated toward
// zero, where carried is the running weight sum; the last device takes the
// remainder and empty shards are dropped. The shards are contiguous,
// disjoint, in device order and cover [0, total). A device whose boundary
// truncates onto the previous one gets no shard; with all remote weights
// zero the master takes everything.
//
// weights must pass CheckWeights for len(devices) (nil: equal); weights that
// do not, an empty device list or a negative total give every row to the
// first device (nothing when there is none) instead of dividing by them.
func RowShards(devices []int, weights []float64, total int) []Shard {
	weights, ok := usableWeights(weights, len(devices))
	if !ok || total < 0 {
		return wholeOnFirst(devices, 0, max(total, 0))
	}
	sum := 0.0
	for _, w := range weights {
		sum += w
	}
	var out []Shard
	carried, start := 0.0, 0
	for i, d := range devices {
		stop := total
		if i < len(devices)-1 {
			carried += weights[i]
			stop = int(float64(total) * carried / sum)
		}
		if stop > start {
			out = append(out, Shard{Device: d, Replica: i, Start: start, Stop: stop})
		}
		start = max(start, stop)
	}
	return out
}

// wholeOnFirst is the shard list that gives [start, stop) to devices[0]
// (none when there is no device or the range is empty).
func wholeOnFirst(devices []int, start, stop int) []Shard {
	if len(devices) == 0 || stop <= start {
		return nil
	}
	return []Shard{{Device: devices[0], Start: start, Stop: stop}}
}

// warpAlign rounds v to the nearest multiple of WarpLanes, halves up.
func warpAlign(v int) int { return (v + WarpLanes/2) / WarpLanes * WarpLanes }

// LaneShards splits the lane window [begin, begin+count) across devices by
// weights (nil: equal). Interior boundaries are the truncated weighted
// boundary rounded to the nearest whole warp relative to begin, clamped to
// [previous boundary, count]; the last device takes the remainder and empty
// windows are dropped. A window narrower than a warp per device therefore
// lands whole on the last device with a non-empty window.
//
// Weights that fail CheckWeights (or no device, or a negative count) give
// the whole window to the first device, as in RowShards.
func LaneShards(devices []int, weights []float64, begin, count int) []Shard {
	weights, ok := usableWeights(weights, len(devices))
	if !ok || count < 0 {
		return wholeOnFirst(devices, begin, begin+max(count, 0))
	}
	sum := 0.0
	for _, w := range weights {
		sum += w
	}
	var out []Shard
	carried, start := 0.0, 0
	for i, d := range devices {
		stop := count
		if i < len(devices)-1 {
			carried += weights[i]
			raw := int(float64(count) * carried / sum)
			if raw < count {
				stop = min(max(warpAlign(raw), start), count)
			}
		}
		if stop > start {
			out = append(out, Shard{Device: d, Replica: i, Start: begin + start, Stop: begin + stop})
		}
		start = max(start, stop)
	}
	return out
}

// Floor is the minimum length of every remote per_ray shard:
// ceil(minRows · max(transferRowBytes, FloorBaselineBytes) / 100). Narrow
// rows never lower it; wide rows raise it proportionally.
func Floor(minRows, transferRowBytes int) int {
	scale := int64(max(transferRowBytes, FloorBaselineBytes))
	return int((int64(minRows)*scale + FloorBaselineBytes - 1) / FloorBaselineBytes)
}

// remoteViable reports whether every remote shard reaches floor and at least
// one exists (a master-only split is not viable).
func remoteViable(shards []Shard, floor int) bool {
	remote := 0
	for _, s := range shards {
		if s.Replica == 0 {
			continue
		}
		remote++
		if s.Len() < floor {
			return false
		}
	}
	return remote > 0
}

// ResolveLaneWindow checks a caller's lane window over a lane space of total
// lanes and returns its start and length. A negative count means "every lane
// from offset on".
func ResolveLaneWindow(total, offset, count int) (begin, n int, err error) {
	switch {
	case offset < 0:
		return 0, 0, &LaneWindowError{Total: total, Offset: offset, Count: count, Reason: "lane_offset must be non-negative"}
	case offset > total:
		return 0, 0, &LaneWindowError{Total: total, Offset: offset, Count: count, Reason: "lane_offset must not exceed the total sample count"}
	case count < 0:
		return offset, total - offset, nil
	case count > total-offset:
		return 0, 0, &LaneWindowError{Total: total, Offset: offset, Count: count,
			Reason: "lane_offset + lane_count must not exceed the total sample count"}
	}
	return offset, count, nil
}
