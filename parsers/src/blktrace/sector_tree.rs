//! btt's per-device tree of queued bios, reproduced node for node.
//!
//! btt (blktrace 1.2.0, btt/dip_rb.c) keys queued bios by start sector in
//! the old Linux red-black tree (blktrace's rbtree.c, from lib/rbtree.c of
//! 2.6.x). When bio ranges overlap, which bio a G/I/M record "finds" and
//! which bios a D/C record "covers" depend on the shape of that tree, not
//! only on the keys: `find_sec` stops at the first node on its search path
//! whose range holds the sector, and `covered` prunes subtrees using the
//! node it is standing on. An ordinary ordered map gives different answers
//! on dm captures with overlapping bios, so this is the same algorithm on
//! an index arena: same insert, same rebalancing, same erase.

const NIL: u32 = u32::MAX;

#[derive(Clone, Copy)]
struct Node {
    left: u32,
    right: u32,
    parent: u32,
    red: bool,
    start: u64,
    /// One past the last sector, as u128: a bio can end past 2^64 - 1.
    end: u128,
    item: usize,
}

pub struct SectorTree {
    nodes: Vec<Node>,
    free: Vec<u32>,
    root: u32,
}

impl Default for SectorTree {
    fn default() -> Self {
        SectorTree { nodes: Vec::new(), free: Vec::new(), root: NIL }
    }
}

/// A node of the tree; stays valid until that node is erased.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NodeId(u32);

impl SectorTree {
    fn n(&self, i: u32) -> &Node {
        &self.nodes[i as usize]
    }

    fn m(&mut self, i: u32) -> &mut Node {
        &mut self.nodes[i as usize]
    }

    fn red(&self, i: u32) -> bool {
        i != NIL && self.n(i).red
    }

    pub fn item(&self, node: NodeId) -> usize {
        self.n(node.0).item
    }

    /// Insert `item` for [start, end). A node with the same start sector is
    /// taken over in place (btt's rb_replace_node: same position and colour)
    /// and the item it held is returned; that bio is never found again.
    pub fn insert(&mut self, start: u64, end: u128, item: usize) -> Option<usize> {
        let (mut parent, mut at, mut left) = (NIL, self.root, false);
        while at != NIL {
            parent = at;
            let s = self.n(at).start;
            if start < s {
                at = self.n(at).left;
                left = true;
            } else if start > s {
                at = self.n(at).right;
                left = false;
            } else {
                let node = self.m(at);
                node.end = end;
                return Some(std::mem::replace(&mut node.item, item));
            }
        }
        let node = Node { left: NIL, right: NIL, parent, red: true, start, end, item };
        let x = match self.free.pop() {
            Some(i) => {
                self.nodes[i as usize] = node;
                i
            }
            None => {
                self.nodes.push(node);
                (self.nodes.len() - 1) as u32
            }
        };
        if parent == NIL {
            self.root = x;
        } else if left {
            self.m(parent).left = x;
        } else {
            self.m(parent).right = x;
        }
        self.insert_color(x);
        None
    }

    /// rb_find_sec: walk down from the root; the first node whose range
    /// holds `sec` wins, even if another node lower down also holds it.
    pub fn find_sec(&self, sec: u64) -> Option<usize> {
        let mut at = self.root;
        while at != NIL {
            let n = self.n(at);
            if sec < n.start {
                at = n.left;
            } else if sec as u128 >= n.end {
                at = n.right;
            } else {
                return Some(n.item);
            }
        }
        None
    }

    /// rb_foreach: nodes lying wholly inside [start, end), in btt's visiting
    /// order. Subtrees are pruned on the current node's range, so with
    /// overlapping bios some bios inside the range are (as in btt) missed.
    #[cfg(test)]
    pub fn covered(&self, start: u64, end: u128) -> Vec<NodeId> {
        let mut out = Vec::new();
        self.covered_into(start, end, &mut out);
        out
    }

    /// `covered` into a list the caller keeps (one allocation for a whole trace,
    /// not one per D and C record).
    pub fn covered_into(&self, start: u64, end: u128, out: &mut Vec<NodeId>) {
        out.clear();
        self.covered_from(self.root, start, end, out);
    }

