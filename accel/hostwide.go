package accel

// Collapse of the binary tree into wide nodes (Width 8), the host image of
// rayd_bvh_collapse_wide and rayd_bvh_emit_wide (ptx/src/bvh_build.cu).
//
// Wide nodes are numbered breadth first: node 0 is the root; the nodes are
// processed in index order, and each appends its internal children (in slot
// order) to the queue, so a node's internal children are consecutive (its
// child base is the queue length before them) and its leaf triangles are
// consecutive in the reordered triangle array (its triangle base is the
// number of triangles placed before it).

// wideCollapse returns the binary-tree nodes that become the children of the
// wide node rooted at internal node i: starting from i's two children, the
// child with the largest half area that is an internal node of the collapsed
// tree (not leafish) is replaced in place by its two children, until there
// are eight children or none can be opened. Ties go to the first in list
// order.
func (tr *hostTree) wideCollapse(i int32) (list [wideSlots]int32, m int) {
	list[0], list[1] = tr.child[2*i], tr.child[2*i+1]
	m = 2
	for m < wideSlots {
		best := -1
		var ba float32
		for k := range m {
			c := list[k]
			if tr.leafish(c) {
				continue
			}
			if a := halfArea(&tr.box[c]); best < 0 || a > ba {
				best, ba = k, a
			}
		}
		if best < 0 {
			break
		}
		c := list[best]
		copy(list[best+2:m+1], list[best+1:m])
		list[best], list[best+1] = tr.child[2*c], tr.child[2*c+1]
		m++
	}
	return list, m
}

// wideCost is the octant affinity of a child box b for slot s inside the
// box p of its wide node: the centroid offset (lo+hi) − (plo+phi) per axis,
// negated along the axes whose bit is set in s, summed x + y then + z.
func wideCost(b, p *[6]float32, s int) float32 {
	var t [3]float32
	for a := range 3 {
		o := float32(float32(b[a]+b[3+a]) - float32(p[a]+p[3+a]))
		if s>>a&1 != 0 {
			o = -o
		}
		t[a] = o
	}
	return float32(float32(t[0]+t[1]) + t[2])
}

// wideAssign places the m children of list into slots: repeatedly the free
// (child, slot) pair with the largest wideCost, children in list order and
// slots ascending, the first pair winning ties (a NaN cost never wins over
// an earlier pair). slot[k] is the list index in slot k, −1 when empty.
func (tr *hostTree) wideAssign(i int32, list *[wideSlots]int32, m int) (slot [wideSlots]int32) {
	for k := range slot {
		slot[k] = -1
	}
	var taken [wideSlots]bool
	for range m {
		bc, bs := -1, -1
		var best float32
		for c := range m {
			if taken[c] {
				continue
			}
			for s := range wideSlots {
				if slot[s] >= 0 {
					continue
				}
				if v := wideCost(&tr.box[list[c]], &tr.box[i], s); bc < 0 || v > best {
					bc, bs, best = c, s, v
				}
			}
		}
		taken[bc] = true
		slot[bs] = int32(bc)
	}
	return slot
}

// leafRange returns the first sorted slot and the count of a leafish node.
func (tr *hostTree) leafRange(c int32) (first, count int) {
	if int(c) >= tr.n-1 {
		return int(c) - (tr.n - 1), 1
	}
	return int(tr.first[c]), int(tr.count[c])
}

// emitWide produces the wide layout: nodes, the reordered triangle records
// (perm[k] is the sorted slot placed at wide slot k) and the height (wide
// nodes on the longest root-to-leaf path).
func (tr *hostTree) emitWide(lay *Layout, verts []float32, faces, shape, local []int32) {
	n := tr.n
	var slots [wideSlots]wideSlot
	if n == 1 {
		lay.NumNodes, lay.Height = 1, 1
		lay.Nodes = make([]uint32, WideNodeWords)
		slots[0].lo, slots[0].hi = inflate(&tr.box[0])
		slots[0].count = 1
		putWide(lay.Nodes, 0, &slots, [wideSlots]bool{true}, 0, 0)
		lay.Order = []int32{tr.order[0]}
		putTri(lay.Tris, 0, verts, faces, tr.order[0], shapeOf(shape, tr.order[0]), shapeOf(local, tr.order[0]))
		return
	}
	queue := []int32{0}
	level := []int32{0}
	var nodes []uint32
	perm := make([]int32, 0, n)
	height := 0
	for q := 0; q < len(queue); q++ {
		i := queue[q]
		height = max(height, int(level[q])+1)
		list, m := tr.wideCollapse(i)
		slot := tr.wideAssign(i, &list, m)
		childBase, triBase := uint32(len(queue)), uint32(len(perm))
		var used [wideSlots]bool
		for s := range wideSlots {
			if slot[s] < 0 {
				continue
			}
			c := list[slot[s]]
			used[s] = true
			sl := &slots[s]
			sl.lo, sl.hi = inflate(&tr.box[c])
			sl.internal, sl.count, sl.offset = false, 0, 0
			if !tr.leafish(c) {
				sl.internal = true
				queue = append(queue, c)
				level = append(level, level[q]+1)
				continue
			}
			first, count := tr.leafRange(c)
			sl.count, sl.offset = uint32(count), uint32(len(perm))-triBase
			for k := range count {
				perm = append(perm, int32(first+k))
			}
		}
		nodes = append(nodes, make([]uint32, WideNodeWords)...)
		putWide(nodes, q, &slots, used, childBase, triBase)
	}
	lay.NumNodes, lay.Height, lay.Nodes = len(queue), height, nodes
	lay.Order = make([]int32, n)
	for k, p := range perm {
		f := tr.order[p]
		lay.Order[k] = f
		putTri(lay.Tris, k, verts, faces, f, shapeOf(shape, f), shapeOf(local, f))
	}
}

// shapeOf is ids[f], or −1 without an id table.
func shapeOf(ids []int32, f int32) int32 {
	if ids == nil {
		return -1
	}
	return ids[f]
}