    fn covered_from(&self, at: u32, start: u64, end: u128, out: &mut Vec<NodeId>) {
        if at == NIL {
            return;
        }
        let n = *self.n(at);
        if start <= n.start && n.end <= end {
            out.push(NodeId(at));
        }
        if start < n.start {
            self.covered_from(n.left, start, end, out);
        }
        if n.end < end {
            self.covered_from(n.right, start, end, out);
        }
    }

    /// Every item still in the tree, emptying it.
    pub fn take_all(&mut self) -> Vec<usize> {
        let mut out = Vec::new();
        let mut stack = vec![self.root];
        while let Some(at) = stack.pop() {
            if at != NIL {
                let n = self.n(at);
                out.push(n.item);
                stack.push(n.left);
                stack.push(n.right);
            }
        }
        *self = SectorTree::default();
        out
    }

    fn rotate_left(&mut self, x: u32) {
        let right = self.n(x).right;
        let parent = self.n(x).parent;
        let inner = self.n(right).left;
        self.m(x).right = inner;
        if inner != NIL {
            self.m(inner).parent = x;
        }
        self.m(right).left = x;
        self.m(right).parent = parent;
        self.relink(parent, x, right);
        self.m(x).parent = right;
    }

    fn rotate_right(&mut self, x: u32) {
        let left = self.n(x).left;
        let parent = self.n(x).parent;
        let inner = self.n(left).right;
        self.m(x).left = inner;
        if inner != NIL {
            self.m(inner).parent = x;
        }
        self.m(left).right = x;
        self.m(left).parent = parent;
        self.relink(parent, x, left);
        self.m(x).parent = left;
    }

    /// Make `parent` (or the root) point at `new` where it pointed at `old`.
    fn relink(&mut self, parent: u32, old: u32, new: u32) {
        if parent == NIL {
            self.root = new;
        } else if self.n(parent).left == old {
            self.m(parent).left = new;
        } else {
            self.m(parent).right = new;
        }
    }

    fn insert_color(&mut self, mut node: u32) {
        loop {
            let mut parent = self.n(node).parent;
            if parent == NIL || !self.n(parent).red {
                break;
            }
            let gparent = self.n(parent).parent;
            let parent_is_left = parent == self.n(gparent).left;
            let uncle = if parent_is_left { self.n(gparent).right } else { self.n(gparent).left };
            if self.red(uncle) {
                self.m(uncle).red = false;
                self.m(parent).red = false;
                self.m(gparent).red = true;
                node = gparent;
                continue;
            }
            if parent_is_left {
                if self.n(parent).right == node {
                    self.rotate_left(parent);
                    std::mem::swap(&mut parent, &mut node);
                }
                self.m(parent).red = false;
                self.m(gparent).red = true;
                self.rotate_right(gparent);
            } else {
                if self.n(parent).left == node {
                    self.rotate_right(parent);
                    std::mem::swap(&mut parent, &mut node);
                }
                self.m(parent).red = false;
                self.m(gparent).red = true;
                self.rotate_left(gparent);
            }
        }
        let root = self.root;
        self.m(root).red = false;
    }

    /// rb_erase: a node with two children is replaced by its in-order
    /// successor, which moves into its place and takes its colour.
    pub fn erase(&mut self, id: NodeId) {
        let old = id.0;
        let Node { left: ol, right: or, .. } = *self.n(old);
        let (child, parent, was_red);
        if ol == NIL || or == NIL {
            child = if ol == NIL { or } else { ol };
            parent = self.n(old).parent;
            was_red = self.n(old).red;
            if child != NIL {
                self.m(child).parent = parent;
            }
            self.relink(parent, old, child);
        } else {
            let mut node = or;
            while self.n(node).left != NIL {
                node = self.n(node).left;
            }
            let c = self.n(node).right;
            let mut p = self.n(node).parent;
            was_red = self.n(node).red;
            if c != NIL {
                self.m(c).parent = p;
            }
            if p == old {
                self.m(p).right = c;
                p = node;
            } else {
                self.m(p).left = c;
            }
            let o = *self.n(old);
            {
                let n = self.m(node);
                n.parent = o.parent;
                n.red = o.red;
                n.left = o.left;
                n.right = o.right;
            }
            self.relink(o.parent, old, node);
            self.m(o.left).parent = node;
            if o.right != NIL {
                self.m(o.right).parent = node;
            }
            child = c;
            parent = p;
        }
        self.free.push(old);
        if !was_red {
            self.erase_color(child, parent);
        }
    }

    fn erase_color(&mut self, mut node: u32, mut parent: u32) {
        while !self.red(node) && node != self.root {
            let node_is_left = self.n(parent).left == node;
            let mut other = if node_is_left { self.n(parent).right } else { self.n(parent).left };
            if self.n(other).red {
                self.m(other).red = false;
                self.m(parent).red = true;
                if node_is_left {
                    self.rotate_left(parent);
                    other = self.n(parent).right;
                } else {
                    self.rotate_right(parent);
                    other = self.n(parent).left;
                }
            }
            let (inner_l, inner_r) = (self.n(other).left, self.n(other).right);
            if !self.red(inner_l) && !self.red(inner_r) {
                self.m(other).red = true;
                node = parent;
                parent = self.n(node).parent;
                continue;
            }
            // The far nephew must be red before the final rotation.
            let (near, far) = if node_is_left { (inner_l, inner_r) } else { (inner_r, inner_l) };
            if !self.red(far) {
                if near != NIL {
                    self.m(near).red = false;
                }
                self.m(other).red = true;
                if node_is_left {
                    self.rotate_right(other);
                    other = self.n(parent).right;
                } else {
                    self.rotate_left(other);
                    other = self.n(parent).left;
                }
            }
            self.m(other).red = self.n(parent).red;
            self.m(parent).red = false;
            let far = if node_is_left { self.n(other).right } else { self.n(other).left };
            if far != NIL {
                self.m(far).red = false;
            }
            if node_is_left {
                self.rotate_left(parent);
            } else {
                self.rotate_right(parent);
            }
            node = self.root;
            break;
        }
        if node != NIL {
            self.m(node).red = false;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Red-black invariants and key order; returns the black height.
    fn check(t: &SectorTree, at: u32, lo: u64, hi: u64) -> usize {
        if at == NIL {
            return 1;
        }
        let n = t.n(at);
        assert!(lo <= n.start && n.start < hi, "key order");
        if n.red {
            assert!(!t.red(n.left) && !t.red(n.right), "red node with red child");
        }
        for c in [n.left, n.right] {
            if c != NIL {
                assert_eq!(t.n(c).parent, at, "parent link");
            }
        }
        let l = check(t, n.left, lo, n.start);
        let r = check(t, n.right, n.start + 1, hi);
        assert_eq!(l, r, "black height");
        l + usize::from(!n.red)
    }

    #[test]
    fn stays_balanced_through_inserts_and_erases() {
        let mut t = SectorTree::default();
        // A fixed pseudo-random sequence of starts (LCG), some repeated.
        let mut x: u64 = 12345;
        let mut live: Vec<u64> = Vec::new();
        for round in 0..4000 {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            let start = (x >> 33) % 512;
            if round % 3 == 2 && !live.is_empty() {
                let s = live.swap_remove((x as usize >> 7) % live.len());
                let id = t.covered(s, s as u128 + 8).into_iter().find(|&id| t.n(id.0).start == s).expect("present");
                t.erase(id);
            } else if t.insert(start, start as u128 + 8, round).is_none() {
                live.push(start);
            }
            if t.root != NIL {
                assert_eq!(t.n(t.root).parent, NIL);
                assert!(!t.n(t.root).red);
            }
            check(&t, t.root, 0, u64::MAX);
        }
        let mut all = t.take_all();
        all.sort();
        assert_eq!(all.len(), live.len());
    }

    #[test]
    fn find_and_cover_follow_the_tree_not_the_keys() {
        let mut t = SectorTree::default();
        // Root [10,100) overlaps [20,30): the root is found first for 25.
        t.insert(10, 100, 1);
        t.insert(20, 30, 2);
        assert_eq!(t.find_sec(25), Some(1));
        assert_eq!(t.find_sec(5), None);
        // [0,50) covers [20,30) but the root's end (100) stops the walk
        // going right, as in btt.
        t.insert(0, 4, 3);
        let covered: Vec<usize> = t.covered(0, 50).into_iter().map(|id| t.item(id)).collect();
        assert_eq!(covered, vec![3]);
        assert_eq!(t.insert(20, 40, 4), Some(2));
    }
}
